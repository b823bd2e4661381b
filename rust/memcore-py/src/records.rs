//! Core records to plain Python dicts. Timestamps stay integer microseconds;
//! the Python facade turns them into datetimes.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use memcore::Memory;

/// A memory as a dict with the public field names (DESIGN section 2).
pub fn memory_dict<'py>(py: Python<'py>, m: &Memory) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("id", &m.id)?;
    d.set_item("namespace", &m.namespace)?;
    d.set_item("content", &m.content)?;
    d.set_item("memory_type", m.memory_type.as_str())?;
    d.set_item("source", m.source.as_str())?;
    d.set_item("confidence", m.confidence)?;
    d.set_item("importance", m.importance)?;
    d.set_item("metadata", &m.metadata)?;
    d.set_item("thread_id", &m.thread_id)?;
    d.set_item("user_id", &m.user_id)?;
    d.set_item("event_time", m.event_time)?;
    d.set_item("created_at", m.created_at)?;
    d.set_item("updated_at", m.updated_at)?;
    d.set_item("accessed_at", m.accessed_at)?;
    d.set_item("valid_from", m.valid_from)?;
    d.set_item("valid_until", m.valid_until)?;
    d.set_item("invalidated_at", m.invalidated_at)?;
    d.set_item("invalidation_reason", &m.invalidation_reason)?;
    d.set_item("supersedes", &m.supersedes)?;
    d.set_item("superseded_by", &m.superseded_by)?;
    d.set_item("expires_at", m.expires_at)?;
    Ok(d)
}

/// A list of memories as a list of dicts.
pub fn memory_dicts<'py>(py: Python<'py>, ms: &[Memory]) -> PyResult<Vec<Bound<'py, PyDict>>> {
    ms.iter().map(|m| memory_dict(py, m)).collect()
}
