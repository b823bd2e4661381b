//! Knowledge-graph reads: entities with their observations and relations,
//! pages of the graph, traversal, paths, PPR, analytics and array exports.

use std::collections::{HashMap, HashSet};

use rusqlite::Connection;

use super::Engine;
use super::graph_quality::{GraphQuality, current_observations};
use super::graph_write::entity_by_name;
use crate::error::{Error, Result};
use crate::graph::ppr::{PprParams, best, personalized_pagerank};
use crate::graph::traverse::{WalkFilter, related, shortest_path};
use crate::graph::{Direction, EdgeId, Graph};
use crate::knowledge::rules::name_key;
use crate::knowledge::{Entity, Observation, Relation};
use crate::memory::validate_namespace;
use crate::store::entities::{Entities, Observations};
use crate::store::relations::Relations;
use crate::store::table;
use crate::store::{entities as ent, relations as rel};
use crate::temporal::{Timestamp, ValidAt, now_micros};

/// Deepest traversal accepted.
pub const MAX_DEPTH: usize = 5;
/// Longest path searched.
pub const MAX_PATH: usize = 8;

/// An entity with its current observations and its relations.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityView {
    pub entity: Entity,
    pub observations: Vec<Observation>,
    pub observation_count: usize,
    pub relations: Vec<Relation>,
}

/// A page of the graph.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphPage {
    pub entities: Vec<EntityView>,
    /// Relations among the page's entities.
    pub relations: Vec<Relation>,
    pub total_entities: i64,
    pub total_relations: i64,
}

/// An entity reached by `get_related`.
#[derive(Debug, Clone, PartialEq)]
pub struct RelatedEntity {
    pub entity: Entity,
    pub depth: usize,
    /// The relation it was reached through (its direction is from → to).
    pub via: Relation,
    /// Name of the entity before it on the way.
    pub parent: String,
}

/// One entry of `get_analytics`' recent changes.
#[derive(Debug, Clone, PartialEq)]
pub struct RecentChange {
    pub entity: Entity,
    /// "created" or "updated".
    pub change_type: &'static str,
}

/// One entry of `get_analytics`' most connected.
#[derive(Debug, Clone, PartialEq)]
pub struct Connected {
    pub entity: Entity,
    pub relation_count: usize,
    pub connected_to: Vec<String>,
}

/// The four analytics of a thread (or of the whole namespace).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Analytics {
    pub recent_changes: Vec<RecentChange>,
    /// Entities by importance, with their current observation counts.
    pub top_important: Vec<(Entity, usize)>,
    pub most_connected: Vec<Connected>,
    /// Entities with no relations (`no_relations`) or only relations that
    /// no longer hold (`broken_relation`).
    pub orphaned: Vec<(Entity, &'static str)>,
    /// The success metrics of the thread (of the namespace when no thread).
    pub quality: GraphQuality,
    /// The namespace's, when a thread was asked for.
    pub store_quality: Option<GraphQuality>,
}

/// The graph of a namespace as flat arrays (for igraph / rustworkx).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GraphArrays {
    pub entity_ids: Vec<String>,
    pub names: Vec<String>,
    pub entity_types: Vec<String>,
    pub importance: Vec<f32>,
    pub sources: Vec<u32>,
    pub targets: Vec<u32>,
    pub weights: Vec<f32>,
    pub relation_types: Vec<String>,
}

impl Engine {
    /// One entity with its current observations and relations.
    pub fn get_entity(&self, namespace: &str, name: &str) -> Result<EntityView> {
        validate_namespace(namespace)?;
        let conn = self.store.reader()?;
        let entity = entity_by_name(&conn, namespace, name)?;
        entity_view(&conn, entity, true)
    }

    /// Entities by name (unknown names are skipped) and the relations among them.
    pub fn open_nodes(
        &self,
        namespace: &str,
        names: &[String],
    ) -> Result<(Vec<EntityView>, Vec<Relation>)> {
        validate_namespace(namespace)?;
        let conn = self.store.reader()?;
        let mut views = Vec::new();
        for name in names {
            if let Some(e) = ent::by_name(&conn, namespace, &name_key(name))?
                && !views.iter().any(|v: &EntityView| v.entity.id == e.id)
            {
                views.push(entity_view(&conn, e, true)?);
            }
        }
        let relations = relations_among(&views);
        Ok((views, relations))
    }

