//! Export pages and import batches: records as dicts tagged with `type`,
//! every id and time (integer microseconds) kept, vectors optional.

use numpy::PyReadonlyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use memcore::code::CodeChunk;
use memcore::conversation::{DocVersion, Procedure, Turn};
use memcore::engine::{ExportKind, Restorable};
use memcore::knowledge::{Entity, Observation, Relation};
use memcore::{Memory, MemoryType, Source, Tier};

use crate::arrays::owned_vector;
use crate::engine::PyEngine;
use crate::errors::{BindResult, InvalidParameterError, run};
use crate::records::facts::MemoryRecord;
use crate::records::graph::{EntityRecord, ObservationRecord, RelationRecord};
use crate::writes::run_write;

fn with_vector<'py>(py: Python<'py>, d: &Bound<'py, PyDict>, v: Option<&Vec<f32>>) -> PyResult<()> {
    if let Some(v) = v {
        d.set_item("vector", PyList::new(py, v)?)?;
    }
    Ok(())
}

fn version_dict<'py>(
    py: Python<'py>,
    v: &DocVersion,
    content: Option<&String>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("id", &v.id)?;
    d.set_item("document_id", &v.document_id)?;
    d.set_item("path", &v.canonical)?;
    d.set_item("version", v.version)?;
    d.set_item("content_hash", &v.content_hash)?;
    d.set_item("size", v.size)?;
    d.set_item("provenance", &v.provenance)?;
    d.set_item("turn_id", &v.turn_id)?;
    d.set_item("created_at", v.created_at)?;
    d.set_item("content", content)?;
    Ok(d)
}

fn record_dict<'py>(py: Python<'py>, record: &Restorable) -> PyResult<Bound<'py, PyDict>> {
    let d = match record {
        Restorable::Memory(m, v) => {
            let d = MemoryRecord::from(m.clone()).raw_dict(py)?;
            with_vector(py, &d, v.as_ref())?;
            d
        }
        Restorable::Entity(e, v) => {
            let d = EntityRecord::from(e.clone()).raw_dict(py)?;
            with_vector(py, &d, v.as_ref())?;
            d
        }
        Restorable::Observation(o, v) => {
            let d = ObservationRecord::from(o.clone()).raw_dict(py)?;
            with_vector(py, &d, v.as_ref())?;
            d
        }
        Restorable::Relation(r) => RelationRecord::from(r.clone()).raw_dict(py)?,
        Restorable::Mention {
            memory_id,
            entity_id,
            explicit,
        } => {
            let d = PyDict::new(py);
            d.set_item("memory_id", memory_id)?;
            d.set_item("entity_id", entity_id)?;
            d.set_item("explicit", explicit)?;
            d
        }
        Restorable::Turn(t, procedures, v) => {
            let d = PyDict::new(py);
            d.set_item("id", &t.id)?;
            d.set_item("namespace", &t.namespace)?;
            d.set_item("conversation_id", &t.conversation_id)?;
            d.set_item("turn_id", &t.turn_key)?;
            d.set_item("turn_index", t.turn_index)?;
            d.set_item("user_text", &t.user_text)?;
            d.set_item("agent_text", &t.agent_text)?;
            d.set_item("thread_id", &t.thread_id)?;
            d.set_item("created_at", t.created_at)?;
            let procs = PyList::empty(py);
            for (p, contents) in procedures {
                let x = PyDict::new(py);
                x.set_item("id", &p.id)?;
                x.set_item("position", p.position)?;
                x.set_item("tool", &p.tool)?;
                x.set_item("args", &p.args)?;
                x.set_item("created_at", p.created_at)?;
                let versions = PyList::empty(py);
                for (v, c) in p.versions.iter().zip(contents) {
                    versions.append(version_dict(py, v, c.as_ref())?)?;
                }
                x.set_item("documents", versions)?;
                procs.append(x)?;
            }
            d.set_item("procedures", procs)?;
            with_vector(py, &d, v.as_ref())?;
            d
        }
        Restorable::Chunk(c, v) => {
            let d = PyDict::new(py);
            d.set_item("id", &c.id)?;
            d.set_item("namespace", &c.namespace)?;
            d.set_item("project_id", &c.project_id)?;
            d.set_item("file_path", &c.file_path)?;
            d.set_item("language", &c.language)?;
            d.set_item("start_line", c.start_line)?;
            d.set_item("end_line", c.end_line)?;
            d.set_item("chunk_type", &c.chunk_type)?;
            d.set_item("name", &c.name)?;
            d.set_item("parent_scope", &c.parent_scope)?;
            d.set_item("content", &c.content)?;
            d.set_item("content_hash", &c.content_hash)?;
            d.set_item("indexed_at", c.indexed_at)?;
            with_vector(py, &d, v.as_ref())?;
            d
        }
    };
    Ok(d)
}

