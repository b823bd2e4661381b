//! Restoring exported records with their original ids and times (import).
//!
//! Records go through the same write path as live writes — op log, catalog,
//! index queue, graph — but keep the ids, timestamps, validity and links
//! they had, so an export/import round trip is exact. A batch is one
//! transaction: all of it or none of it.

use std::sync::Arc;

use super::Engine;
use super::code::chunk_labels;
use super::conversation::turn_labels;
use super::documents::{entity_labels, memory_labels, observation_labels};
use super::graph_write::GraphChange;
use super::indexes::Change;
use crate::code::CodeChunk;
use crate::conversation::{DocVersion, Procedure, Turn};
use crate::error::{Error, Result};
use crate::kind::Kind;
use crate::knowledge::rules::name_key;
use crate::knowledge::{Entity, Observation, Relation};
use crate::memory::Memory;
use crate::store::code::CodeChunks;
use crate::store::conversations::Turns;
use crate::store::entities::{Entities, Observations};
use crate::store::memories::Memories;
use crate::store::oplog::{self, Action};
use crate::store::relations::Relations;
use crate::store::table;
use crate::store::{code, conversations as conv, entities as ent, memories, relations as rel};
use crate::temporal::now_micros;

/// One exported record.
#[derive(Debug, Clone)]
pub enum Restorable {
    Memory(Memory, Option<Vec<f32>>),
    Entity(Entity, Option<Vec<f32>>),
    Observation(Observation, Option<Vec<f32>>),
    Relation(Relation),
    Mention {
        memory_id: String,
        entity_id: String,
        explicit: bool,
    },
    /// A turn with its procedures and the document versions they touched
    /// (each version carries its content, if it was kept).
    Turn(
        Turn,
        Vec<(Procedure, Vec<Option<String>>)>,
        Option<Vec<f32>>,
    ),
    Chunk(CodeChunk, Option<Vec<f32>>),
}

/// What a restore did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RestoreReport {
    pub restored: usize,
    /// Records whose id already existed (only with `skip_existing`).
    pub skipped: usize,
}

/// Work to do after commit for one restored record.
enum After {
    Doc {
        seq: i64,
        record: Box<Restorable>,
        vector: Option<Vec<f32>>,
    },
    Graph(Box<GraphChange>),
}

impl Engine {
    /// Restore a batch of exported records in one transaction. An id that
    /// already exists fails the batch, unless `skip_existing`.
    pub fn restore(&self, records: Vec<Restorable>, skip_existing: bool) -> Result<RestoreReport> {
        let now = now_micros();
        self.store.write_then(
            |tx| {
                let mut report = RestoreReport::default();
                let mut after = Vec::with_capacity(records.len());
                for record in records {
                    if Self::exists(tx, &record)? {
                        if skip_existing {
                            report.skipped += 1;
                            continue;
                        }
                        return Err(Error::invalid(
                            "id",
                            format!(
                                "{} already exists; import with skip_existing to keep it.",
                                describe(&record)
                            ),
                        ));
                    }
                    after.push(self.restore_one(tx, record, now)?);
                    report.restored += 1;
                }
                Ok((report, after))
            },
            |(report, after)| {
                for step in after {
                    self.apply_restored(step);
                }
                report
            },
        )
    }

    fn exists(tx: &rusqlite::Connection, record: &Restorable) -> Result<bool> {
        let (table, id) = match record {
            Restorable::Memory(m, _) => ("memories", m.id.as_str()),
            Restorable::Entity(e, _) => ("entities", e.id.as_str()),
            Restorable::Observation(o, _) => ("observations", o.id.as_str()),
            Restorable::Relation(r) => ("relations", r.id.as_str()),
            Restorable::Turn(t, _, _) => ("turns", t.id.as_str()),
            Restorable::Chunk(c, _) => ("code_chunks", c.id.as_str()),
            Restorable::Mention {
                memory_id,
                entity_id,
                ..
            } => {
                return Ok(tx
                    .prepare_cached(
                        "SELECT 1 FROM mentions WHERE memory_id = ?1 AND entity_id = ?2",
                    )?
                    .exists([memory_id, entity_id])?);
            }
        };
        Ok(tx
            .prepare_cached(&format!("SELECT 1 FROM {table} WHERE id = ?1"))?
            .exists([id])?)
    }

