//! What a search answers: a document key, its kind and its per-signal
//! scores. Apart from the read path (`super::search`) so that the steps it
//! calls (`super::thread_spread`) use the same types without importing it.

use crate::kind::Kind;

/// Per-signal scores of a hit; `fused` is what it was ranked by.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Scores {
    pub vector: Option<f32>,
    pub bm25: Option<f32>,
    pub ppr: Option<f32>,
    pub fused: f32,
}

/// One search result: a document key, its kind and its scores.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub key: u64,
    pub kind: Kind,
    pub scores: Scores,
}

/// Hits by fused score, best first (ties by key, for determinism).
pub(super) fn sort_best_first(hits: &mut [Hit]) {
    hits.sort_by(|a, b| {
        b.scores
            .fused
            .total_cmp(&a.scores.fused)
            .then(a.key.cmp(&b.key))
    });
}