#[derive(FromPyObject)]
struct MemoryArg {
    #[pyo3(item)]
    id: String,
    #[pyo3(item)]
    namespace: String,
    #[pyo3(item)]
    content: String,
    #[pyo3(item)]
    memory_type: String,
    #[pyo3(item)]
    source: String,
    #[pyo3(item)]
    confidence: f64,
    #[pyo3(item)]
    importance: f64,
    #[pyo3(item)]
    metadata: String,
    #[pyo3(item, default)]
    thread_id: Option<String>,
    #[pyo3(item, default)]
    user_id: Option<String>,
    #[pyo3(item, default)]
    event_time: Option<i64>,
    #[pyo3(item)]
    created_at: i64,
    #[pyo3(item)]
    updated_at: i64,
    #[pyo3(item)]
    accessed_at: i64,
    #[pyo3(item)]
    valid_from: i64,
    #[pyo3(item, default)]
    valid_until: Option<i64>,
    #[pyo3(item, default)]
    invalidated_at: Option<i64>,
    #[pyo3(item, default)]
    invalidation_reason: Option<String>,
    #[pyo3(item, default)]
    supersedes: Option<String>,
    #[pyo3(item, default)]
    superseded_by: Option<String>,
    #[pyo3(item, default)]
    expires_at: Option<i64>,
    /// Absent in exports made before tiers: durable.
    #[pyo3(item, default)]
    tier: Option<String>,
}

#[derive(FromPyObject)]
struct EntityArg {
    #[pyo3(item)]
    id: String,
    #[pyo3(item)]
    namespace: String,
    #[pyo3(item)]
    name: String,
    #[pyo3(item)]
    entity_type: String,
    #[pyo3(item, default)]
    description: Option<String>,
    #[pyo3(item)]
    importance: f64,
    #[pyo3(item)]
    confidence: f64,
    #[pyo3(item, default)]
    thread_id: Option<String>,
    #[pyo3(item)]
    created_at: i64,
    #[pyo3(item)]
    updated_at: i64,
    #[pyo3(item)]
    valid_from: i64,
    #[pyo3(item, default)]
    valid_until: Option<i64>,
}

#[derive(FromPyObject)]
struct ObservationArg {
    #[pyo3(item)]
    id: String,
    #[pyo3(item)]
    namespace: String,
    #[pyo3(item)]
    entity_id: String,
    #[pyo3(item)]
    content: String,
    #[pyo3(item)]
    version: i64,
    #[pyo3(item, default)]
    supersedes: Option<String>,
    #[pyo3(item, default)]
    superseded_by: Option<String>,
    #[pyo3(item, default)]
    thread_id: Option<String>,
    #[pyo3(item)]
    confidence: f64,
    #[pyo3(item)]
    importance: f64,
    #[pyo3(item)]
    timestamp: i64,
    #[pyo3(item)]
    valid_from: i64,
    #[pyo3(item, default)]
    valid_until: Option<i64>,
}

#[derive(FromPyObject)]
struct RelationArg {
    #[pyo3(item)]
    id: String,
    #[pyo3(item)]
    namespace: String,
    #[pyo3(item)]
    from_entity: String,
    #[pyo3(item)]
    to_entity: String,
    #[pyo3(item)]
    relation_type: String,
    #[pyo3(item)]
    importance: f64,
    #[pyo3(item, default)]
    thread_id: Option<String>,
    #[pyo3(item)]
    created_at: i64,
    #[pyo3(item)]
    valid_from: i64,
    #[pyo3(item, default)]
    valid_until: Option<i64>,
}

#[derive(FromPyObject)]
struct VersionArg {
    #[pyo3(item)]
    id: String,
    #[pyo3(item)]
    document_id: String,
    #[pyo3(item)]
    path: String,
    #[pyo3(item)]
    version: i64,
    #[pyo3(item)]
    content_hash: String,
    #[pyo3(item, default)]
    size: Option<i64>,
    #[pyo3(item)]
    provenance: String,
    #[pyo3(item, default)]
    turn_id: Option<String>,
    #[pyo3(item)]
    created_at: i64,
    #[pyo3(item, default)]
    content: Option<String>,
}

#[derive(FromPyObject)]
struct ProcedureArg {
    #[pyo3(item)]
    id: String,
    #[pyo3(item)]
    position: i64,
    #[pyo3(item)]
    tool: String,
    #[pyo3(item)]
    args: String,
    #[pyo3(item)]
    created_at: i64,
    #[pyo3(item, default)]
    documents: Vec<VersionArg>,
}

