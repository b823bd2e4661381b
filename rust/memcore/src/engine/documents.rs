//! How each record kind appears to the derived state: its catalog labels,
//! its graph links, and its indexed content when the op log is replayed.

use std::collections::HashMap;

use rusqlite::Connection;

use crate::asking::asking_percent;
use crate::catalog::{Catalog, DocLabels};
use crate::error::Result;
use crate::graph::{Edge, Graph, Node};
use crate::kind::Kind;
use crate::knowledge::{Entity, Observation, Relation};
use crate::memory::Memory;
use crate::store::code::CodeChunks;
use crate::store::conversations::Turns;
use crate::store::entities::{self, Entities, Observations};
use crate::store::memories::Memories;
use crate::store::relations;
use crate::store::table::{self, CatalogRow};
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
        tag: Some(m.memory_type.as_str()),
        valid_from: m.valid_from,
        valid_end: effective_end(m.valid_until, m.expires_at),
        superseded: m.superseded_by.is_some(),
        asks: asking_percent(&m.content),
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
        asks: 0,
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
        asks: 0,
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
    table::catalog_rows::<Memories>(conn, |row| {
        catalog.insert(row.doc_key, &row.labels());
        keys.extend(row.id.map(|id| (id, row.doc_key)));
    })?;
    let mut insert = |row: CatalogRow| catalog.insert(row.doc_key, &row.labels());
    table::catalog_rows::<Entities>(conn, &mut insert)?;
    table::catalog_rows::<CodeChunks>(conn, &mut insert)?;
    table::catalog_rows::<Turns>(conn, &mut insert)?;
    table::catalog_rows::<Observations>(conn, &mut insert)?;
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
    // An observation's catalog scope is its entity.
    table::catalog_rows::<Observations>(conn, |row| {
        if let Some(node) = row.scope.as_deref().and_then(|e| graph.by_entity(e)) {
            graph.link_doc(row.doc_key, vec![node], false);
        }
    })
}

/// The current indexed content of a record, if it still exists.
pub fn load_index_doc(conn: &Connection, kind: Kind, record_id: &str) -> Result<Option<IndexDoc>> {
    let found = match kind {
        Kind::Memory => table::index_doc::<Memories>(conn, record_id)?,
        Kind::Entity => table::index_doc::<Entities>(conn, record_id)?,
        Kind::Observation => table::index_doc::<Observations>(conn, record_id)?,
        Kind::UserTurn => table::index_doc::<Turns>(conn, record_id)?,
        Kind::CodeChunk => table::index_doc::<CodeChunks>(conn, record_id)?,
    };
    Ok(found.map(|(key, text, vector)| IndexDoc { key, text, vector }))
}
