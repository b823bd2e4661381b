//! Checking, repairing and backing up a store: reports as native records
//! (`records/store.rs`).

use std::path::PathBuf;

use pyo3::prelude::*;

use memcore::EngineOptions;

use crate::engine::PyEngine;
use crate::errors::BindResult;
use crate::records::store::{BackupReport, RepairReport, StoreCheck};

#[pymethods]
impl PyEngine {
    /// Check the database (SQLite's integrity_check) and each search index
    /// against the rows (counts and sampled keys).
    ///
    /// Returns:
    ///     A `StoreCheck`: ok, path, integrity, last_seq, indexes, problems
    ///     (each with area, message and fix).
    fn check(&self, py: Python<'_>) -> BindResult<StoreCheck> {
        let engine = self.engine()?;
        let report = py.detach(|| engine.check())?;
        Ok(StoreCheck::from_core(py, report)?)
    }

    /// Rebuild the search indexes from the database; writes wait meanwhile.
    ///
    /// Returns:
    ///     A `RepairReport`: indexes_rebuilt, database_set_aside and log_set_aside (None), documents,
    ///     last_seq.
    ///
    /// Raises:
    ///     StorageError: The engine is read-only or closed.
    fn repair(&self, py: Python<'_>) -> BindResult<RepairReport> {
        let engine = self.engine()?;
        let report = py.detach(|| engine.repair())?;
        Ok(RepairReport::from(report))
    }

    /// Copy the database with SQLite's online backup API (safe while writing).
    ///
    /// Args:
    ///     dest: A new file, or an existing directory (receives memcore.db).
    ///
    /// Returns:
    ///     A `BackupReport`: path, bytes, last_seq.
    ///
    /// Raises:
    ///     InvalidParameterError: The destination file exists.
    fn backup(&self, py: Python<'_>, dest: PathBuf) -> BindResult<BackupReport> {
        let engine = self.engine()?;
        let report = py.detach(|| engine.backup(&dest))?;
        Ok(BackupReport::from(report))
    }
}

/// Rebuild the search indexes of the (closed) store at `path` from its database.
///
/// Args:
///     path: The data directory.
///     accept_empty: Cut a write-ahead log damaged in the middle at the damage (a copy
///         kept), set an unreadable database aside, and start from what remains.
///     text_analyzer: The BM25 analyser (the stored one when None).
///
/// Returns:
///     A `RepairReport`: indexes_rebuilt, database_set_aside, log_set_aside, documents,
///     last_seq.
///
/// Raises:
///     StorageError: The database is damaged (and `accept_empty` is False).
///     ResourceBusyError: Another process has the store open for writing.
#[pyfunction]
#[pyo3(signature = (path, *, accept_empty = false, text_analyzer = None))]
pub fn repair_store(
    py: Python<'_>,
    path: PathBuf,
    accept_empty: bool,
    text_analyzer: Option<String>,
) -> BindResult<RepairReport> {
    let options = EngineOptions {
        text_analyzer,
        ..EngineOptions::default()
    };
    let report = py.detach(|| memcore::engine::repair_store(&path, &options, accept_empty))?;
    Ok(RepairReport::from(report))
}
