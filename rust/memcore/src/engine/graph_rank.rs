//! The graph signal of recall: Personalized PageRank seeded by the entities
//! the query names and the entities of the best text/vector candidates;
//! documents inherit the mass of the entities they are about, and documents
//! about the most central entities join the candidate pool.

use rustc_hash::FxHashMap as HashMap;

use super::Engine;
use super::query::{Pool, SearchQuery};
use crate::catalog::{Catalog, Filter};
use crate::fusion::Signals;
use crate::graph::ppr::{PprParams, best, personalized_pagerank};
use crate::graph::{Graph, NodeId};
use crate::kind::{Kind, KindSet};
use crate::temporal::now_micros;

/// Top candidates whose entities seed the walk.
const SEED_CANDIDATES: usize = 10;
/// Entities (by PPR mass) whose documents join the pool.
const GRAPH_ENTITIES: usize = 20;
/// Documents each of those entities may bring.
const DOCS_PER_ENTITY: usize = 20;
/// Documents the graph may add to the pool in all: as many as each search
/// signal brings. Every candidate is scored on every signal and fused, so an
/// unbounded graph share (20 × 41 documents) made the pool ten times larger
/// than the two searches that seeded it.
const GRAPH_DOCS: usize = 100;
/// Push precision for ranking (relative order matters, not the last digit).
/// On 100k memories / 50k entities, 1e-4 instead of 1e-5 kept 99.9% of the
/// top 10 and every top hit of 300 queries, and took a quarter off recall.
const RECALL_EPSILON: f32 = 1e-4;

impl Engine {
    /// Add the PPR signal to `pool` (and graph-found candidates to it).
    /// `ranked` lists the current candidates best first.
    pub(super) fn add_graph_signal(
        &self,
        query: &SearchQuery<'_>,
        text: &str,
        ranked: &[u64],
        pool: &mut Pool,
    ) {
        let graph = self.indexes.graph.read();
        if graph.node_count() == 0 {
            return;
        }
        let mut seeds: Vec<(NodeId, f32)> = graph
            .find_mentions(query.namespace, text)
            .into_iter()
            .map(|n| (n, 1.0))
            .collect();
        for (rank, key) in ranked.iter().take(SEED_CANDIDATES).enumerate() {
            for &n in graph.doc_entities(*key) {
                seeds.push((n, 1.0 / (rank as f32 + 2.0)));
            }
        }
        if seeds.is_empty() {
            return;
        }
        let params = PprParams {
            epsilon: RECALL_EPSILON,
            valid: query.valid,
            now: now_micros(),
            ..PprParams::default()
        };
        let reached = personalized_pagerank(&graph, &seeds, &params);
        let catalog = self.indexes.catalog.read();
        if let Some(filter) = Self::filter(&catalog, query) {
            let mut added = 0;
            'entities: for (node, _) in best(reached.clone(), GRAPH_ENTITIES) {
                for key in entity_documents(&graph, &catalog, &filter, node) {
                    if added == GRAPH_DOCS {
                        break 'entities;
                    }
                    if let (Some(meta), false) = (catalog.get(key), pool.contains_key(&key)) {
                        pool.insert(key, (meta.kind, Signals::default()));
                        added += 1;
                    }
                }
            }
        }
        // The walk reaches thousands of entities; the pool is about a few
        // hundred. Look up only those (a map of every reached one cost more
        // than the lookups).
        let mut mass: HashMap<NodeId, f32> = pool
            .keys()
            .flat_map(|key| graph.doc_entities(*key))
            .map(|&n| (n, 0.0))
            .collect();
        for (node, m) in reached {
            if let Some(slot) = mass.get_mut(&node) {
                *slot = m;
            }
        }
        // A document about no reached entity truly has no PPR mass: 0, not
        // "unknown" (which fusion would fill with the pool minimum).
        for (key, (_, signals)) in pool.iter_mut() {
            let entities = graph.doc_entities(*key);
            signals.ppr = Some(
                entities
                    .iter()
                    .map(|n| mass.get(n).copied().unwrap_or(0.0))
                    .sum(),
            );
        }
    }
}

/// Admitted documents about an entity: its own, its observations, and the
/// memories mentioning it (bounded).
fn entity_documents(graph: &Graph, catalog: &Catalog, filter: &Filter, node: NodeId) -> Vec<u64> {
    let n = graph.node(node);
    let mut keys = vec![n.doc_key];
    if filter.kinds.contains(Kind::Observation)
        && let Some(scope) = catalog.sym(&n.entity_id)
    {
        let observations = Filter {
            scope: Some(scope),
            kinds: KindSet::only(Kind::Observation),
            ..*filter
        };
        keys.extend(
            catalog
                .candidates(&observations)
                .into_iter()
                .take(DOCS_PER_ENTITY),
        );
    }
    keys.extend(graph.mentioned_in(node).iter().rev().take(DOCS_PER_ENTITY));
    keys.retain(|k| catalog.admits(*k, filter));
    keys
}
