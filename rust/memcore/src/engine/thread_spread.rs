//! Spreading a ranked list across threads (`RecallOptions::max_per_thread`).
//!
//! A caller who wants a broad view ("what did we discuss about X, in any
//! conversation") asks for at most `cap` hits of one thread before other
//! threads get their turn. Hits are dealt in rounds: round 0 holds each
//! thread's best `cap` hits, round 1 the next `cap`, and so on; the list is
//! ordered by round, then by rank. So nothing is dropped (a store with one
//! thread still fills the limit), a thread's own order is kept, and
//! memories without a thread are never held back.
//!
//! Off by default but for a question asking for a list (`crate::listing`):
//! on LoCoMo, capping the top of the list per session costs recall on both
//! conversations, multi-hop questions included, because the evidence of
//! most questions sits in one session (benches/results/quality-experiments.md,
//! sections 4 and 28); a question that wants several things is the
//! exception (section 31).

use rustc_hash::FxHashMap as HashMap;

use super::hits::Hit;
use crate::catalog::Sym;

/// Reorder `hits` (best first) so that no thread has more than `cap` hits
/// ahead of another thread's next one. `thread_of` gives a hit's thread
/// (`0` = none: never held back). `cap` is at least 1.
pub(super) fn spread_threads(hits: &mut [Hit], cap: usize, thread_of: impl Fn(u64) -> Sym) {
    debug_assert!(cap >= 1, "a cap of 0 is refused by recall");
    let mut taken: HashMap<Sym, usize> = HashMap::default();
    let mut rounds: Vec<usize> = Vec::with_capacity(hits.len());
    for hit in hits.iter() {
        let thread = thread_of(hit.key);
        rounds.push(if thread == 0 {
            0
        } else {
            let n = taken.entry(thread).or_default();
            *n += 1;
            (*n - 1) / cap
        });
    }
    if rounds.iter().all(|&r| r == 0) {
        return;
    }
    let mut order: Vec<(usize, Hit)> = rounds.into_iter().zip(hits.iter().copied()).collect();
    // Stable: within a round, the ranking's own order.
    order.sort_by_key(|(round, _)| *round);
    for (slot, (_, hit)) in hits.iter_mut().zip(order) {
        *slot = hit;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::hits::Scores;
    use crate::kind::Kind;

    /// Hits keyed 0..threads.len(), best first; `threads[i]` is hit i's thread.
    fn ranked(threads: &[Sym]) -> (Vec<Hit>, impl Fn(u64) -> Sym + '_) {
        let hits = (0..threads.len() as u64)
            .map(|key| Hit {
                key,
                kind: Kind::Memory,
                scores: Scores::default(),
            })
            .collect();
        (hits, move |key: u64| threads[key as usize])
    }

    fn keys(hits: &[Hit]) -> Vec<u64> {
        hits.iter().map(|h| h.key).collect()
    }

    #[test]
    fn a_thread_past_its_cap_waits_for_the_others() {
        // Thread 1 holds the four best hits; thread 2 the fifth and sixth.
        let (mut hits, thread_of) = ranked(&[1, 1, 1, 1, 2, 2]);
        spread_threads(&mut hits, 2, &thread_of);
        assert_eq!(keys(&hits), [0, 1, 4, 5, 2, 3]);
        let (mut hits, thread_of) = ranked(&[1, 1, 1, 1, 2, 2]);
        spread_threads(&mut hits, 1, &thread_of);
        assert_eq!(keys(&hits), [0, 4, 1, 5, 2, 3]);
    }

    #[test]
    fn hits_without_a_thread_are_never_held_back() {
        let (mut hits, thread_of) = ranked(&[1, 1, 0, 1, 0]);
        spread_threads(&mut hits, 1, &thread_of);
        assert_eq!(keys(&hits), [0, 2, 4, 1, 3]);
    }

    #[test]
    fn a_list_within_the_cap_keeps_its_order() {
        let (mut hits, thread_of) = ranked(&[3, 1, 2, 1, 3]);
        spread_threads(&mut hits, 2, &thread_of);
        assert_eq!(keys(&hits), [0, 1, 2, 3, 4]);
    }

    #[test]
    fn one_thread_still_fills_the_list() {
        let (mut hits, thread_of) = ranked(&[5, 5, 5]);
        spread_threads(&mut hits, 1, &thread_of);
        assert_eq!(keys(&hits), [0, 1, 2]);
    }
}
