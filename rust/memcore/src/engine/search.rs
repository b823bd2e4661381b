//! The read path: vector search, BM25 search and hybrid recall, each
//! filtered through the catalog inside the index traversal.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::Engine;
use super::hits::sort_best_first;
use super::hits::{Hit, Scores};
use super::query::{Pool, SearchQuery};
use super::thread_spread::spread_threads;
use crate::asking::ASKING_PENALTY;
use crate::catalog::Catalog;
use crate::error::{Error, Result};
use crate::fusion::{FusionMode, Signals, Weights, fuse};
use crate::kind::Kind;
use crate::listing::{LIST_SPREAD, asks_for_list};
use crate::memory::{Memory, validate_namespace};
use crate::store::memories::Memories;
use crate::store::table;
use crate::text;
use crate::vector::{HUB_KIND, VectorIndex};

/// At most this many results per query (docs/retrieval.md).
pub const MAX_RESULTS: usize = 50;
/// Candidates each signal contributes to a recall pool.
const RECALL_POOL: usize = 100;
/// Vector search fetches `limit * HUB_WIDEN + HUB_SLACK` nearest by cosine
/// before ranking by the hubness-penalised cosine: a vector with a low
/// hubness value can overtake a few above it (the penalty spans about a
/// tenth of a cosine).
const HUB_WIDEN: usize = 2;
const HUB_SLACK: usize = 10;

/// How much an episodic memory's thread counts on top of its own signals
/// ([`RecallOptions::thread_prior`]); chosen by leave-one-conversation-out
/// on LoCoMo (`benches/results/quality-experiments.md`, section 20; only
/// episodes since section 24).
pub const THREAD_PRIOR: f32 = 0.75;

/// How `recall` fuses its signals.
#[derive(Debug, Clone, Copy)]
pub struct RecallOptions {
    pub weights: Weights,
    pub mode: FusionMode,
    /// The weight of the thread prior (`engine::thread_prior`) beside the
    /// other signals' (whose weights keep their sum): episodic memories of a
    /// thread that matches the query as a whole rank higher. 0 turns it off;
    /// it only ever applies to episodes that carry a `thread_id`.
    pub thread_prior: f32,
    /// At most this many hits of one thread ahead of another thread's next
    /// (`engine::thread_spread`). `None` ranks by score alone, except a
    /// question that asks for a list ("What books has she read?"), which
    /// spreads at [`LIST_SPREAD`] (`crate::listing`); a cap at or past the
    /// limit ranks every question by score alone. Must be at least 1.
    pub max_per_thread: Option<usize>,
    /// How far (in z-score units) a memory or turn made only of questions
    /// falls, one that half asks half as far (`crate::asking`). 0 turns it
    /// off; z-score fusion only.
    pub question_penalty: f32,
}

impl Default for RecallOptions {
    fn default() -> Self {
        RecallOptions {
            weights: Weights::default(),
            mode: FusionMode::default(),
            thread_prior: THREAD_PRIOR,
            max_per_thread: None,
            question_penalty: ASKING_PENALTY,
        }
    }
}

impl Engine {
    fn check_query(query: &SearchQuery<'_>) -> Result<()> {
        validate_namespace(query.namespace)?;
        if !(1..=MAX_RESULTS).contains(&query.limit) {
            return Err(Error::invalid(
                "limit",
                format!(
                    "limit must be between 1 and {MAX_RESULTS}, got {}.",
                    query.limit
                ),
            ));
        }
        Ok(())
    }

    /// A query vector checked against the store's dimension and normalised.
    fn query_vector(&self, vector: &[f32]) -> Result<Option<Vec<f32>>> {
        let Some(dim) = *self.dim.read() else {
            return Ok(None); // no vectors stored yet: nothing to find
        };
        if vector.len() != dim {
            return Err(Error::invalid(
                "vector",
                format!(
                    "The query vector has {} dimensions; this store holds {dim}-dimensional vectors.",
                    vector.len()
                ),
            ));
        }
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        if !norm.is_finite() || norm == 0.0 {
            return Err(Error::invalid(
                "vector",
                "The query vector is zero or not finite.",
            ));
        }
        Ok(Some(vector.iter().map(|x| x / norm).collect()))
    }

