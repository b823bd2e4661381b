//! A node follows the PostgreSQL log (docs/scale-out.md, "Nodes follow the
//! log"): a thread `LISTEN`s on [`CHANNEL`], and a notification only wakes it;
//! what it applies it reads by seq, after its position in each namespace, so
//! a lost notification (they are lost while a connection is down) delays an
//! entry but never skips it. On every (re)connect, and every
//! [`FollowOptions::safety_poll`], the thread compares its positions with the
//! heads of the namespaces it serves.
//!
//! Readers wait on the published positions: [`Follower::wait_for`] is the
//! bounded `min_seq` wait that lets a client read its writes on any node.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, GenericClient};

use super::Endpoint;
use super::identity::Expected;
use super::log::{self, CHANNEL, LogEntry};
use super::placement::NamespaceRange;
use crate::error::{Error, Result};

/// How long the thread blocks for a notification before it looks at its stop
/// flag: the longest a dropped follower takes to stop. Notifications wake it
/// at once, so this is not a delay on applying.
const SLICE: Duration = Duration::from_millis(50);
/// Reconnection backoff bounds after a lost connection or a failed apply.
const RETRY_MIN: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(5);

/// Which namespaces a node serves; entries of the others are never read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Namespaces {
    All,
    Only(BTreeSet<String>),
    /// Those whose memcore bucket falls in the range (`super::placement`).
    Range(NamespaceRange),
}

impl Namespaces {
    /// Whether `namespace` is served.
    pub fn serves(&self, namespace: &str) -> bool {
        match self {
            Namespaces::All => true,
            Namespaces::Only(names) => names.contains(namespace),
            Namespaces::Range(range) => range.contains(namespace),
        }
    }

    /// `INVALID_PARAMETER` for a namespace this node does not serve: the one
    /// refusal of reads, writes and `min_seq` waits alike, so a tenant sent
    /// to the wrong node is told so instead of seeing an empty store.
    pub fn check(&self, namespace: &str) -> Result<()> {
        if self.serves(namespace) {
            return Ok(());
        }
        Err(Error::invalid(
            "namespace",
            format!(
                "This node does not serve namespace {namespace:?}; send the request to a node \
                 that does (route by token)."
            ),
        ))
    }

    /// The served namespaces among the heads of the log (every namespace
    /// ever written has one), with their heads, read in `client`'s snapshot.
    pub(super) fn heads(&self, client: &mut impl GenericClient) -> Result<Vec<(String, i64)>> {
        let heads = match self {
            Namespaces::Only(names) => {
                let names: Vec<String> = names.iter().cloned().collect();
                log::heads(client, Some(&names))?
            }
            Namespaces::All | Namespaces::Range(_) => log::heads(client, None)?,
        };
        Ok(heads
            .into_iter()
            .filter(|(ns, _)| self.serves(ns))
            .collect())
    }
}

/// How a follower reads.
#[derive(Debug, Clone)]
pub struct FollowOptions {
    /// Entries read per query.
    pub batch: usize,
    /// How often positions are compared with the heads even without a
    /// notification: the longest a lost notification can delay an entry.
    pub safety_poll: Duration,
    /// The database every (re)connection must reach, and that must hold
    /// every entry applied: a node's ([`super::identity`]). While it does
    /// not, nothing is applied and the node's reads and writes are refused.
    pub expect: Option<Arc<Expected>>,
}

impl Default for FollowOptions {
    fn default() -> Self {
        FollowOptions {
            batch: 256,
            safety_poll: Duration::from_secs(2),
            expect: None,
        }
    }
}

/// Applies one entry to the node's state; an error stops the follower at
/// that entry (it is retried after a pause, never skipped).
pub type Apply = Box<dyn FnMut(&LogEntry) -> Result<()> + Send>;

/// What the thread and the readers share.
struct Shared {
    namespaces: Namespaces,
    /// The last seq applied, per namespace (absent: 0, nothing applied).
    positions: Mutex<HashMap<String, i64>>,
    advanced: Condvar,
    stop: AtomicBool,
    last_error: Mutex<Option<String>>,
}

impl Shared {
    fn position(&self, namespace: &str) -> i64 {
        self.positions.lock().get(namespace).copied().unwrap_or(0)
    }

