//! `memory_run_maintenance`: the few batch jobs an append-only memory needs —
//! expiry turned into invalidation (history keeps the facts), retention
//! tiers, duplicate document contents stored once, archiving of stale
//! conversations, conversation summaries, the idempotency history bounded,
//! the operation log compacted, index compaction and SQLite's optimizer.
//!
//! Every step is idempotent and commits in small transactions, so a run
//! stopped at any point (a kill -9 included) leaves a consistent store, and
//! the next run finishes the work.

use rusqlite::params;

use super::Engine;
use super::conversation::turn_labels;
use super::documents::memory_labels;
use super::indexer::CompactReport;
use super::indexes::Change;
use crate::error::{Error, Result};
use crate::kind::Kind;
use crate::memory::validate_namespace;
use crate::store::memories::{self as rows, Memories};
use crate::store::oplog::{self, Action};
use crate::store::table;
use crate::temporal::{Timestamp, now_micros};

const DAY_MICROS: f64 = 86_400e6;
const HOUR_MICROS: f64 = 3_600e6;
const MINUTE_MICROS: f64 = 60e6;
/// Op-log rows deleted per transaction by the log compaction.
const LOG_BATCH: i64 = 10_000;
/// Metadata key: the highest seq the log compaction may have deleted below
/// (a follower behind it rescans the tables instead of trusting the log).
pub const LOG_COMPACTED_THROUGH: &str = "oplog_compacted_through";

/// What maintenance should do beyond the always-on steps.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MaintenanceOptions {
    /// Episodic memories older than this expire (a retention tier).
    pub episodic_ttl_days: Option<f64>,
    /// Conversations untouched and unretrieved for this long are archived.
    pub archive_after_days: Option<f64>,
    /// Force an HNSW rebuild even below the tombstone threshold.
    pub force_compact: bool,
    /// Op-log entries older than this many hours, which the index files
    /// cover, are compacted (the current version of every record stays).
    pub log_min_age_hours: Option<f64>,
    /// A conversation's summary is made again when it has new turns and is
    /// older than this many minutes.
    pub summary_refresh_minutes: Option<f64>,
    /// Finished `memory_after_turn` claims kept per session.
    pub max_processed_turns: Option<usize>,
    /// The time the run takes as now (tests inject it; None: the clock).
    pub now: Option<Timestamp>,
}

/// Counters of one maintenance run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MaintenanceReport {
    pub memories_expired: usize,
    pub versions_deduplicated: usize,
    pub conversations_archived: usize,
    pub summaries_refreshed: usize,
    pub turn_claims_pruned: usize,
    pub log_entries_compacted: usize,
    pub compact: CompactReport,
}

impl Engine {
    /// Run maintenance on one namespace (indexes are shared: compaction covers all).
    pub fn run_maintenance(
        &self,
        namespace: &str,
        options: &MaintenanceOptions,
    ) -> Result<MaintenanceReport> {
        validate_namespace(namespace)?;
        for (field, value) in [
            ("episodic_ttl_days", options.episodic_ttl_days),
            ("archive_after_days", options.archive_after_days),
        ] {
            if value.is_some_and(|d| !d.is_finite() || d <= 0.0) {
                return Err(Error::invalid(
                    field,
                    format!("{field} must be a positive number of days."),
                ));
            }
        }
        for (field, value) in [
            ("compaction_min_age_hours", options.log_min_age_hours),
            (
                "summary_refresh_interval_minutes",
                options.summary_refresh_minutes,
            ),
        ] {
            if value.is_some_and(|v| !v.is_finite() || v < 0.0) {
                return Err(Error::invalid(
                    field,
                    format!("{field} must be a number, 0 or more."),
                ));
            }
        }
        if options.max_processed_turns == Some(0) {
            return Err(Error::invalid(
                "max_processed_turns",
                "max_processed_turns must be at least 1.",
            ));
        }
        let now = options.now.unwrap_or_else(now_micros);
        let mut report = MaintenanceReport {
            memories_expired: self.expire_memories(namespace, options.episodic_ttl_days, now)?,
            versions_deduplicated: self.dedupe_versions(namespace)?,
            ..MaintenanceReport::default()
        };
        self.flush_surfaced()?;
        if let Some(days) = options.archive_after_days {
            report.conversations_archived = self.archive_conversations(namespace, days)?;
        }
        if let Some(minutes) = options.summary_refresh_minutes {
            let before = now - (minutes * MINUTE_MICROS) as i64;
            report.summaries_refreshed = self.refresh_summaries(namespace, before, now)?;
        }
        if let Some(keep) = options.max_processed_turns {
            report.turn_claims_pruned = self.prune_turn_claims(namespace, keep)?;
        }
        if let Some(hours) = options.log_min_age_hours {
            report.log_entries_compacted = self.compact_log(now - (hours * HOUR_MICROS) as i64)?;
        }
        report.compact = self.compact(options.force_compact)?;
        self.store.writer()?.execute_batch("PRAGMA optimize")?;
        Ok(report)
    }