    /// Nearest neighbours by cosine similarity, code chunks less their
    /// hubness penalty (`crate::vector::HUB_PENALTY`): `scores.vector` is the
    /// plain cosine, `scores.fused` what the hits are ranked by.
    pub fn search_vector(&self, query: &SearchQuery<'_>, vector: &[f32]) -> Result<Vec<Hit>> {
        Self::check_query(query)?;
        let Some(q) = self.query_vector(vector)? else {
            return Ok(Vec::new());
        };
        if !query.kinds.contains(HUB_KIND) {
            // No kind asked for has hubness values: the plain cosine ranks.
            return self.vector_hits(query, &q, query.limit);
        }
        let mut found = self.vector_hits(query, &q, query.limit * HUB_WIDEN + HUB_SLACK)?;
        if let Some(index) = self.indexes.vectors() {
            let keys: Vec<u64> = found.iter().map(|h| h.key).collect();
            for (h, penalty) in found.iter_mut().zip(index.hub_penalties(&keys)) {
                h.scores.fused -= penalty;
            }
        }
        sort_best_first(&mut found);
        found.truncate(query.limit);
        Ok(found)
    }

    fn vector_hits(&self, query: &SearchQuery<'_>, q: &[f32], k: usize) -> Result<Vec<Hit>> {
        let Some(index) = self.indexes.vectors() else {
            return Ok(Vec::new());
        };
        let catalog = self.indexes.catalog.read();
        let Some(filter) = Self::filter(&catalog, query) else {
            return Ok(Vec::new());
        };
        let found = index.search(q, k, &filter, &catalog)?;
        Ok(hits(&catalog, found, |s| Scores {
            vector: Some(s),
            fused: s,
            ..Scores::default()
        }))
    }

    /// Best BM25 matches.
    pub fn search_text(&self, query: &SearchQuery<'_>, text: &str) -> Result<Vec<Hit>> {
        Self::check_query(query)?;
        self.text_hits(query, text, query.limit)
    }

    pub(super) fn text_hits(
        &self,
        query: &SearchQuery<'_>,
        text: &str,
        k: usize,
    ) -> Result<Vec<Hit>> {
        let catalog = self.indexes.catalog.read();
        let Some(filter) = Self::filter(&catalog, query) else {
            return Ok(Vec::new());
        };
        let scopes = text_scopes(query);
        let found = self
            .indexes
            .text
            .search(text, &scopes, k, |key| catalog.admits(key, &filter))?;
        Ok(hits(&catalog, found, |s| Scores {
            bm25: Some(s),
            fused: s,
            ..Scores::default()
        }))
    }

    /// Hybrid recall: a pool of the best vector and BM25 candidates, grown
    /// by the graph (documents about the entities PPR ranks highest), every
    /// candidate scored on every signal it can be (a text-only candidate
    /// still gets its exact cosine), fused, best first.
    pub fn recall(
        &self,
        query: &SearchQuery<'_>,
        text: &str,
        vector: Option<&[f32]>,
        options: &RecallOptions,
    ) -> Result<Vec<Hit>> {
        self.recall_first(query, text, vector, options, &[])
    }

