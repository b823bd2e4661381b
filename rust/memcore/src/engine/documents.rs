//! How each record kind appears to the derived state: its catalog labels,
//! its graph links, and its indexed content when the op log is replayed.

use std::collections::HashMap;

use rusqlite::Connection;

use crate::catalog::{Catalog, DocLabels};
use crate::error::Result;
use crate::graph::{Edge, Graph, Node};
use crate::kind::Kind;
use crate::knowledge::{Entity, Observation, Relation};
use crate::memory::Memory;
use crate::store::{code, conversations, entities, memories, relations};
use crate::temporal::{Timestamp, effective_end};

/// The content an index holds for one document key.
#[derive(Debug, Clone)]
pub struct IndexDoc {
    pub key: u64,
    pub text: String,
    pub vector: Option<Vec<f32>>,
}

/// Catalog labels of a memory.
pub fn memory_labels(m: &Memory) -> DocLabels<'_> {
    DocLabels {
        kind: Kind::Memory,
        namespace: &m.namespace,
        thread: m.thread_id.as_deref(),
        scope: None,
        tag: None,
        valid_from: m.valid_from,
        valid_end: effective_end(m.valid_until, m.expires_at),
        superseded: m.superseded_by.is_some(),
    }
}

/// Catalog labels of a memory from its catalog row.
pub fn memory_row_labels(row: &memories::CatalogRow) -> DocLabels<'_> {
    DocLabels {
        kind: Kind::Memory,
        namespace: &row.namespace,
        thread: row.thread_id.as_deref(),
        scope: None,
        tag: None,
        valid_from: row.valid_from,
        valid_end: effective_end(row.valid_until, row.expires_at),
        superseded: row.superseded,
    }
}

/// Catalog labels of an entity's document (scoped by the entity itself).
pub fn entity_labels(e: &Entity) -> DocLabels<'_> {
    DocLabels {
        kind: Kind::Entity,
        namespace: &e.namespace,
        thread: e.thread_id.as_deref(),
        scope: Some(&e.id),
        tag: None,
        valid_from: e.valid_from,
        valid_end: e.valid_until,
        superseded: false,
    }
}

/// Catalog labels of an observation (scoped by its entity).
pub fn observation_labels(o: &Observation) -> DocLabels<'_> {
    DocLabels {
        kind: Kind::Observation,
        namespace: &o.namespace,
        thread: o.thread_id.as_deref(),
        scope: Some(&o.entity_id),
        tag: None,
        valid_from: o.valid_from,
        valid_end: o.valid_until,
        superseded: o.superseded_by.is_some(),
    }
}

/// The graph node of an entity.
pub fn entity_node(e: &Entity, doc_key: u64) -> Node {
    Node {
        entity_id: e.id.clone(),
        namespace: e.namespace.clone(),
        name: e.name.clone(),
        entity_type: e.entity_type.clone(),
        importance: e.importance as f32,
        thread_id: e.thread_id.clone(),
        doc_key,
        alive: true,
    }
}

/// The graph edge of a relation (None when an end is not in the graph).
pub fn relation_edge(graph: &Graph, r: &Relation) -> Option<Edge> {
    Some(Edge {
        relation_id: r.id.clone(),
        from: graph.by_entity(&r.from_entity)?,
        to: graph.by_entity(&r.to_entity)?,
        relation_type: r.relation_type.clone(),
        weight: r.importance as f32,
        valid_from: r.valid_from,
        valid_end: r.valid_until.unwrap_or(Timestamp::MAX),
        alive: true,
    })
}

/// Memory id → current document key, from the catalog scan (for mentions).
pub type MemoryKeys = HashMap<String, u64>;

