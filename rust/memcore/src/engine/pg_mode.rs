//! An engine as a node of a PostgreSQL deployment (docs/scale-out.md, design
//! (b)): its store is a local SQLite replica of PostgreSQL's records, built
//! from PostgreSQL when new, and everything above the store is the engine as
//! on a laptop.
//!
//! Two paths meet in the replica, both under its writer lock, so they
//! interleave in one order:
//! - the node's own writes run as always and are shipped to PostgreSQL
//!   before SQLite commits (`crate::pg::ship`, the store's write hook);
//! - a follower thread applies the other nodes' entries from PostgreSQL's
//!   log to the replica (its own entries it already holds and skips), then
//!   hands the new op-log entries to the same path a read-only engine follows
//!   its writer with (`super::follow`), plus the indexer: another node's write
//!   is searchable here as soon as its position is published.
//!
//! Reads stay local. A read that must see a given write passes that write's
//! `(namespace, seq)` to [`Engine::wait_for_seq`] first.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};

use super::follow::{self, Followed};
use super::{Engine, EngineOptions, INDEX_DIR};
use crate::error::{Error, Result};
use crate::pg::capture::Capture;
use crate::pg::identity::{self, Expected, Identity};
use crate::pg::ship::{Outcome, Position, Shipper};
use crate::pg::{self, Apply, FollowOptions, Follower, LogEntry, Namespaces, bootstrap, replica};
use crate::store::{DB_FILE, DirLock, Store, StoreOptions, health as store_health, meta, oplog};

/// How long a read waits for its `min_seq` by default before it fails with
/// `RESOURCE_BUSY` (docs/scale-out.md, "Read your writes across nodes").
pub const MIN_SEQ_WAIT: Duration = Duration::from_secs(2);
/// Attempts [`Engine::written`] makes after a conflict; each but a rare
/// one succeeds, as it locks the namespace first.
const WRITE_ATTEMPTS: usize = 4;

/// The node's side of PostgreSQL, owned by its engine.
#[derive(Debug)]
pub(super) struct PgNode {
    follower: Follower,
    /// The store's write hook, kept to lock a namespace ahead of a retry.
    shipper: Arc<Shipper>,
    /// The database the replica copies, which every connection must reach.
    expected: Arc<Expected>,
    /// The replica folder is this node's alone while it runs.
    _lock: ReplicaLock,
}

/// A write's value and, on a PostgreSQL node, its position in the log.
#[derive(Debug, Clone, PartialEq)]
pub struct Written<T> {
    pub value: T,
    /// `None` on a SQLite store, or when the write changed nothing shared.
    pub position: Option<Position>,
}

impl Engine {
    /// Open a node on the PostgreSQL database at `url`, keeping its replica
    /// in `replica_dir` and serving `namespaces`. A new (empty) replica is
    /// first built from PostgreSQL's tables; an existing one follows the log
    /// from where it stopped, so a restart replays only the tail.
    pub fn open_postgres(
        url: &str,
        replica_dir: &Path,
        namespaces: Namespaces,
        options: &EngineOptions,
    ) -> Result<Engine> {
        if options.read_only {
            return Err(Error::invalid(
                "read_only",
                "A PostgreSQL node always writes its replica; open it without read_only (its \
                 reads never wait for a writer).",
            ));
        }
        std::fs::create_dir_all(replica_dir).map_err(|e| Error::io(replica_dir, e))?;
        let lock = ReplicaLock::acquire(replica_dir)?;
        let mut client = pg::connect(url)?;
        let identity = Identity::claim(&mut client)?;
        let rebuilt = |e: &Error| options.replica_rebuild && refuses_replica(e, replica_dir);
        match prepare_replica(&mut client, replica_dir, &namespaces, options, &identity) {
            Err(e) if rebuilt(&e) => {
                reset_replica(replica_dir)?;
                prepare_replica(&mut client, replica_dir, &namespaces, options, &identity)?;
            }
            other => other?,
        }
        drop(client);
        let mut engine = match Engine::open(replica_dir, options) {
            Err(e) if rebuilt(&e) => {
                reset_replica(replica_dir)?;
                let mut client = pg::connect(url)?;
                prepare_replica(&mut client, replica_dir, &namespaces, options, &identity)?;
                Engine::open(replica_dir, options)?
            }
            other => other?,
        };
        let expected = Expected::new(identity, replica_dir);
        let capture = Capture::install(&*engine.store.writer()?)?;
        let shipper = Arc::new(Shipper::new(url, capture.clone(), namespaces.clone())?);
        shipper.expect(expected.clone());
        engine.store.set_hook(Box::new(shipper.clone()))?;
        let positions = replica::positions(&*engine.store.reader()?)?;
        let follower = Follower::start(
            url,
            namespaces,
            positions,
            applier(&engine, capture),
            FollowOptions {
                expect: Some(expected.clone()),
                ..FollowOptions::default()
            },
        )?;
        engine.pg = Some(PgNode {
            follower,
            shipper,
            expected,
            _lock: lock,
        });
        Ok(engine)
    }

