//! The steps a graph write runs inside its transaction: each writes rows and
//! the operation log, and records a [`GraphChange`] to apply after commit.

use rusqlite::Connection;

use super::{GraphChange, ObservationDraft, WriteContext};
use crate::engine::{Engine, SearchQuery};
use crate::error::{Error, Result};
use crate::kind::Kind;
use crate::knowledge::rules::{name_key, normalize_entity_type};
use crate::knowledge::save::{EntityDraft, RelationDraft};
use crate::knowledge::{DEFAULT_RELATION_IMPORTANCE, Entity, Observation, Relation};
use crate::store::entities::{Entities, Observations};
use crate::store::memories::Memories;
use crate::store::oplog::{self, Action};
use crate::store::table;
use crate::store::{entities as ent, relations as rel};
use crate::temporal::{Timestamp, ValidAt};

/// Memories scanned for an existing mention when a new entity appears.
const RETRO_LINK_LIMIT: usize = 500;

impl Engine {
    /// Create an entity, or extend the stored one of the same name. Returns
    /// it, whether it was created, and type warnings.
    pub(in crate::engine) fn upsert_entity(
        &self,
        tx: &Connection,
        ctx: &WriteContext,
        draft: &EntityDraft,
        now: Timestamp,
        changes: &mut Vec<GraphChange>,
    ) -> Result<(Entity, bool, Vec<String>)> {
        let (entity_type, mut warnings) = normalize_entity_type(&draft.name, &draft.entity_type);
        let ns = ctx.namespace.as_str();
        if let Some(mut existing) = ent::by_name(tx, ns, &name_key(&draft.name))? {
            if existing.entity_type != entity_type {
                warnings.push(format!(
                    "Entity '{}' already exists with entityType '{}'; kept it (not '{entity_type}').",
                    existing.name, existing.entity_type
                ));
            }
            let describe = draft.description.clone().filter(|d| !d.trim().is_empty());
            let redescribed = describe.is_some() && describe != existing.description;
            if let Some(v) = draft.importance {
                existing.importance = v;
            }
            if let Some(v) = draft.confidence {
                existing.confidence = v;
            }
            if redescribed {
                existing.description = describe;
            }
            existing.updated_at = now;
            ent::update(tx, &existing)?;
            if redescribed {
                let prev = table::doc_key::<Entities>(tx, &existing.id)?;
                let vector = self.checked_vector(tx, draft.embedding.clone())?;
                let key = oplog::append(
                    tx,
                    now,
                    Action::Upsert,
                    Kind::Entity,
                    &existing.id,
                    ns,
                    prev,
                )?;
                ent::set_document(tx, &existing.id, key, vector.as_deref())?;
                changes.push(GraphChange::Entity {
                    entity: existing.clone(),
                    key,
                    prev,
                    vector,
                });
            }
            return Ok((existing, false, warnings));
        }
        let entity = Entity {
            id: self.new_id("ent", now),
            namespace: ns.to_owned(),
            name: draft.name.trim().to_owned(),
            entity_type,
            description: draft.description.clone().filter(|d| !d.trim().is_empty()),
            importance: draft.importance.unwrap_or(0.5),
            confidence: draft.confidence.unwrap_or(1.0),
            thread_id: ctx.thread_id.clone(),
            created_at: now,
            updated_at: now,
            valid_from: now,
            valid_until: None,
        };
        let vector = self.checked_vector(tx, draft.embedding.clone())?;
        let key = oplog::append(tx, now, Action::Upsert, Kind::Entity, &entity.id, ns, None)?;
        ent::insert(tx, &entity, &name_key(&entity.name), key, vector.as_deref())?;
        // The node must exist before the mentions found next are linked to it.
        changes.push(GraphChange::Entity {
            entity: entity.clone(),
            key,
            prev: None,
            vector,
        });
        self.retro_link(tx, &entity, changes)?;
        Ok((entity, true, warnings))
    }

    /// Link existing memories that already name a new entity: BM25 finds
    /// candidates, an exact word-bounded match confirms them.
    fn retro_link(
        &self,
        tx: &Connection,
        entity: &Entity,
        changes: &mut Vec<GraphChange>,
    ) -> Result<()> {
        let query = SearchQuery {
            valid: ValidAt::Any,
            ..SearchQuery::memories(&entity.namespace, 1)
        };
        // Only memories holding every word of the name can mention it: a
        // conjunction keeps this cheap when one word ("project") is common.
        let memory_scope = crate::text::scope(&entity.namespace, Kind::Memory);
        let hits = {
            let catalog = self.indexes.catalog.read();
            let Some(filter) = Engine::filter(&catalog, &query) else {
                return Ok(());
            };
            if catalog.estimate(&filter) == 0 {
                return Ok(());
            }
            self.indexes.text.search_all_terms(
                &entity.name,
                &memory_scope,
                RETRO_LINK_LIMIT,
                |key| catalog.admits(key, &filter),
            )?
        };
        if hits.is_empty() {
            return Ok(());
        }
        let mut single = crate::graph::matcher::NameMatcher::default();
        single.add(&entity.name, 0);
        for (key, _) in hits {
            let Some((_, memory)) = table::by_doc_keys::<Memories>(tx, &[key])?
                .into_iter()
                .next()
            else {
                continue;
            };
            if !single.find(&memory.content).is_empty() {
                rel::add_mention(tx, &memory.id, &entity.id, false)?;
                changes.push(GraphChange::Mention {
                    doc_key: key,
                    entity_id: entity.id.clone(),
                });
            }
        }
        Ok(())
    }

