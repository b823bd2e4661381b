//! The thread prior of recall: an episodic memory (a moment of a
//! conversation, an event) whose thread, read as one text, matches the query
//! is more likely to answer it (the cluster hypothesis; Liu and Croft, SIGIR
//! 2004). A memory is still found only by its own text, vector or entities;
//! the prior reorders the pool those found, by the BM25 of each episodic
//! candidate's thread over the query's words and pairs.
//!
//! Only episodes: a fragment of a conversation ("They were stoked!") means
//! what its thread is about, while a standing fact ("User is vegetarian",
//! the default `semantic` type) says all it means itself. Given to facts, the
//! prior lifts whole threads on one word of the question ("is the user
//! looking for a new job" lifted every fact saved beside "The invoice export
//! job runs nightly"): on the agent-facts set stored in threads of five,
//! R@5 fell from 94.2 to 77.8 (section 24 of the experiments file). The
//! thread's text is all of its memories, facts included; a candidate that is
//! not an episode gets no thread signal, which the fusion treats as neutral.
//!
//! A thread's text is never indexed as one: its term frequencies are the sums
//! over its memories' postings ([`crate::text::GroupTerm`]), its length is
//! its number of memories (the catalog counts them; memories are about as
//! long as each other, and on LoCoMo the count scored as well as the true
//! token length), and the idf is over the namespace's threads. Nothing new
//! is stored, so nothing has to be rebuilt. Measured in
//! `benches/results/quality-experiments.md`, section 20.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::Engine;
use super::query::{Pool, SearchQuery};
use crate::catalog::Sym;
use crate::error::Result;
use crate::kind::Kind;
use crate::memory::MemoryType;
use crate::text;

/// BM25's parameters, as tantivy's for documents.
const K1: f32 = 1.2;
const B: f32 = 0.75;

impl Engine {
    /// Give every episodic memory of `pool` that carries a thread the BM25
    /// of its thread for `text` (0 when the thread holds none of its words).
    /// Left out when the pool's episodes span fewer than two threads: a
    /// prior equal for all ranks nothing.
    pub(super) fn add_thread_signal(
        &self,
        query: &SearchQuery<'_>,
        text: &str,
        pool: &mut Pool,
    ) -> Result<()> {
        let catalog = self.indexes.catalog.read();
        // No episode was ever stored: nothing to do (and no walk to pay for).
        let (Some(namespace), Some(episodic)) = (
            catalog.sym(query.namespace),
            catalog.sym(MemoryType::Episodic.as_str()),
        ) else {
            return Ok(());
        };
        let in_thread = |key: u64| {
            catalog
                .get(key)
                .filter(|m| m.kind == Kind::Memory && m.namespace == namespace && m.thread != 0)
        };
        let thread_of = |key: u64| in_thread(key).map(|m| m.thread);
        let episode_thread = |key: u64| {
            in_thread(key)
                .filter(|m| m.tag == episodic)
                .map(|m| m.thread)
        };
        let candidates: HashSet<Sym> = pool.keys().filter_map(|&k| episode_thread(k)).collect();
        if candidates.len() < 2 {
            return Ok(());
        }
        let totals = catalog.thread_totals(namespace, Kind::Memory);
        let threads = totals.threads as f32;
        let mean_size = totals.documents as f32 / threads.max(1.0);
        let scope = text::scope(query.namespace, Kind::Memory);
        let mut scores: HashMap<Sym, f32> = HashMap::default();
        for term in self
            .indexes
            .text
            .group_term_freqs(text, &scope, thread_of)?
        {
            let df = term.freqs.len() as f32;
            let idf = (1.0 + (threads - df + 0.5) / (df + 0.5)).ln();
            for (thread, tf) in term.freqs {
                if !candidates.contains(&thread) {
                    continue;
                }
                let size = catalog.thread_size(namespace, Kind::Memory, thread) as f32;
                let tf = tf as f32;
                let norm = K1 * (1.0 - B + B * size / mean_size.max(1.0));
                *scores.entry(thread).or_default() +=
                    term.boost * idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        for (key, (_, signals)) in pool.iter_mut() {
            if let Some(thread) = episode_thread(*key) {
                signals.thread = Some(scores.get(&thread).copied().unwrap_or(0.0));
            }
        }
        Ok(())
    }
}