    /// Wait until this node has applied `namespace` up to `min_seq`, at most
    /// `timeout`; past it, `RESOURCE_BUSY` naming both seqs (never a read of
    /// older data). Returns the seq applied. On a SQLite store every
    /// acknowledged write is already visible: it returns at once.
    pub fn wait_for_seq(&self, namespace: &str, min_seq: i64, timeout: Duration) -> Result<i64> {
        crate::memory::validate_namespace(namespace)?;
        match &self.pg {
            Some(node) => node.follower.wait_for(namespace, min_seq, timeout),
            None => Ok(min_seq),
        }
    }

    /// What the calling thread's last write on this engine came to, taken
    /// (a second call returns `None`); always `None` on a SQLite store.
    pub fn last_write_outcome(&self) -> Option<Outcome> {
        self.pg
            .as_ref()
            .and_then(|node| node.shipper.last_outcome())
    }

    /// Whether this engine is a node of a PostgreSQL database.
    pub fn on_postgres(&self) -> bool {
        self.pg.is_some()
    }

    /// Refuse (`INVALID_PARAMETER`) a namespace this node does not serve, so
    /// a read routed to the wrong node is an error, not an empty answer. A
    /// SQLite store, or a node serving every namespace, serves them all.
    /// A node that found its database replaced since it opened (another
    /// database behind its URL, or one that lost writes the replica holds)
    /// refuses every read with `STORAGE_ERROR` until it finds it again.
    pub fn check_served(&self, namespace: &str) -> Result<()> {
        match &self.pg {
            Some(node) => {
                node.expected.check()?;
                node.follower.check_served(namespace)
            }
            None => Ok(()),
        }
    }

    /// The last seq this node applied in `namespace` (0: none; always 0 on
    /// a SQLite store).
    pub fn applied_seq(&self, namespace: &str) -> i64 {
        self.pg
            .as_ref()
            .map_or(0, |node| node.follower.applied(namespace))
    }

    /// Run the write `f` and return its value with its log position.
    ///
    /// Writes ship optimistically: the namespace is locked once the write
    /// ran and knows it. If another node wrote the namespace meanwhile (the
    /// write is refused, nothing written), `f` runs again the way that
    /// cannot be overtaken: lock the namespace first, wait until this node
    /// applied its head, write (`crate::pg::ship`).
    pub fn written<T>(&self, mut f: impl FnMut(&Engine) -> Result<T>) -> Result<Written<T>> {
        let mut attempts = 0;
        // Whatever an earlier write of this thread left behind.
        let _ = self.last_write_outcome();
        let mut result = f(self);
        loop {
            let outcome = self.last_write_outcome();
            match (result, outcome, &self.pg) {
                (Ok(value), outcome, _) => {
                    let position = match outcome {
                        Some(Outcome::Shipped(position)) => Some(position),
                        _ => None,
                    };
                    return Ok(Written { value, position });
                }
                (Err(Error::ResourceBusy { .. }), Some(Outcome::Behind(head)), Some(node))
                    if attempts + 1 < WRITE_ATTEMPTS =>
                {
                    attempts += 1;
                    result = self.write_locked(node, &head.namespace, &mut f);
                }
                (Err(e), _, _) => return Err(e),
            }
        }
    }

    /// Lock `namespace`, catch up to its head, run `f`: the retry of
    /// [`Engine::written`].
    fn write_locked<T>(
        &self,
        node: &PgNode,
        namespace: &str,
        f: &mut impl FnMut(&Engine) -> Result<T>,
    ) -> Result<T> {
        let head = node.shipper.reserve(namespace)?;
        let result = node
            .follower
            .wait_for(namespace, head, MIN_SEQ_WAIT)
            .and_then(|_| f(self));
        // Unused if `f` failed, or wrote nothing of that namespace.
        node.shipper.release();
        result
    }

    /// The follower's last failure (a lost connection, an entry that failed
    /// to apply) since it last made progress; `None` when current.
    pub fn follow_error(&self) -> Option<String> {
        self.pg.as_ref().and_then(|node| node.follower.last_error())
    }
}