    /// Memories past their expiry (or their tier's age) become invalid,
    /// with the reason recorded; `as_of` reads still see them.
    fn expire_memories(
        &self,
        namespace: &str,
        episodic_ttl_days: Option<f64>,
        now: Timestamp,
    ) -> Result<usize> {
        let tier_cutoff = episodic_ttl_days.map(|d| now - (d * DAY_MICROS) as i64);
        self.store.write_then(
            |tx| {
                let ids: Vec<String> = tx
                    .prepare(
                        "SELECT id FROM memories WHERE namespace = ?1 AND valid_until IS NULL
                           AND ((expires_at IS NOT NULL AND expires_at <= ?2)
                                OR (?3 IS NOT NULL AND memory_type = 'episodic' AND created_at <= ?3))",
                    )?
                    .query_map(params![namespace, now, tier_cutoff], |r| r.get(0))?
                    .collect::<rusqlite::Result<_>>()?;
                let mut changed = Vec::with_capacity(ids.len());
                for id in ids {
                    let Some(mut m) = rows::get(tx, namespace, &id)? else { continue };
                    let tier = m.expires_at.is_none_or(|e| e > now);
                    m.valid_until = Some(if tier { now } else { m.expires_at.unwrap_or(now) }.max(m.valid_from));
                    m.invalidated_at = Some(now);
                    m.invalidation_reason =
                        Some(if tier { "expired (episodic retention tier)" } else { "expired" }.to_owned());
                    m.updated_at = now;
                    rows::update_fields(tx, &m)?;
                    let key = table::doc_key::<Memories>(tx, &id)?.unwrap_or_default();
                    let seq = oplog::append(tx, now, Action::Meta, Kind::Memory, &id, namespace, None)?;
                    changed.push((m, seq, key));
                }
                Ok(changed)
            },
            |changed| {
                for (m, seq, key) in &changed {
                    self.publish(
                        *seq,
                        &Change::Relabel {
                            key: *key as u64,
                            labels: memory_labels(m),
                        },
                    );
                }
                changed.len()
            },
        )
    }

