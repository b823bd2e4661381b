//! Search operations on `Engine`: vector, BM25, hybrid recall, similar
//! memories, plus index maintenance. Hits come back as `SearchHit` records
//! (the memory, its scores, the score shown); embeddings never cross the
//! boundary outward.

use numpy::PyReadonlyArray1;
use pyo3::prelude::*;

use memcore::asking::ASKING_PENALTY;
use memcore::{FusionMode, Hit, Kind, KindSet, RecallOptions, SearchQuery, THREAD_PRIOR, Weights};

use crate::arrays::owned_vector;
use crate::engine::PyEngine;
use crate::errors::{BindError, BindResult, run};
use crate::memories::valid_at;
use crate::records::facts::{
    CompactReport, IndexHealth, MemoryRecord, Relevance, SearchHit, search_hits,
};

/// `(vector, bm25, ppr)` as fusion weights, each a non-negative number.
pub(crate) fn checked_weights((vector, bm25, ppr): (f32, f32, f32)) -> BindResult<Weights> {
    for (name, w) in [("vector", vector), ("bm25", bm25), ("ppr", ppr)] {
        if !w.is_finite() || w < 0.0 {
            return Err(BindError::Core(memcore::Error::invalid(
                "weights",
                format!("weight {name} must be a non-negative number, got {w}."),
            )));
        }
    }
    Ok(Weights { vector, bm25, ppr })
}

/// A ranking knob (the thread prior's weight, the question penalty):
/// `default` when not given, else a non-negative number.
fn checked_knob(name: &str, value: Option<f32>, default: f32) -> BindResult<f32> {
    match value {
        None => Ok(default),
        Some(v) if v.is_finite() && v >= 0.0 => Ok(v),
        Some(v) => Err(BindError::Core(memcore::Error::invalid(
            name,
            format!("{name} must be a non-negative number (0 turns it off), got {v}."),
        ))),
    }
}

fn parse_kinds(kinds: Option<Vec<String>>) -> BindResult<KindSet> {
    match kinds {
        None => Ok(KindSet::only(Kind::Memory)),
        Some(names) => {
            let parsed = names
                .iter()
                .map(|n| Kind::parse(n))
                .collect::<memcore::Result<Vec<Kind>>>()?;
            Ok(KindSet::of(&parsed))
        }
    }
}

fn parse_mode(mode: &str) -> BindResult<FusionMode> {
    match mode {
        "zscore" => Ok(FusionMode::ZScore),
        "rrf" => Ok(FusionMode::Rrf),
        other => Err(BindError::Core(memcore::Error::invalid(
            "mode",
            format!("Unknown fusion mode '{other}'. Use 'zscore' or 'rrf'."),
        ))),
    }
}

/// The arguments every search takes, extracted before the GIL is released.
struct Scope {
    namespace: String,
    kinds: KindSet,
    thread_id: Option<String>,
    as_of: Option<i64>,
    valid_only: bool,
    limit: usize,
}

impl Scope {
    fn query(&self) -> SearchQuery<'_> {
        SearchQuery {
            namespace: &self.namespace,
            kinds: self.kinds,
            thread_id: self.thread_id.as_deref(),
            scope: None,
            tag: None,
            exclude_scope: None,
            valid: valid_at(self.as_of, self.valid_only),
            limit: self.limit,
        }
    }
}