    fn restore_one(
        &self,
        tx: &rusqlite::Connection,
        record: Restorable,
        now: i64,
    ) -> Result<After> {
        let doc = |kind: Kind, id: &str, ns: &str| {
            oplog::append(tx, now, Action::Upsert, kind, id, ns, None)
        };
        Ok(match record {
            Restorable::Memory(m, v) => {
                let vector = self.checked_vector(tx, v)?;
                let seq = doc(Kind::Memory, &m.id, &m.namespace)?;
                memories::insert(tx, &m, seq, vector.as_deref())?;
                After::Doc {
                    seq,
                    record: Box::new(Restorable::Memory(m, None)),
                    vector,
                }
            }
            Restorable::Entity(e, v) => {
                let vector = self.checked_vector(tx, v)?;
                let seq = doc(Kind::Entity, &e.id, &e.namespace)?;
                ent::insert(tx, &e, &name_key(&e.name), seq, vector.as_deref())?;
                After::Doc {
                    seq,
                    record: Box::new(Restorable::Entity(e, None)),
                    vector,
                }
            }
            Restorable::Observation(o, v) => {
                let vector = self.checked_vector(tx, v)?;
                let seq = doc(Kind::Observation, &o.id, &o.namespace)?;
                ent::insert_observation(tx, &o, seq, vector.as_deref())?;
                After::Doc {
                    seq,
                    record: Box::new(Restorable::Observation(o, None)),
                    vector,
                }
            }
            Restorable::Relation(r) => {
                rel::insert(tx, &r)?;
                After::Graph(Box::new(GraphChange::Relation(r)))
            }
            Restorable::Mention {
                memory_id,
                entity_id,
                explicit,
            } => {
                rel::add_mention(tx, &memory_id, &entity_id, explicit)?;
                let key = table::doc_key::<Memories>(tx, &memory_id)?.unwrap_or_default();
                After::Graph(Box::new(GraphChange::Mention {
                    doc_key: key as u64,
                    entity_id,
                }))
            }
            Restorable::Turn(t, procedures, v) => {
                conv::touch_conversation(tx, &t.namespace, &t.conversation_id, t.created_at)?;
                let vector = self.checked_vector(tx, v)?;
                let seq = doc(Kind::UserTurn, &t.id, &t.namespace)?;
                conv::insert_turn(tx, &t, seq, vector.as_deref())?;
                for (p, contents) in &procedures {
                    conv::insert_procedure(tx, p)?;
                    for (version, content) in p.versions.iter().zip(contents) {
                        restore_version(tx, &t.namespace, version, content.as_deref())?;
                        conv::link_procedure(tx, &p.id, &version.id)?;
                        let document = conv::document_id(tx, &t.namespace, &version.canonical)?
                            .unwrap_or_else(|| version.document_id.clone());
                        conv::record_touch(tx, &document, &t)?;
                    }
                }
                // The record travels on only to be indexed: by its search text.
                let mut indexed = t;
                indexed.user_text = conv::turn_search_text(
                    tx,
                    &indexed.namespace,
                    &indexed.conversation_id,
                    indexed.turn_index,
                    indexed.created_at,
                    &indexed.user_text,
                )?;
                After::Doc {
                    seq,
                    record: Box::new(Restorable::Turn(indexed, Vec::new(), None)),
                    vector,
                }
            }
            Restorable::Chunk(c, v) => {
                let vector = self.checked_vector(tx, v)?;
                let seq = doc(Kind::CodeChunk, &c.id, &c.namespace)?;
                code::insert_chunk(tx, &c, seq, vector.as_deref())?;
                After::Doc {
                    seq,
                    record: Box::new(Restorable::Chunk(c, None)),
                    vector,
                }
            }
        })
    }

    fn apply_restored(&self, step: After) {
        let (seq, record, vector) = match step {
            After::Graph(change) => return self.apply_graph_changes(vec![*change]),
            After::Doc {
                seq,
                record,
                vector,
            } => (seq, *record, vector),
        };
        if let Some(v) = &vector {
            self.note_dim(v.len());
        }
        let vector = vector.map(Arc::from);
        let key = seq as u64;
        match &record {
            Restorable::Memory(m, _) => {
                self.publish(seq, &upsert(key, memory_labels(m), &m.content, vector));
            }
            Restorable::Entity(e, _) => {
                self.indexes
                    .graph
                    .write()
                    .add_node(super::documents::entity_node(e, key));
                let text = Entity::document_text(&e.name, &e.entity_type, e.description.as_deref());
                self.publish(seq, &upsert(key, entity_labels(e), &text, vector));
            }
            Restorable::Observation(o, _) => {
                {
                    let mut graph = self.indexes.graph.write();
                    if let Some(node) = graph.by_entity(&o.entity_id) {
                        graph.link_doc(key, vec![node], false);
                    }
                }
                self.publish(seq, &upsert(key, observation_labels(o), &o.content, vector));
            }
            Restorable::Turn(t, _, _) => self.publish(
                seq,
                &upsert(key, turn_labels(t, None), &t.user_text, vector),
            ),
            Restorable::Chunk(c, _) => {
                self.publish(seq, &upsert(key, chunk_labels(c), &c.content, vector));
            }
            Restorable::Relation(_) | Restorable::Mention { .. } => {}
        }
    }
}

fn upsert<'a>(
    key: u64,
    labels: crate::catalog::DocLabels<'a>,
    text: &'a str,
    vector: Option<Arc<[f32]>>,
) -> Change<'a> {
    Change::Upsert {
        key,
        prev: None,
        labels,
        text,
        vector,
    }
}

