//! Facts and search: `MemoryRecord`, `Scores`, `SearchHit`, and the index
//! reports (`CompactReport`, `IndexHealth`). Field names and order are the
//! public ones (docs/guide.md, "The records").

use pyo3::prelude::*;

use memcore::engine::{CompactReport as CoreCompact, IndexStatus};
use memcore::{Memory, MemoryType, Scores as CoreScores, Source, Tier};

use super::{Flat, Json, Stamp, Texts, record};

record! {
    /// A stored fact (docs/guide.md, "The records"). The embedding is never included.
    MemoryRecord {
        id: String,
        namespace: String,
        content: String,
        memory_type: MemoryType,
        source: Source,
        confidence: f64,
        importance: f64,
        metadata: Json,
        thread_id: Option<String>,
        user_id: Option<String>,
        event_time: Option<Stamp>,
        created_at: Stamp,
        updated_at: Stamp,
        accessed_at: Stamp,
        valid_from: Stamp,
        valid_until: Option<Stamp>,
        invalidated_at: Option<Stamp>,
        invalidation_reason: Option<String>,
        supersedes: Option<String>,
        superseded_by: Option<String>,
        expires_at: Option<Stamp>,
        tier: Tier,
    }
}

impl From<Memory> for MemoryRecord {
    fn from(m: Memory) -> Self {
        Self {
            id: m.id,
            namespace: m.namespace,
            content: m.content,
            memory_type: m.memory_type,
            source: m.source,
            confidence: m.confidence,
            importance: m.importance,
            metadata: Json::new(m.metadata),
            thread_id: m.thread_id,
            user_id: m.user_id,
            event_time: m.event_time.map(Stamp),
            created_at: Stamp(m.created_at),
            updated_at: Stamp(m.updated_at),
            accessed_at: Stamp(m.accessed_at),
            valid_from: Stamp(m.valid_from),
            valid_until: m.valid_until.map(Stamp),
            invalidated_at: m.invalidated_at.map(Stamp),
            invalidation_reason: m.invalidation_reason,
            supersedes: m.supersedes,
            superseded_by: m.superseded_by,
            expires_at: m.expires_at.map(Stamp),
            tier: m.tier,
        }
    }
}

#[pymethods]
impl MemoryRecord {
    /// Whether the memory holds now (not invalidated, superseded or expired).
    #[getter]
    fn is_valid(&self) -> bool {
        let now = memcore::temporal::now_micros();
        let ends = [self.valid_until, self.expires_at];
        self.valid_from.0 <= now && ends.iter().flatten().all(|end| now < end.0)
    }
}

record! {
    /// Why a hit ranked where it did: each signal's raw score and the fused one.
    Scores {
        vector: Option<f32>,
        bm25: Option<f32>,
        ppr: Option<f32>,
        fused: f32,
    }
}

impl From<CoreScores> for Scores {
    fn from(s: CoreScores) -> Self {
        Self {
            vector: s.vector,
            bm25: s.bm25,
            ppr: s.ppr,
            fused: s.fused,
        }
    }
}

record! {
    /// A memory found by a search, with the scores that explain its rank.
    ///
    /// `relevance_score` is a 0-1 number for display: the cosine for vector
    /// search, and the fused score mapped from its ±3 z-range for hybrid search.
    SearchHit {
        memory: Flat<MemoryRecord>,
        scores: Py<Scores>,
        relevance_score: f64,
    }
}

/// Which score a search shows as `relevance_score`.
#[derive(Debug, Clone, Copy)]
pub enum Relevance {
    /// Vector search: the cosine.
    Vector,
    /// Keyword search: BM25 squashed into 0-1.
    Bm25,
    /// Hybrid search: the fused z-score mapped from ±3.
    Fused,
}

impl Relevance {
    /// The display score of `scores`, clamped to 0-1 and rounded to four
    /// decimals as Python's `round(x, 4)` does (correctly rounded, ties to even).
    pub fn of(self, scores: &CoreScores) -> f64 {
        let value = match self {
            Self::Vector => f64::from(scores.vector.unwrap_or(0.0)),
            Self::Bm25 => {
                let bm25 = f64::from(scores.bm25.unwrap_or(0.0));
                bm25 / (1.0 + bm25)
            }
            Self::Fused => (f64::from(scores.fused) + 3.0) / 6.0,
        };
        let clamped = value.clamp(0.0, 1.0);
        format!("{clamped:.4}").parse().unwrap_or(clamped)
    }
}

/// Search hits from the core's `(memory, scores)` pairs.
pub fn search_hits(
    py: Python<'_>,
    found: Vec<(Memory, CoreScores)>,
    relevance: Relevance,
) -> PyResult<Vec<SearchHit>> {
    found
        .into_iter()
        .map(|(memory, scores)| {
            Ok(SearchHit {
                relevance_score: relevance.of(&scores),
                memory: Flat(Py::new(py, MemoryRecord::from(memory))?),
                scores: Py::new(py, Scores::from(scores))?,
            })
        })
        .collect()
}

record! {
    /// What `Memory.compact` did to the derived search indexes.
    CompactReport {
        /// Whether the HNSW graph was rebuilt without the slots of removed vectors.
        vectors_rebuilt: bool,
        /// Removed vectors whose graph slots were reclaimed.
        tombstones_dropped: usize,
        /// Whether the BM25 index's segments were merged.
        text_merged: bool,
    }
}

impl From<CoreCompact> for CompactReport {
    fn from(r: CoreCompact) -> Self {
        Self {
            vectors_rebuilt: r.vectors_rebuilt,
            tombstones_dropped: r.tombstones_dropped,
            text_merged: r.text_merged,
        }
    }
}

record! {
    /// Sizes and health of the derived search indexes (vector and BM25), every namespace.
    IndexHealth {
        /// Live searchable records of every kind.
        documents: usize,
        /// Vectors in the HNSW graph.
        vectors: usize,
        /// Vectors already searchable but not yet in the graph.
        vectors_pending: usize,
        /// Removed vectors still holding graph slots (`compact` reclaims them).
        vector_tombstones: usize,
        /// The vector dimension, once known.
        dim: Option<usize>,
        /// Records committed to the BM25 index.
        text_documents: u64,
        /// Records already searchable but not yet committed to the BM25 index.
        text_pending: usize,
        /// The indexing failure not yet recovered from (a commit or save that keeps
        /// failing, e.g. on a full disk; the documents stay searchable from memory), or None.
        last_error: Option<String>,
        /// What happened to the indexes since open: damaged files set aside and rebuilt
        /// from the database, panics caught, rebuilds scheduled.
        warnings: Texts,
    }
}

impl From<IndexStatus> for IndexHealth {
    fn from(s: IndexStatus) -> Self {
        Self {
            documents: s.documents,
            vectors: s.vectors,
            vectors_pending: s.vectors_pending,
            vector_tombstones: s.vector_tombstones,
            dim: s.dim,
            text_documents: s.text_documents,
            text_pending: s.text_pending,
            last_error: s.last_error,
            warnings: Texts(s.warnings),
        }
    }
}
