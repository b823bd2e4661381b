//! The knowledge graph's records: entities, their observations (versioned
//! atomic facts) and the relations between them, plus the rules every write
//! obeys (`rules`) and the `save_memory` request contract (`save`).

pub mod rules;
pub mod save;

use crate::temporal::Timestamp;

/// A node of the graph: a person, project, file, concept…
#[derive(Debug, Clone, PartialEq)]
pub struct Entity {
    pub id: String,
    pub namespace: String,
    pub name: String,
    pub entity_type: String,
    pub description: Option<String>,
    pub importance: f64,
    pub confidence: f64,
    pub thread_id: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub valid_from: Timestamp,
    pub valid_until: Option<Timestamp>,
}

impl Entity {
    /// The text an entity is searched by: name, type and description.
    pub fn document_text(name: &str, entity_type: &str, description: Option<&str>) -> String {
        match description {
            Some(d) if !d.trim().is_empty() => format!("{name} ({entity_type}): {d}"),
            _ => format!("{name} ({entity_type})"),
        }
    }
}

/// One atomic fact about an entity. A new version supersedes the previous
/// one, which keeps its history but leaves current reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    pub id: String,
    pub namespace: String,
    pub entity_id: String,
    pub entity_name: String,
    pub content: String,
    pub version: i64,
    pub supersedes: Option<String>,
    pub superseded_by: Option<String>,
    pub thread_id: Option<String>,
    pub confidence: f64,
    pub importance: f64,
    pub created_at: Timestamp,
    pub valid_from: Timestamp,
    pub valid_until: Option<Timestamp>,
}

/// A directed, typed, weighted edge between two entities.
#[derive(Debug, Clone, PartialEq)]
pub struct Relation {
    pub id: String,
    pub namespace: String,
    pub from_entity: String,
    pub to_entity: String,
    pub from_name: String,
    pub to_name: String,
    pub relation_type: String,
    /// Edge weight in 0..1 (default 0.7).
    pub importance: f64,
    pub thread_id: Option<String>,
    pub created_at: Timestamp,
    pub valid_from: Timestamp,
    pub valid_until: Option<Timestamp>,
}

/// Default weight of a relation.
pub const DEFAULT_RELATION_IMPORTANCE: f64 = 0.7;
/// Type given to entities created implicitly (an explicit mention of an
/// unknown name on `store_memory`).
pub const IMPLICIT_ENTITY_TYPE: &str = "Entity";