    /// [`Engine::recall`] with the documents `first` (those the query
    /// admits) in the pool whatever the signals found, scored like every
    /// candidate and ranked ahead of the others: search_code's definitions
    /// of the names a query gives.
    pub(super) fn recall_first(
        &self,
        query: &SearchQuery<'_>,
        text: &str,
        vector: Option<&[f32]>,
        options: &RecallOptions,
        first: &[u64],
    ) -> Result<Vec<Hit>> {
        Self::check_query(query)?;
        if options.max_per_thread == Some(0) {
            return Err(Error::invalid(
                "max_per_thread",
                "max_per_thread must be at least 1 (or left out to rank by score alone).",
            ));
        }
        let q = match vector {
            Some(v) => self.query_vector(v)?,
            None => None,
        };
        let size = RECALL_POOL.max(query.limit);
        let mut pool: Pool = HashMap::default();
        if let Some(q) = &q {
            for h in self.vector_hits(query, q, size)? {
                pool.entry(h.key)
                    .or_insert((h.kind, Signals::default()))
                    .1
                    .vector = h.scores.vector;
            }
        }
        let text_hits = self.text_hits(query, text, size)?;
        // A BM25 list shorter than the pool holds every matching document, so
        // a candidate missing from it truly scores 0, not "the pool minimum".
        let bm25_floor = (text_hits.len() < size).then_some(0.0);
        for h in text_hits {
            pool.entry(h.key)
                .or_insert((h.kind, Signals::default()))
                .1
                .bm25 = h.scores.bm25;
        }
        self.add_candidates(query, first, &mut pool);
        let hubs = self.indexes.vectors();
        let ranked = ranked_keys(&pool, options, hubs.as_deref());
        if options.weights.ppr > 0.0 {
            self.add_graph_signal(query, text, &ranked, &mut pool);
        }
        // Candidates only BM25 or the graph found still get their exact cosine.
        if let (Some(q), Some(index)) = (&q, self.indexes.vectors()) {
            let unscored: Vec<u64> = pool
                .iter()
                .filter(|(_, (_, s))| s.vector.is_none())
                .map(|(key, _)| *key)
                .collect();
            for (key, cosine) in index.cosines(&unscored, q) {
                if let Some((_, s)) = pool.get_mut(&key) {
                    s.vector = Some(cosine);
                }
            }
        }
        if bm25_floor.is_some() {
            for (_, s) in pool.values_mut() {
                s.bm25 = s.bm25.or(bm25_floor);
            }
        }
        if options.thread_prior > 0.0 && query.kinds.contains(Kind::Memory) {
            self.add_thread_signal(query, text, &mut pool)?;
        }
        // The question penalty, and so the score a question would have had
        // without it, exist in z-score fusion only (crate::asking).
        let asking = options.mode == FusionMode::ZScore && options.question_penalty > 0.0;
        if asking {
            self.add_asking(&mut pool, options.question_penalty);
        }
        let mut out: Vec<Hit> = fused_hits(&pool, options, hubs.as_deref());
        if asking {
            self.lift_replies(query, &pool, &mut out)?;
        }
        if !first.is_empty() {
            // A stable sort: fused order within each of the two tiers.
            let first: HashSet<u64> = first.iter().copied().collect();
            out.sort_by_key(|h| !first.contains(&h.key));
        }
        let spread = options
            .max_per_thread
            .or_else(|| asks_for_list(text).then_some(LIST_SPREAD));
        if let Some(cap) = spread {
            let catalog = self.indexes.catalog.read();
            spread_threads(&mut out, cap, |key| {
                catalog.get(key).map_or(0, |m| m.thread)
            });
        }
        out.truncate(query.limit);
        Ok(out)
    }

    /// How far each candidate falls for the questions it asks: `penalty`
    /// times its share of sentences that ask, from the catalog
    /// (`crate::asking`).
    fn add_asking(&self, pool: &mut Pool, penalty: f32) {
        let catalog = self.indexes.catalog.read();
        for (key, (_, s)) in pool.iter_mut() {
            let share = catalog.get(*key).map_or(0.0, |m| f32::from(m.asks) / 100.0);
            s.asking = penalty * share;
        }
    }

    /// Put the documents `keys` that `query` admits into the pool.
    fn add_candidates(&self, query: &SearchQuery<'_>, keys: &[u64], pool: &mut Pool) {
        if keys.is_empty() {
            return;
        }
        let catalog = self.indexes.catalog.read();
        let Some(filter) = Self::filter(&catalog, query) else {
            return;
        };
        for &key in keys {
            if let Some(meta) = catalog.get(key).filter(|_| catalog.admits(key, &filter)) {
                pool.entry(key).or_insert((meta.kind, Signals::default()));
            }
        }
    }

