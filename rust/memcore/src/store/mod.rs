//! The durable store: SQLite, the single source of truth.
//!
//! One writer connection behind a mutex (SQLite allows one writer anyway, and
//! serialising in-process avoids busy retries) and a pool of reader
//! connections, which WAL lets run concurrently with the writer.
//!
//! Pragmas, and why:
//! - `journal_mode=WAL`: readers never block the writer and vice versa; a
//!   commit is one sequential append to the WAL.
//! - `synchronous=NORMAL` (default): a commit survives any process crash,
//!   `kill -9` included; only an OS crash or power loss can drop the last few
//!   commits. `Durability::Full` fsyncs the WAL on every commit for
//!   power-loss durability at a few times the write latency.
//! - `busy_timeout=5000`: read-only openers in other processes wait out a
//!   checkpoint instead of failing.
//! - `cache_size=-16384` (16 MiB per connection) and no `mmap`: the hot pages
//!   (indexes, the rows a search returns) fit, and the rest is read through
//!   the OS page cache, which is shared and reclaimable. A 256 MiB mmap made
//!   every page an open-time table scan touched count as resident memory of
//!   the process (per connection), where the budget is 400 MB at 100k
//!   memories and the vector graph alone takes 160 MB.
//! - `temp_store=MEMORY`: sorts for listings never touch disk.
//! - WAL checkpoints run on a background thread, not inside a commit (see
//!   [`checkpoint`]).

mod checkpoint;
pub mod checksum;
pub mod code;
pub mod conversations;
pub mod entities;
pub mod health;
mod hook;
mod lock;
pub mod memories;
pub mod meta;
pub mod oplog;
pub mod relations;
mod schema;
pub mod table;
pub mod vectors;
pub mod wal;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use parking_lot::{Mutex, MutexGuard};
use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};

use crate::error::{Error, Result};
use checkpoint::Checkpointer;
pub use hook::WriteHook;
pub use lock::{DirLock, LOCK_FILE, OWNER_FILE, OwnerLock};
pub use schema::latest_version as schema_version;

/// A searchable record's indexed content: document key, text, vector.
pub type IndexRow = (u64, String, Option<Vec<f32>>);

/// File name of the database inside a data directory.
pub const DB_FILE: &str = "memcore.db";

/// How hard a commit works to survive power loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Survives process crashes (`synchronous=NORMAL`).
    #[default]
    Normal,
    /// Survives power loss too (`synchronous=FULL`).
    Full,
}

/// How to open a store.
#[derive(Debug, Clone, Default)]
pub struct StoreOptions {
    pub read_only: bool,
    pub durability: Durability,
    /// Other processes may write the store too (the directory lock is taken
    /// shared; SQLite serialises the writes); false: this process must be its
    /// only writer, as a PostgreSQL node's replica is.
    pub shared: bool,
}

/// An open data directory: the database plus the writer lock.
#[derive(Debug)]
pub struct Store {
    dir: PathBuf,
    options: StoreOptions,
    /// Declared before `writer`, so its thread stops before the writer closes.
    _checkpointer: Option<Checkpointer>,
    /// Declared before `writer` too: the last connection to close copies the
    /// write-ahead log into the database and deletes it, which only a
    /// writable connection can do. So a cleanly closed store is one file
    /// (what a copy or a check of a closed store expects).
    readers: Mutex<Vec<Connection>>,
    writer: Option<Mutex<Connection>>,
    lock: Option<DirLock>,
    /// Set once, by an engine whose store replicates a shared truth.
    hook: OnceLock<Box<dyn WriteHook>>,
}

/// The directory lock held alone; shared again on drop.
#[derive(Debug)]
pub struct AloneGuard<'a> {
    lock: &'a DirLock,
}

impl Drop for AloneGuard<'_> {
    fn drop(&mut self) {
        self.lock.downgrade();
    }
}