    fn publish(&self, namespace: &str, seq: i64) {
        self.positions.lock().insert(namespace.to_owned(), seq);
        self.advanced.notify_all();
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }
}

/// A thread applying the log's new entries, in order, exactly once each;
/// stops when dropped.
pub struct Follower {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Follower {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Follower")
            .field("namespaces", &self.shared.namespaces)
            .field("positions", &*self.shared.positions.lock())
            .finish_non_exhaustive()
    }
}

impl Follower {
    /// Follow the log at `url` for `namespaces`, from `positions` (the last
    /// seq already applied per namespace; others start from the beginning),
    /// handing each new entry to `apply`. Connects before returning, so a bad
    /// URL or an unreachable server fails here, with its reason.
    pub fn start(
        url: &str,
        namespaces: Namespaces,
        positions: HashMap<String, i64>,
        apply: Apply,
        options: FollowOptions,
    ) -> Result<Self> {
        let mut config = super::config(url, "memcore-follow")?;
        if let Some(expected) = &options.expect {
            config = config.expecting(expected.clone());
        }
        let client = listen(&config)?;
        let shared = Arc::new(Shared {
            namespaces,
            positions: Mutex::new(positions),
            advanced: Condvar::new(),
            stop: AtomicBool::new(false),
            last_error: Mutex::new(None),
        });
        let state = shared.clone();
        let thread = crate::priority::spawn_named("memcore-pg-follow", move || {
            run(&state, &config, client, apply, &options);
        })
        .map_err(|e| Error::io("memcore-pg-follow", e))?;
        Ok(Follower {
            shared,
            thread: Some(thread),
        })
    }

    /// The last seq of `namespace` applied (0: none).
    pub fn applied(&self, namespace: &str) -> i64 {
        self.shared.position(namespace)
    }

    /// The last seq applied in every namespace that has one.
    pub fn positions(&self) -> HashMap<String, i64> {
        self.shared.positions.lock().clone()
    }

    /// Refuse a namespace this node does not serve (`Namespaces::check`).
    pub fn check_served(&self, namespace: &str) -> Result<()> {
        self.shared.namespaces.check(namespace)
    }

    /// The last failure (a lost connection, a failed apply) since the
    /// follower last made progress, for status reports.
    pub fn last_error(&self) -> Option<String> {
        self.shared.last_error.lock().clone()
    }