    /// Delete op-log entries written before `cutoff` that nothing needs any
    /// more: the index files on disk cover them (they are flushed first), and
    /// none is the current version of a record, which an index rebuilt from
    /// nothing replays. Returns how many were deleted. The log's last seq
    /// (`sqlite_sequence`) is untouched, so seqs are never reused.
    fn compact_log(&self, cutoff: Timestamp) -> Result<usize> {
        if !self.owns_indexes() {
            return Ok(0); // what the owner's index files cover is the owner's to judge
        }
        // Publications happen under the writer lock: once it is ours, every
        // committed write up to the log's end is queued for the indexer.
        let covered = {
            let _writes_paused = self.store.writer()?;
            oplog::last_seq(&*self.store.reader()?)?
        };
        if self.flush().is_err() {
            return Ok(0); // the index files are behind (a full disk?): keep the log
        }
        let mut deleted = 0;
        loop {
            let n = self.store.write(|tx| {
                let previous: i64 = crate::store::meta::get(tx, LOG_COMPACTED_THROUGH)?
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                if covered > previous {
                    crate::store::meta::set(tx, LOG_COMPACTED_THROUGH, &covered.to_string())?;
                }
                Ok(tx.execute(
                    "DELETE FROM oplog WHERE seq IN (
                       SELECT seq FROM oplog o WHERE o.seq <= ?1 AND o.at < ?2
                         AND NOT EXISTS (SELECT 1 FROM memories WHERE doc_key = o.seq)
                         AND NOT EXISTS (SELECT 1 FROM entities WHERE doc_key = o.seq)
                         AND NOT EXISTS (SELECT 1 FROM observations WHERE doc_key = o.seq)
                         AND NOT EXISTS (SELECT 1 FROM turns WHERE doc_key = o.seq)
                         AND NOT EXISTS (SELECT 1 FROM code_chunks WHERE doc_key = o.seq)
                       ORDER BY o.seq LIMIT ?3)",
                    params![covered, cutoff, LOG_BATCH],
                )?)
            })?;
            deleted += n;
            if n < LOG_BATCH as usize {
                return Ok(deleted);
            }
        }
    }

    /// Keep the content of identical versions of a document once.
    fn dedupe_versions(&self, namespace: &str) -> Result<usize> {
        self.store.write(|tx| {
            Ok(tx.execute(
                "UPDATE doc_versions SET content = NULL
                 WHERE content IS NOT NULL
                   AND document_id IN (SELECT id FROM documents WHERE namespace = ?1)
                   AND EXISTS (SELECT 1 FROM doc_versions older
                               WHERE older.document_id = doc_versions.document_id
                                 AND older.content_hash = doc_versions.content_hash
                                 AND older.version < doc_versions.version
                                 AND older.content IS NOT NULL)",
                [namespace],
            )?)
        })
    }

    /// Archive conversations neither updated nor surfaced by retrieval for
    /// `days`: their turns leave default searches (history keeps them).
    fn archive_conversations(&self, namespace: &str, days: f64) -> Result<usize> {
        let now = now_micros();
        let cutoff = now - (days * DAY_MICROS) as i64;
        self.store.write_then(
            |tx| {
                let ids: Vec<String> = tx
                    .prepare(
                        "SELECT id FROM conversations WHERE namespace = ?1 AND archived_at IS NULL
                           AND updated_at < ?2 AND (last_hit_at IS NULL OR last_hit_at < ?2)",
                    )?
                    .query_map(params![namespace, cutoff], |r| r.get(0))?
                    .collect::<rusqlite::Result<_>>()?;
                let mut relabels = Vec::new();
                for id in &ids {
                    tx.execute(
                        "UPDATE conversations SET archived_at = ?3 WHERE namespace = ?1 AND id = ?2",
                        params![namespace, id, now],
                    )?;
                    for turn in crate::store::conversations::turns_of(tx, namespace, id, usize::MAX >> 1)? {
                        let key: i64 =
                            tx.query_row("SELECT doc_key FROM turns WHERE id = ?1", [&turn.id], |r| r.get(0))?;
                        let seq = oplog::append(tx, now, Action::Meta, Kind::UserTurn, &turn.id, namespace, None)?;
                        relabels.push((turn, seq, key));
                    }
                }
                Ok((ids.len(), relabels))
            },
            |(count, relabels)| {
                for (turn, seq, key) in &relabels {
                    self.publish(
                        *seq,
                        &Change::Relabel {
                            key: *key as u64,
                            labels: turn_labels(turn, Some(now)),
                        },
                    );
                }
                count
            },
        )
    }
}