/// A pooled reader connection, returned to the pool on drop.
#[derive(Debug)]
pub struct Reader<'a> {
    conn: Option<Connection>,
    pool: &'a Mutex<Vec<Connection>>,
}

impl std::ops::Deref for Reader<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.conn
            .as_ref()
            .expect("reader connection present until drop")
    }
}

impl Drop for Reader<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.pool.lock().push(conn);
        }
    }
}

impl Store {
    /// Open (creating if needed) the store in `dir`.
    ///
    /// A writable open takes the directory lock first, shared (`options.shared`)
    /// or alone, and fails with `RESOURCE_BUSY` if a process holds it the
    /// other way. A read-only open takes no lock and fails if the store does
    /// not exist yet.
    pub fn open(dir: &Path, options: StoreOptions) -> Result<Self> {
        let db_path = dir.join(DB_FILE);
        if options.read_only {
            if !db_path.exists() {
                return Err(Error::NotFound {
                    kind: "Store",
                    id: db_path.display().to_string(),
                });
            }
            let first = open_reader(&db_path)?;
            let version: i64 = first.query_row("PRAGMA user_version", [], |r| r.get(0))?;
            if version > schema::latest_version() {
                return Err(Error::invalid(
                    "path",
                    format!("This store has schema version {version}; upgrade memcore to read it."),
                ));
            }
            return Ok(Store {
                dir: dir.to_path_buf(),
                options,
                _checkpointer: None,
                writer: None,
                readers: Mutex::new(vec![first]),
                lock: None,
                hook: OnceLock::new(),
            });
        }
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let lock = if options.shared {
            DirLock::acquire_shared(dir)?
        } else {
            DirLock::acquire(dir)?
        };
        let mut writer = Connection::open(&db_path)?;
        configure(&writer, options.durability)?;
        schema::migrate(&mut writer)?;
        let checkpointer = Checkpointer::start(&db_path, &mut writer)?;
        Ok(Store {
            dir: dir.to_path_buf(),
            options,
            _checkpointer: Some(checkpointer),
            writer: Some(Mutex::new(writer)),
            readers: Mutex::new(Vec::new()),
            lock: Some(lock),
            hook: OnceLock::new(),
        })
    }

    /// Hold the directory lock alone while the guard lives (`what` is done
    /// only when no other process has the store open for writing), for work
    /// that other processes would not follow (a reset). A store that is its
    /// only writer already has it alone.
    pub fn alone(&self, what: &str) -> Result<Option<AloneGuard<'_>>> {
        match (&self.lock, self.options.shared) {
            (Some(lock), true) => lock.upgrade(what).map(|()| Some(AloneGuard { lock })),
            _ => Ok(None),
        }
    }

    /// The data directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Path of the database file.
    pub fn db_path(&self) -> PathBuf {
        self.dir.join(DB_FILE)
    }

    /// Whether writes are refused.
    pub fn is_read_only(&self) -> bool {
        self.writer.is_none()
    }

    /// The durability level commits use.
    pub fn durability(&self) -> Durability {
        self.options.durability
    }

    /// Run `f` inside one IMMEDIATE transaction on the writer; commit if it
    /// returns `Ok`, roll back (nothing written) if it returns `Err`.
    pub fn write<T>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T>) -> Result<T> {
        let mut conn = self.writer()?;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let value = f(&tx)?;
        self.before_commit(&tx)?;
        tx.commit()?;
        Ok(value)
    }

    /// Like [`Store::write`], then run `after` on the committed value while
    /// still holding the writer lock, so in-memory state derived from writes
    /// (the catalog, the index queue) changes in exactly the commit order.
    pub fn write_then<T, U>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> Result<T>,
        after: impl FnOnce(T) -> U,
    ) -> Result<U> {
        let mut conn = self.writer()?;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let value = f(&tx)?;
        self.before_commit(&tx)?;
        tx.commit()?;
        Ok(after(value))
    }

    /// Run every write through `hook` from now on (see [`WriteHook`]); a
    /// store takes one hook, once.
    pub fn set_hook(&self, hook: Box<dyn WriteHook>) -> Result<()> {
        self.hook
            .set(hook)
            .map_err(|_| Error::invalid("hook", "This store already has a write hook."))
    }

    /// The hook's turn, if the store has one. Inlined: the embedded store
    /// pays one load and one branch per write.
    #[inline]
    fn before_commit(&self, tx: &Transaction<'_>) -> Result<()> {
        match self.hook.get() {
            Some(hook) => hook.before_commit(tx),
            None => Ok(()),
        }
    }

    /// The writer connection itself, for work that is not one transaction
    /// (maintenance such as `VACUUM` or `PRAGMA optimize`).
    pub fn writer(&self) -> Result<MutexGuard<'_, Connection>> {
        match &self.writer {
            Some(w) => Ok(w.lock()),
            None => Err(Error::ReadOnly {
                path: self.dir.clone(),
            }),
        }
    }

    /// A new read-only connection of the caller's own, outside the pool
    /// (for a thread that keeps one, like a read-only engine's follower).
    pub fn connect(&self) -> Result<Connection> {
        open_reader(&self.db_path())
    }

    /// A reader connection from the pool (opened on demand).
    pub fn reader(&self) -> Result<Reader<'_>> {
        let pooled = self.readers.lock().pop();
        let conn = match pooled {
            Some(c) => c,
            None => open_reader(&self.db_path())?,
        };
        Ok(Reader {
            conn: Some(conn),
            pool: &self.readers,
        })
    }
}