#[pymethods]
impl PyEngine {
    /// Nearest memories to `vector` by cosine similarity.
    ///
    /// Args:
    ///     namespace: Where to search.
    ///     vector: The query embedding (float32, 1-D).
    ///     limit: 1-50.
    ///     thread_id: Only this thread.
    ///     as_of: Microseconds; what was valid then (else what is valid now).
    ///     valid_only: False to include invalid and superseded records.
    ///
    /// Returns:
    ///     Hits best first, `relevance_score` the cosine.
    #[pyo3(signature = (namespace, vector, *, limit = 10, thread_id = None, as_of = None,
        valid_only = true, kinds = None))]
    #[allow(clippy::too_many_arguments)]
    fn search_vector<'py>(
        &self,
        py: Python<'py>,
        namespace: String,
        vector: PyReadonlyArray1<'py, f32>,
        limit: usize,
        thread_id: Option<String>,
        as_of: Option<i64>,
        valid_only: bool,
        kinds: Option<Vec<String>>,
    ) -> BindResult<Vec<SearchHit>> {
        let engine = self.engine()?;
        let scope = Scope {
            namespace,
            kinds: parse_kinds(kinds)?,
            thread_id,
            as_of,
            valid_only,
            limit,
        };
        let q = owned_vector(Some(vector)).unwrap_or_default();
        let found = run(py, &engine, || -> memcore::Result<_> {
            let hits = engine.search_vector(&scope.query(), &q)?;
            engine.memories_for(&hits)
        })?;
        Ok(search_hits(py, found, Relevance::Vector)?)
    }

    /// Best BM25 matches of `text` among memories.
    #[pyo3(signature = (namespace, text, *, limit = 10, thread_id = None, as_of = None,
        valid_only = true, kinds = None))]
    #[allow(clippy::too_many_arguments)]
    fn search_text(
        &self,
        py: Python<'_>,
        namespace: String,
        text: &str,
        limit: usize,
        thread_id: Option<String>,
        as_of: Option<i64>,
        valid_only: bool,
        kinds: Option<Vec<String>>,
    ) -> BindResult<Vec<SearchHit>> {
        let engine = self.engine()?;
        let scope = Scope {
            namespace,
            kinds: parse_kinds(kinds)?,
            thread_id,
            as_of,
            valid_only,
            limit,
        };
        let found = run(py, &engine, || -> memcore::Result<_> {
            let hits = engine.search_text(&scope.query(), text)?;
            engine.memories_for(&hits)
        })?;
        Ok(search_hits(py, found, Relevance::Bm25)?)
    }

    /// Hybrid recall: vector + BM25 (+ PPR once the graph exists), z-score
    /// fused with `weights` = (vector, bm25, ppr), or RRF with `mode="rrf"`;
    /// `max_per_thread` spreads the list across threads; `question_penalty`
    /// lowers memories that only ask.
    #[pyo3(signature = (namespace, text, vector = None, *, limit = 10, thread_id = None,
        as_of = None, valid_only = true, kinds = None, weights = None,
        mode = "zscore", thread_prior = None, max_per_thread = None,
        question_penalty = None))]
    #[allow(clippy::too_many_arguments)]
    fn recall<'py>(
        &self,
        py: Python<'py>,
        namespace: String,
        text: &str,
        vector: Option<PyReadonlyArray1<'py, f32>>,
        limit: usize,
        thread_id: Option<String>,
        as_of: Option<i64>,
        valid_only: bool,
        kinds: Option<Vec<String>>,
        weights: Option<(f32, f32, f32)>,
        mode: &str,
        thread_prior: Option<f32>,
        max_per_thread: Option<usize>,
        question_penalty: Option<f32>,
    ) -> BindResult<Vec<SearchHit>> {
        let engine = self.engine()?;
        let scope = Scope {
            namespace,
            kinds: parse_kinds(kinds)?,
            thread_id,
            as_of,
            valid_only,
            limit,
        };
        let d = Weights::default();
        let weights = weights.unwrap_or((d.vector, d.bm25, d.ppr));
        let options = RecallOptions {
            weights: checked_weights(weights)?,
            mode: parse_mode(mode)?,
            thread_prior: checked_knob("thread_prior", thread_prior, THREAD_PRIOR)?,
            max_per_thread,
            question_penalty: checked_knob("question_penalty", question_penalty, ASKING_PENALTY)?,
        };
        let q = owned_vector(vector);
        let found = run(py, &engine, || -> memcore::Result<_> {
            let hits: Vec<Hit> = engine.recall(&scope.query(), text, q.as_deref(), &options)?;
            engine.memories_for(&hits)
        })?;
        Ok(search_hits(py, found, Relevance::Fused)?)
    }

    /// Valid memories at least `threshold` cosine-similar to `vector`.
    ///
    /// Returns:
    ///     `(memory, cosine)` pairs, most similar first.
    #[pyo3(signature = (namespace, vector, *, exclude_id = None, threshold = 0.8, limit = 5))]
    fn similar_memories<'py>(
        &self,
        py: Python<'py>,
        namespace: &str,
        vector: PyReadonlyArray1<'py, f32>,
        exclude_id: Option<&str>,
        threshold: f32,
        limit: usize,
    ) -> BindResult<Vec<(MemoryRecord, f32)>> {
        let engine = self.engine()?;
        let q = owned_vector(Some(vector)).unwrap_or_default();
        let found = run(py, &engine, || {
            engine.similar_memories(namespace, &q, exclude_id, threshold, limit)
        })?;
        Ok(found
            .into_iter()
            .map(|(m, s)| (MemoryRecord::from(m), s))
            .collect())
    }

    /// Block until every write so far is committed to the indexes and saved.
    fn flush(&self, py: Python<'_>) -> BindResult<()> {
        let engine = self.engine()?;
        run(py, &engine, || engine.flush())
    }

    /// Wait at most `timeout` seconds (forever with None) for the indexes to
    /// hold every write so far on disk; whether they do.
    #[pyo3(signature = (timeout = None))]
    fn wait_indexed(&self, py: Python<'_>, timeout: Option<f64>) -> BindResult<bool> {
        let timeout = match timeout {
            Some(t) if !(t.is_finite() && t >= 0.0) => {
                return Err(BindError::Core(memcore::Error::invalid(
                    "timeout",
                    "timeout is seconds, 0 or more (None: wait as long as it takes).",
                )));
            }
            // Past what a Duration holds: as long as it takes.
            t => t.and_then(|t| std::time::Duration::try_from_secs_f64(t).ok()),
        };
        let engine = self.engine()?;
        run(py, &engine, || engine.wait_indexed(timeout))
    }

    /// Block until every write so far is indexed and every stored vector has
    /// its hubness value (the end of a batch; benchmarks and tests).
    fn settle_hubness(&self, py: Python<'_>) -> BindResult<()> {
        let engine = self.engine()?;
        run(py, &engine, || engine.settle_hubness())
    }

    /// Compact the indexes (HNSW rebuilt when tombstones exceed ~20% or
    /// `force`; text segments merged). Returns what was done.
    #[pyo3(signature = (force = false))]
    fn compact(&self, py: Python<'_>, force: bool) -> BindResult<CompactReport> {
        let engine = self.engine()?;
        let report = run(py, &engine, || engine.compact(force))?;
        Ok(CompactReport::from(report))
    }

    /// Drop both indexes and rebuild them from the store.
    fn rebuild_indexes(&self, py: Python<'_>) -> BindResult<()> {
        let engine = self.engine()?;
        run(py, &engine, || engine.rebuild_indexes())
    }

    /// Sizes and health of the indexes.
    fn index_status(&self, py: Python<'_>) -> BindResult<IndexHealth> {
        let engine = self.engine()?;
        Ok(IndexHealth::from(py.detach(|| engine.index_status())))
    }
}
