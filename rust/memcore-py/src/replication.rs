//! The `Engine` methods of a PostgreSQL node (docs/scale-out.md, "Read your
//! writes across nodes"): where a write landed in the shared log (recorded
//! by [`crate::writes::run_write`]), and waiting for a position before a
//! read.

use std::path::PathBuf;
use std::time::Duration;

use pyo3::prelude::*;

use crate::engine::PyEngine;
use crate::errors::{BindError, BindResult, run, run_unbound};
use crate::writes::take_last_write;

#[pymethods]
impl PyEngine {
    /// Whether this engine is a node of a PostgreSQL database.
    #[getter]
    fn on_postgres(&self) -> PyResult<bool> {
        Ok(self.engine()?.on_postgres())
    }

    /// `(namespace, seq)` of the calling thread's last write on this engine,
    /// shipped to PostgreSQL, taken (a second call returns None); None on
    /// SQLite.
    fn last_write_position(&self) -> PyResult<Option<(String, i64)>> {
        let engine = self.engine()?;
        Ok(take_last_write(&engine).map(|p| (p.namespace, p.seq)))
    }

    /// Refuse a namespace this node does not serve (a node serving some
    /// namespaces); nothing on SQLite or a node serving them all.
    ///
    /// Raises:
    ///     InvalidParameterError: Not served here (route the request to a node
    ///         that serves it).
    fn check_served(&self, namespace: &str) -> BindResult<()> {
        Ok(self.engine()?.check_served(namespace)?)
    }

    /// The last seq of `namespace` this node applied (0 on SQLite).
    fn applied_seq(&self, namespace: &str) -> PyResult<i64> {
        Ok(self.engine()?.applied_seq(namespace))
    }

    /// Wait until this node applied `namespace` up to `min_seq`, at most
    /// `timeout` seconds; returns the seq applied.
    ///
    /// Raises:
    ///     ResourceBusyError: Not applied within `timeout` (retry, or read from
    ///         the node that took the write).
    #[pyo3(signature = (namespace, min_seq, timeout = 2.0))]
    fn wait_for_seq(
        &self,
        py: Python<'_>,
        namespace: &str,
        min_seq: i64,
        timeout: f64,
    ) -> BindResult<i64> {
        let timeout = Duration::try_from_secs_f64(timeout).map_err(|_| {
            BindError::Core(memcore::Error::invalid(
                "timeout",
                format!("timeout must be a number of seconds, 0 or more; got {timeout}."),
            ))
        })?;
        let engine = self.engine()?;
        run(py, &engine, || {
            engine.wait_for_seq(namespace, min_seq, timeout)
        })
    }
}

/// The name of the default replica folder of the PostgreSQL database at
/// `database_url`: its identity (system identifier, oid, and the id memcore
/// gives the database, written into it first if it has none), so two
/// databases never share a replica folder.
///
/// Raises:
///     StorageError: The database cannot be reached.
///     InvalidParameterError: Not a PostgreSQL URL.
#[pyfunction]
pub fn database_key(py: Python<'_>, database_url: &str) -> BindResult<String> {
    run_unbound(py, || memcore::engine::database_key(database_url))
}

/// Empty the replica folder of a PostgreSQL node (`memcore replica reset`):
/// its copy of the database and its indexes, which the next open builds again
/// from PostgreSQL. A SQLite store (its own truth) is never touched.
///
/// Args:
///     path: The node's replica folder.
///
/// Returns:
///     The files and folders removed (empty when there was no replica).
///
/// Raises:
///     ResourceBusyError: A node (or another process) has the folder open.
///     InvalidParameterError: The folder holds a SQLite store, not a replica.
#[pyfunction]
pub fn reset_replica(py: Python<'_>, path: PathBuf) -> BindResult<Vec<String>> {
    let reset = run_unbound(py, || memcore::engine::reset_replica(&path))?;
    Ok(reset
        .removed
        .into_iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect())
}
