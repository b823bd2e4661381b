//! Writes of every kind the PostgreSQL tests ship: an entity with
//! observations, a relation and vectors; a turn with a procedure that
//! touched a document (so the child tables get rows too).

use memcore::conversation::{DocumentObservation, NewTurn, ProcedureRecord};
use memcore::knowledge::save::{EntityDraft, RelationDraft};

/// A person who `knows` `target`, with one observation and 4-d vectors.
pub fn entity(name: &str, target: &str) -> EntityDraft {
    EntityDraft {
        name: name.into(),
        entity_type: "Person".into(),
        observations: vec![format!("{name} writes Rust daily")],
        relations: vec![RelationDraft {
            target: target.into(),
            relation_type: "knows".into(),
            importance: None,
        }],
        embedding: Some(vec![0.5, -0.25, 1.0, 0.0]),
        observation_embeddings: vec![Some(vec![0.1, 0.2, 0.3, 0.4])],
        ..EntityDraft::default()
    }
}

/// A turn of conversation `c1` in `namespace` whose EDIT wrote `src/auth.py`.
pub fn edit_turn(namespace: &str) -> NewTurn {
    NewTurn {
        namespace: namespace.into(),
        conversation_id: "c1".into(),
        turn_key: "k1".into(),
        user_text: "fix the login bug".into(),
        agent_text: Some("fixed the token check".into()),
        procedures: vec![ProcedureRecord {
            tool: "EDIT".into(),
            args: "{}".into(),
            at: None,
            documents: vec![DocumentObservation {
                canonical: "src/auth.py".into(),
                content_hash: "h1".into(),
                content: Some("def check(): ...".into()),
                size: Some(16),
                written: true,
            }],
        }],
        ..NewTurn::default()
    }
}
