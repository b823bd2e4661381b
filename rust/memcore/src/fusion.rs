//! Fusing ranked signals (vector, BM25, PPR) into one score.
//!
//! Raw scores live on different scales (cosine in [-1, 1], BM25 unbounded,
//! PPR mass tiny and heavy-tailed), so each signal is z-scored over the
//! candidate pool before the weighted sum (docs/retrieval.md):
//! - a candidate missing a signal gets that signal's minimum in the pool,
//!   except the thread prior, which says nothing of a candidate it does not
//!   score (a memory without a thread, a fact that is not an episode): z 0,
//!   and in RRF the mean of the others' shares;
//! - a signal with (near) zero spread contributes 0 rather than noise;
//! - z-scores are clipped to ±6 so one outlier cannot dominate;
//! - PPR is log-transformed first (its mass spans orders of magnitude);
//! - z-scoring happens within each kind, so code chunks (long, term-rich)
//!   cannot drown short text memories in a mixed recall;
//! - the weight of a signal absent from the whole pool is redistributed
//!   over the present ones in proportion;
//! - the thread prior (`engine::thread_prior`) is a fourth signal added with
//!   a weight of its own on top of the three, whose weights keep their sum.
//!
//! RRF (k = 60) is the alternative mode: rank-based and scale-free; each
//! signal's reciprocal ranks are multiplied by its weight (the same
//! redistribution applies), so the weights order the list in both modes.
//!
//! The default weights were chosen by the quality harness
//! (`benches/quality/`, see `benches/results/quality.md`): with the graph's
//! share kept at 0.45, vector and BM25 split the rest evenly. First measured
//! with z-scores clipped at ±3, the split was 3:7 for BM25 (a clipped vector
//! signal needed less weight to be heard); once the clip moved to ±6 the
//! vector's best candidates stood out again and leave-one-conversation-out on
//! LoCoMo picked a vector share of 0.5 and 0.55 (isolated memories and turns
//! scored together), so 0.5: `recall` R@10 60.6 -> 63.6, better at every k on
//! both conversations (`benches/results/quality-experiments.md`, section 10).
//! The first design's 0.40/0.15/0.45 stays available as [`Weights::DESIGN`].

use std::collections::HashMap;

use crate::kind::Kind;

/// Standard-deviation floor below which a signal is treated as constant.
const MIN_SPREAD: f32 = 1e-6;
/// z-score clip. A document holding the query's rare words is an outlier by
/// nature: at ±3 the best BM25 match was flattened into the crowd and recall's
/// R@1 fell below BM25 alone's; ±6 still stops one signal from swamping the
/// others (R@1 +3.5 and +9.8 points on the two LoCoMo conversations, R@5 and
/// R@10 unchanged; chosen on both folds, `benches/results/quality.md`).
const CLIP: f32 = 6.0;
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

impl Weights {
    /// The defaults measured by the quality harness (module docs).
    pub const TUNED: Weights = Weights {
        vector: 0.275,
        bm25: 0.275,
        ppr: 0.45,
    };
    /// Conversation turns' weights (`retrieve_context`): the graph's share as
    /// in [`Weights::TUNED`], the vector 0.3 of the rest. A turn's BM25 key
    /// holds its own words (weighted) and the turns before it, so it carries
    /// more of what a turn is about than a fact's key does. Chosen together
    /// with [`crate::store::conversations::TURN_OWN_WEIGHT`] by
    /// leave-one-conversation-out on LoCoMo: the folds picked 0.4 and 0.3, and
    /// 0.3 is the pick no worse than the old weights on the other fold
    /// (`benches/results/quality-experiments.md`, section 11).
    pub const TURNS: Weights = Weights {
        vector: 0.165,
        bm25: 0.385,
        ppr: 0.45,
    };
    /// The first design's weights, kept as a named preset.
    pub const DESIGN: Weights = Weights {
        vector: 0.40,
        bm25: 0.15,
        ppr: 0.45,
    };