    /// A page of the graph, oldest entities first. `summary` leaves the
    /// observations out (counts only) so a large graph fits a context window.
    pub fn read_graph(
        &self,
        namespace: &str,
        limit: usize,
        offset: usize,
        summary: bool,
    ) -> Result<GraphPage> {
        validate_namespace(namespace)?;
        super::memories::check_limit(limit)?;
        let conn = self.store.reader()?;
        let views = ent::list(&conn, namespace, limit, offset)?
            .into_iter()
            .map(|e| entity_view(&conn, e, !summary))
            .collect::<Result<Vec<_>>>()?;
        let relations = relations_among(&views);
        Ok(GraphPage {
            entities: views,
            relations,
            total_entities: table::count::<Entities>(&conn, namespace)?,
            total_relations: table::count::<Relations>(&conn, namespace)?,
        })
    }

    /// Entities filtered by type, minimum importance and thread.
    pub fn query_nodes(
        &self,
        namespace: &str,
        entity_type: Option<&str>,
        min_importance: Option<f64>,
        thread_id: Option<&str>,
        limit: usize,
    ) -> Result<Vec<EntityView>> {
        validate_namespace(namespace)?;
        super::memories::check_limit(limit)?;
        let conn = self.store.reader()?;
        ent::query(
            &conn,
            namespace,
            entity_type,
            min_importance,
            thread_id,
            limit,
        )?
        .into_iter()
        .map(|e| entity_view(&conn, e, false))
        .collect()
    }

    /// Entities within `depth` hops of `name`, nearest first.
    #[allow(clippy::too_many_arguments)]
    pub fn get_related(
        &self,
        namespace: &str,
        name: &str,
        depth: usize,
        direction: Direction,
        relation_type: Option<&str>,
        valid: ValidAt,
        limit: usize,
    ) -> Result<Vec<RelatedEntity>> {
        validate_namespace(namespace)?;
        check_depth("depth", depth, MAX_DEPTH)?;
        super::memories::check_limit(limit)?;
        let conn = self.store.reader()?;
        let start = entity_by_name(&conn, namespace, name)?;
        let reached: Vec<(String, usize, String, String)> = {
            let graph = self.indexes.graph.read();
            let Some(node) = graph.by_entity(&start.id) else {
                return Ok(Vec::new());
            };
            let filter = WalkFilter {
                direction,
                relation_type,
                valid,
                now: now_micros(),
            };
            related(&graph, node, depth, &filter)
                .into_iter()
                .take(limit)
                .map(|r| {
                    (
                        graph.node(r.node).entity_id.clone(),
                        r.depth,
                        graph.edge(r.via).relation_id.clone(),
                        graph.node(r.parent).name.clone(),
                    )
                })
                .collect()
        };
        let mut out = Vec::with_capacity(reached.len());
        for (entity_id, depth, relation_id, parent) in reached {
            let (Some(entity), Some(via)) = (
                ent::by_id(&conn, &entity_id)?,
                relation_by_id(&conn, &relation_id)?,
            ) else {
                continue;
            };
            out.push(RelatedEntity {
                entity,
                depth,
                via,
                parent,
            });
        }
        Ok(out)
    }

    /// The shortest chain of relations between two entities (either
    /// direction), or an empty list when they are not connected.
    pub fn find_relation_path(
        &self,
        namespace: &str,
        from: &str,
        to: &str,
        max_depth: usize,
    ) -> Result<Vec<Relation>> {
        validate_namespace(namespace)?;
        check_depth("max_depth", max_depth, MAX_PATH)?;
        let conn = self.store.reader()?;
        let a = entity_by_name(&conn, namespace, from)?;
        let b = entity_by_name(&conn, namespace, to)?;
        let path: Vec<String> = {
            let graph = self.indexes.graph.read();
            let (Some(na), Some(nb)) = (graph.by_entity(&a.id), graph.by_entity(&b.id)) else {
                return Ok(Vec::new());
            };
            let filter = WalkFilter {
                direction: Direction::Both,
                relation_type: None,
                valid: ValidAt::Now,
                now: now_micros(),
            };
            shortest_path(&graph, na, nb, max_depth, &filter)
                .unwrap_or_default()
                .into_iter()
                .map(|e: EdgeId| graph.edge(e).relation_id.clone())
                .collect()
        };
        path.iter()
            .filter_map(|id| relation_by_id(&conn, id).transpose())
            .collect()
    }