/// Fill `catalog` from every searchable table; returns every memory's key.
pub fn load_catalog(conn: &Connection, catalog: &mut Catalog) -> Result<MemoryKeys> {
    let mut keys = MemoryKeys::new();
    memories::catalog_rows(conn, |row| {
        catalog.insert(row.doc_key, &memory_row_labels(&row));
        keys.insert(row.id, row.doc_key);
    })?;
    entities::entity_catalog_rows(conn, |(key, ns, thread, from, until, id)| {
        catalog.insert(
            key,
            &DocLabels {
                kind: Kind::Entity,
                namespace: &ns,
                thread: thread.as_deref(),
                scope: Some(&id),
                tag: None,
                valid_from: from,
                valid_end: until,
                superseded: false,
            },
        );
    })?;
    code::chunk_catalog_rows(conn, |key, ns, project, language, at| {
        catalog.insert(
            key,
            &DocLabels {
                kind: Kind::CodeChunk,
                namespace: &ns,
                thread: None,
                scope: Some(&project),
                tag: Some(&language),
                valid_from: at,
                valid_end: None,
                superseded: false,
            },
        );
    })?;
    conversations::turn_catalog_rows(conn, |(key, ns, thread, conversation, at, archived)| {
        catalog.insert(
            key,
            &DocLabels {
                kind: Kind::UserTurn,
                namespace: &ns,
                thread: thread.as_deref(),
                scope: Some(&conversation),
                tag: None,
                valid_from: at,
                valid_end: archived,
                superseded: false,
            },
        );
    })?;
    entities::observation_catalog_rows(
        conn,
        |(key, ns, thread, from, until, superseded, entity)| {
            catalog.insert(
                key,
                &DocLabels {
                    kind: Kind::Observation,
                    namespace: &ns,
                    thread: thread.as_deref(),
                    scope: Some(&entity),
                    tag: None,
                    valid_from: from,
                    valid_end: until,
                    superseded,
                },
            );
        },
    )?;
    Ok(keys)
}

/// Rebuild the in-memory graph: entities, relations, mentions and the
/// observation → entity links.
pub fn load_graph(conn: &Connection, graph: &mut Graph, memory_keys: &MemoryKeys) -> Result<()> {
    graph.clear();
    entities::graph_rows(conn, |entity, key| {
        graph.add_node(entity_node(&entity, key));
    })?;
    relations::graph_rows(conn, |r| {
        if let (Some(from), Some(to)) = (graph.by_entity(r.from), graph.by_entity(r.to)) {
            graph.add_edge(Edge {
                relation_id: r.id.to_owned(),
                from,
                to,
                relation_type: r.relation_type.to_owned(),
                weight: r.importance as f32,
                valid_from: r.valid_from,
                valid_end: r.valid_until.unwrap_or(Timestamp::MAX),
                alive: true,
            });
        }
    })?;
    let mut mentions: HashMap<u64, Vec<u32>> = HashMap::new();
    relations::all_mentions(conn, |memory, entity| {
        if let (Some(&doc), Some(node)) = (memory_keys.get(memory), graph.by_entity(entity)) {
            mentions.entry(doc).or_default().push(node);
        }
    })?;
    for (doc, nodes) in mentions {
        graph.link_doc(doc, nodes, true);
    }
    entities::observation_catalog_rows(conn, |(key, _, _, _, _, _, entity)| {
        if let Some(node) = graph.by_entity(&entity) {
            graph.link_doc(key, vec![node], false);
        }
    })
}

/// The current indexed content of a record, if it still exists.
pub fn load_index_doc(conn: &Connection, kind: Kind, record_id: &str) -> Result<Option<IndexDoc>> {
    let found = match kind {
        Kind::Memory => memories::index_doc(conn, record_id)?,
        Kind::Entity => entities::index_doc(conn, record_id)?,
        Kind::Observation => entities::observation_index_doc(conn, record_id)?,
        Kind::UserTurn => conversations::turn_index_doc(conn, record_id)?,
        Kind::CodeChunk => code::chunk_index_doc(conn, record_id)?,
    };
    Ok(found.map(|(key, text, vector)| IndexDoc { key, text, vector }))
}
