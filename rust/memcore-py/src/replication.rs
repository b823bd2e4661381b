//! The `Engine` methods of a PostgreSQL node (docs/scale-out.md, "Read your
//! writes across nodes"): where a write landed in the shared log, and
//! waiting for a position before a read; and [`run_write`], the one way a
//! bound method runs a write, so that on a node a write overtaken by another
//! node's write of its namespace is run again rather than refused.

use std::cell::RefCell;
use std::path::PathBuf;
use std::time::Duration;

use pyo3::prelude::*;

use memcore::Engine;
use memcore::pg::ship::{Outcome, Position};

use crate::engine::PyEngine;
use crate::errors::{BindError, BindResult, run, run_unbound};

thread_local! {
    /// The log position of the calling thread's last write through
    /// [`run_write`], with the address of the engine it wrote on (one thread
    /// may write on several nodes). `Engine::written` takes the core's own
    /// record of it, so `last_write_position` reads this one.
    static LAST_WRITE: RefCell<Option<(usize, Position)>> = const { RefCell::new(None) };
}

fn address(engine: &Engine) -> usize {
    std::ptr::from_ref(engine) as usize
}

/// Run the write `work(input)` on `engine` with the GIL released, as [`run`]
/// does. On a PostgreSQL node it goes through `Engine::written`: a write
/// another node overtook (refused, nothing written) runs again lock first,
/// on a fresh copy of `input`, and the write's position is kept for
/// `last_write_position`. A SQLite store runs `work` once on `input` itself:
/// no copy, no retry, nothing more than the check of the mode.
pub fn run_write<T, A, F>(py: Python<'_>, engine: &Engine, input: A, work: F) -> BindResult<T>
where
    T: Send,
    A: Clone + Send,
    F: Fn(A) -> memcore::Result<T> + Send,
{
    if !engine.on_postgres() {
        return run(py, engine, move || work(input));
    }
    run(py, engine, move || {
        let written = engine.written(|_| work(input.clone()))?;
        if let Some(position) = written.position {
            LAST_WRITE.with(|last| *last.borrow_mut() = Some((address(engine), position)));
        }
        Ok(written.value)
    })
}

/// Take the calling thread's last write position on `engine`.
fn take_last_write(engine: &Engine) -> Option<Position> {
    let recorded = LAST_WRITE.with(|last| {
        let mut slot = last.borrow_mut();
        match &*slot {
            Some((owner, _)) if *owner == address(engine) => slot.take().map(|(_, p)| p),
            _ => None,
        }
    });
    // A write that bypassed `run_write` left the core's record, newer than
    // ours (`run_write` takes the core's record of each of its writes).
    match engine.last_write_outcome() {
        Some(Outcome::Shipped(position)) => Some(position),
        _ => recorded,
    }
}

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
