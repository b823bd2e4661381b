//! A query's term frequencies summed over groups of documents (a thread's
//! memories): BM25 over a group read as one text, without indexing it as
//! one. Each term's posting lists (committed segments and pending buffer)
//! are walked whole, so the cost grows with how common the query's words
//! are: the walk takes the query's rarest terms first and stops before a
//! term whose postings would pass [`POSTINGS_BUDGET`]. `engine::thread_prior`
//! turns the sums into scores.

use rustc_hash::FxHashMap as HashMap;
use tantivy::postings::Postings;
use tantivy::schema::IndexRecordOption;
use tantivy::{DocSet, Searcher, TERMINATED, Term};

use super::terms::PAIR_BOOST;
use super::{KEY, TextIndex, doc_freq, scoped, tantivy_err};
use crate::error::Result;

/// Postings one query may walk. A term is walked whole or not at all, the
/// rarest first, so a question's names and rare words always count and a
/// word held by tens of thousands of memories (in nearly every thread,
/// where its idf over threads is small) is what gets left out. On a store
/// of the size of a conversation everything is walked; on 100k memories an
/// unbounded walk of "what does Frank Silva prefer for frontend work" read
/// about 100k postings and added 7 ms to recall (`benches/bench_search.py`).
pub const POSTINGS_BUDGET: u64 = 5_000;

/// One query term's frequencies per group.
#[derive(Debug, Default)]
pub struct GroupTerm {
    /// What the term counts for against a word (a pair counts less).
    pub boost: f32,
    /// Group → the term's frequency summed over the group's documents.
    pub freqs: HashMap<u32, u32>,
}

impl TextIndex {
    /// For each prose term of `query` (its content words and pairs, as
    /// [`TextIndex::search`] ranks by them) within `scope`, its frequency
    /// summed per group of the documents `group_of` puts in one (None:
    /// the document counts for no group). Terms no grouped document holds
    /// are left out.
    pub fn group_term_freqs(
        &self,
        query: &str,
        scope: &str,
        group_of: impl Fn(u64) -> Option<u32>,
    ) -> Result<Vec<GroupTerm>> {
        let query = self.analyser.clone().query(query);
        let terms = query
            .words
            .iter()
            .map(|w| (scoped(scope, w), 1.0))
            .chain(query.pairs.iter().map(|p| (scoped(scope, p), PAIR_BOOST)));
        let walked = self.walk(terms, &group_of);
        if let Err(e) = &walked {
            // Only reading committed segments fails: they are damaged.
            *self.read_failure.lock() = Some(e.to_string());
        }
        walked
    }

    fn walk(
        &self,
        terms: impl Iterator<Item = (String, f32)>,
        group_of: &impl Fn(u64) -> Option<u32>,
    ) -> Result<Vec<GroupTerm>> {
        let state = self.state.read();
        let mut sized = Vec::new();
        for (term, boost) in terms {
            sized.push((doc_freq(&state, self.body, &term)?, term, boost));
        }
        sized.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
        let mut walked = 0u64;
        let mut out = Vec::new();
        for (df, term, boost) in sized {
            walked += df;
            if walked > POSTINGS_BUDGET {
                break;
            }
            let mut freqs: HashMap<u32, u32> = HashMap::default();
            self.committed_group_freqs(&state.searcher, &term, group_of, &mut freqs)?;
            for (key, tf, _) in state.pending.postings(&term) {
                if let Some(group) = group_of(key) {
                    *freqs.entry(group).or_default() += tf;
                }
            }
            if !freqs.is_empty() {
                out.push(GroupTerm { boost, freqs });
            }
        }
        Ok(out)
    }

    fn committed_group_freqs(
        &self,
        searcher: &Searcher,
        term: &str,
        group_of: &impl Fn(u64) -> Option<u32>,
        freqs: &mut HashMap<u32, u32>,
    ) -> Result<()> {
        let term = Term::from_field_text(self.body, term);
        for segment in searcher.segment_readers() {
            let inverted = segment
                .inverted_index(self.body)
                .map_err(|e| tantivy_err("postings", &e))?;
            let Some(mut postings) = inverted
                .read_postings(&term, IndexRecordOption::WithFreqs)
                .map_err(|e| tantivy_err("postings", &e))?
            else {
                continue;
            };
            let keys = segment
                .fast_fields()
                .u64(KEY)
                .map_err(|e| tantivy_err("fast field", &e))?;
            let alive = segment.alive_bitset();
            let mut doc = postings.doc();
            while doc != TERMINATED {
                if alive.is_none_or(|a| a.is_alive(doc))
                    && let Some(group) = keys.first(doc).and_then(group_of)
                {
                    *freqs.entry(group).or_default() += postings.term_freq();
                }
                doc = postings.advance();
            }
        }
        Ok(())
    }
}
