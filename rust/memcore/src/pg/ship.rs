//! Shipping a node's writes to PostgreSQL (docs/scale-out.md, "Putting the
//! engine on PostgreSQL", (b)): the store's [`WriteHook`] on a replica.
//!
//! Each write runs on the replica as on a laptop, without committing; then,
//! still inside its SQLite transaction, [`Shipper`] takes what it changed
//! (the [`Capture`]), locks the namespace's head row in PostgreSQL, checks
//! that the replica held every entry up to that head when the write ran,
//! writes the rows and the log entry, records the new position in the
//! replica, and commits PostgreSQL. Only then does SQLite commit. Any failure
//! before PostgreSQL's commit rolls both back: nothing is half-written. If
//! the node dies between the two commits, its replica is one entry behind
//! PostgreSQL and its follower applies that entry from the log like any other.
//!
//! The check happens under the lock, after the write ran, because a store
//! write learns its namespace only from what it wrote. When another node
//! wrote the namespace in between (the replica had not applied it yet), the
//! write is refused with `RESOURCE_BUSY` and rolled back ([`last_outcome`]
//! names the head). The caller then retries in the order the design
//! describes, lock first: [`Shipper::reserve`] locks the namespace on a
//! connection of the thread's own, the node catches up to the head, and the
//! write runs again and ships on that reservation, which no other node can
//! overtake. `Engine::written` does this. Nodes that each serve their own
//! tenants never conflict, and pay one lock, not two.
//!
//! A write is logged under its one namespace. One that changes no namespaced
//! row (store metadata only) is written to PostgreSQL's tables without a log
//! entry: a new node copies it, and each node keeps its own embedding
//! identity and analyser. A write spanning several namespaces (an import or a
//! reset of everything) is refused: the log orders each namespace alone.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::thread::{self, ThreadId};

use parking_lot::Mutex;
use postgres::error::SqlState;
use postgres::{Client, GenericClient};
use rusqlite::Transaction;
use rusqlite::types::Value;

use std::sync::Arc;

use super::capture::{Capture, Changes};
use super::entry::Entry;
use super::identity::Expected;
use super::records::RecordWriter;
use super::{Endpoint, Namespaces, log, replica};
use crate::error::{Error, Result};
use crate::store::WriteHook;
use crate::temporal::now_micros;

/// How long a write waits for its namespace's lock before it gives up with
/// `RESOURCE_BUSY`: a writer holds it for a few milliseconds, so this is a
/// writer that hangs (the replica's writer lock is held meanwhile). A URL
/// whose `options` set `lock_timeout` keeps its own.
const LOCK_WAIT: &str = "-c lock_timeout=10s";

/// A position in the shared log: a namespace and one of its seqs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    pub namespace: String,
    pub seq: i64,
}

/// What the calling thread's last shipped write came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Committed in PostgreSQL at this position.
    Shipped(Position),
    /// Refused: the replica had not applied the namespace up to this head.
    Behind(Position),
}

thread_local! {
    /// Set by a hook, read by the engine method's caller on the same thread
    /// (a store write returns the engine's own value, not a seq), with the
    /// address of the [`Shipper`] it belongs to: one thread may write on
    /// several nodes.
    static OUTCOME: RefCell<Option<(usize, Outcome)>> = const { RefCell::new(None) };
}

/// A connection and the statements prepared on it.
struct Link {
    client: Client,
    records: RecordWriter,
}

/// A namespace's lock, taken ahead of a write by one thread: a transaction
/// open on a connection of its own (the node's shared one stays free for
/// the writes of its other threads).
struct Reservation {
    namespace: String,
    head: i64,
    link: Link,
}

/// The connections a node writes on.
struct Links {
    config: Endpoint,
    /// The shared connection, reopened after a failure.
    shared: Option<Link>,
    /// Locks taken ahead, by thread.
    reserved: HashMap<ThreadId, Reservation>,
    /// A connection a finished reservation left, for the next one.
    spare: Option<Link>,
}

impl Links {
    fn connect(config: &Endpoint) -> Result<Link> {
        let client = config.connect().map_err(|e| match e {
            Error::Postgres(source) => Error::Shipping {
                during: "connecting",
                source,
            },
            other => other,
        })?;
        Ok(Link {
            client,
            records: RecordWriter::default(),
        })
    }

    fn shared(&mut self) -> Result<&mut Link> {
        if self.shared.as_ref().is_none_or(|l| l.client.is_closed()) {
            self.shared = Some(Self::connect(&self.config)?);
        }
        Ok(self.shared.as_mut().expect("connected just above"))
    }

    /// End a reservation's transaction; keep its connection if it is sound.
    fn finish(&mut self, mut reservation: Reservation) {
        if reservation.link.client.batch_execute("ROLLBACK").is_ok() {
            self.spare = Some(reservation.link);
        }
    }
}

/// The write hook of a node's replica.
pub struct Shipper {
    capture: Capture,
    namespaces: Namespaces,
    links: Mutex<Links>,
}