    /// Valid memories of `namespace` at least `threshold` cosine-similar to
    /// `vector`, most similar first, excluding `exclude_id`.
    pub fn similar_memories(
        &self,
        namespace: &str,
        vector: &[f32],
        exclude_id: Option<&str>,
        threshold: f32,
        limit: usize,
    ) -> Result<Vec<(Memory, f32)>> {
        let query = SearchQuery::memories(namespace, (limit + 1).min(MAX_RESULTS));
        let mut found = self.search_vector(&query, vector)?;
        // Only the rows that can be returned are read from the store.
        found.retain(|h| h.scores.vector.unwrap_or(0.0) >= threshold);
        let mut out = self.memories_for(&found)?;
        out.retain(|(m, _)| Some(m.id.as_str()) != exclude_id);
        out.truncate(limit);
        Ok(out
            .into_iter()
            .map(|(m, s)| (m, s.vector.unwrap_or(0.0)))
            .collect())
    }

    /// The memories behind memory hits, in hit order, with their scores.
    /// Hits of other kinds and records deleted meanwhile are skipped.
    pub fn memories_for(&self, found: &[Hit]) -> Result<Vec<(Memory, Scores)>> {
        let keys: Vec<u64> = found
            .iter()
            .filter(|h| h.kind == Kind::Memory)
            .map(|h| h.key)
            .collect();
        let mut rows: HashMap<u64, Memory> =
            table::by_doc_keys::<Memories>(&*self.store.reader()?, &keys)?
                .into_iter()
                .collect();
        Ok(found
            .iter()
            .filter_map(|h| rows.remove(&h.key).map(|m| (m, h.scores)))
            .collect())
    }
}

/// The BM25 term scopes a query may match: its namespace, each of its kinds.
fn text_scopes(query: &SearchQuery<'_>) -> Vec<String> {
    Kind::ALL
        .into_iter()
        .filter(|k| query.kinds.contains(*k))
        .map(|k| text::scope(query.namespace, k))
        .collect()
}

/// Pool keys best first by a preliminary fusion of the signals so far.
fn ranked_keys(pool: &Pool, options: &RecallOptions, hubs: Option<&VectorIndex>) -> Vec<u64> {
    fused_hits(pool, options, hubs)
        .into_iter()
        .map(|h| h.key)
        .collect()
}

/// Fuse the pool's signals into hits, best first. The vector signal fused
/// is the cosine less the hubness penalty (pools holding code chunks); the
/// hits keep the plain cosine.
fn fused_hits(pool: &Pool, options: &RecallOptions, hubs: Option<&VectorIndex>) -> Vec<Hit> {
    let keys: Vec<u64> = pool.keys().copied().collect();
    let kinds: Vec<Kind> = keys.iter().map(|k| pool[k].0).collect();
    let signals: Vec<Signals> = keys.iter().map(|k| pool[k].1).collect();
    let mut penalised = signals.clone();
    // A pool without code chunks ranks by the plain cosine (see HUB_KIND).
    if let Some(index) = hubs.filter(|_| kinds.contains(&HUB_KIND)) {
        for (s, penalty) in penalised.iter_mut().zip(index.hub_penalties(&keys)) {
            s.vector = s.vector.map(|cosine| cosine - penalty);
        }
    }
    let fused = fuse(
        &kinds,
        &penalised,
        options.weights,
        options.thread_prior,
        options.mode,
    );
    let mut out: Vec<Hit> = keys
        .into_iter()
        .zip(kinds)
        .zip(signals)
        .zip(fused)
        .map(|(((key, kind), s), f)| Hit {
            key,
            kind,
            scores: Scores {
                vector: s.vector,
                bm25: s.bm25,
                ppr: s.ppr,
                fused: f,
            },
        })
        .collect();
    sort_best_first(&mut out);
    out
}

fn hits(catalog: &Catalog, found: Vec<(u64, f32)>, scores: impl Fn(f32) -> Scores) -> Vec<Hit> {
    found
        .into_iter()
        .filter_map(|(key, s)| {
            catalog.get(key).map(|meta| Hit {
                key,
                kind: meta.kind,
                scores: scores(s),
            })
        })
        .collect()
}