/// Insert a document version (and its document) unless it exists.
fn restore_version(
    tx: &rusqlite::Connection,
    namespace: &str,
    v: &DocVersion,
    content: Option<&str>,
) -> Result<()> {
    if conv::document_id(tx, namespace, &v.canonical)?.is_none() {
        conv::insert_document(tx, &v.document_id, namespace, &v.canonical, v.created_at)?;
    }
    let known = tx
        .prepare_cached("SELECT 1 FROM doc_versions WHERE id = ?1")?
        .exists([&v.id])?;
    if !known {
        conv::insert_version(tx, v, content)?;
    }
    Ok(())
}

fn describe(record: &Restorable) -> String {
    match record {
        Restorable::Memory(m, _) => format!("Memory {}", m.id),
        Restorable::Entity(e, _) => format!("Entity {}", e.id),
        Restorable::Observation(o, _) => format!("Observation {}", o.id),
        Restorable::Relation(r) => format!("Relation {}", r.id),
        Restorable::Turn(t, _, _) => format!("Turn {}", t.id),
        Restorable::Chunk(c, _) => format!("Code chunk {}", c.id),
        Restorable::Mention { memory_id, .. } => format!("Mention of {memory_id}"),
    }
}

/// The record kinds an export walks, in an order imports can replay
/// (entities before their observations, relations and mentions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    Memory,
    Entity,
    Observation,
    Relation,
    Mention,
    Turn,
    Chunk,
}

impl ExportKind {
    /// Every kind in replay order.
    pub const ALL: [ExportKind; 7] = [
        ExportKind::Memory,
        ExportKind::Entity,
        ExportKind::Observation,
        ExportKind::Relation,
        ExportKind::Mention,
        ExportKind::Turn,
        ExportKind::Chunk,
    ];

    /// The record type name used in export files.
    pub fn as_str(self) -> &'static str {
        match self {
            ExportKind::Memory => "memory",
            ExportKind::Entity => "entity",
            ExportKind::Observation => "observation",
            ExportKind::Relation => "relation",
            ExportKind::Mention => "mention",
            ExportKind::Turn => "turn",
            ExportKind::Chunk => "code_chunk",
        }
    }

    /// Parse a record type name.
    pub fn parse(name: &str) -> Result<ExportKind> {
        ExportKind::ALL
            .into_iter()
            .find(|k| k.as_str() == name)
            .ok_or_else(|| Error::invalid("type", format!("Unknown record type '{name}'.")))
    }
}

impl Engine {
    /// One page of records of a kind, ordered by id after the cursor `after`
    /// ("" to start); vectors included when `with_vectors`.
    pub fn export_page(
        &self,
        kind: ExportKind,
        namespace: Option<&str>,
        after: &str,
        limit: usize,
        with_vectors: bool,
    ) -> Result<Vec<Restorable>> {
        let conn = self.store.reader()?;
        let vector = |k: Kind, id: &str| -> Result<Option<Vec<f32>>> {
            if !with_vectors {
                return Ok(None);
            }
            Ok(super::documents::load_index_doc(&conn, k, id)?.and_then(|d| d.vector))
        };
        let mut out = Vec::new();
        match kind {
            ExportKind::Memory => {
                for m in table::page::<Memories>(&conn, namespace, after, limit)? {
                    let v = vector(Kind::Memory, &m.id)?;
                    out.push(Restorable::Memory(m, v));
                }
            }
            ExportKind::Entity => {
                for e in table::page::<Entities>(&conn, namespace, after, limit)? {
                    let v = vector(Kind::Entity, &e.id)?;
                    out.push(Restorable::Entity(e, v));
                }
            }
            ExportKind::Observation => {
                for o in table::page::<Observations>(&conn, namespace, after, limit)? {
                    let v = vector(Kind::Observation, &o.id)?;
                    out.push(Restorable::Observation(o, v));
                }
            }
            ExportKind::Relation => out.extend(
                table::page::<Relations>(&conn, namespace, after, limit)?
                    .into_iter()
                    .map(Restorable::Relation),
            ),
            ExportKind::Mention => out.extend(
                rel::mention_page(&conn, namespace, after, limit)?
                    .into_iter()
                    .map(|(memory_id, entity_id, explicit)| Restorable::Mention {
                        memory_id,
                        entity_id,
                        explicit,
                    }),
            ),
            ExportKind::Turn => {
                for t in table::page::<Turns>(&conn, namespace, after, limit)? {
                    let mut procedures = Vec::new();
                    for p in conv::procedures_of(&conn, &t.id)? {
                        let contents = p
                            .versions
                            .iter()
                            .map(|v| conv::version_content(&conn, &v.id))
                            .collect::<Result<Vec<_>>>()?;
                        procedures.push((p, contents));
                    }
                    let v = vector(Kind::UserTurn, &t.id)?;
                    out.push(Restorable::Turn(t, procedures, v));
                }
            }
            ExportKind::Chunk => {
                for c in table::page::<CodeChunks>(&conn, namespace, after, limit)? {
                    let v = vector(Kind::CodeChunk, &c.id)?;
                    out.push(Restorable::Chunk(c, v));
                }
            }
        }
        Ok(out)
    }
}