    /// Wait until `namespace` has been applied up to `seq` (a read's
    /// `min_seq`), at most `timeout`; returns the position reached. Past the
    /// bound: `RESOURCE_BUSY`, never a read of older data. A namespace this
    /// node does not serve: `INVALID_PARAMETER`.
    pub fn wait_for(&self, namespace: &str, seq: i64, timeout: Duration) -> Result<i64> {
        self.shared.namespaces.check(namespace)?;
        let deadline = Instant::now() + timeout;
        let mut positions = self.shared.positions.lock();
        loop {
            let applied = positions.get(namespace).copied().unwrap_or(0);
            if applied >= seq {
                return Ok(applied);
            }
            if self
                .shared
                .advanced
                .wait_until(&mut positions, deadline)
                .timed_out()
            {
                let applied = positions.get(namespace).copied().unwrap_or(0);
                if applied >= seq {
                    return Ok(applied);
                }
                return Err(Error::ResourceBusy {
                    message: format!(
                        "This node has applied namespace {namespace:?} up to seq {applied}, \
                         not yet min_seq {seq}, after waiting {} ms; retry, or read from \
                         the node that took the write.",
                        timeout.as_millis()
                    ),
                });
            }
        }
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A connection listening on the log's channel.
fn listen(config: &Endpoint) -> Result<Client> {
    let mut client = config.connect()?;
    client.batch_execute(&format!("LISTEN {CHANNEL}"))?;
    Ok(client)
}

/// Follow until stopped, reconnecting (with backoff) whenever the connection
/// or an apply fails.
fn run(
    shared: &Shared,
    config: &Endpoint,
    client: Client,
    mut apply: Apply,
    options: &FollowOptions,
) {
    let mut client = Some(client);
    let mut pause = RETRY_MIN;
    while !shared.stopped() {
        let outcome = match client.take() {
            Some(mut c) => follow(shared, &mut c, &mut apply, options),
            None => listen(config).and_then(|mut c| follow(shared, &mut c, &mut apply, options)),
        };
        match outcome {
            Ok(()) => return,
            Err(error) => *shared.last_error.lock() = Some(error.to_string()),
        }
        let until = Instant::now() + pause;
        while !shared.stopped() && Instant::now() < until {
            std::thread::sleep(SLICE);
        }
        pause = (pause * 2).min(RETRY_MAX);
    }
}

/// Follow on one connection until stopped (`Ok`) or a failure (`Err`).
fn follow(
    shared: &Shared,
    client: &mut Client,
    apply: &mut Apply,
    options: &FollowOptions,
) -> Result<()> {
    // Whatever was committed while this connection was not listening.
    catch_up_all(shared, client, apply, options)?;
    let mut polled = Instant::now();
    while !shared.stopped() {
        for namespace in woken(shared, client)? {
            catch_up(shared, client, &namespace, apply, options)?;
        }
        if polled.elapsed() >= options.safety_poll {
            catch_up_all(shared, client, apply, options)?;
            polled = Instant::now();
        }
    }
    Ok(())
}

/// The served namespaces named by notifications that arrive within [`SLICE`]
/// (and any already buffered) whose seq is past this node's position.
fn woken(shared: &Shared, client: &mut Client) -> Result<BTreeSet<String>> {
    let mut names = BTreeSet::new();
    let mut notifications = client.notifications();
    let first = notifications.timeout_iter(SLICE).next()?;
    let rest: Vec<_> = notifications.iter().collect()?;
    for note in first.into_iter().chain(rest) {
        let Some((seq, namespace)) = note.payload().split_once(' ') else {
            continue;
        };
        let Ok(seq) = seq.parse::<i64>() else {
            continue;
        };
        if shared.namespaces.serves(namespace) && seq > shared.position(namespace) {
            names.insert(namespace.to_owned());
        }
    }
    Ok(names)
}

/// Compare every served namespace's head with its position; catch up those behind.
fn catch_up_all(
    shared: &Shared,
    client: &mut Client,
    apply: &mut Apply,
    options: &FollowOptions,
) -> Result<()> {
    let heads = shared.namespaces.heads(client)?;
    if let Some(expected) = &options.expect {
        ensure_not_behind(shared, expected, &heads)?;
    }
    for (namespace, head) in heads {
        if head > shared.position(&namespace) {
            catch_up(shared, client, &namespace, apply, options)?;
        }
    }
    // Connected and current: an earlier failure is over.
    *shared.last_error.lock() = None;
    Ok(())
}

/// Refuse a database that no longer holds entries this node applied (one
/// restored from an older backup, a standby promoted before it caught up):
/// the replica holds writes that are not in its truth.
fn ensure_not_behind(shared: &Shared, expected: &Expected, heads: &[(String, i64)]) -> Result<()> {
    let heads: HashMap<&str, i64> = heads.iter().map(|(n, s)| (n.as_str(), *s)).collect();
    let positions = shared.positions.lock().clone();
    for (namespace, applied) in positions {
        let head = heads.get(namespace.as_str()).copied().unwrap_or(0);
        if applied > head {
            let message = expected.behind_message(&namespace, applied, head);
            expected.behind(message.clone());
            return Err(Error::Damaged {
                path: expected.replica().to_path_buf(),
                message,
            });
        }
    }
    Ok(())
}

/// Apply `namespace`'s entries after its position, in order, publishing the
/// position after each, until the head is reached.
fn catch_up(
    shared: &Shared,
    client: &mut Client,
    namespace: &str,
    apply: &mut Apply,
    options: &FollowOptions,
) -> Result<()> {
    loop {
        let entries =
            log::read_after(client, namespace, shared.position(namespace), options.batch)?;
        for entry in &entries {
            apply(entry)?;
            shared.publish(namespace, entry.seq);
        }
        if !entries.is_empty() {
            *shared.last_error.lock() = None;
        }
        if entries.len() < options.batch || shared.stopped() {
            return Ok(());
        }
    }
}