#[derive(FromPyObject)]
struct TurnArg {
    #[pyo3(item)]
    id: String,
    #[pyo3(item)]
    namespace: String,
    #[pyo3(item)]
    conversation_id: String,
    #[pyo3(item)]
    turn_id: String,
    #[pyo3(item)]
    turn_index: i64,
    #[pyo3(item)]
    user_text: String,
    #[pyo3(item, default)]
    agent_text: Option<String>,
    #[pyo3(item, default)]
    thread_id: Option<String>,
    #[pyo3(item)]
    created_at: i64,
    #[pyo3(item, default)]
    procedures: Vec<ProcedureArg>,
}

#[derive(FromPyObject)]
struct ChunkArg {
    #[pyo3(item)]
    id: String,
    #[pyo3(item)]
    namespace: String,
    #[pyo3(item)]
    project_id: String,
    #[pyo3(item)]
    file_path: String,
    #[pyo3(item)]
    language: String,
    #[pyo3(item)]
    start_line: i64,
    #[pyo3(item)]
    end_line: i64,
    #[pyo3(item)]
    chunk_type: String,
    #[pyo3(item, default)]
    name: Option<String>,
    #[pyo3(item, default)]
    parent_scope: Option<String>,
    #[pyo3(item)]
    content: String,
    #[pyo3(item)]
    content_hash: String,
    #[pyo3(item)]
    indexed_at: i64,
}

#[derive(FromPyObject)]
struct MentionArg {
    #[pyo3(item)]
    memory_id: String,
    #[pyo3(item)]
    entity_id: String,
    #[pyo3(item, default)]
    explicit: bool,
}

fn invalid(e: memcore::Error) -> PyErr {
    InvalidParameterError::new_err(e.to_string())
}

fn vector_of(item: &Bound<'_, PyAny>) -> PyResult<Option<Vec<f32>>> {
    match item.get_item("vector") {
        Ok(v) if !v.is_none() => {
            let np = item.py().import("numpy")?;
            let array = np.call_method1("asarray", (v, "float32"))?;
            Ok(owned_vector(Some(
                array.extract::<PyReadonlyArray1<'_, f32>>()?,
            )))
        }
        _ => Ok(None),
    }
}

fn parse_record(item: &Bound<'_, PyAny>) -> PyResult<Restorable> {
    let kind: String = item.get_item("type")?.extract()?;
    let kind =
        ExportKind::parse(&kind).map_err(|e| InvalidParameterError::new_err(e.to_string()))?;
    Ok(match kind {
        ExportKind::Memory => {
            let m: MemoryArg = item.extract()?;
            Restorable::Memory(
                Memory {
                    id: m.id,
                    namespace: m.namespace,
                    content: m.content,
                    memory_type: MemoryType::parse(&m.memory_type).map_err(invalid)?,
                    source: Source::parse(&m.source).map_err(invalid)?,
                    confidence: m.confidence,
                    importance: m.importance,
                    metadata: m.metadata,
                    thread_id: m.thread_id,
                    user_id: m.user_id,
                    event_time: m.event_time,
                    created_at: m.created_at,
                    updated_at: m.updated_at,
                    accessed_at: m.accessed_at,
                    valid_from: m.valid_from,
                    valid_until: m.valid_until,
                    invalidated_at: m.invalidated_at,
                    invalidation_reason: m.invalidation_reason,
                    supersedes: m.supersedes,
                    superseded_by: m.superseded_by,
                    expires_at: m.expires_at,
                    tier: m
                        .tier
                        .as_deref()
                        .map(Tier::parse)
                        .transpose()
                        .map_err(invalid)?
                        .unwrap_or_default(),
                },
                vector_of(item)?,
            )
        }
        ExportKind::Entity => {
            let e: EntityArg = item.extract()?;
            Restorable::Entity(
                Entity {
                    id: e.id,
                    namespace: e.namespace,
                    name: e.name,
                    entity_type: e.entity_type,
                    description: e.description,
                    importance: e.importance,
                    confidence: e.confidence,
                    thread_id: e.thread_id,
                    created_at: e.created_at,
                    updated_at: e.updated_at,
                    valid_from: e.valid_from,
                    valid_until: e.valid_until,
                },
                vector_of(item)?,
            )
        }
        ExportKind::Observation => {
            let o: ObservationArg = item.extract()?;
            Restorable::Observation(
                Observation {
                    id: o.id,
                    namespace: o.namespace,
                    entity_id: o.entity_id,
                    entity_name: String::new(),
                    content: o.content,
                    version: o.version,
                    supersedes: o.supersedes,
                    superseded_by: o.superseded_by,
                    thread_id: o.thread_id,
                    confidence: o.confidence,
                    importance: o.importance,
                    created_at: o.timestamp,
                    valid_from: o.valid_from,
                    valid_until: o.valid_until,
                },
                vector_of(item)?,
            )
        }
        ExportKind::Relation => {
            let r: RelationArg = item.extract()?;
            Restorable::Relation(Relation {
                id: r.id,
                namespace: r.namespace,
                from_entity: r.from_entity,
                to_entity: r.to_entity,
                from_name: String::new(),
                to_name: String::new(),
                relation_type: r.relation_type,
                importance: r.importance,
                thread_id: r.thread_id,
                created_at: r.created_at,
                valid_from: r.valid_from,
                valid_until: r.valid_until,
            })
        }
        ExportKind::Mention => {
            let m: MentionArg = item.extract()?;
            Restorable::Mention {
                memory_id: m.memory_id,
                entity_id: m.entity_id,
                explicit: m.explicit,
            }
        }
        ExportKind::Turn => {
            let t: TurnArg = item.extract()?;
            let procedures = t
                .procedures
                .into_iter()
                .map(|p| {
                    let contents = p.documents.iter().map(|v| v.content.clone()).collect();
                    let versions = p
                        .documents
                        .into_iter()
                        .map(|v| DocVersion {
                            id: v.id,
                            document_id: v.document_id,
                            canonical: v.path,
                            version: v.version,
                            content_hash: v.content_hash,
                            size: v.size,
                            provenance: v.provenance,
                            turn_id: v.turn_id,
                            created_at: v.created_at,
                            has_content: v.content.is_some(),
                        })
                        .collect();
                    (
                        Procedure {
                            id: p.id,
                            turn_id: t.id.clone(),
                            position: p.position,
                            tool: p.tool,
                            args: p.args,
                            created_at: p.created_at,
                            versions,
                        },
                        contents,
                    )
                })
                .collect();
            Restorable::Turn(
                Turn {
                    id: t.id,
                    namespace: t.namespace,
                    conversation_id: t.conversation_id,
                    turn_key: t.turn_id,
                    turn_index: t.turn_index,
                    user_text: t.user_text,
                    agent_text: t.agent_text,
                    thread_id: t.thread_id,
                    created_at: t.created_at,
                },
                procedures,
                vector_of(item)?,
            )
        }
        ExportKind::Chunk => {
            let c: ChunkArg = item.extract()?;
            Restorable::Chunk(
                CodeChunk {
                    id: c.id,
                    namespace: c.namespace,
                    project_id: c.project_id,
                    file_path: c.file_path,
                    language: c.language,
                    start_line: c.start_line,
                    end_line: c.end_line,
                    chunk_type: c.chunk_type,
                    name: c.name,
                    parent_scope: c.parent_scope,
                    content: c.content,
                    content_hash: c.content_hash,
                    indexed_at: c.indexed_at,
                },
                vector_of(item)?,
            )
        }
    })
}

