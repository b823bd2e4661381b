//! The `Engine` class: lifecycle, metadata and the embedding guard. Record
//! operations live in sibling files (`memories.rs`, …) as further
//! `#[pymethods]` blocks on the same class.

use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::RwLock;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use memcore::pg::{NamespaceRange, Namespaces};
use memcore::{Durability, Engine, EngineOptions};

use crate::errors::{BindError, BindResult, StorageError, run, run_unbound};
use crate::writes::run_write;

/// An open memcore data directory. Thread-safe; every call that does real
/// work releases the GIL.
#[pyclass(frozen, name = "Engine", module = "memcore._core")]
pub struct PyEngine {
    // `close()` empties the slot; calls in flight keep their `Arc` alive, so
    // the directory lock is released when the last of them returns.
    inner: RwLock<Option<Arc<Engine>>>,
    path: PathBuf,
}

impl PyEngine {
    /// The open engine, or `StorageError` after `close()`.
    pub fn engine(&self) -> PyResult<Arc<Engine>> {
        self.inner.read().clone().ok_or_else(|| {
            StorageError::new_err(format!(
                "The store at {} is closed; open a new Memory to use it again.",
                self.path.display()
            ))
        })
    }
}

fn parse_durability(name: &str) -> BindResult<Durability> {
    match name {
        "normal" => Ok(Durability::Normal),
        "full" => Ok(Durability::Full),
        other => Err(BindError::Core(memcore::Error::invalid(
            "durability",
            format!("Unknown durability '{other}'. Use 'normal' or 'full'."),
        ))),
    }
}

#[pymethods]
impl PyEngine {
    /// Open (or create) the data directory `path`.
    ///
    /// Args:
    ///     path: The data directory.
    ///     read_only: Open without the writer lock; writes fail.
    ///     durability: "normal" (survives process crashes) or "full"
    ///         (fsync per commit, survives power loss).
    ///     text_analyzer: BM25 analyser ("english" default, "simple", or a
    ///         stemming language); changing it rebuilds the text index.
    ///     database_url: A `postgresql://…` URL: open a node of that database,
    ///         with `path` as its local replica (docs/scale-out.md).
    ///     namespaces: The namespaces a node serves (None: all of them).
    ///     namespace_range: Instead of `namespaces`, `LO-HI/BUCKETS`: the
    ///         namespaces whose memcore bucket is in that range.
    ///     replica_rebuild: On a node, empty and rebuild from the database a
    ///         replica that is another database's copy, holds writes the
    ///         database lost, or is damaged, instead of refusing it.
    ///
    /// Raises:
    ///     ResourceBusyError: Another process has the directory open for writing.
    ///     StorageError: The database at `database_url` cannot be reached, or
    ///         the replica at `path` is another database's (or damaged) and
    ///         `replica_rebuild` is False.
    #[new]
    #[pyo3(signature = (
        path, *, read_only = false, durability = "normal", text_analyzer = None,
        database_url = None, namespaces = None, namespace_range = None, shared = true,
        replica_rebuild = false
    ))]
    #[allow(clippy::too_many_arguments)] // one per Python keyword argument
    fn new(
        py: Python<'_>,
        path: PathBuf,
        read_only: bool,
        durability: &str,
        text_analyzer: Option<String>,
        database_url: Option<String>,
        namespaces: Option<Vec<String>>,
        namespace_range: Option<String>,
        shared: bool,
        replica_rebuild: bool,
    ) -> BindResult<Self> {
        let options = EngineOptions {
            read_only,
            durability: parse_durability(durability)?,
            text_analyzer,
            // A PostgreSQL node's replica has one writer: the node.
            shared: shared && database_url.is_none(),
            replica_rebuild,
            ..EngineOptions::default()
        };
        let engine = match database_url {
            Some(url) => {
                let served = match (namespaces, namespace_range) {
                    (Some(_), Some(_)) => {
                        return Err(BindError::Core(memcore::Error::invalid(
                            "namespace_range",
                            "Give a node namespaces or namespace_range, not both: one rule \
                             decides what it serves, so the proxy's routing can match it.",
                        )));
                    }
                    (Some(names), None) => Namespaces::Only(names.into_iter().collect()),
                    (None, Some(range)) => {
                        Namespaces::Range(NamespaceRange::parse(&range).map_err(BindError::Core)?)
                    }
                    (None, None) => Namespaces::All,
                };
                run_unbound(py, || Engine::open_postgres(&url, &path, served, &options))?
            }
            None if namespaces.is_some() || namespace_range.is_some() => {
                let field = if namespaces.is_some() {
                    "namespaces"
                } else {
                    "namespace_range"
                };
                return Err(BindError::Core(memcore::Error::invalid(
                    field,
                    format!(
                        "{field} selects what a PostgreSQL node serves; pass database_url too."
                    ),
                )));
            }
            None => run_unbound(py, || Engine::open(&path, &options))?,
        };
        Ok(PyEngine {
            inner: RwLock::new(Some(Arc::new(engine))),
            path,
        })
    }

    /// Close the engine and release the directory lock. Idempotent.
    fn close(&self, py: Python<'_>) {
        let engine = self.inner.write().take();
        // Dropping may flush indexes: do it without the GIL.
        py.detach(move || drop(engine));
    }

    /// The data directory.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.read().is_none()
    }

    /// Whether the engine was opened read-only.
    #[getter]
    fn read_only(&self) -> PyResult<bool> {
        Ok(self.engine()?.is_read_only())
    }

    /// Whether this process writes the index files of the store.
    #[getter]
    fn owns_indexes(&self) -> PyResult<bool> {
        Ok(self.engine()?.owns_indexes())
    }

    /// Every store metadata key and value.
    fn metadata<'py>(&self, py: Python<'py>) -> BindResult<Bound<'py, PyDict>> {
        let engine = self.engine()?;
        let pairs = run(py, &engine, || engine.metadata())?;
        let out = PyDict::new(py);
        for (k, v) in pairs {
            out.set_item(k, v)?;
        }
        Ok(out)
    }

    /// The recorded embedding identity as `(model or None, dim)`, or None.
    fn embedding_identity(&self, py: Python<'_>) -> BindResult<Option<(Option<String>, usize)>> {
        let engine = self.engine()?;
        let identity = run(py, &engine, || engine.embedding_identity())?;
        Ok(identity.map(|i| (i.model, i.dim)))
    }

    /// Compare `model`/`dim` with the recorded identity, recording it if none.
    ///
    /// Raises:
    ///     DimensionMismatchError: The store was made with another model or dimension.
    fn check_embedding_identity(&self, py: Python<'_>, model: &str, dim: usize) -> BindResult<()> {
        let engine = self.engine()?;
        run_write(py, &engine, (), |()| {
            engine.check_embedding_identity(model, dim)
        })
    }

    /// Overwrite the recorded identity (after a reset).
    fn set_embedding_identity(&self, py: Python<'_>, model: &str, dim: usize) -> BindResult<()> {
        let engine = self.engine()?;
        run_write(py, &engine, (), |()| {
            engine.set_embedding_identity(model, dim)
        })
    }

    /// Run SQLite's quick_check; raises StorageError when the database is damaged.
    fn quick_check(&self, py: Python<'_>) -> BindResult<()> {
        let engine = self.engine()?;
        run(py, &engine, || engine.quick_check())
    }

    /// Delete every record in every namespace and forget the embedding model.
    fn reset_all(&self, py: Python<'_>) -> BindResult<()> {
        let engine = self.engine()?;
        run_write(py, &engine, (), |()| engine.reset_all())
    }
}