    fn as_array(self) -> [f32; 3] {
        [self.vector, self.bm25, self.ppr]
    }
}

impl Default for Weights {
    fn default() -> Self {
        Weights::TUNED
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
    /// BM25 of the candidate's thread read as one text (`engine::thread_prior`).
    pub thread: Option<f32>,
    /// How far the candidate falls in z-score units for the questions it
    /// asks ([`crate::asking`]): not a signal but a penalty on the sum.
    pub asking: f32,
}

/// Fused score of each candidate, in input order. `thread_prior` weighs the
/// thread signal on top of the others (whose weights keep their total): a
/// prior, not a share, so a pool without threads ranks exactly as before.
pub fn fuse(
    kinds: &[Kind],
    signals: &[Signals],
    weights: Weights,
    thread_prior: f32,
    mode: FusionMode,
) -> Vec<f32> {
    debug_assert_eq!(kinds.len(), signals.len());
    let mut all = [0.0; 4];
    all[..3].copy_from_slice(&effective_weights(signals, weights));
    all[3] = thread_prior;
    match mode {
        FusionMode::ZScore => fuse_zscore(kinds, signals, all),
        FusionMode::Rrf => fuse_rrf(signals, all),
    }
}

type Getter = fn(&Signals) -> Option<f32>;

/// Index of the thread prior in [`SIGNALS`]: the one signal whose absence is
/// neutral rather than the pool's worst.
const THREAD: usize = 3;

const SIGNALS: [Getter; 4] = [
    |s| s.vector,
    |s| s.bm25,
    |s| s.ppr.map(|p| (p + PPR_EPSILON).ln()),
    |s| s.thread,
];

fn fuse_zscore(kinds: &[Kind], signals: &[Signals], weights: [f32; 4]) -> Vec<f32> {
    let mut fused = vec![0.0f32; signals.len()];
    let mut groups: HashMap<Kind, Vec<usize>> = HashMap::new();
    for (i, k) in kinds.iter().enumerate() {
        groups.entry(*k).or_default().push(i);
    }
    for members in groups.values() {
        for (s, (get, weight)) in SIGNALS.iter().zip(weights).enumerate() {
            if weight == 0.0 {
                continue;
            }
            for (i, z) in zscores(members, signals, *get, s == THREAD) {
                fused[i] += weight * z;
            }
        }
    }
    // A memory or turn that only asks falls (crate::asking); z-score units,
    // so RRF, whose scores are reciprocal ranks, leaves it out.
    for (f, s) in fused.iter_mut().zip(signals) {
        *f -= s.asking;
    }
    fused
}

/// The weights with the share of signals nobody in the pool has given to the
/// present ones in proportion (the total stays the same), so a store without
/// a graph ranks as if the graph's weight had been asked of the others; when
/// every present signal was weighted 0, they count equally.
fn effective_weights(signals: &[Signals], weights: Weights) -> [f32; 3] {
    let raw = weights.as_array();
    let present: Vec<bool> = SIGNALS[..3]
        .iter()
        .map(|get| signals.iter().any(|s| get(s).is_some()))
        .collect();
    let total: f32 = raw.iter().sum();
    let present_total: f32 = raw
        .iter()
        .zip(&present)
        .filter(|(_, p)| **p)
        .map(|(w, _)| w)
        .sum();
    let mut out = [0.0; 3];
    for (s, w) in out.iter_mut().enumerate() {
        *w = match (present[s], present_total > 0.0) {
            (false, _) => 0.0,
            (true, true) => raw[s] * total / present_total,
            // Only signals weighted 0 are present (a code description
            // searched without a query vector): they rank alike.
            (true, false) => 1.0,
        };
    }
    out
}

/// z-scores of one signal over one kind's members, as `(index, z)`. A
/// member the signal did not score counts as the pool's minimum, or, when
/// `absent_is_neutral`, is left out of the statistics and gets 0.
fn zscores(
    members: &[usize],
    signals: &[Signals],
    get: Getter,
    absent_is_neutral: bool,
) -> Vec<(usize, f32)> {
    let values: Vec<Option<f32>> = members.iter().map(|&i| get(&signals[i])).collect();
    let Some(min) = values.iter().flatten().copied().reduce(f32::min) else {
        return members.iter().map(|&i| (i, 0.0)).collect();
    };
    let filled: Vec<f32> = if absent_is_neutral {
        values.iter().flatten().copied().collect()
    } else {
        values.iter().map(|v| v.unwrap_or(min)).collect()
    };
    let n = filled.len() as f32;
    let mean = filled.iter().sum::<f32>() / n;
    let var = filled.iter().map(|v| (v - mean).powi(2)).sum::<f32>() / n;
    let sd = var.sqrt();
    members
        .iter()
        .zip(values)
        .map(|(&i, v)| {
            let z = match v.or((!absent_is_neutral).then_some(min)) {
                Some(v) if sd >= MIN_SPREAD => ((v - mean) / sd).clamp(-CLIP, CLIP),
                _ => 0.0,
            };
            (i, z)
        })
        .collect()
}

fn fuse_rrf(signals: &[Signals], weights: [f32; 4]) -> Vec<f32> {
    let mut fused = vec![0.0f32; signals.len()];
    for (signal, (get, weight)) in SIGNALS.into_iter().zip(weights).enumerate() {
        if weight == 0.0 {
            continue;
        }
        let mut ranked: Vec<(usize, f32)> = signals
            .iter()
            .enumerate()
            .filter_map(|(i, s)| get(s).map(|v| (i, v)))
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let share = |rank: usize| weight / (RRF_K + rank as f32 + 1.0);
        if signal == THREAD && !ranked.is_empty() {
            // A candidate the prior does not score gets the mean share.
            let neutral = (0..ranked.len()).map(share).sum::<f32>() / ranked.len() as f32;
            for (i, candidate) in signals.iter().enumerate() {
                if get(candidate).is_none() {
                    fused[i] += neutral;
                }
            }
        }
        for (rank, (i, _)) in ranked.into_iter().enumerate() {
            fused[i] += share(rank);
        }
    }
    fused
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(vector: Option<f32>, bm25: Option<f32>, ppr: Option<f32>) -> Signals {
        Signals {
            vector,
            bm25,
            ppr,
            thread: None,
            asking: 0.0,
        }
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
        let w = Weights::DESIGN;
        let fused = fuse(&kinds, &sig, w, 0.0, FusionMode::ZScore);
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
        // One outlier among n values has z = sqrt(n - 1): 7 for 50, over the clip.
        let kinds = [Kind::Memory; 50];
        let mut sig: Vec<Signals> = (0..50).map(|_| s(Some(0.5), Some(1.0), None)).collect();
        sig[0].bm25 = Some(1000.0);
        let fused = fuse(&kinds, &sig, Weights::DESIGN, 0.0, FusionMode::ZScore);
        let wb = 0.15 / 0.55;
        assert!((fused[0] - wb * CLIP).abs() < 1e-4, "clipped: {}", fused[0]);
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
        let fused = fuse(&kinds, &sig, Weights::default(), 0.0, FusionMode::ZScore);
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
        let fused = fuse(&kinds, &sig, Weights::default(), 0.0, FusionMode::ZScore);
        // Equal log steps give symmetric z-scores around the middle one.
        assert!(fused[1].abs() < 1e-4);
        assert!((fused[0] + fused[2]).abs() < 1e-4);
    }

    #[test]
    fn rrf_by_hand() {
        let kinds = [Kind::Memory; 2];
        let sig = [s(Some(0.9), Some(1.0), None), s(Some(0.8), Some(3.0), None)];
        let fused = fuse(&kinds, &sig, Weights::DESIGN, 0.0, FusionMode::Rrf);
        // PPR absent: 0.40 and 0.15 scaled to sum to 1.0.
        let (wv, wb) = (0.40 / 0.55, 0.15 / 0.55);
        assert!((fused[0] - (wv / 61.0 + wb / 62.0)).abs() < 1e-6);
        assert!((fused[1] - (wv / 62.0 + wb / 61.0)).abs() < 1e-6);
    }

    #[test]
    fn rrf_weights_change_the_order() {
        // The vector prefers the first candidate, BM25 the second: whichever
        // signal weighs more decides.
        let kinds = [Kind::Memory; 2];
        let sig = [s(Some(0.9), Some(1.0), None), s(Some(0.8), Some(3.0), None)];
        let by_vector = Weights {
            vector: 0.8,
            bm25: 0.2,
            ppr: 0.0,
        };
        let by_bm25 = Weights {
            vector: 0.2,
            bm25: 0.8,
            ppr: 0.0,
        };
        let a = fuse(&kinds, &sig, by_vector, 0.0, FusionMode::Rrf);
        let b = fuse(&kinds, &sig, by_bm25, 0.0, FusionMode::Rrf);
        assert!(a[0] > a[1]);
        assert!(b[1] > b[0]);
    }

    #[test]
    fn a_candidate_that_asks_falls_by_its_penalty() {
        let kinds = [Kind::Memory; 3];
        let mut sig = [
            s(Some(0.9), Some(8.0), None),
            s(Some(0.5), Some(2.0), None),
            s(Some(0.1), None, None),
        ];
        let plain = fuse(&kinds, &sig, Weights::TUNED, 0.0, FusionMode::ZScore);
        sig[0].asking = 4.0;
        sig[1].asking = 2.0;
        let asked = fuse(&kinds, &sig, Weights::TUNED, 0.0, FusionMode::ZScore);
        assert!((plain[0] - asked[0] - 4.0).abs() < 1e-4);
        assert!((plain[1] - asked[1] - 2.0).abs() < 1e-4);
        assert!((plain[2] - asked[2]).abs() < 1e-6);
        // Reciprocal ranks have no z-score scale to fall on.
        let rrf = |sig: &[Signals]| fuse(&kinds, sig, Weights::TUNED, 0.0, FusionMode::Rrf);
        sig[0].asking = 0.0;
        sig[1].asking = 0.0;
        let before = rrf(&sig);
        sig[0].asking = 4.0;
        assert!(
            before
                .iter()
                .zip(rrf(&sig))
                .all(|(a, b)| (a - b).abs() < 1e-9)
        );
    }

    #[test]
    fn tuned_weights_give_vector_and_bm25_an_equal_say() {
        // Two candidates, each first on one signal by the same z-margin: the
        // tuned weights tie them (at the old 3:7 the BM25 one won).
        let kinds = [Kind::Memory; 2];
        let sig = [s(Some(0.9), Some(1.0), None), s(Some(0.1), Some(9.0), None)];
        let fused = fuse(&kinds, &sig, Weights::TUNED, 0.0, FusionMode::ZScore);
        assert!((fused[0] - fused[1]).abs() < 1e-5, "{fused:?}");
    }

    #[test]
    fn an_absent_signal_gives_its_weight_to_the_others() {
        // No candidate has PPR: the fused scores equal those of weights that
        // never asked for it, scaled to the same total.
        let kinds = [Kind::Memory; 3];
        let sig = [
            s(Some(0.9), Some(1.0), None),
            s(Some(0.2), Some(5.0), None),
            s(Some(0.5), Some(2.0), None),
        ];
        let with_ppr = fuse(&kinds, &sig, Weights::TUNED, 0.0, FusionMode::ZScore);
        let t = Weights::TUNED;
        let total = t.vector + t.bm25 + t.ppr;
        let without = Weights {
            vector: t.vector * total / (t.vector + t.bm25),
            bm25: t.bm25 * total / (t.vector + t.bm25),
            ppr: 0.0,
        };
        let expected = fuse(&kinds, &sig, without, 0.0, FusionMode::ZScore);
        for (a, b) in with_ppr.iter().zip(&expected) {
            assert!((a - b).abs() < 1e-5, "{a} vs {b}");
        }
        // and the graph's share is not lost: the scores are larger than with
        // the 0.55 the two present signals were given.
        let unscaled = Weights { ppr: 0.0, ..t };
        let small = fuse(&kinds, &sig, unscaled, 0.0, FusionMode::ZScore);
        assert!(with_ppr[1].abs() > small[1].abs());
    }

    #[test]
    fn present_signals_weighted_zero_still_rank() {
        // BM25 weighted 0, the vector absent (no query vector): BM25 ranks
        // rather than every candidate tying at 0.
        let kinds = [Kind::CodeChunk; 3];
        let sig = [
            s(None, Some(1.0), None),
            s(None, Some(5.0), None),
            s(None, Some(2.0), None),
        ];
        let weights = Weights {
            vector: 1.0,
            bm25: 0.0,
            ppr: 0.0,
        };
        for mode in [FusionMode::ZScore, FusionMode::Rrf] {
            let fused = fuse(&kinds, &sig, weights, 0.0, mode);
            assert!(
                fused[1] > fused[2] && fused[2] > fused[0],
                "{mode:?}: {fused:?}"
            );
        }
    }

    #[test]
    fn the_thread_prior_reorders_only_pools_with_threads() {
        // Two equal candidates; the second's thread matches the query better.
        let kinds = [Kind::Memory; 3];
        let mut sig = [
            s(Some(0.8), Some(4.0), None),
            s(Some(0.8), Some(4.0), None),
            s(Some(0.2), Some(1.0), None),
        ];
        let flat = fuse(&kinds, &sig, Weights::TUNED, 1.0, FusionMode::ZScore);
        assert_eq!(
            flat,
            fuse(&kinds, &sig, Weights::TUNED, 0.0, FusionMode::ZScore)
        );
        sig[0].thread = Some(1.0);
        sig[1].thread = Some(6.0);
        let off = fuse(&kinds, &sig, Weights::TUNED, 0.0, FusionMode::ZScore);
        assert!((off[0] - off[1]).abs() < 1e-6, "no prior, a tie: {off:?}");
        let on = fuse(&kinds, &sig, Weights::TUNED, 0.5, FusionMode::ZScore);
        assert!(on[1] > on[0] && on[0] > on[2], "{on:?}");
        // RRF breaks the tie by position; a prior as heavy as the others
        // together moves the better thread first.
        let off = fuse(&kinds, &sig, Weights::TUNED, 0.0, FusionMode::Rrf);
        assert!(off[0] > off[1]);
        let on = fuse(&kinds, &sig, Weights::TUNED, 2.0, FusionMode::Rrf);
        assert!(on[1] > on[0], "{on:?}");
    }

    #[test]
    fn a_candidate_the_thread_prior_does_not_score_neither_gains_nor_loses() {
        // The third candidate has no thread (or is not an episode): the prior
        // lifts the first over the second and leaves the third where the
        // other signals put it, in both modes.
        let kinds = [Kind::Memory; 3];
        let mut sig = [
            s(Some(0.5), Some(3.0), None),
            s(Some(0.5), Some(3.0), None),
            s(Some(0.5), Some(3.0), None),
        ];
        sig[0].thread = Some(5.0);
        sig[1].thread = Some(1.0);
        for mode in [FusionMode::ZScore, FusionMode::Rrf] {
            let off = fuse(&kinds, &sig, Weights::TUNED, 0.0, mode);
            let on = fuse(&kinds, &sig, Weights::TUNED, 1.0, mode);
            let lift = |i: usize| on[i] - off[i];
            assert!(lift(0) > lift(2) && lift(2) > lift(1), "{mode:?}: {on:?}");
            assert!(
                (lift(0) + lift(1) - 2.0 * lift(2)).abs() < 1e-6,
                "{mode:?}: the unscored one sits at the mean: {on:?}"
            );
        }
    }
}
