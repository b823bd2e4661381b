//! The store's health tools: `StoreCheck` (with `IndexCheck` and
//! `CheckProblem`), `RepairReport` and `BackupReport`, and the counters of a
//! maintenance pass (`MaintenanceReport`).

use pyo3::prelude::*;

use memcore::engine::{
    BackupReport as CoreBackup, CheckProblem as CoreProblem, CheckReport,
    IndexCheck as CoreIndexCheck, MaintenanceReport as CoreMaintenance, RepairReport as CoreRepair,
};

use super::{Records, Strings, record};

record! {
    /// How one derived index compares with the database rows.
    IndexCheck {
        /// "catalog" (the in-memory filter labels), "text" (BM25) or "vectors" (HNSW).
        index: String,
        /// Documents the database says the index should hold.
        expected: u64,
        /// Documents it holds, committed and pending (a read-only instance's committed
        /// snapshot may still count some the writer deleted since).
        found: u64,
        /// Document keys looked up (every one in stores of up to 2,000 documents).
        sampled: usize,
        /// Looked-up keys the index lacks: searches miss those documents.
        missing: usize,
    }
}

impl From<CoreIndexCheck> for IndexCheck {
    fn from(i: CoreIndexCheck) -> Self {
        Self {
            index: i.index.to_owned(),
            expected: i.expected,
            found: i.found,
            sampled: i.sampled,
            missing: i.missing,
        }
    }
}

record! {
    /// One thing `Memory.check` found wrong, and what to do about it.
    CheckProblem {
        /// "database", "catalog", "text" or "vectors".
        area: String,
        message: String,
        fix: String,
    }
}

impl From<CoreProblem> for CheckProblem {
    fn from(p: CoreProblem) -> Self {
        Self {
            area: p.area,
            message: p.message,
            fix: p.fix,
        }
    }
}

record! {
    /// What `Memory.check` found: the database's integrity and each index's consistency.
    StoreCheck {
        /// True when nothing is wrong.
        ok: bool,
        /// The database file checked.
        path: String,
        /// SQLite's `integrity_check` messages: `["ok"]` for a sound database.
        integrity: Strings,
        /// The highest write (op log seq) in the database.
        last_seq: i64,
        indexes: Records<IndexCheck>,
        /// Everything wrong, each with its fix; empty when `ok`.
        problems: Records<CheckProblem>,
    }
}

impl StoreCheck {
    pub fn from_core(py: Python<'_>, r: CheckReport) -> PyResult<Self> {
        Ok(Self {
            ok: r.is_ok(),
            path: r.path.to_string_lossy().into_owned(),
            integrity: Strings(r.integrity),
            last_seq: r.last_seq,
            indexes: Records::new(py, r.indexes.into_iter().map(IndexCheck::from))?,
            problems: Records::new(py, r.problems.into_iter().map(CheckProblem::from))?,
        })
    }
}

record! {
    /// What `Memory.backup` wrote.
    BackupReport {
        /// The backup file: a whole database that opens as a store.
        path: String,
        bytes: u64,
        /// Every write up to this op log seq is in the backup.
        last_seq: i64,
    }
}

impl From<CoreBackup> for BackupReport {
    fn from(r: CoreBackup) -> Self {
        Self {
            path: r.path.to_string_lossy().into_owned(),
            bytes: r.bytes,
            last_seq: r.last_seq,
        }
    }
}

record! {
    /// What a repair did.
    RepairReport {
        /// The search indexes were rebuilt from the database.
        indexes_rebuilt: bool,
        /// Where a damaged database was moved (only with `accept_empty`).
        database_set_aside: Option<String>,
        /// Where a copy of a damaged write-ahead log was kept before the
        /// writes past its damage were dropped (only with `accept_empty`).
        log_set_aside: Option<String>,
        /// Writes the database had lost (their records or log entries), now
        /// recorded as lost so the store opens with what remains (only with
        /// `accept_empty`).
        lost_writes: u64,
        /// Searchable documents after the rebuild.
        documents: usize,
        /// The highest write (op log seq) in the database.
        last_seq: i64,
    }
}

impl From<CoreRepair> for RepairReport {
    fn from(r: CoreRepair) -> Self {
        Self {
            indexes_rebuilt: r.indexes_rebuilt,
            database_set_aside: r
                .database_set_aside
                .map(|p| p.to_string_lossy().into_owned()),
            log_set_aside: r.log_set_aside.map(|p| p.to_string_lossy().into_owned()),
            lost_writes: r.lost_writes,
            documents: r.documents,
            last_seq: r.last_seq,
        }
    }
}

record! {
    /// What a maintenance pass did (`memory_run_maintenance` returns its `to_dict()`).
    MaintenanceReport {
        /// Memories past `expires_at` (or the episodic tier's age) now invalidated.
        memories_expired: usize,
        /// Document versions whose identical contents are now stored once.
        versions_deduplicated: usize,
        /// Conversations untouched and unretrieved long enough to be archived.
        conversations_archived: usize,
        /// Conversation summaries made again (new turns, summary old enough).
        summaries_refreshed: usize,
        /// Finished `memory_after_turn` claims dropped past `max_processed_turns`.
        turn_claims_pruned: usize,
        /// Operation-log entries compacted (old, covered by the index files).
        log_entries_compacted: usize,
        /// The compaction of the search indexes (see `CompactReport`).
        vectors_rebuilt: bool,
        tombstones_dropped: usize,
        text_merged: bool,
    }
}

impl From<CoreMaintenance> for MaintenanceReport {
    fn from(r: CoreMaintenance) -> Self {
        Self {
            memories_expired: r.memories_expired,
            versions_deduplicated: r.versions_deduplicated,
            conversations_archived: r.conversations_archived,
            summaries_refreshed: r.summaries_refreshed,
            turn_claims_pruned: r.turn_claims_pruned,
            log_entries_compacted: r.log_entries_compacted,
            vectors_rebuilt: r.compact.vectors_rebuilt,
            tombstones_dropped: r.compact.tombstones_dropped,
            text_merged: r.compact.text_merged,
        }
    }
}