/// Build a new replica from PostgreSQL, or check that an existing one is a
/// replica of this database (`identity`) holding nothing the database lacks;
/// the store is closed again before the engine opens it.
fn prepare_replica(
    client: &mut postgres::Client,
    replica_dir: &Path,
    namespaces: &Namespaces,
    options: &EngineOptions,
    identity: &Identity,
) -> Result<()> {
    // As `Engine::open` does, before SQLite recovers the replica's log.
    store_health::ensure_log_whole(&replica_dir.join(DB_FILE))?;
    let store = Store::open(
        replica_dir,
        StoreOptions {
            read_only: false,
            durability: options.durability,
            shared: false,
        },
    )?;
    store.write(|tx| {
        replica::prepare(tx)?;
        let positions = replica::positions(tx)?;
        let written = oplog::last_seq(tx)? > 0;
        match (positions.is_empty(), written) {
            (true, false) => {
                bootstrap::bootstrap_namespaces(client, tx, namespaces)?;
                replica::record_identity(tx, identity)?;
                adopt_created_at(client, tx)
            }
            (true, true) => Err(Error::invalid(
                "replica_dir",
                format!(
                    "{} holds a SQLite store that is not a replica of a PostgreSQL database; \
                     give the node an empty folder (it builds its replica from PostgreSQL).",
                    replica_dir.display()
                ),
            )),
            (false, _) => {
                match replica::identity(tx)? {
                    Some(recorded) if recorded.same_database(identity) => {}
                    Some(recorded) => {
                        return Err(identity::mismatch(
                            replica_dir,
                            &recorded,
                            identity,
                            "names",
                        ));
                    }
                    None => adopt_identity(client, tx, replica_dir, identity)?,
                }
                let heads: HashMap<String, i64> =
                    pg::log::heads(client, None)?.into_iter().collect();
                for (namespace, applied) in positions {
                    let head = heads.get(&namespace).copied().unwrap_or(0);
                    if applied > head {
                        return Err(identity::behind(
                            replica_dir,
                            identity,
                            &namespace,
                            applied,
                            head,
                        ));
                    }
                }
                Ok(())
            }
        }
    })
}

/// A replica made before replicas recorded their database: it is this
/// database's when it adopted the database's creation time (every replica
/// built from PostgreSQL did), and then records the identity; otherwise it
/// is refused like another database's.
fn adopt_identity(
    client: &mut postgres::Client,
    tx: &Connection,
    replica_dir: &Path,
    identity: &Identity,
) -> Result<()> {
    let theirs: Option<String> = client
        .query_opt(
            "SELECT value FROM memcore.meta WHERE key = $1",
            &[&meta::CREATED_AT],
        )?
        .map(|r| r.get(0));
    let ours = meta::get(tx, meta::CREATED_AT)?;
    if theirs.is_some() && theirs == ours {
        return replica::record_identity(tx, identity);
    }
    let unknown = Identity {
        system: None,
        oid: 0,
        store: None,
        name: "(not recorded by the memcore that made it, and created at another time)".into(),
    };
    Err(identity::mismatch(replica_dir, &unknown, identity, "names"))
}

/// Whether `error` refuses the replica in `replica_dir` itself (another
/// database's, behind its database, or damaged), which a rebuild from
/// PostgreSQL replaces.
fn refuses_replica(error: &Error, replica_dir: &Path) -> bool {
    matches!(error, Error::Damaged { path, .. } if path.starts_with(replica_dir))
}

/// What [`reset_replica`] removed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReplicaReset {
    /// The files and folders removed (none when the folder held no replica).
    pub removed: Vec<std::path::PathBuf>,
}

/// Empty the replica folder `dir` of a PostgreSQL node (`memcore replica
/// reset`): its database copy and its indexes go, so the next open builds
/// them again from PostgreSQL. Only a replica is emptied, never a SQLite
/// store (which is its own truth), and never one a process has open.
pub fn reset_replica(dir: &Path) -> Result<ReplicaReset> {
    let db = dir.join(DB_FILE);
    let mut reset = ReplicaReset::default();
    if !db.exists() && !dir.join(INDEX_DIR).exists() {
        return Ok(reset);
    }
    if db.exists() && !is_replica(&db) {
        return Err(Error::invalid(
            "replica_dir",
            format!(
                "{} is not the replica of a PostgreSQL node (its database has no {} table), \
                 so it was left alone: a SQLite store is its own truth. Name the node's \
                 replica folder.",
                dir.display(),
                replica::POSITIONS
            ),
        ));
    }
    let _lock = DirLock::acquire(dir)?;
    for path in [
        db.clone(),
        store_health::wal_path(&db),
        store_health::shm_path(&db),
    ] {
        if path.exists() {
            std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
            reset.removed.push(path);
        }
    }
    let index = dir.join(INDEX_DIR);
    if index.exists() {
        std::fs::remove_dir_all(&index).map_err(|e| Error::io(&index, e))?;
        reset.removed.push(index);
    }
    Ok(reset)
}