#[pymethods]
impl PyEngine {
    /// Record types in the order an import should replay them.
    #[staticmethod]
    fn export_kinds() -> Vec<&'static str> {
        ExportKind::ALL.iter().map(|k| k.as_str()).collect()
    }

    /// One page of records of `kind` ordered by id after `after` ("" to
    /// start); each a dict with `type`, every field and, with
    /// `with_vectors`, its `vector`. A mention's cursor is
    /// "memory_id<TAB>entity_id".
    #[pyo3(signature = (kind, *, namespace = None, after = "", limit = 1000, with_vectors = false))]
    fn export_page<'py>(
        &self,
        py: Python<'py>,
        kind: &str,
        namespace: Option<&str>,
        after: &str,
        limit: usize,
        with_vectors: bool,
    ) -> BindResult<Vec<Bound<'py, PyDict>>> {
        let engine = self.engine()?;
        let kind = ExportKind::parse(kind)?;
        let page = run(py, &engine, || {
            engine.export_page(kind, namespace, after, limit, with_vectors)
        })?;
        Ok(page
            .iter()
            .map(|r| {
                let d = record_dict(py, r)?;
                d.set_item("type", kind.as_str())?;
                Ok(d)
            })
            .collect::<PyResult<_>>()?)
    }

    /// Restore exported records (one transaction for the batch). An existing
    /// id fails the batch unless `skip_existing`.
    ///
    /// Returns:
    ///     `{"restored", "skipped"}`.
    #[pyo3(signature = (records, *, skip_existing = false))]
    fn restore<'py>(
        &self,
        py: Python<'py>,
        records: Vec<Bound<'py, PyAny>>,
        skip_existing: bool,
    ) -> BindResult<Bound<'py, PyDict>> {
        let engine = self.engine()?;
        let parsed = records
            .iter()
            .enumerate()
            .map(|(i, r)| {
                parse_record(r).map_err(|e| {
                    InvalidParameterError::new_err(format!("record {i} is malformed: {e}"))
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        let report = run_write(py, &engine, parsed, |parsed| {
            engine.restore(parsed, skip_existing)
        })?;
        let d = PyDict::new(py);
        d.set_item("restored", report.restored)?;
        d.set_item("skipped", report.skipped)?;
        Ok(d)
    }
}
