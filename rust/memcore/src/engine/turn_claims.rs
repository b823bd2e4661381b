//! `memory_after_turn` exactly once per `(namespace, session, turn)`, whatever
//! process or node the duplicates come from: the store's primary key decides.
//!
//! A call first claims its turn (one row, `claimed_at`), does its work
//! (captures facts, records the turn), then finishes the claim with its
//! result, which a repeated call gets back as is. A duplicate that arrives
//! while the first is still working is told to retry; one that arrives after
//! a crash left a claim unfinished for longer than the caller's stale limit
//! takes the claim over. Maintenance keeps the newest `max_processed_turns`
//! finished claims of each session; a repeat of an older turn is still found
//! by the recorded turn itself (`turns_by_key`).

use rusqlite::{OptionalExtension, params};

use super::Engine;
use crate::error::Result;
use crate::memory::{validate_namespace, validate_tag};
use crate::store::conversations as conv;
use crate::temporal::Timestamp;

/// What claiming a turn found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnClaim {
    /// The turn is this caller's to process.
    Claimed,
    /// The turn was processed already; its result when one was kept
    /// (None: recorded before claims existed, or its claim was pruned).
    Done(Option<String>),
    /// Another call is processing the turn since this time.
    Busy(Timestamp),
}

impl Engine {
    /// Claim a turn for processing at `now`; an unfinished claim older than
    /// `stale_after` microseconds is taken over.
    pub fn claim_turn(
        &self,
        namespace: &str,
        session_id: &str,
        turn_id: &str,
        now: Timestamp,
        stale_after: i64,
    ) -> Result<TurnClaim> {
        validate_namespace(namespace)?;
        validate_tag("session_id", Some(session_id))?;
        validate_tag("turn_id", Some(turn_id))?;
        self.store.write(|tx| {
            let held: Option<(Timestamp, Option<Timestamp>, Option<String>)> = tx
                .prepare_cached(
                    "SELECT claimed_at, done_at, result FROM turn_claims
                     WHERE namespace = ?1 AND session_id = ?2 AND turn_id = ?3",
                )?
                .query_row(params![namespace, session_id, turn_id], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })
                .optional()?;
            match held {
                Some((_, Some(_), result)) => return Ok(TurnClaim::Done(result)),
                Some((since, None, _)) if now.saturating_sub(since) < stale_after => {
                    return Ok(TurnClaim::Busy(since));
                }
                Some(_) => {}
                None => {
                    if conv::turn_by_key(tx, namespace, session_id, turn_id)?.is_some() {
                        return Ok(TurnClaim::Done(None));
                    }
                }
            }
            tx.prepare_cached(
                "INSERT INTO turn_claims(namespace, session_id, turn_id, claimed_at)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT DO UPDATE SET claimed_at = excluded.claimed_at",
            )?
            .execute(params![namespace, session_id, turn_id, now])?;
            Ok(TurnClaim::Claimed)
        })
    }

    /// Finish a claimed turn with the result a repeat gets back.
    pub fn finish_turn(
        &self,
        namespace: &str,
        session_id: &str,
        turn_id: &str,
        result: &str,
        now: Timestamp,
    ) -> Result<()> {
        self.store.write(|tx| {
            tx.prepare_cached(
                "UPDATE turn_claims SET done_at = ?4, result = ?5
                 WHERE namespace = ?1 AND session_id = ?2 AND turn_id = ?3",
            )?
            .execute(params![namespace, session_id, turn_id, now, result])?;
            Ok(())
        })
    }

    /// Give a claim up (its processing failed): a retry may claim it at once.
    pub fn release_turn(&self, namespace: &str, session_id: &str, turn_id: &str) -> Result<()> {
        self.store.write(|tx| {
            tx.prepare_cached(
                "DELETE FROM turn_claims
                 WHERE namespace = ?1 AND session_id = ?2 AND turn_id = ?3 AND done_at IS NULL",
            )?
            .execute(params![namespace, session_id, turn_id])?;
            Ok(())
        })
    }

    /// Keep the newest `keep` finished claims of each session of `namespace`;
    /// returns how many were dropped.
    pub(super) fn prune_turn_claims(&self, namespace: &str, keep: usize) -> Result<usize> {
        self.store.write(|tx| {
            Ok(tx.execute(
                "DELETE FROM turn_claims WHERE namespace = ?1 AND done_at IS NOT NULL
                   AND (session_id, turn_id) IN (
                     SELECT session_id, turn_id FROM (
                       SELECT session_id, turn_id, row_number() OVER (
                           PARTITION BY session_id ORDER BY done_at DESC, turn_id DESC) AS newer
                       FROM turn_claims WHERE namespace = ?1 AND done_at IS NOT NULL)
                     WHERE newer > ?2)",
                params![namespace, keep as i64],
            )?)
        })
    }
}
