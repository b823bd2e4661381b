//! The `Engine` methods of a PostgreSQL node (docs/scale-out.md, "Read your
//! writes across nodes"): where a write landed in the shared log, and
//! waiting for a position before a read.

use std::time::Duration;

use pyo3::prelude::*;

use memcore::pg::ship::Outcome;

use crate::engine::PyEngine;
use crate::errors::{BindError, BindResult, run};

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
        Ok(match self.engine()?.last_write_outcome() {
            Some(Outcome::Shipped(p)) => Some((p.namespace, p.seq)),
            _ => None,
        })
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