    /// The version chain of an observation, oldest first.
    pub fn observation_history(
        &self,
        namespace: &str,
        entity: &str,
        observation_id: &str,
    ) -> Result<Vec<Observation>> {
        validate_namespace(namespace)?;
        let conn = self.store.reader()?;
        let owner = entity_by_name(&conn, namespace, entity)?;
        let not_found = || Error::NotFound {
            kind: "Observation",
            id: format!("{observation_id} (of entity '{entity}')"),
        };
        let start = ent::observation(&conn, observation_id)?
            .filter(|o| o.entity_id == owner.id)
            .ok_or_else(not_found)?;
        let mut chain = vec![start.clone()];
        let mut at = start.clone();
        while let Some(prev) = at
            .supersedes
            .as_deref()
            .map(|id| ent::observation(&conn, id))
            .transpose()?
            .flatten()
        {
            chain.insert(0, prev.clone());
            at = prev;
        }
        let mut at = start;
        while let Some(next) = at
            .superseded_by
            .as_deref()
            .map(|id| ent::observation(&conn, id))
            .transpose()?
            .flatten()
        {
            chain.push(next.clone());
            at = next;
        }
        Ok(chain)
    }

    /// Personalized PageRank from named seed entities: `(name, mass)` best first.
    pub fn personalized_pagerank(
        &self,
        namespace: &str,
        seeds: &[(String, f32)],
        teleport: f32,
        limit: usize,
    ) -> Result<Vec<(String, f32)>> {
        validate_namespace(namespace)?;
        if !(teleport > 0.0 && teleport < 1.0) {
            return Err(Error::invalid(
                "teleport",
                format!("teleport must be in (0, 1), got {teleport}."),
            ));
        }
        let graph = self.indexes.graph.read();
        let mut nodes = Vec::with_capacity(seeds.len());
        for (name, w) in seeds {
            let node = graph
                .by_name(namespace, name)
                .ok_or_else(|| Error::NotFound {
                    kind: "Entity",
                    id: name.clone(),
                })?;
            nodes.push((node, *w));
        }
        let params = PprParams {
            teleport,
            // Per-node error stays below ~1e-4 (parity with PRPACK within
            // 1e-3) while the push stays local to the seeds.
            epsilon: 1e-5,
            now: now_micros(),
            ..PprParams::default()
        };
        Ok(best(personalized_pagerank(&graph, &nodes, &params), limit)
            .into_iter()
            .map(|(n, s)| (graph.node(n).name.clone(), s))
            .collect())
    }