fn configure(conn: &Connection, durability: Durability) -> Result<()> {
    // First: its busy timeout bounds the switch to WAL.
    tune(conn)?;
    set_wal_mode(conn)?;
    let sync = match durability {
        Durability::Normal => "NORMAL",
        Durability::Full => "FULL",
    };
    conn.pragma_update(None, "synchronous", sync)?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(())
}

/// Switch to WAL. On a new store every process opening it at once asks for
/// the switch; the one converting the file holds it exclusively, and SQLite
/// can answer the others "database is locked" at once, without waiting out
/// the busy timeout (one of four agent windows opening a new store failed).
/// So a busy answer is retried for as long as the busy timeout (`tune`).
fn set_wal_mode(conn: &Connection) -> Result<()> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            outcome => return Ok(outcome?),
        }
    }
}

fn tune(conn: &Connection) -> Result<()> {
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    conn.pragma_update(None, "cache_size", -16_384)?;
    conn.pragma_update(None, "mmap_size", 0)?;
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    // Above the number of distinct statements the engine prepares (~150), so a
    // pooled connection serving every code path never re-parses one.
    conn.set_prepared_statement_cache_capacity(256);
    // Query planner stability: SQLite otherwise re-plans a cached statement
    // whenever a bound LIMIT changes or an integer parameter moves to or from
    // 0/1 (to use STAT4 and small-LIMIT tricks). Our statements are written
    // against their indexes, and re-parsing was half of retrieve_context.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    Ok(())
}

