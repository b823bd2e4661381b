//! Fusing ranked signals (vector, BM25, PPR) into one score.
//!
//! Raw scores live on different scales (cosine in [-1, 1], BM25 unbounded,
//! PPR mass tiny and heavy-tailed), so each signal is z-scored over the
//! candidate pool before the weighted sum (docs/retrieval.md):
//! - a candidate missing a signal gets that signal's minimum in the pool;
//! - a signal with (near) zero spread contributes 0 rather than noise;
//! - z-scores are clipped to ±3 so one outlier cannot dominate;
//! - PPR is log-transformed first (its mass spans orders of magnitude);
//! - z-scoring happens within each kind, so code chunks (long, term-rich)
//!   cannot drown short text memories in a mixed recall;
//! - the weight of a signal absent from the whole pool is redistributed
//!   over the present ones in proportion.
//!
//! RRF (k = 60) is the alternative mode: rank-based, scale-free, unweighted.

use std::collections::HashMap;

use crate::kind::Kind;

/// Standard-deviation floor below which a signal is treated as constant.
const MIN_SPREAD: f32 = 1e-6;
/// z-score clip.
const CLIP: f32 = 3.0;
/// Floor added before taking the log of PPR mass: about the precision of
/// the push, so "no mass" sits a few log-units below the weakest real link
/// instead of dominating the spread.
const PPR_EPSILON: f32 = 1e-4;
/// The RRF constant.
pub const RRF_K: f32 = 60.0;

/// Weights of the three signals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    pub vector: f32,
    pub bm25: f32,
    pub ppr: f32,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            vector: 0.40,
            bm25: 0.15,
            ppr: 0.45,
        }
    }
}

/// How signals are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FusionMode {
    /// Weighted sum of per-kind z-scores.
    #[default]
    ZScore,
    /// Reciprocal rank fusion.
    Rrf,
}

/// One candidate's raw signals (None = the signal did not score it).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Signals {
    pub vector: Option<f32>,
    pub bm25: Option<f32>,
    pub ppr: Option<f32>,
}

/// Fused score of each candidate, in input order.
pub fn fuse(kinds: &[Kind], signals: &[Signals], weights: Weights, mode: FusionMode) -> Vec<f32> {
    debug_assert_eq!(kinds.len(), signals.len());
    match mode {
        FusionMode::ZScore => fuse_zscore(kinds, signals, weights),
        FusionMode::Rrf => fuse_rrf(signals),
    }
}

type Getter = fn(&Signals) -> Option<f32>;

const SIGNALS: [Getter; 3] = [
    |s| s.vector,
    |s| s.bm25,
    |s| s.ppr.map(|p| (p + PPR_EPSILON).ln()),
];

fn fuse_zscore(kinds: &[Kind], signals: &[Signals], weights: Weights) -> Vec<f32> {
    let raw_weights = [weights.vector, weights.bm25, weights.ppr];
    // Redistribute the weight of signals nobody in the pool has.
    let present: Vec<bool> = SIGNALS
        .iter()
        .map(|get| signals.iter().any(|s| get(s).is_some()))
        .collect();
    let total: f32 = raw_weights.iter().sum();
    let present_total: f32 = raw_weights
        .iter()
        .zip(&present)
        .filter(|(_, p)| **p)
        .map(|(w, _)| w)
        .sum();
    let scale = if present_total > 0.0 {
        total / present_total
    } else {
        0.0
    };
    let mut fused = vec![0.0f32; signals.len()];
    let mut groups: HashMap<Kind, Vec<usize>> = HashMap::new();
    for (i, k) in kinds.iter().enumerate() {
        groups.entry(*k).or_default().push(i);
    }
    for members in groups.values() {
        for (s, get) in SIGNALS.iter().enumerate() {
            if !present[s] {
                continue;
            }
            let weight = raw_weights[s] * scale;
            for (i, z) in zscores(members, signals, *get) {
                fused[i] += weight * z;
            }
        }
    }
    fused
}

/// z-scores of one signal over one kind's members, as `(index, z)`.
fn zscores(members: &[usize], signals: &[Signals], get: Getter) -> Vec<(usize, f32)> {
    let values: Vec<Option<f32>> = members.iter().map(|&i| get(&signals[i])).collect();
    let Some(min) = values.iter().flatten().copied().reduce(f32::min) else {
        return members.iter().map(|&i| (i, 0.0)).collect();
    };
    let filled: Vec<f32> = values.iter().map(|v| v.unwrap_or(min)).collect();
    let n = filled.len() as f32;
    let mean = filled.iter().sum::<f32>() / n;
    let var = filled.iter().map(|v| (v - mean).powi(2)).sum::<f32>() / n;
    let sd = var.sqrt();
    members
        .iter()
        .zip(filled)
        .map(|(&i, v)| {
            let z = if sd < MIN_SPREAD {
                0.0
            } else {
                ((v - mean) / sd).clamp(-CLIP, CLIP)
            };
            (i, z)
        })
        .collect()
}