    /// The four analytics of a thread (every thread when None).
    pub fn analytics(
        &self,
        namespace: &str,
        thread_id: Option<&str>,
        limit: usize,
    ) -> Result<Analytics> {
        validate_namespace(namespace)?;
        super::memories::check_limit(limit)?;
        let conn = self.store.reader()?;
        let entities = ent::query(&conn, namespace, None, None, thread_id, usize::MAX >> 1)?;
        let now = now_micros();
        let graph = self.indexes.graph.read();
        let mut recent: Vec<&Entity> = entities.iter().collect();
        recent.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then(b.id.cmp(&a.id)));
        let recent_changes = recent
            .into_iter()
            .take(limit)
            .map(|e| RecentChange {
                entity: e.clone(),
                change_type: if e.updated_at > e.created_at {
                    "updated"
                } else {
                    "created"
                },
            })
            .collect();
        let mut top_important = Vec::new();
        for e in entities.iter().take(limit) {
            top_important.push((e.clone(), ent::observations_of(&conn, &e.id, true)?.len()));
        }
        let mut connected: Vec<Connected> = entities
            .iter()
            .map(|e| connections(&graph, e, now))
            .collect();
        connected.sort_by(|a, b| {
            b.relation_count
                .cmp(&a.relation_count)
                .then(a.entity.name.cmp(&b.entity.name))
        });
        let orphaned = connected
            .iter()
            .filter_map(|c| orphan_reason(&graph, &c.entity).map(|r| (c.entity.clone(), r)))
            .take(limit)
            .collect();
        let counts: Vec<usize> = connected.iter().map(|c| c.relation_count).collect();
        let quality = GraphQuality::measure(
            &counts,
            &current_observations(&conn, namespace, thread_id, now)?,
            &self.graph_stats,
        );
        let store_quality = if thread_id.is_some() {
            let all = ent::query(&conn, namespace, None, None, None, usize::MAX >> 1)?;
            let counts: Vec<usize> = all
                .iter()
                .map(|e| connections(&graph, e, now).relation_count)
                .collect();
            Some(GraphQuality::measure(
                &counts,
                &current_observations(&conn, namespace, None, now)?,
                &self.graph_stats,
            ))
        } else {
            None
        };
        connected.retain(|c| c.relation_count > 0);
        connected.truncate(limit);
        Ok(Analytics {
            recent_changes,
            top_important,
            most_connected: connected,
            orphaned,
            quality,
            store_quality,
        })
    }

    /// The live graph of a namespace as arrays (no Python loops over edges
    /// needed downstream).
    pub fn graph_arrays(&self, namespace: &str) -> Result<GraphArrays> {
        validate_namespace(namespace)?;
        let graph = self.indexes.graph.read();
        let mut out = GraphArrays::default();
        let mut index: HashMap<u32, u32> = HashMap::new();
        for node in graph.nodes_in(namespace) {
            let n = graph.node(node);
            index.insert(node, out.entity_ids.len() as u32);
            out.entity_ids.push(n.entity_id.clone());
            out.names.push(n.name.clone());
            out.entity_types.push(n.entity_type.clone());
            out.importance.push(n.importance);
        }
        let now = now_micros();
        for node in graph.nodes_in(namespace) {
            for (e, other) in graph.neighbors(node, Direction::Out) {
                let edge = graph.edge(e);
                if !edge.holds(ValidAt::Now, now) {
                    continue;
                }
                out.sources.push(index[&node]);
                out.targets.push(index[&other]);
                out.weights.push(edge.weight);
                out.relation_types.push(edge.relation_type.clone());
            }
        }
        Ok(out)
    }

    /// `search_nodes`: hybrid recall over entity names/types/descriptions and
    /// observations, grouped by entity (an entity ranks by its best hit).
    pub fn search_nodes(
        &self,
        namespace: &str,
        text: &str,
        vector: Option<&[f32]>,
        limit: usize,
        options: &super::RecallOptions,
    ) -> Result<Vec<(EntityView, super::Scores)>> {
        let query = super::SearchQuery {
            kinds: crate::kind::KindSet::of(&[
                crate::kind::Kind::Entity,
                crate::kind::Kind::Observation,
            ]),
            limit: super::MAX_RESULTS,
            ..super::SearchQuery::memories(namespace, super::MAX_RESULTS)
        };
        let hits = self.recall(&query, text, vector, options)?;
        let keys: Vec<u64> = hits.iter().map(|h| h.key).collect();
        let (entities, observations) = self.knowledge_for(&keys)?;
        let conn = self.store.reader()?;
        let mut out: Vec<(EntityView, super::Scores)> = Vec::new();
        for hit in hits {
            let entity = match (entities.get(&hit.key), observations.get(&hit.key)) {
                (Some(e), _) => e.clone(),
                (None, Some(o)) => match ent::by_id(&conn, &o.entity_id)? {
                    Some(e) => e,
                    None => continue,
                },
                _ => continue,
            };
            if out.iter().any(|(v, _)| v.entity.id == entity.id) {
                continue;
            }
            out.push((entity_view(&conn, entity, true)?, hit.scores));
            if out.len() == limit {
                break;
            }
        }
        Ok(out)
    }

    /// Entities and observations behind search hits (other kinds skipped).
    pub fn knowledge_for(
        &self,
        keys: &[u64],
    ) -> Result<(HashMap<u64, Entity>, HashMap<u64, Observation>)> {
        let conn = self.store.reader()?;
        let mut entities = HashMap::new();
        let mut observations = HashMap::new();
        for &key in keys {
            if let Some(e) = table::by_doc_key::<Entities>(&conn, key)? {
                entities.insert(key, e);
            } else if let Some(o) = table::by_doc_key::<Observations>(&conn, key)? {
                observations.insert(key, o);
            }
        }
        Ok((entities, observations))
    }

    /// Memory ↔ entity links of a namespace: `(memory id, entity id, explicit)`.
    pub fn mentions(&self, namespace: &str) -> Result<Vec<(String, String, bool)>> {
        validate_namespace(namespace)?;
        rel::mentions_in(&*self.store.reader()?, namespace)
    }

    /// Number of entities and relations in a namespace.
    pub fn count_graph(&self, namespace: &str) -> Result<(i64, i64)> {
        let conn = self.store.reader()?;
        Ok((
            table::count::<Entities>(&conn, namespace)?,
            table::count::<Relations>(&conn, namespace)?,
        ))
    }
}

