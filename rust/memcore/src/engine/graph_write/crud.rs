//! The reference MCP memory server's graph operations: create entities,
//! relations and observations, and delete them, each in one transaction.

use super::blocks::{entity_by_name, entity_id, observation_drafts};
use super::{GraphChange, ObservationDraft, WriteContext};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::kind::Kind;
use crate::knowledge::rules::{self, name_key};
use crate::knowledge::save::{self, EntityDraft, RelationDraft, SaveRequest};
use crate::knowledge::{Entity, Observation, Relation};
use crate::memory::{validate_namespace, validate_unit};
use crate::store::oplog::{self, Action};
use crate::store::{entities as ent, relations as rel};
use crate::temporal::now_micros;

impl Engine {
    /// The reference server's `create_entities`: new entities (existing
    /// names are skipped), each with optional observations. Returns the
    /// entities created.
    pub fn create_entities(
        &self,
        ctx: &WriteContext,
        drafts: Vec<EntityDraft>,
    ) -> Result<Vec<Entity>> {
        validate_namespace(&ctx.namespace)?;
        let request = SaveRequest {
            namespace: ctx.namespace.clone(),
            thread_id: ctx.thread_id.clone().unwrap_or_default(),
            entities: drafts,
            require_links: false,
        };
        let problems = save::validate(&request, &|_| true);
        if !problems.is_empty() {
            return Err(save::rejection(&problems));
        }
        let now = now_micros();
        self.store.write_then(
            |tx| {
                let mut changes = Vec::new();
                let mut created = Vec::new();
                for draft in &request.entities {
                    if ent::by_name(tx, &ctx.namespace, &name_key(&draft.name))?.is_some() {
                        continue;
                    }
                    let (entity, _, _) = self.upsert_entity(tx, ctx, draft, now, &mut changes)?;
                    let obs_ctx = WriteContext {
                        confidence: draft.confidence,
                        importance: draft.importance,
                        ..ctx.clone()
                    };
                    self.insert_observations(
                        tx,
                        &obs_ctx,
                        &entity,
                        &observation_drafts(draft),
                        now,
                        &mut changes,
                    )?;
                    created.push(entity);
                }
                Ok((created, changes))
            },
            |(created, changes)| {
                self.apply_graph_changes(changes);
                created
            },
        )
    }

    /// `create_relations`: relations between existing entities (duplicates
    /// are skipped). Returns the relations created.
    pub fn create_relations(
        &self,
        ctx: &WriteContext,
        relations: &[(String, RelationDraft)],
    ) -> Result<Vec<Relation>> {
        validate_namespace(&ctx.namespace)?;
        for (from, r) in relations {
            for (what, value) in [("relationType", &r.relation_type)] {
                if let Some(p) = rules::type_problem(what, value) {
                    return Err(Error::invalid("relationType", p));
                }
            }
            if let Some(importance) = r.importance {
                validate_unit("importance", importance)?;
            }
            if name_key(from) == name_key(&r.target) {
                return Err(Error::invalid(
                    "to",
                    format!("Entity '{from}' cannot relate to itself."),
                ));
            }
        }
        let now = now_micros();
        self.store.write_then(
            |tx| {
                let mut changes = Vec::new();
                for (from, r) in relations {
                    let from_id = entity_id(tx, &ctx.namespace, from)?;
                    let to_id = entity_id(tx, &ctx.namespace, &r.target)?;
                    self.insert_relation(tx, ctx, &from_id, &to_id, r, now, &mut changes)?;
                }
                Ok(changes)
            },
            |changes| {
                let created = changes
                    .iter()
                    .filter_map(|c| match c {
                        GraphChange::Relation(r) => Some(r.clone()),
                        _ => None,
                    })
                    .collect();
                self.apply_graph_changes(changes);
                created
            },
        )
    }