fn fuse_rrf(signals: &[Signals]) -> Vec<f32> {
    let mut fused = vec![0.0f32; signals.len()];
    for get in SIGNALS {
        let mut ranked: Vec<(usize, f32)> = signals
            .iter()
            .enumerate()
            .filter_map(|(i, s)| get(s).map(|v| (i, v)))
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for (rank, (i, _)) in ranked.into_iter().enumerate() {
            fused[i] += 1.0 / (RRF_K + rank as f32 + 1.0);
        }
    }
    fused
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(vector: Option<f32>, bm25: Option<f32>, ppr: Option<f32>) -> Signals {
        Signals { vector, bm25, ppr }
    }

    #[test]
    fn zscore_by_hand() {
        // vector values 0.9, 0.5, 0.1: mean 0.5, sd 0.3266; bm25 on the first
        // two, the third missing takes the minimum: values 8, 2, 2.
        let kinds = [Kind::Memory; 3];
        let sig = [
            s(Some(0.9), Some(8.0), None),
            s(Some(0.5), Some(2.0), None),
            s(Some(0.1), None, None),
        ];
        let w = Weights::default();
        let fused = fuse(&kinds, &sig, w, FusionMode::ZScore);
        let sd_v = (((0.4f32).powi(2) * 2.0) / 3.0).sqrt();
        let z_v = [0.4 / sd_v, 0.0, -0.4 / sd_v];
        let mean_b = 4.0;
        let sd_b = (((4.0f32).powi(2) + 2.0 * (2.0f32).powi(2)) / 3.0).sqrt();
        let z_b = [
            (8.0 - mean_b) / sd_b,
            (2.0 - mean_b) / sd_b,
            (2.0 - mean_b) / sd_b,
        ];
        // PPR absent: 0.40 and 0.15 are scaled to sum to 1.0.
        let (wv, wb) = (0.40 / 0.55, 0.15 / 0.55);
        for i in 0..3 {
            let expected = wv * z_v[i] + wb * z_b[i];
            assert!(
                (fused[i] - expected).abs() < 1e-4,
                "{i}: {} vs {expected}",
                fused[i]
            );
        }
    }

    #[test]
    fn constant_signal_contributes_nothing_and_clip_holds() {
        let kinds = [Kind::Memory; 12];
        let mut sig: Vec<Signals> = (0..12).map(|_| s(Some(0.5), Some(1.0), None)).collect();
        sig[0].bm25 = Some(1000.0);
        let fused = fuse(&kinds, &sig, Weights::default(), FusionMode::ZScore);
        let wb = 0.15 / 0.55;
        assert!(fused[0] <= wb * CLIP + 1e-5, "clipped: {}", fused[0]);
        assert!(fused[0] > 0.0);
    }

    #[test]
    fn kinds_are_normalised_separately() {
        // Code chunks score far higher on BM25, but z-scoring per kind puts
        // the best memory level with the best chunk.
        let kinds = [Kind::Memory, Kind::Memory, Kind::CodeChunk, Kind::CodeChunk];
        let sig = [
            s(None, Some(2.0), None),
            s(None, Some(1.0), None),
            s(None, Some(40.0), None),
            s(None, Some(20.0), None),
        ];
        let fused = fuse(&kinds, &sig, Weights::default(), FusionMode::ZScore);
        assert!((fused[0] - fused[2]).abs() < 1e-5);
        assert!((fused[1] - fused[3]).abs() < 1e-5);
    }

    #[test]
    fn ppr_is_log_transformed() {
        let kinds = [Kind::Memory; 3];
        // Masses whose (mass + ε) are in geometric progression: 0.1, 0.01, 0.001.
        let e = PPR_EPSILON;
        let sig = [
            s(None, None, Some(1e-1 - e)),
            s(None, None, Some(1e-2 - e)),
            s(None, None, Some(1e-3 - e)),
        ];
        let fused = fuse(&kinds, &sig, Weights::default(), FusionMode::ZScore);
        // Equal log steps give symmetric z-scores around the middle one.
        assert!(fused[1].abs() < 1e-4);
        assert!((fused[0] + fused[2]).abs() < 1e-4);
    }

    #[test]
    fn rrf_by_hand() {
        let kinds = [Kind::Memory; 2];
        let sig = [s(Some(0.9), Some(1.0), None), s(Some(0.8), Some(3.0), None)];
        let fused = fuse(&kinds, &sig, Weights::default(), FusionMode::Rrf);
        let first = 1.0 / 61.0 + 1.0 / 62.0;
        assert!((fused[0] - first).abs() < 1e-6);
        assert!((fused[1] - first).abs() < 1e-6);
    }
}
