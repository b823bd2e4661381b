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

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};

use super::follow::{self, Followed};
use super::{Engine, EngineOptions};
use crate::error::{Error, Result};
use crate::pg::capture::Capture;
use crate::pg::ship::{Outcome, Position, Shipper};
use crate::pg::{self, Apply, FollowOptions, Follower, LogEntry, Namespaces, bootstrap, replica};
use crate::store::{Store, StoreOptions, meta, oplog};

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
        let mut client = pg::connect(url)?;
        prepare_replica(&mut client, replica_dir, &namespaces, options)?;
        drop(client);
        let mut engine = Engine::open(replica_dir, options)?;
        let capture = Capture::install(&*engine.store.writer()?)?;
        let shipper = Arc::new(Shipper::new(url, capture.clone(), namespaces.clone())?);
        engine.store.set_hook(Box::new(shipper.clone()))?;
        let positions = replica::positions(&*engine.store.reader()?)?;
        let follower = Follower::start(
            url,
            namespaces,
            positions,
            applier(&engine, capture),
            FollowOptions::default(),
        )?;
        engine.pg = Some(PgNode { follower, shipper });
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
    pub fn check_served(&self, namespace: &str) -> Result<()> {
        match &self.pg {
            Some(node) => node.follower.check_served(namespace),
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
/// replica; the store is closed again before the engine opens it.
fn prepare_replica(
    client: &mut postgres::Client,
    replica_dir: &Path,
    namespaces: &Namespaces,
    options: &EngineOptions,
) -> Result<()> {
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
        let followed = !replica::positions(tx)?.is_empty();
        let written = oplog::last_seq(tx)? > 0;
        match (followed, written) {
            (false, false) => {
                bootstrap::bootstrap_namespaces(client, tx, namespaces)?;
                adopt_created_at(client, tx)
            }
            (false, true) => Err(Error::invalid(
                "replica_dir",
                format!(
                    "{} holds a SQLite store that is not a replica of a PostgreSQL database; \
                     give the node an empty folder (it builds its replica from PostgreSQL).",
                    replica_dir.display()
                ),
            )),
            (true, _) => Ok(()),
        }
    })
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