impl std::fmt::Debug for Shipper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shipper")
            .field("namespaces", &self.namespaces)
            .finish_non_exhaustive()
    }
}

impl Shipper {
    /// Ship the writes captured by `capture` to the database at `url`
    /// (whose schema is current: see [`super::connect`]), for `namespaces`.
    pub fn new(url: &str, capture: Capture, namespaces: Namespaces) -> Result<Self> {
        let mut config = super::config(url, "memcore")?;
        if config.config.get_options().is_none() {
            config.config.options(LOCK_WAIT);
        }
        Ok(Shipper {
            capture,
            namespaces,
            links: Mutex::new(Links {
                config,
                shared: None,
                reserved: HashMap::new(),
                spare: None,
            }),
        })
    }

    /// Check that every connection this shipper opens from now on reaches
    /// the node's database (see [`super::identity`]).
    pub fn expect(&self, expected: Arc<Expected>) {
        let mut links = self.links.lock();
        links.config = links.config.clone().expecting(expected);
        links.shared = None;
        links.spare = None;
    }

    /// Lock `namespace` for the calling thread's next write and return its
    /// head: until that write ships (or [`Shipper::release`]), no node can
    /// append to the namespace, so once the replica holds the head the
    /// write cannot be overtaken. Blocks while another writer holds the lock.
    pub fn reserve(&self, namespace: &str) -> Result<i64> {
        self.release();
        let spare = self.links.lock().spare.take();
        let config = self.links.lock().config.clone();
        let mut link = match spare {
            Some(link) if !link.client.is_closed() => link,
            _ => Links::connect(&config)?,
        };
        let failed = |source| Error::Shipping {
            during: "locking the namespace",
            source,
        };
        link.client.batch_execute("BEGIN").map_err(failed)?;
        let head = match log::lock_namespace(&mut link.client, namespace) {
            Ok(head) => head,
            Err(Error::Postgres(source)) if is_lock_wait(&source) => {
                return Err(lock_busy(&format!("namespace {namespace:?}")));
            }
            Err(Error::Postgres(source)) => return Err(failed(source)),
            Err(other) => return Err(other),
        };
        let reservation = Reservation {
            namespace: namespace.to_owned(),
            head,
            link,
        };
        self.links
            .lock()
            .reserved
            .insert(thread::current().id(), reservation);
        Ok(head)
    }

    /// Take what the calling thread's last write through this shipper came
    /// to (`None`: it shipped nothing, or was taken already).
    pub fn last_outcome(&self) -> Option<Outcome> {
        OUTCOME.with(|o| {
            let mut slot = o.borrow_mut();
            match &*slot {
                Some((owner, _)) if *owner == self.address() => slot.take().map(|(_, x)| x),
                _ => None,
            }
        })
    }

    fn set_outcome(&self, outcome: Outcome) {
        OUTCOME.with(|o| *o.borrow_mut() = Some((self.address(), outcome)));
    }

