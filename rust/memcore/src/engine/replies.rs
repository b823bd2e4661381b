//! The reply to a matching question. In a conversation saved as episodes, a
//! question that matches the query ("When did you go camping?") ranks lower
//! for asking (`crate::asking`), and the episode after it in its thread is
//! its answer ("Last weekend, at the lake!"), which may share no word with
//! the query at all. So a question among the hits a caller would have been
//! shown hands its match, before the penalty, to that next episode: the
//! reply ranks at least [`REPLY_MARGIN`] below where the question would
//! have. A conversation
//! turn's key already holds the turns before it, which does the same for
//! `retrieve_context`; standing facts have no "next" and are left alone.
//! Measured in `benches/results/quality-experiments.md`, section 30.

use super::Engine;
use super::query::{Pool, SearchQuery};
use super::search::{Hit, Scores, sort_best_first};
use crate::error::Result;
use crate::kind::Kind;
use crate::store::memories;

/// How far below its question's score (before the question penalty) a
/// reply ranks, in z-score units: a statement that matches the query itself
/// still comes first. Chosen by leave-one-conversation-out on LoCoMo (the
/// folds picked 1 and 0; at 0 a reply tied its question and displaced the
/// direct answers of "when did ..." questions at the top).
pub const REPLY_MARGIN: f32 = 1.0;

impl Engine {
    /// Lift, in `out` (fused and sorted), the reply of every episodic
    /// question among the first `query.limit` hits by their score before
    /// the question penalty to that score less [`REPLY_MARGIN`]; a reply
    /// not yet a hit joins there. Nothing moves when no such question asks.
    pub(super) fn lift_replies(
        &self,
        query: &SearchQuery<'_>,
        pool: &Pool,
        out: &mut Vec<Hit>,
    ) -> Result<()> {
        let asking = |key: u64| pool.get(&key).map_or(0.0, |(_, s)| s.asking);
        let mut before: Vec<(u64, f32)> = out
            .iter()
            .map(|h| (h.key, h.scores.fused + asking(h.key)))
            .collect();
        before.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        before.truncate(query.limit);
        before.retain(|(key, _)| {
            pool.get(key)
                .is_some_and(|(kind, s)| *kind == Kind::Memory && s.asking > 0.0)
        });
        if before.is_empty() {
            return Ok(());
        }
        let reader = self.store.reader()?;
        let catalog = self.indexes.catalog.read();
        let Some(filter) = Self::filter(&catalog, query) else {
            return Ok(());
        };
        let mut moved = false;
        for (question, before_penalty) in before {
            let score = before_penalty - REPLY_MARGIN;
            let Some(reply) = memories::next_episode(&reader, question)? else {
                continue;
            };
            if !catalog.admits(reply, &filter) {
                continue;
            }
            match out.iter_mut().find(|h| h.key == reply) {
                Some(hit) if hit.scores.fused >= score => {}
                Some(hit) => {
                    hit.scores.fused = score;
                    moved = true;
                }
                None => {
                    out.push(Hit {
                        key: reply,
                        kind: Kind::Memory,
                        scores: Scores {
                            fused: score,
                            ..Scores::default()
                        },
                    });
                    moved = true;
                }
            }
        }
        if moved {
            sort_best_first(out);
        }
        Ok(())
    }
}