fn check_depth(field: &str, depth: usize, max: usize) -> Result<()> {
    if (1..=max).contains(&depth) {
        Ok(())
    } else {
        Err(Error::invalid(
            field,
            format!("{field} must be between 1 and {max}, got {depth}."),
        ))
    }
}

fn entity_view(conn: &Connection, entity: Entity, with_observations: bool) -> Result<EntityView> {
    let observations = ent::observations_of(conn, &entity.id, true)?;
    let relations = rel::of_entity(conn, &entity.id)?;
    Ok(EntityView {
        observation_count: observations.len(),
        observations: if with_observations {
            observations
        } else {
            Vec::new()
        },
        relations,
        entity,
    })
}

fn relations_among(views: &[EntityView]) -> Vec<Relation> {
    let ids: HashSet<&str> = views.iter().map(|v| v.entity.id.as_str()).collect();
    let mut seen = HashSet::new();
    views
        .iter()
        .flat_map(|v| &v.relations)
        .filter(|r| ids.contains(r.from_entity.as_str()) && ids.contains(r.to_entity.as_str()))
        .filter(|r| seen.insert(r.id.clone()))
        .cloned()
        .collect()
}

fn relation_by_id(conn: &Connection, id: &str) -> Result<Option<Relation>> {
    let Some((from, to, kind)): Option<(String, String, String)> = conn
        .prepare_cached(
            "SELECT from_entity, to_entity, relation_type FROM relations WHERE id = ?1",
        )?
        .query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .ok()
    else {
        return Ok(None);
    };
    rel::by_triple(conn, &from, &to, &kind)
}

fn connections(graph: &Graph, entity: &Entity, now: Timestamp) -> Connected {
    let mut connected_to = Vec::new();
    let mut count = 0;
    if let Some(node) = graph.by_entity(&entity.id) {
        for (e, other) in graph.neighbors(node, Direction::Both) {
            if graph.edge(e).holds(ValidAt::Now, now) {
                count += 1;
                let name = graph.node(other).name.clone();
                if !connected_to.contains(&name) {
                    connected_to.push(name);
                }
            }
        }
    }
    Connected {
        entity: entity.clone(),
        relation_count: count,
        connected_to,
    }
}

fn orphan_reason(graph: &Graph, entity: &Entity) -> Option<&'static str> {
    let node = graph.by_entity(&entity.id)?;
    let mut any = false;
    let now = now_micros();
    for (e, _) in graph.neighbors(node, Direction::Both) {
        any = true;
        if graph.edge(e).holds(ValidAt::Now, now) {
            return None;
        }
    }
    Some(if any {
        "broken_relation"
    } else {
        "no_relations"
    })
}