    fn address(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    /// Give up the calling thread's reservation, if its write did not use it.
    pub fn release(&self) {
        let mut links = self.links.lock();
        if let Some(reservation) = links.reserved.remove(&thread::current().id()) {
            links.finish(reservation);
        }
    }

    /// The namespace the write is logged under; `None`: it changed no
    /// namespaced row.
    fn namespace_of(&self, changes: &Changes) -> Result<Option<String>> {
        let mut names: BTreeSet<&str> =
            changes.ops.iter().map(|op| op.namespace.as_str()).collect();
        if names.is_empty() {
            for image in &changes.images {
                let (Some(row), Some(at)) = (&image.row, self.namespace_column(&image.table))
                else {
                    continue;
                };
                if let Some(Value::Text(name)) = row.get(at) {
                    names.insert(name);
                }
            }
        }
        let mut names = names.into_iter();
        let (first, second) = (names.next(), names.next());
        if let (Some(first), Some(second)) = (first, second) {
            return Err(Error::invalid(
                "namespace",
                format!(
                    "On PostgreSQL a write changes one namespace; this one changes {first:?}, \
                     {second:?} and maybe more. Write each namespace on its own."
                ),
            ));
        }
        let Some(name) = first else { return Ok(None) };
        self.namespaces.check(name)?;
        Ok(Some(name.to_owned()))
    }

    fn namespace_column(&self, table: &str) -> Option<usize> {
        let shipped = self.capture.tables().iter().find(|t| t.name == table)?;
        shipped.columns.iter().position(|c| c == "namespace")
    }

    fn ship(&self, tx: &Transaction<'_>, changes: &Changes) -> Result<()> {
        let namespace = self.namespace_of(changes)?;
        let failed = |during| move |source| Error::Shipping { during, source };
        let mut links = self.links.lock();
        let reservation = links.reserved.remove(&thread::current().id());
        let Some(namespace) = namespace else {
            if let Some(reservation) = reservation {
                links.finish(reservation);
            }
            let Link { client, records } = links.shared()?;
            let mut ptx = client.transaction().map_err(failed("beginning"))?;
            records.write_images(&mut ptx, self.capture.tables(), &changes.images)?;
            return ptx.commit().map_err(failed("committing"));
        };
        let seq = match reservation {
            Some(mut reservation) if reservation.namespace == namespace => {
                let Link { client, records } = &mut reservation.link;
                let head = reservation.head;
                let appended = self
                    .append(tx, client, records, changes, &namespace, head)
                    .and_then(|seq| {
                        client
                            .batch_execute("COMMIT")
                            .map_err(failed("committing"))?;
                        Ok(seq)
                    });
                match appended {
                    Ok(seq) => {
                        links.spare = Some(reservation.link);
                        seq
                    }
                    Err(e) => {
                        links.finish(reservation);
                        return Err(e);
                    }
                }
            }
            other => {
                if let Some(reservation) = other {
                    links.finish(reservation);
                }
                // Another thread of this node locked the namespace ahead and
                // waits for this node to catch up: queueing behind it here,
                // under the replica's writer lock, would stall that catch-up.
                if let Some(ahead) = links.reserved.values().find(|r| r.namespace == namespace) {
                    return Err(self.behind(&namespace, ahead.head, None));
                }
                let Link { client, records } = links.shared()?;
                let mut ptx = client.transaction().map_err(failed("beginning"))?;
                // Nor does it queue for a lock another writer holds: that
                // writer may be a reservation of this node waiting for the
                // catch-up this write's writer lock holds up (a deadlock
                // until lock_timeout). Refused, `Engine::written` runs it
                // again lock first.
                let lock = records.prepared(&mut ptx, log::LOCK_HEAD)?;
                let Some(head) = log::try_lock_namespace(&mut ptx, &lock, &namespace)? else {
                    let held = replica::position(tx, &namespace)?;
                    return Err(self.behind(&namespace, held, Some(held)));
                };
                let seq = self.append(tx, &mut ptx, records, changes, &namespace, head)?;
                ptx.commit().map_err(failed("committing"))?;
                seq
            }
        };
        self.set_outcome(Outcome::Shipped(Position { namespace, seq }));
        Ok(())
    }

    /// Inside both transactions, with `namespace` locked at `head`: check
    /// the replica held the head when the write ran, then write the rows and
    /// the log entry to PostgreSQL and the new position to the replica.
    fn append(
        &self,
        tx: &Transaction<'_>,
        pg: &mut impl GenericClient,
        records: &mut RecordWriter,
        changes: &Changes,
        namespace: &str,
        head: i64,
    ) -> Result<i64> {
        let held = replica::position(tx, namespace)?;
        if held != head {
            return Err(self.behind(namespace, head, Some(held)));
        }
        let tables = self.capture.tables();
        records.write_images(pg, tables, &changes.images)?;
        let entry = Entry::from_changes(changes, tables)?.encode();
        let statement = records.prepared(pg, log::APPEND)?;
        let seq = log::append_with(pg, &statement, namespace, now_micros(), &entry)?;
        replica::record_position(tx, namespace, seq)?;
        Ok(seq)
    }

    /// The refusal of a write prepared on a replica behind `head`.
    fn behind(&self, namespace: &str, head: i64, held: Option<i64>) -> Error {
        self.set_outcome(Outcome::Behind(Position {
            namespace: namespace.to_owned(),
            seq: head,
        }));
        let held = held.map_or_else(String::new, |seq| format!(", at seq {seq},"));
        Error::ResourceBusy {
            message: format!(
                "Another writer holds or moved namespace {namespace:?} (up to seq {head}) \
                 while this node{held} prepared this write; nothing was written. Retry: the \
                 node applies the newer entries within milliseconds."
            ),
        }
    }
}

impl WriteHook for Shipper {
    fn before_commit(&self, tx: &Transaction<'_>) -> Result<()> {
        // A write that ships nothing has no position.
        let _ = self.last_outcome();
        let changes = self.capture.take(tx)?;
        if changes.ops.is_empty() && changes.images.is_empty() {
            return Ok(());
        }
        // A broken connection is reopened by the next write (`Links::shared`).
        self.ship(tx, &changes).map_err(|e| match e {
            Error::Postgres(source) if is_lock_wait(&source) => lock_busy("this write's namespace"),
            Error::Postgres(source) => Error::Shipping {
                during: "writing the rows and the log entry",
                source,
            },
            other => other,
        })
    }
}

/// Whether PostgreSQL gave up waiting for a lock (`lock_timeout`).
fn is_lock_wait(error: &postgres::Error) -> bool {
    error.code() == Some(&SqlState::LOCK_NOT_AVAILABLE)
}

/// The refusal of a write whose namespace's lock (of `what`) did not come.
fn lock_busy(what: &str) -> Error {
    Error::ResourceBusy {
        message: format!(
            "Another writer held the lock of {what} past PostgreSQL's \
             lock_timeout; nothing was written. Retry; if it persists, look for a stuck \
             session in pg_stat_activity."
        ),
    }
}