    pub(super) fn insert_observations(
        &self,
        tx: &Connection,
        ctx: &WriteContext,
        entity: &Entity,
        drafts: &[ObservationDraft],
        now: Timestamp,
        changes: &mut Vec<GraphChange>,
    ) -> Result<Vec<Observation>> {
        let current = ent::observations_of(tx, &entity.id, true)?;
        let mut created = Vec::new();
        for draft in drafts {
            let content = draft.content.trim();
            let mut version = 1;
            let mut replaced = None;
            if let Some(old_id) = &draft.supersedes {
                let old =
                    current
                        .iter()
                        .find(|o| &o.id == old_id)
                        .ok_or_else(|| Error::NotFound {
                            kind: "Observation",
                            id: format!("{old_id} (a current observation of '{}')", entity.name),
                        })?;
                version = old.version + 1;
                replaced = Some(old.clone());
            } else if current
                .iter()
                .chain(&created)
                .any(|o: &Observation| o.content == content)
            {
                continue;
            }
            let observation = Observation {
                id: self.new_id("obs", now),
                namespace: entity.namespace.clone(),
                entity_id: entity.id.clone(),
                entity_name: entity.name.clone(),
                content: content.to_owned(),
                version,
                supersedes: draft.supersedes.clone(),
                superseded_by: None,
                thread_id: ctx.thread_id.clone(),
                confidence: ctx.confidence.unwrap_or(1.0),
                importance: ctx.importance.unwrap_or(0.5),
                created_at: now,
                valid_from: now,
                valid_until: None,
            };
            let vector = self.checked_vector(tx, draft.embedding.clone())?;
            let key = oplog::append(
                tx,
                now,
                Action::Upsert,
                Kind::Observation,
                &observation.id,
                &entity.namespace,
                None,
            )?;
            ent::insert_observation(tx, &observation, key, vector.as_deref())?;
            if let Some(mut old) = replaced {
                ent::close_observation(tx, &old.id, Some(&observation.id), now)?;
                old.superseded_by = Some(observation.id.clone());
                old.valid_until = Some(now);
                let seq = oplog::append(
                    tx,
                    now,
                    Action::Meta,
                    Kind::Observation,
                    &old.id,
                    &entity.namespace,
                    None,
                )?;
                let old_key = table::doc_key::<Observations>(tx, &old.id)?.unwrap_or_default();
                changes.push(GraphChange::ObservationClosed {
                    observation: old,
                    seq,
                    key: old_key,
                });
            }
            changes.push(GraphChange::Observation {
                observation: observation.clone(),
                key,
                vector,
            });
            created.push(observation);
        }
        Ok(created)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn insert_relation(
        &self,
        tx: &Connection,
        ctx: &WriteContext,
        from: &str,
        to: &str,
        draft: &RelationDraft,
        now: Timestamp,
        changes: &mut Vec<GraphChange>,
    ) -> Result<bool> {
        let relation = Relation {
            id: self.new_id("rel", now),
            namespace: ctx.namespace.clone(),
            from_entity: from.to_owned(),
            to_entity: to.to_owned(),
            from_name: String::new(),
            to_name: String::new(),
            relation_type: draft.relation_type.trim().to_owned(),
            importance: draft.importance.unwrap_or(DEFAULT_RELATION_IMPORTANCE),
            thread_id: ctx.thread_id.clone(),
            created_at: now,
            valid_from: now,
            valid_until: None,
        };
        if !rel::insert(tx, &relation)? {
            return Ok(false);
        }
        let stored = rel::by_triple(tx, from, to, &relation.relation_type)?.unwrap_or(relation);
        changes.push(GraphChange::Relation(stored));
        Ok(true)
    }
}

/// An entity by name (case-insensitive), or NOT_FOUND.
pub(in crate::engine) fn entity_by_name(
    conn: &Connection,
    namespace: &str,
    name: &str,
) -> Result<Entity> {
    ent::by_name(conn, namespace, &name_key(name))?.ok_or_else(|| Error::NotFound {
        kind: "Entity",
        id: name.to_owned(),
    })
}

pub(super) fn entity_id(conn: &Connection, namespace: &str, name: &str) -> Result<String> {
    Ok(entity_by_name(conn, namespace, name)?.id)
}

/// A draft's observations, each paired with its embedding.
pub(super) fn observation_drafts(draft: &EntityDraft) -> Vec<ObservationDraft> {
    draft
        .observations
        .iter()
        .enumerate()
        .map(|(i, content)| ObservationDraft {
            content: content.clone(),
            embedding: draft.observation_embeddings.get(i).cloned().flatten(),
            supersedes: None,
        })
        .collect()
}
