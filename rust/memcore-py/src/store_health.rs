//! Checking, repairing and backing up a store: reports as plain dicts.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use memcore::EngineOptions;
use memcore::engine::{BackupReport, CheckReport, RepairReport};

use crate::engine::PyEngine;
use crate::errors::BindResult;

fn check_dict<'py>(py: Python<'py>, report: &CheckReport) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("ok", report.is_ok())?;
    d.set_item("path", &report.path)?;
    d.set_item("integrity", PyList::new(py, &report.integrity)?)?;
    d.set_item("last_seq", report.last_seq)?;
    let indexes = PyList::empty(py);
    for index in &report.indexes {
        let i = PyDict::new(py);
        i.set_item("index", index.index)?;
        i.set_item("expected", index.expected)?;
        i.set_item("found", index.found)?;
        i.set_item("sampled", index.sampled)?;
        i.set_item("missing", index.missing)?;
        indexes.append(i)?;
    }
    d.set_item("indexes", indexes)?;
    let problems = PyList::empty(py);
    for problem in &report.problems {
        let p = PyDict::new(py);
        p.set_item("area", &problem.area)?;
        p.set_item("message", &problem.message)?;
        p.set_item("fix", &problem.fix)?;
        problems.append(p)?;
    }
    d.set_item("problems", problems)?;
    Ok(d)
}

fn backup_dict<'py>(py: Python<'py>, report: &BackupReport) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("path", &report.path)?;
    d.set_item("bytes", report.bytes)?;
    d.set_item("last_seq", report.last_seq)?;
    Ok(d)
}

fn repair_dict<'py>(py: Python<'py>, report: &RepairReport) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("indexes_rebuilt", report.indexes_rebuilt)?;
    d.set_item("database_set_aside", &report.database_set_aside)?;
    d.set_item("documents", report.documents)?;
    d.set_item("last_seq", report.last_seq)?;
    Ok(d)
}

#[pymethods]
impl PyEngine {
    /// Check the database (SQLite's integrity_check) and each search index
    /// against the rows (counts and sampled keys).
    ///
    /// Returns:
    ///     A dict: ok, path, integrity, last_seq, indexes, problems (each
    ///     with area, message and fix).
    fn check<'py>(&self, py: Python<'py>) -> BindResult<Bound<'py, PyDict>> {
        let engine = self.engine()?;
        let report = py.detach(|| engine.check())?;
        Ok(check_dict(py, &report)?)
    }

    /// Rebuild the search indexes from the database; writes wait meanwhile.
    ///
    /// Returns:
    ///     A dict: indexes_rebuilt, database_set_aside (None), documents, last_seq.
    ///
    /// Raises:
    ///     StorageError: The engine is read-only or closed.
    fn repair<'py>(&self, py: Python<'py>) -> BindResult<Bound<'py, PyDict>> {
        let engine = self.engine()?;
        let report = py.detach(|| engine.repair())?;
        Ok(repair_dict(py, &report)?)
    }

    /// Copy the database with SQLite's online backup API (safe while writing).
    ///
    /// Args:
    ///     dest: A new file, or an existing directory (receives memcore.db).
    ///
    /// Returns:
    ///     A dict: path, bytes, last_seq.
    ///
    /// Raises:
    ///     InvalidParameterError: The destination file exists.
    fn backup<'py>(&self, py: Python<'py>, dest: PathBuf) -> BindResult<Bound<'py, PyDict>> {
        let engine = self.engine()?;
        let report = py.detach(|| engine.backup(&dest))?;
        Ok(backup_dict(py, &report)?)
    }
}

/// Rebuild the search indexes of the (closed) store at `path` from its database.
///
/// Args:
///     path: The data directory.
///     accept_empty: Set an unreadable database aside and start from what remains.
///     text_analyzer: The BM25 analyser (the stored one when None).
///
/// Returns:
///     A dict: indexes_rebuilt, database_set_aside, documents, last_seq.
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
) -> BindResult<Bound<'_, PyDict>> {
    let options = EngineOptions {
        text_analyzer,
        ..EngineOptions::default()
    };
    let report = py.detach(|| memcore::engine::repair_store(&path, &options, accept_empty))?;
    Ok(repair_dict(py, &report)?)
}
