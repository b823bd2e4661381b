//! How well-formed a knowledge graph is (the knowledge-graph seed's success
//! metrics), reported by `get_analytics` for a thread and for the whole
//! namespace: relation coverage (share of entities with at least one relation
//! that holds), mean relations per entity, observation atomicity (share of
//! current observations within the contract's rules: 5-150 characters, at
//! most two sentences) and `save_memory`'s validation error rate since this
//! process opened the store. Entities made through the legacy tools or the
//! importer without a relation count against the coverage like any other.

use std::sync::atomic::{AtomicU64, Ordering};

use rusqlite::{Connection, params};

use crate::error::Result;
use crate::knowledge::rules::observation_problem;
use crate::temporal::Timestamp;

/// `save_memory` calls and validation rejections since open (per process).
#[derive(Debug, Default)]
pub struct GraphStats {
    pub saves: AtomicU64,
    pub rejected_saves: AtomicU64,
}

/// The success metrics of one scope (a thread, or the namespace).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GraphQuality {
    pub entities: usize,
    /// Entities with at least one relation that holds now.
    pub entities_with_relations: usize,
    /// `entities_with_relations / entities` (0 with no entity).
    pub relation_coverage: f64,
    /// Relations that hold, counted at each end, per entity.
    pub mean_relations_per_entity: f64,
    pub observations: usize,
    /// Current observations within the rules.
    pub atomic_observations: usize,
    /// `atomic_observations / observations` (1 with no observation).
    pub observation_atomicity: f64,
    /// `save_memory` calls of this process, store-wide.
    pub save_calls: u64,
    /// Their share refused by validation (0 with no call).
    pub save_error_rate: f64,
}

impl GraphQuality {
    /// The metrics from per-entity relation counts and the scope's observations.
    pub fn measure(
        relation_counts: &[usize],
        observations: &[String],
        stats: &GraphStats,
    ) -> GraphQuality {
        let entities = relation_counts.len();
        let related = relation_counts.iter().filter(|&&n| n > 0).count();
        let atomic = observations
            .iter()
            .filter(|o| observation_problem(o).is_none())
            .count();
        let saves = stats.saves.load(Ordering::Relaxed);
        let rejected = stats.rejected_saves.load(Ordering::Relaxed);
        GraphQuality {
            entities,
            entities_with_relations: related,
            relation_coverage: share(related, entities, 0.0),
            mean_relations_per_entity: share(relation_counts.iter().sum(), entities, 0.0),
            observations: observations.len(),
            atomic_observations: atomic,
            observation_atomicity: share(atomic, observations.len(), 1.0),
            save_calls: saves,
            save_error_rate: if saves == 0 {
                0.0
            } else {
                rejected as f64 / saves as f64
            },
        }
    }
}

fn share(part: usize, whole: usize, empty: f64) -> f64 {
    if whole == 0 {
        empty
    } else {
        part as f64 / whole as f64
    }
}

/// The current observations of the namespace's entities (of a thread's
/// entities when given).
pub fn current_observations(
    conn: &Connection,
    namespace: &str,
    thread_id: Option<&str>,
    now: Timestamp,
) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT o.content FROM observations o JOIN entities e ON e.id = o.entity_id
         WHERE o.namespace = ?1 AND o.superseded_by IS NULL
           AND (o.valid_until IS NULL OR o.valid_until > ?3)
           AND (?2 IS NULL OR e.thread_id = ?2)",
    )?;
    let rows = stmt.query_map(params![namespace, thread_id, now], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metrics_follow_their_definitions() {
        let stats = GraphStats::default();
        stats.saves.store(4, Ordering::Relaxed);
        stats.rejected_saves.store(1, Ordering::Relaxed);
        let q = GraphQuality::measure(
            &[2, 0, 1, 1],
            &[
                "Works at Acme".to_owned(),
                "x".to_owned(),
                "One. Two. Three.".to_owned(),
            ],
            &stats,
        );
        assert_eq!((q.entities, q.entities_with_relations), (4, 3));
        assert!((q.relation_coverage - 0.75).abs() < 1e-9);
        assert!((q.mean_relations_per_entity - 1.0).abs() < 1e-9);
        assert_eq!((q.observations, q.atomic_observations), (3, 1));
        assert!((q.save_error_rate - 0.25).abs() < 1e-9);
        let empty = GraphQuality::measure(&[], &[], &GraphStats::default());
        assert_eq!(
            (
                empty.relation_coverage,
                empty.observation_atomicity,
                empty.save_error_rate
            ),
            (0.0, 1.0, 0.0)
        );
    }
}
