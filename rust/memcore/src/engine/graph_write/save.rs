//! `save_memory`: the whole request validated, then written in one transaction.

use std::collections::HashMap;

use super::WriteContext;
use super::blocks::{entity_id, observation_drafts};
use crate::engine::Engine;
use crate::error::Result;
use crate::knowledge::rules::name_key;
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
        self.store.write_then(
            |tx| {
                let ns = request.namespace.as_str();
                let exists = |key: &str| ent::by_name(tx, ns, key).is_ok_and(|e| e.is_some());
                let problems = save::validate(request, &exists);
                if !problems.is_empty() {
                    return Err(save::rejection(&problems));
                }
                let mut outcome = SaveOutcome {
                    quality_score: save::quality_score(request),
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
