//! Knowledge-graph writes: save_memory and the reference server's
//! operations. Each is one transaction; the graph, catalog and index queue
//! learn about it after commit, under the writer lock, in commit order.

use std::collections::HashMap;
use std::sync::Arc;

use rusqlite::Connection;

use super::Engine;
use super::documents::{entity_labels, entity_node, observation_labels, relation_edge};
use super::indexes::Change;
use crate::error::{Error, Result};
use crate::kind::Kind;
use crate::knowledge::rules::{self, name_key, normalize_entity_type};
use crate::knowledge::save::{self, EntityDraft, RelationDraft, SaveOutcome, SaveRequest};
use crate::knowledge::{DEFAULT_RELATION_IMPORTANCE, Entity, Observation, Relation};
use crate::memory::validate_namespace;
use crate::store::oplog::{self, Action};
use crate::store::{entities as ent, relations as rel};
use crate::temporal::{Timestamp, now_micros};

/// Memories scanned for an existing mention when a new entity appears.
const RETRO_LINK_LIMIT: usize = 500;

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

    // -- building blocks (inside a transaction) ----------------------------------------

    /// Create an entity, or extend the stored one of the same name. Returns
    /// it, whether it was created, and type warnings.
    pub(super) fn upsert_entity(
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
                let prev = ent::doc_key(tx, &existing.id)?;
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
        let query = super::SearchQuery {
            valid: crate::temporal::ValidAt::Any,
            ..super::SearchQuery::memories(&entity.namespace, 1)
        };
        // Only memories holding every word of the name can mention it: a
        // conjunction keeps this cheap when one word ("project") is common.
        let memory_scope = crate::text::scope(&entity.namespace, crate::kind::Kind::Memory);
        let hits = {
            let catalog = self.indexes.catalog.read();
            let Some(filter) = super::Engine::filter(&catalog, &query) else {
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
            let Some((_, memory)) = crate::store::memories::by_doc_keys(tx, &[key])?
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

    fn insert_observations(
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
                let old_key = ent::observation_doc_key(tx, &old.id)?.unwrap_or_default();
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
    fn insert_relation(
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

    /// Apply committed graph writes to the graph, catalog and index queue.
    pub(super) fn apply_graph_changes(&self, changes: Vec<GraphChange>) {
        for change in changes {
            match change {
                GraphChange::Entity {
                    entity,
                    key,
                    prev,
                    vector,
                } => {
                    self.note_vector(vector.as_ref());
                    self.indexes
                        .graph
                        .write()
                        .add_node(entity_node(&entity, key as u64));
                    let text = Entity::document_text(
                        &entity.name,
                        &entity.entity_type,
                        entity.description.as_deref(),
                    );
                    self.publish(
                        key,
                        &Change::Upsert {
                            key: key as u64,
                            prev: prev.map(|p| p as u64),
                            labels: entity_labels(&entity),
                            text: &text,
                            vector: vector.map(Arc::from),
                        },
                    );
                }
                GraphChange::Observation {
                    observation,
                    key,
                    vector,
                } => {
                    self.note_vector(vector.as_ref());
                    {
                        let mut graph = self.indexes.graph.write();
                        if let Some(node) = graph.by_entity(&observation.entity_id) {
                            graph.link_doc(key as u64, vec![node], false);
                        }
                    }
                    self.publish(
                        key,
                        &Change::Upsert {
                            key: key as u64,
                            prev: None,
                            labels: observation_labels(&observation),
                            text: &observation.content,
                            vector: vector.map(Arc::from),
                        },
                    );
                }
                GraphChange::ObservationClosed {
                    observation,
                    seq,
                    key,
                } => self.publish(
                    seq,
                    &Change::Relabel {
                        key: key as u64,
                        labels: observation_labels(&observation),
                    },
                ),
                GraphChange::ObservationDeleted { seq, key } => {
                    self.indexes.graph.write().unlink_doc(key as u64);
                    self.publish(seq, &Change::Retire { key: key as u64 });
                }
                GraphChange::Relation(r) => {
                    let mut graph = self.indexes.graph.write();
                    if let Some(edge) = relation_edge(&graph, &r) {
                        graph.add_edge(edge);
                    }
                }
                GraphChange::RelationDeleted(id) => self.indexes.graph.write().remove_edge(&id),
                GraphChange::EntityDeleted {
                    entity_id,
                    seq,
                    keys,
                } => {
                    {
                        let mut graph = self.indexes.graph.write();
                        for k in &keys {
                            graph.unlink_doc(*k as u64);
                        }
                        if let Some(node) = graph.by_entity(&entity_id) {
                            graph.remove_node(node);
                        }
                    }
                    for k in keys {
                        self.publish(seq, &Change::Retire { key: k as u64 });
                    }
                }
                GraphChange::MemoryLinks {
                    doc_key,
                    prev,
                    entity_ids,
                } => {
                    let mut graph = self.indexes.graph.write();
                    if let Some(p) = prev {
                        graph.unlink_doc(p);
                    }
                    let nodes = entity_ids
                        .iter()
                        .filter_map(|id| graph.by_entity(id))
                        .collect();
                    graph.link_doc(doc_key, nodes, true);
                }
                GraphChange::Mention { doc_key, entity_id } => {
                    let mut graph = self.indexes.graph.write();
                    if let Some(node) = graph.by_entity(&entity_id) {
                        graph.add_doc_link(doc_key, node);
                    }
                }
            }
        }
    }

    fn note_vector(&self, vector: Option<&Vec<f32>>) {
        if let Some(v) = vector {
            self.note_dim(v.len());
        }
    }
}

/// An entity by name (case-insensitive), or NOT_FOUND.
pub(super) fn entity_by_name(conn: &Connection, namespace: &str, name: &str) -> Result<Entity> {
    ent::by_name(conn, namespace, &name_key(name))?.ok_or_else(|| Error::NotFound {
        kind: "Entity",
        id: name.to_owned(),
    })
}

fn entity_id(conn: &Connection, namespace: &str, name: &str) -> Result<String> {
    Ok(entity_by_name(conn, namespace, name)?.id)
}

/// A draft's observations, each paired with its embedding.
fn observation_drafts(draft: &EntityDraft) -> Vec<ObservationDraft> {
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