    /// Append observations to an entity; a draft with `supersedes` becomes
    /// the next version of that observation. Identical current observations
    /// are skipped. Returns the observations created.
    pub fn add_observations(
        &self,
        ctx: &WriteContext,
        entity_name: &str,
        drafts: &[ObservationDraft],
    ) -> Result<Vec<Observation>> {
        validate_namespace(&ctx.namespace)?;
        for (field, value) in [
            ("confidence", ctx.confidence),
            ("importance", ctx.importance),
        ] {
            if let Some(value) = value {
                validate_unit(field, value)?;
            }
        }
        for d in drafts {
            if let Some((problem, suggestion)) = rules::observation_problem(&d.content) {
                return Err(Error::ValidationFailed {
                    message: format!("Validation failed: {problem} (entity '{entity_name}')."),
                    details: serde_json::json!([{
                        "entity": entity_name, "value": d.content,
                        "problem": problem, "suggestion": suggestion,
                    }]),
                });
            }
        }
        let now = now_micros();
        self.store.write_then(
            |tx| {
                let entity = entity_by_name(tx, &ctx.namespace, entity_name)?;
                let mut changes = Vec::new();
                let created =
                    self.insert_observations(tx, ctx, &entity, drafts, now, &mut changes)?;
                Ok((created, changes))
            },
            |(created, changes)| {
                self.apply_graph_changes(changes);
                created
            },
        )
    }

    /// Delete entities by name with their observations, relations and
    /// mentions. Unknown names are ignored; returns the names deleted.
    pub fn delete_entities(&self, namespace: &str, names: &[String]) -> Result<Vec<String>> {
        validate_namespace(namespace)?;
        let now = now_micros();
        self.store.write_then(
            |tx| {
                let mut changes = Vec::new();
                let mut deleted = Vec::new();
                for name in names {
                    let Some(e) = ent::by_name(tx, namespace, &name_key(name))? else {
                        continue;
                    };
                    let keys = ent::delete(tx, &e.id)?;
                    let mut seq = 0;
                    for (record, key) in &keys {
                        let kind = if record == &e.id {
                            Kind::Entity
                        } else {
                            Kind::Observation
                        };
                        seq = oplog::append(
                            tx,
                            now,
                            Action::Delete,
                            kind,
                            record,
                            namespace,
                            Some(*key),
                        )?;
                    }
                    changes.push(GraphChange::EntityDeleted {
                        entity_id: e.id.clone(),
                        seq,
                        keys: keys.into_iter().map(|(_, k)| k).collect(),
                    });
                    deleted.push(e.name);
                }
                Ok((deleted, changes))
            },
            |(deleted, changes)| {
                self.apply_graph_changes(changes);
                deleted
            },
        )
    }

    /// Delete observations of an entity, each named by id or by exact
    /// content. Returns how many were deleted.
    pub fn delete_observations(
        &self,
        namespace: &str,
        entity_name: &str,
        which: &[String],
    ) -> Result<usize> {
        validate_namespace(namespace)?;
        let now = now_micros();
        self.store.write_then(
            |tx| {
                let entity = entity_by_name(tx, namespace, entity_name)?;
                let mut changes = Vec::new();
                for o in ent::observations_of(tx, &entity.id, false)? {
                    if !which.iter().any(|w| *w == o.id || *w == o.content) {
                        continue;
                    }
                    if let Some(key) = ent::delete_observation(tx, &o.id)? {
                        let seq = oplog::append(
                            tx,
                            now,
                            Action::Delete,
                            Kind::Observation,
                            &o.id,
                            namespace,
                            Some(key),
                        )?;
                        changes.push(GraphChange::ObservationDeleted { seq, key });
                    }
                }
                Ok(changes)
            },
            |changes| {
                let n = changes.len();
                self.apply_graph_changes(changes);
                n
            },
        )
    }

    /// Delete relations given as (from name, to name, type). Returns how
    /// many existed.
    pub fn delete_relations(
        &self,
        namespace: &str,
        triples: &[(String, String, String)],
    ) -> Result<usize> {
        validate_namespace(namespace)?;
        self.store.write_then(
            |tx| {
                let mut changes = Vec::new();
                for (from, to, kind) in triples {
                    let (Some(f), Some(t)) = (
                        ent::by_name(tx, namespace, &name_key(from))?,
                        ent::by_name(tx, namespace, &name_key(to))?,
                    ) else {
                        continue;
                    };
                    if let Some(r) = rel::by_triple(tx, &f.id, &t.id, kind)? {
                        rel::delete(tx, &r.id)?;
                        changes.push(GraphChange::RelationDeleted(r.id));
                    }
                }
                Ok(changes)
            },
            |changes| {
                let n = changes.len();
                self.apply_graph_changes(changes);
                n
            },
        )
    }
}