/// Whether the database file is a replica's (it has the positions table).
fn is_replica(db: &Path) -> bool {
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
    Connection::open_with_flags(db, flags)
        .and_then(|c| {
            c.query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
                [replica::POSITIONS],
                |r| r.get::<_, i64>(0),
            )
        })
        .is_ok_and(|n| n == 1)
}

/// The name of the default replica folder of the database at `url`: its
/// identity ([`Identity::key`]), memcore's id given to it first if it has
/// none (its schema is brought up to date).
pub fn database_key(url: &str) -> Result<String> {
    let mut client = pg::connect(url)?;
    Ok(Identity::claim(&mut client)?.key())
}

/// A node's hold on its replica folder, for as long as it runs: a second
/// node (or process) on the same folder is refused with `RESOURCE_BUSY`, as
/// a second writer of a SQLite store is.
#[derive(Debug)]
struct ReplicaLock {
    _file: std::fs::File,
}

/// The lock file of a replica folder.
const REPLICA_LOCK: &str = "replica.lock";

impl ReplicaLock {
    fn acquire(dir: &Path) -> Result<ReplicaLock> {
        use std::io::{Read, Seek, SeekFrom, Write};
        let path = dir.join(REPLICA_LOCK);
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                return Err(Error::ResourceBusy {
                    message: format!(
                        "The replica folder {} is in use by another memcore node (pid {}). \
                         Two nodes never share a replica: give this one its own replica_dir \
                         (--data-dir for the server), or stop the other.",
                        dir.display(),
                        holder.trim()
                    ),
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(&path, e)),
        }
        let pid = std::process::id().to_string();
        file.set_len(0)
            .and_then(|()| file.seek(SeekFrom::Start(0)))
            .and_then(|_| file.write_all(pid.as_bytes()))
            .map_err(|e| Error::io(&path, e))?;
        Ok(ReplicaLock { _file: file })
    }
}

/// Give a new replica the store's creation time, which PostgreSQL keeps:
/// the first node of a database records its own, every later node takes it
/// (concurrent first nodes agree: one insert wins, both read it back), so
/// `status()` names one store on every node, not the age of each replica.
fn adopt_created_at(client: &mut postgres::Client, tx: &Connection) -> Result<()> {
    let now = crate::temporal::now_micros().to_string();
    client.execute(
        "INSERT INTO memcore.meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
        &[&meta::CREATED_AT, &now],
    )?;
    let row = client.query_one(
        "SELECT value FROM memcore.meta WHERE key = $1",
        &[&meta::CREATED_AT],
    )?;
    meta::set(tx, meta::CREATED_AT, row.get(0))
}

/// What the follower does with each new entry of the log: apply it to the
/// replica in one transaction (the capture's records of its rows discarded:
/// PostgreSQL holds them), then make its ops searchable, still under the
/// writer lock so the node's own writes publish in the same order.
fn applier(engine: &Engine, capture: Capture) -> Apply {
    let store = engine.store.clone();
    let indexer = engine.indexer.clone();
    let followed = Followed {
        indexes: engine.indexes.clone(),
        dim: engine.dim.clone(),
        rescans: Arc::default(),
    };
    Box::new(move |logged: &LogEntry| {
        let mut conn = store.writer()?;
        let before = apply_to_replica(&mut conn, &capture, logged)?;
        let Some(before) = before else {
            return Ok(());
        };
        let send = |job| {
            if let Some(ix) = indexer.get() {
                ix.send(job);
            }
        };
        // The entry is in the replica: if indexing it fails, the indexes
        // are rebuilt from the replica at the next open rather than the
        // entry being applied again.
        if let Err(e) = follow::catch_up(&conn, &followed, before, &BTreeSet::new(), Some(&send)) {
            followed
                .indexes
                .mark_for_rebuild(&format!("applying log entry {}: {e}", logged.seq));
        }
        Ok(())
    })
}

/// Apply `logged` to the replica; the replica's last op before it, or
/// `None` when the replica already held it (the node's own write).
fn apply_to_replica(
    conn: &mut Connection,
    capture: &Capture,
    logged: &LogEntry,
) -> Result<Option<i64>> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let before = oplog::last_seq(&tx)?;
    let applied = replica::apply_logged(&tx, logged)?;
    capture.discard(&tx)?;
    tx.commit()?;
    Ok(applied.then_some(before))
}
