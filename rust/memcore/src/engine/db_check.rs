//! SQLite's own page checks at open (`PRAGMA quick_check`), so damage in
//! pages the open does not read (an index b-tree, a page of old rows) is not
//! served silently: of 600 random damages of a data folder, 26 opened
//! without a word and only `memcore check` found them
//! (benches/reliability/damage.py).
//!
//! The same pass verifies every record's checksum (`store::checksum`): a
//! few flipped bits in a memory's text leave a page SQLite finds sound.
//!
//! A small database (the common store of one agent) is checked before
//! anything is served, and refused when damaged, as any other damage found
//! at open is; the check reads every page, about 0.05 s for 23 MB. A larger
//! one is checked on a background thread of its writer, at background
//! priority, and damage found is reported in the index health (`get_status`,
//! the log): reading 232 MB took 0.2 s from the page cache but 9 s from the
//! disk, too long to hold every open.

use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;

use rusqlite::{Connection, InterruptHandle};

use super::indexes::Indexes;
use crate::error::{Error, Result};
use crate::store::{Store, checksum, health};

/// Database files (with their write-ahead log) up to this size are checked
/// before the open answers.
pub const CHECK_AT_OPEN_BYTES: u64 = 32 << 20;

/// Whether the database at `db_path` (and its log) is small enough to check
/// before the open answers.
pub fn small_enough(db_path: &Path, limit: u64) -> bool {
    let len = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
    len(db_path) + len(&health::wal_path(db_path)) <= limit
}

/// Check the database now: a damaged one is refused with the way to recover.
pub fn now(store: &Store) -> Result<()> {
    match problems(&*store.reader()?) {
        None => Ok(()),
        Some(found) => Err(health::damaged(&store.db_path(), &found)),
    }
}

/// What `quick_check` found, then the records that fail their checksums
/// (`store::checksum`: an altered text in a sound page, which SQLite's
/// checks cannot see); None when the database is sound. A check that
/// cannot run at all (its pages unreadable) is a finding too.
fn problems(conn: &Connection) -> Option<String> {
    let interrupted = |e: &rusqlite::Error| {
        matches!(e, rusqlite::Error::SqliteFailure(e, _)
            if e.code == rusqlite::ErrorCode::OperationInterrupted)
    };
    match conn.query_row("PRAGMA quick_check(3)", [], |r| r.get::<_, String>(0)) {
        Ok(first) if first == "ok" => {}
        Ok(first) => {
            return Some(format!(
                "fails SQLite's quick_check ({})",
                first.replace('\n', " ")
            ));
        }
        Err(e) if interrupted(&e) => return None,
        Err(e) => return Some(format!("fails SQLite's quick_check ({e})")),
    }
    match checksum::mismatches(conn, 3) {
        Ok(found) if found.is_empty() => None,
        Ok(found) => Some(format!(
            "holds records altered on disk: {}",
            found
                .iter()
                .map(|f| f.mismatch.to_string())
                .collect::<Vec<_>>()
                .join("; ")
        )),
        Err(Error::Storage(e)) if interrupted(&e) => None,
        Err(e) => Some(format!("cannot be read whole ({e})")),
    }
}

/// A check running in the background; interrupted and joined when dropped
/// (the engine closes without waiting for a scan of the whole file).
pub struct Background {
    interrupt: InterruptHandle,
    thread: Option<JoinHandle<()>>,
}

impl Background {
    /// Check the database of `store` on a thread of its own, and warn in the
    /// health of `indexes` when it is damaged.
    pub fn start(store: &Store, indexes: Arc<Indexes>) -> Result<Self> {
        let db_path = store.db_path();
        let conn = store.connect()?;
        let interrupt = conn.get_interrupt_handle();
        let thread = crate::priority::spawn_named("memcore-db-check", move || {
            if let Some(found) = problems(&conn) {
                indexes.health.warn(damage_found(&db_path, &found));
            }
        })
        .map_err(|e| crate::error::Error::io(store.dir(), e))?;
        Ok(Background {
            interrupt,
            thread: Some(thread),
        })
    }
}

impl std::fmt::Debug for Background {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Background").finish_non_exhaustive()
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        self.interrupt.interrupt();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn damage_found(db_path: &Path, found: &str) -> String {
    let dir = db_path.parent().unwrap_or(Path::new("."));
    format!(
        "The database {db} {found}: some records may be \
         unreadable or wrong. Stop writing to it, run `memcore check --data-dir {dir}`, then \
         restore a backup made by `memcore backup`, or run `memcore repair --data-dir {dir}`.",
        db = db_path.display(),
        dir = dir.display(),
    )
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use rusqlite::Connection;

    use super::*;
    use crate::engine::{Engine, EngineOptions};
    use crate::memory::NewMemory;
    use crate::store::{DB_FILE, StoreOptions};
    use crate::vector::HnswParams;

    /// A store of 200 memories whose index `memories_by_time` has its root
    /// page zeroed: a page no open reads, found by SQLite's checks only.
    fn damaged_store(dir: &Path) {
        let engine = Engine::open(dir, &EngineOptions::default()).unwrap();
        for i in 0..200 {
            let text = format!("a fact worth keeping, number {i}");
            engine.store_memory(NewMemory::text(text)).unwrap();
        }
        drop(engine);
        let db = dir.join(DB_FILE);
        let (page, size) = {
            let conn = Connection::open(&db).unwrap();
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                .unwrap();
            let root: i64 = conn
                .query_row(
                    "SELECT rootpage FROM sqlite_master WHERE name = 'memories_by_time'",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            let size: i64 = conn
                .query_row("PRAGMA page_size", [], |r| r.get(0))
                .unwrap();
            (root, size)
        };
        let mut bytes = std::fs::read(&db).unwrap();
        let at = ((page - 1) * size) as usize;
        let size = size as usize;
        bytes[at..at + size].fill(0);
        std::fs::write(&db, bytes).unwrap();
    }

    #[test]
    fn a_small_damaged_database_is_refused_at_open() {
        let dir = tempfile::tempdir().unwrap();
        damaged_store(dir.path());
        let refused = Engine::open(dir.path(), &EngineOptions::default()).unwrap_err();
        let message = refused.to_string();
        assert!(message.contains("quick_check"), "{message}");
        assert!(
            message.contains("memcore repair --accept-empty"),
            "{message}"
        );
    }

    #[test]
    fn a_check_in_the_background_warns_of_damage() {
        let dir = tempfile::tempdir().unwrap();
        damaged_store(dir.path());
        let options = StoreOptions {
            read_only: true,
            durability: crate::store::Durability::default(),
            shared: false,
        };
        let store = Store::open(dir.path(), options).unwrap();
        let (indexes, _, _) =
            Indexes::open(dir.path(), "english", None, HnswParams::default(), true).unwrap();
        let indexes = Arc::new(indexes);
        let _check = Background::start(&store, indexes.clone()).unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while indexes.health.warnings().is_empty() {
            assert!(Instant::now() < deadline, "no warning");
            std::thread::sleep(Duration::from_millis(10));
        }
        let warning = indexes.health.warnings().remove(0);
        assert!(warning.contains("quick_check"), "{warning}");
        assert!(warning.contains("memcore check"), "{warning}");
    }
}
