//! Knowledge-graph writes: save_memory and the reference server's
//! operations. Each is one transaction; the graph, catalog and index queue
//! learn about it after commit, under the writer lock, in commit order.
//!
//! - `save.rs`: `save_memory`, the validated write of a whole request;
//! - `crud.rs`: the reference server's create and delete operations;
//! - `blocks.rs`: the steps both run inside their transaction (upsert an
//!   entity, insert observations and relations, link existing memories);
//! - `apply.rs`: committed changes applied to the graph, catalog and index queue.

mod apply;
mod blocks;
mod crud;
mod save;

use crate::knowledge::{Entity, Observation, Relation};

pub(super) use blocks::entity_by_name;

/// A committed graph write, applied to the in-memory state after commit.
#[derive(Debug)]
pub(super) enum GraphChange {
    Entity {
        entity: Entity,
        key: i64,
        prev: Option<i64>,
        vector: Option<Vec<f32>>,
    },
    Observation {
        observation: Observation,
        key: i64,
        vector: Option<Vec<f32>>,
    },
    /// An observation closed (superseded or retracted) under a meta op.
    ObservationClosed {
        observation: Observation,
        seq: i64,
        key: i64,
    },
    ObservationDeleted {
        seq: i64,
        key: i64,
    },
    Relation(Relation),
    RelationDeleted(String),
    EntityDeleted {
        entity_id: String,
        seq: i64,
        keys: Vec<i64>,
    },
    /// A memory document now mentions an entity.
    Mention {
        doc_key: u64,
        entity_id: String,
    },
    /// A memory document's full set of entity links (replacing those of
    /// `prev`, its previous version); empty when the memory is gone.
    MemoryLinks {
        doc_key: u64,
        prev: Option<u64>,
        entity_ids: Vec<String>,
    },
}

/// An observation to add: its text, optional vector and the version it replaces.
#[derive(Debug, Clone, Default)]
pub struct ObservationDraft {
    pub content: String,
    pub embedding: Option<Vec<f32>>,
    pub supersedes: Option<String>,
}

/// Options shared by graph writes.
#[derive(Debug, Clone, Default)]
pub struct WriteContext {
    pub namespace: String,
    pub thread_id: Option<String>,
    pub confidence: Option<f64>,
    pub importance: Option<f64>,
}
