//! `save_memory`: the whole request validated, then written in one transaction.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use rusqlite::Connection;

use super::WriteContext;
use super::blocks::{entity_id, observation_drafts};
use crate::engine::Engine;
use crate::error::Result;
use crate::knowledge::rules::{COMMON_ENTITY_TYPES, closest_type, name_key, normalize_entity_type};
use crate::knowledge::save::{self, SaveOutcome, SaveRequest};
use crate::memory::validate_namespace;
use crate::store::entities as ent;
use crate::temporal::now_micros;

impl Engine {
    /// `save_memory`: validate the whole request (nothing is written on any
    /// problem), then create or extend every entity with its observations
    /// and relations in one transaction.
    pub fn save_memory(&self, request: &SaveRequest) -> Result<SaveOutcome> {
        validate_namespace(&request.namespace)?;
        let now = now_micros();
        self.graph_stats.saves.fetch_add(1, Ordering::Relaxed);
        self.store.write_then(
            |tx| {
                let ns = request.namespace.as_str();
                let exists = |key: &str| ent::by_name(tx, ns, key).is_ok_and(|e| e.is_some());
                let problems = save::validate(request, &exists);
                if !problems.is_empty() {
                    self.graph_stats
                        .rejected_saves
                        .fetch_add(1, Ordering::Relaxed);
                    return Err(save::rejection(&problems));
                }
                let mut outcome = SaveOutcome {
                    quality_score: save::quality_score(request),
                    warnings: type_suggestions(tx, request)?,
                    ..SaveOutcome::default()
                };
                let ctx = WriteContext {
                    namespace: request.namespace.clone(),
                    thread_id: Some(request.thread_id.clone()).filter(|t| !t.is_empty()),
                    ..WriteContext::default()
                };
                let mut changes = Vec::new();
                let mut ids: HashMap<String, String> = HashMap::new();
                for draft in &request.entities {
                    let (entity, created, warnings) =
                        self.upsert_entity(tx, &ctx, draft, now, &mut changes)?;
                    outcome.warnings.extend(warnings);
                    if created {
                        outcome.entities_created += 1;
                    } else {
                        outcome.entities_updated += 1;
                    }
                    let drafts = observation_drafts(draft);
                    let ctx = WriteContext {
                        confidence: draft.confidence,
                        importance: draft.importance,
                        ..ctx.clone()
                    };
                    outcome.observations_created += self
                        .insert_observations(tx, &ctx, &entity, &drafts, now, &mut changes)?
                        .len();
                    ids.insert(name_key(&entity.name), entity.id);
                }
                for draft in &request.entities {
                    let from = ids[&name_key(&draft.name)].clone();
                    for r in &draft.relations {
                        let to = match ids.get(&name_key(&r.target)) {
                            Some(id) => id.clone(),
                            None => entity_id(tx, ns, &r.target)?,
                        };
                        if self.insert_relation(tx, &ctx, &from, &to, r, now, &mut changes)? {
                            outcome.relations_created += 1;
                        }
                    }
                }
                Ok((outcome, changes))
            },
            |(outcome, changes)| {
                self.apply_graph_changes(changes);
                outcome
            },
        )
    }
}

/// A warning for each entity whose type is a near miss of a type the namespace already
/// has or of a common one ("Persn" -> "Person"): types are free text, but one kind of
/// thing under two spellings splits `query_nodes` and analytics.
fn type_suggestions(tx: &Connection, request: &SaveRequest) -> Result<Vec<String>> {
    let known: Vec<String> = tx
        .prepare_cached("SELECT DISTINCT entity_type FROM entities WHERE namespace = ?1")?
        .query_map([&request.namespace], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut warnings = Vec::new();
    for draft in &request.entities {
        let (given, _) = normalize_entity_type(&draft.name, &draft.entity_type);
        let candidates = known
            .iter()
            .map(String::as_str)
            .chain(COMMON_ENTITY_TYPES.iter().copied());
        if let Some(like) = closest_type(&given, candidates) {
            warnings.push(format!(
                "Entity '{}': entityType '{given}' looks like '{like}', a type this memory \
                 already uses or a common one; use '{like}' to keep one kind of thing under \
                 one type.",
                draft.name
            ));
        }
    }
    Ok(warnings)
}
