//! Core records as the plain dicts of an export page (`restore.rs`): every
//! field, times as integer microseconds, so an import can replay them exactly.
//! The API returns native records instead (`records/`).

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use memcore::Memory;
use memcore::knowledge::{Entity, Observation, Relation};

/// A memory as an export dict, in the public field names (docs/guide.md, "The records").
///
/// Keys are interned Python strings: a search or a bulk ingest builds
/// thousands of these dicts, and a fresh key string per field (decoded,
/// hashed, freed) was a visible share of a record's conversion.
pub fn memory_dict<'py>(py: Python<'py>, m: &Memory) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item(intern!(py, "id"), &m.id)?;
    d.set_item(intern!(py, "namespace"), &m.namespace)?;
    d.set_item(intern!(py, "content"), &m.content)?;
    d.set_item(intern!(py, "memory_type"), m.memory_type.as_str())?;
    d.set_item(intern!(py, "source"), m.source.as_str())?;
    d.set_item(intern!(py, "confidence"), m.confidence)?;
    d.set_item(intern!(py, "importance"), m.importance)?;
    d.set_item(intern!(py, "metadata"), &m.metadata)?;
    d.set_item(intern!(py, "thread_id"), &m.thread_id)?;
    d.set_item(intern!(py, "user_id"), &m.user_id)?;
    d.set_item(intern!(py, "event_time"), m.event_time)?;
    d.set_item(intern!(py, "created_at"), m.created_at)?;
    d.set_item(intern!(py, "updated_at"), m.updated_at)?;
    d.set_item(intern!(py, "accessed_at"), m.accessed_at)?;
    d.set_item(intern!(py, "valid_from"), m.valid_from)?;
    d.set_item(intern!(py, "valid_until"), m.valid_until)?;
    d.set_item(intern!(py, "invalidated_at"), m.invalidated_at)?;
    d.set_item(intern!(py, "invalidation_reason"), &m.invalidation_reason)?;
    d.set_item(intern!(py, "supersedes"), &m.supersedes)?;
    d.set_item(intern!(py, "superseded_by"), &m.superseded_by)?;
    d.set_item(intern!(py, "expires_at"), m.expires_at)?;
    Ok(d)
}

/// An entity as a dict (`entityType` also under its contract name).
pub fn entity_dict<'py>(py: Python<'py>, e: &Entity) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("id", &e.id)?;
    d.set_item("namespace", &e.namespace)?;
    d.set_item("name", &e.name)?;
    d.set_item("entity_type", &e.entity_type)?;
    d.set_item("description", &e.description)?;
    d.set_item("importance", e.importance)?;
    d.set_item("confidence", e.confidence)?;
    d.set_item("thread_id", &e.thread_id)?;
    d.set_item("created_at", e.created_at)?;
    d.set_item("updated_at", e.updated_at)?;
    d.set_item("valid_from", e.valid_from)?;
    d.set_item("valid_until", e.valid_until)?;
    Ok(d)
}

/// An observation as a dict.
pub fn observation_dict<'py>(py: Python<'py>, o: &Observation) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("id", &o.id)?;
    d.set_item("namespace", &o.namespace)?;
    d.set_item("entity_id", &o.entity_id)?;
    d.set_item("entity_name", &o.entity_name)?;
    d.set_item("content", &o.content)?;
    d.set_item("version", o.version)?;
    d.set_item("supersedes", &o.supersedes)?;
    d.set_item("superseded_by", &o.superseded_by)?;
    d.set_item("thread_id", &o.thread_id)?;
    d.set_item("confidence", o.confidence)?;
    d.set_item("importance", o.importance)?;
    d.set_item("timestamp", o.created_at)?;
    d.set_item("valid_from", o.valid_from)?;
    d.set_item("valid_until", o.valid_until)?;
    Ok(d)
}

/// A relation as a dict (`from`/`to` are entity names).
pub fn relation_dict<'py>(py: Python<'py>, r: &Relation) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("id", &r.id)?;
    d.set_item("namespace", &r.namespace)?;
    d.set_item("from", &r.from_name)?;
    d.set_item("to", &r.to_name)?;
    d.set_item("from_entity", &r.from_entity)?;
    d.set_item("to_entity", &r.to_entity)?;
    d.set_item("relation_type", &r.relation_type)?;
    d.set_item("importance", r.importance)?;
    d.set_item("thread_id", &r.thread_id)?;
    d.set_item("created_at", r.created_at)?;
    d.set_item("valid_from", r.valid_from)?;
    d.set_item("valid_until", r.valid_until)?;
    Ok(d)
}
