//! The reply to a matching question. In a conversation, a question that
//! matches the query ("When did you go camping?") ranks lower for asking
//! (`crate::asking`), and what follows it is its answer ("Last weekend, at
//! the lake!"), which may share no word with the query at all. So a
//! question among the hits a caller would have been shown hands its match,
//! before the penalty, to what follows it: the next episode of its thread
//! for a memory saved as an episode, the next turn of its conversation for
//! a turn recorded without the agent's reply (one with it is its own answer
//! and does not ask). The reply ranks [`REPLY_MARGIN`] below where the
//! question would have, or higher on its own match. Standing facts have no
//! "next" and are left alone. Measured in
//! `benches/results/quality-experiments.md`, section 30.

use super::Engine;
use super::hits::{Hit, Scores, sort_best_first};
use super::query::{Pool, SearchQuery};
use crate::error::Result;
use crate::kind::Kind;
use crate::store::{conversations, memories};

/// How far below its question's score (before the question penalty) a
/// reply ranks, in z-score units: a statement that matches the query itself
/// still comes first. Chosen by leave-one-conversation-out on LoCoMo (the
/// folds picked 1 and 0; at 0 a reply tied its question and displaced the
/// direct answers of "when did ..." questions at the top).
pub const REPLY_MARGIN: f32 = 1.0;

impl Engine {
    /// Lift, in `out` (fused and sorted), the reply of every question (an
    /// episode or a turn) among the first `query.limit` hits by their score
    /// before the question penalty to that score less [`REPLY_MARGIN`]; a
    /// reply not yet a hit joins there. Nothing moves when none asks.
    pub(super) fn lift_replies(
        &self,
        query: &SearchQuery<'_>,
        pool: &Pool,
        out: &mut Vec<Hit>,
    ) -> Result<()> {
        // Only memories and turns ask (the catalog's share is 0 for every
        // other kind), and most lists hold no question: then nothing to sort.
        let asking = |key: u64| pool.get(&key).map_or(0.0, |(_, s)| s.asking);
        if out.iter().all(|h| asking(h.key) == 0.0) {
            return Ok(());
        }
        let mut before: Vec<(u64, f32)> = out
            .iter()
            .map(|h| (h.key, h.scores.fused + asking(h.key)))
            .collect();
        before.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        before.truncate(query.limit);
        before.retain(|&(key, _)| asking(key) > 0.0);
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
            let kind = pool[&question].0;
            let next = if kind == Kind::Memory {
                memories::next_episode(&reader, question)?
            } else {
                conversations::next_turn(&reader, question)?
            };
            let Some(reply) = next else {
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
                        kind,
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