fn open_reader(db_path: &Path) -> Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags(db_path, flags)?;
    tune(&conn)?;
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_creates_schema_and_wal() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        let mode: String = store
            .writer()
            .unwrap()
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        let sync: i64 = store
            .writer()
            .unwrap()
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .unwrap();
        assert_eq!(sync, 1, "NORMAL");
    }

    #[test]
    fn full_durability_sets_synchronous_full() {
        let dir = tempfile::tempdir().unwrap();
        let options = StoreOptions {
            durability: Durability::Full,
            ..StoreOptions::default()
        };
        let store = Store::open(dir.path(), options).unwrap();
        let sync: i64 = store
            .writer()
            .unwrap()
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .unwrap();
        assert_eq!(sync, 2, "FULL");
    }

    #[test]
    fn cached_statements_are_not_replanned_per_binding() {
        // Without the stability guarantee SQLite re-prepares a statement each
        // time its LIMIT changes or an integer moves across 0/1.
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        let conn = store.reader().unwrap();
        let sql = "SELECT key FROM meta WHERE length(key) = ?1 LIMIT ?2";
        for i in 0..6_i64 {
            let mut stmt = conn.prepare_cached(sql).unwrap();
            stmt.query_map([i % 2, i + 1], |r| r.get::<_, String>(0))
                .unwrap()
                .for_each(drop);
        }
        let stmt = conn.prepare_cached(sql).unwrap();
        assert_eq!(stmt.get_status(rusqlite::StatementStatus::RePrepare), 0);
    }

    #[test]
    fn failed_write_rolls_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        let result: Result<()> = store.write(|tx| {
            tx.execute("INSERT INTO meta(key, value) VALUES ('a', '1')", [])?;
            Err(Error::invalid("x", "abort"))
        });
        assert!(result.is_err());
        let n: i64 = store
            .reader()
            .unwrap()
            .query_row("SELECT count(*) FROM meta", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 0);
    }

    /// Counts the `meta` rows it sees inside each write, or refuses them all.
    #[derive(Debug)]
    struct Hook {
        refuse: bool,
        seen: Mutex<Vec<i64>>,
    }

    impl WriteHook for Hook {
        fn before_commit(&self, tx: &Transaction<'_>) -> Result<()> {
            let n: i64 = tx.query_row("SELECT count(*) FROM meta", [], |r| r.get(0))?;
            self.seen.lock().push(n);
            if self.refuse {
                return Err(Error::invalid("hook", "refused"));
            }
            Ok(())
        }
    }

    fn meta_rows(store: &Store) -> i64 {
        store
            .reader()
            .unwrap()
            .query_row("SELECT count(*) FROM meta", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn a_hook_sees_each_write_before_its_commit_and_can_refuse_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        let before = meta_rows(&store);
        store
            .set_hook(Box::new(Hook {
                refuse: true,
                seen: Mutex::default(),
            }))
            .unwrap();
        let insert = |tx: &Transaction<'_>| {
            tx.execute("INSERT INTO meta(key, value) VALUES ('a', '1')", [])?;
            Ok(())
        };
        let err = store.write_then(insert, |()| ()).unwrap_err();
        assert_eq!(err.code(), "INVALID_PARAMETER");
        assert_eq!(meta_rows(&store), before, "a refused write is rolled back");
        assert_eq!(store.write(insert).unwrap_err().code(), "INVALID_PARAMETER");
        let again = Hook {
            refuse: false,
            seen: Mutex::default(),
        };
        assert!(store.set_hook(Box::new(again)).is_err(), "one hook, once");
        let seen = store.hook.get().map(|h| format!("{h:?}")).unwrap();
        // Both writes reached the hook with their row in place, uncommitted.
        let expected = format!("[{}, {}]", before + 1, before + 1);
        assert!(seen.contains(&expected), "{seen}");
    }

    #[test]
    fn read_only_beside_writer_and_refuses_writes() {
        let dir = tempfile::tempdir().unwrap();
        let writer = Store::open(dir.path(), StoreOptions::default()).unwrap();
        writer
            .write(|tx| {
                tx.execute("INSERT INTO meta(key, value) VALUES ('a', '1')", [])?;
                Ok(())
            })
            .unwrap();
        let reader = Store::open(
            dir.path(),
            StoreOptions {
                read_only: true,
                ..StoreOptions::default()
            },
        )
        .unwrap();
        let n: i64 = reader
            .reader()
            .unwrap()
            .query_row("SELECT count(*) FROM meta", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1);
        assert_eq!(
            reader.write(|_| Ok(())).unwrap_err().code(),
            "STORAGE_ERROR"
        );
    }

    #[test]
    fn read_only_open_of_missing_store_is_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let err = Store::open(
            dir.path(),
            StoreOptions {
                read_only: true,
                ..StoreOptions::default()
            },
        )
        .unwrap_err();
        assert_eq!(err.code(), "NOT_FOUND");
    }
}
