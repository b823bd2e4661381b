//! A read-only engine follows the writer: a background thread notices new
//! commits and applies the new op-log entries to the in-memory search state,
//! so a long-lived read-only process (a `--read-only` server) searches what
//! the writer stored moments ago, not what the store held when it opened.
//!
//! Noticing is cheap: `PRAGMA data_version` on the thread's own connection
//! changes only when another connection committed, so an idle writer costs
//! one tiny query per poll. When it changed and the op log grew, the thread
//! reads, in one snapshot, the catalog and graph (rebuilt from the tables, so
//! invalidations, supersessions and deletes show at once) and the new ops,
//! which the open-time replay ([`super::recovery`]) stages into the pending
//! text and vector buffers that searches read beside the committed indexes.
//!
//! Known limits, for a follow-up: the rescan costs O(store) per catch-up
//! (paced to a fifth of a core; per-op catalog updates would make it
//! O(change)); the pending buffers only grow until the process reopens (the
//! writer's newer commits are not loaded); and a store that had no vectors
//! when it was opened read-only gets no vector index until it is reopened.

use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::indexes::Indexes;
use super::recovery;
use crate::error::{Error, Result};
use crate::store::oplog;

/// How often the thread looks for new commits: well inside the promise
/// that a read-only search is at most a second behind the writer.
pub const POLL: Duration = Duration::from_millis(200);
/// The pause after a catch-up, as a multiple of its duration.
const BUSY_SHARE: u32 = 4;

/// The follower thread of a read-only engine; stops when dropped.
#[derive(Debug)]
pub struct Follower {
    /// Dropped first on stop: the thread wakes at once and exits.
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Follower {
    /// Follow the store at `db_path` from op `applied` (where the open's
    /// replay ended), on `conn`, a read-only connection of the thread's own.
    pub fn start(
        db_path: &Path,
        conn: Connection,
        indexes: Arc<Indexes>,
        applied: i64,
    ) -> Result<Self> {
        let (stop, stopped) = channel::<()>();
        let thread = crate::priority::spawn_named("memcore-follow", move || {
            run(&conn, &indexes, applied, &stopped);
        })
        .map_err(|e| Error::io(db_path, e))?;
        Ok(Follower {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(conn: &Connection, indexes: &Indexes, mut applied: i64, stopped: &Receiver<()>) {
    // None: the first poll always catches up, since commits may have landed
    // between the open's replay (on another connection) and this thread's start.
    let mut seen = None;
    let mut wait = POLL;
    while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(wait) {
        let Ok(version) = data_version(conn) else {
            continue;
        };
        if seen == Some(version) {
            continue;
        }
        let started = Instant::now();
        // A failed catch-up (a checkpoint holding a lock past the busy
        // timeout) keeps `seen`, so the next poll tries again.
        if let Ok(done) = catch_up(conn, indexes, applied) {
            applied = done;
            seen = Some(version);
        }
        // A catch-up rescans the catalog, which grows with the store: under a
        // steady stream of writes the thread takes at most a fifth of a core.
        wait = POLL.max(started.elapsed() * BUSY_SHARE);
    }
}

fn data_version(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("PRAGMA data_version", [], |r| r.get(0))?)
}

/// Apply every op after `applied`; returns the last one applied.
fn catch_up(conn: &Connection, indexes: &Indexes, applied: i64) -> Result<i64> {
    // One read transaction: the catalog and the ops come from the same snapshot.
    let snapshot = conn.unchecked_transaction()?;
    if oplog::last_seq(&snapshot)? <= applied {
        return Ok(applied);
    }
    recovery::rebuild_catalog_from(&snapshot, indexes)?;
    recovery::replay_from(&snapshot, indexes, applied, applied, None)
}
