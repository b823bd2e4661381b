//! A read-only engine follows the writer: a background thread notices new
//! commits and applies the new op-log entries to the in-memory search state,
//! so a long-lived read-only process (a `--read-only` server) searches what
//! the writer stored moments ago, not what the store held when it opened.
//!
//! Noticing is cheap: `PRAGMA data_version` on the thread's own connection
//! changes only when another connection committed, so an idle writer costs
//! one tiny query per poll. When it changed and the op log grew, the thread
//! reads, in one snapshot, the new ops and what they changed: writes of
//! memories, conversation turns and code chunks (an agent's common writes)
//! update the catalog (and a memory's mention links) one by one; a write of
//! the knowledge graph, or a bulk ingest, rescans the catalog and graph from
//! the tables. Invalidations, supersessions and deletes show at once. Then the
//! open-time replay ([`super::recovery`]) stages the new content into the
//! pending text and vector buffers that searches read beside the committed
//! indexes.
//!
//! Past [`SHED_PENDING`] pending text documents (or vectors) the thread
//! loads the writer's newest text commit (or saved vector graph) and drops
//! the pending entries it holds, so the buffers searched exactly beside the
//! committed indexes stay small however long the process lives. A graph is
//! read whole, so it is loaded only when that many vectors wait and the
//! writer saved a new one.
//!
//! Known limit, for a follow-up: a rescan costs O(store) (paced to a fifth
//! of a core).

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::RwLock;
use rusqlite::Connection;

use super::embedding::stored_dim;
use super::indexer::{Indexer, Job};
use super::indexes::Indexes;
use super::recovery;
use super::sharing::{Gate, Signal};
use crate::error::{Error, Result};
use crate::kind::Kind;
use crate::store::code::CodeChunks;
use crate::store::conversations::Turns;
use crate::store::oplog::{self, Action, Op};
use crate::store::table::{self, CatalogRow};
use crate::store::{OwnerLock, Store, memories, relations};
use crate::text::TextIndex;

/// How often the thread looks for new commits: well inside the promise
/// that a read-only search is at most a second behind the writer.
pub const POLL: Duration = Duration::from_millis(200);
/// Writes applied one by one in a catch-up; more (a bulk ingest), or a write
/// of the knowledge graph, rescan the catalog and the graph.
const INCREMENTAL_OPS: usize = 4096;
/// Pending text documents (or vectors) past which the writer's newest text
/// commit (or vector graph) is loaded.
const SHED_PENDING: usize = 1024;
/// Pending vectors a read-only engine indexes in memory per poll (about a
/// second of one core at 100k vectors, 384-d), so catch-ups keep their pace.
const LEFT_OVER_BATCH: usize = 1024;
/// The pause after a catch-up, as a multiple of its duration.
const BUSY_SHARE: u32 = 4;

/// The follower thread of a read-only engine; stops when dropped.
#[derive(Debug)]
pub struct Follower {
    /// The last op applied to the search state.
    applied: Arc<AtomicI64>,
    /// To the thread: stop, or catch up now.
    signals: Sender<Signal>,
    /// Shared with [`Followed::rescans`] (read by tests).
    #[cfg(test)]
    rescans: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

/// The engine state a follower keeps current.
#[derive(Debug)]
pub struct Followed {
    pub indexes: Arc<Indexes>,
    /// The engine's vector dimension, learnt when the writer stores the
    /// first vector of a store that had none at open.
    pub dim: Arc<RwLock<Option<usize>>>,
    /// Catch-ups that rescanned the tables instead of applying writes one by one.
    pub rescans: Arc<AtomicU64>,
}

/// A follower in a store other processes write too (`super::sharing`): the
/// store whose writer lock a catch-up holds, the gate it advances, the
/// indexer of the owner of the index files (set when this process takes them
/// over), the owner's lock, and the threads a new indexer may use.
#[derive(Debug)]
pub struct Sharing {
    pub store: Arc<Store>,
    pub gate: Arc<Gate>,
    pub indexer: Arc<OnceLock<Arc<Indexer>>>,
    pub owner: Arc<parking_lot::Mutex<Option<OwnerLock>>>,
    pub threads: usize,
}

impl Sharing {
    fn owns_files(&self) -> bool {
        self.indexer.get().is_some()
    }
}

impl Follower {
    /// Follow the store at `db_path` from op `applied` (where the open's
    /// replay ended), on `conn`, a read-only connection of the thread's own;
    /// with `sharing`, as one of the processes that write it.
    pub fn start(
        db_path: &Path,
        conn: Connection,
        followed: Followed,
        applied: i64,
        sharing: Option<Sharing>,
    ) -> Result<Self> {
        let (signals, received) = channel::<Signal>();
        if let Some(s) = &sharing {
            s.gate.connect(signals.clone());
        }
        let shared = Arc::new(AtomicI64::new(applied));
        let progress = shared.clone();
        #[cfg(test)]
        let rescans = followed.rescans.clone();
        let thread = crate::priority::spawn_named("memcore-follow", move || {
            run(&conn, &followed, sharing.as_ref(), &progress, &received);
        })
        .map_err(|e| Error::io(db_path, e))?;
        Ok(Follower {
            applied: shared,
            #[cfg(test)]
            rescans,
            signals,
            thread: Some(thread),
        })
    }
}

impl Follower {
    /// The last op applied: the search state holds every write up to it.
    pub fn applied(&self) -> i64 {
        self.applied.load(Ordering::Acquire)
    }

    /// Catch-ups that rescanned the tables (a write of the knowledge graph, a
    /// bulk ingest) instead of applying the writes one by one.
    #[cfg(test)]
    pub fn rescans(&self) -> u64 {
        self.rescans.load(Ordering::Relaxed)
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        let _ = self.signals.send(Signal::Stop);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(
    conn: &Connection,
    followed: &Followed,
    sharing: Option<&Sharing>,
    progress: &AtomicI64,
    signals: &Receiver<Signal>,
) {
    let mut applied = progress.load(Ordering::Acquire);
    // None: the first poll always catches up, since commits may have landed
    // between the open's replay (on another connection) and this thread's start.
    let mut seen = None;
    let mut wait = POLL;
    let mut text_loaded = i64::MIN;
    // A take-over that failed (an index held in memory only) is not retried.
    let mut given_up = false;
    let mut draining = false;
    loop {
        let woken = match signals.recv_timeout(wait) {
            Ok(Signal::Stop) | Err(RecvTimeoutError::Disconnected) => return,
            Ok(Signal::Wake) => true,
            Err(RecvTimeoutError::Timeout) => false,
        };
        if let Ok(version) = data_version(conn)
            && (woken || seen != Some(version))
        {
            let started = Instant::now();
            // A failed catch-up (a checkpoint holding a lock past the busy
            // timeout) keeps `seen`, so the next poll tries again.
            let caught = match sharing {
                Some(s) => catch_up_shared(conn, followed, s),
                None => catch_up(conn, followed, applied, &BTreeSet::new(), None),
            };
            if let Ok(done) = caught {
                applied = done;
                progress.store(done, Ordering::Release);
                seen = Some(version);
            }
            // A rescan grows with the store: under a steady stream of
            // writes the thread takes at most a fifth of a core.
            wait = POLL.max(started.elapsed() * BUSY_SHARE);
        }
        // The owner of the index files commits and saves them itself; the
        // others load its work, and take its place when it is gone.
        if let Some(s) = sharing
            && !s.owns_files()
            && !given_up
            && let Err(e) = try_take_over(conn, followed, s)
        {
            followed
                .indexes
                .health
                .warn(format!("Could not take over the index files: {e}"));
            given_up = true;
        }
        if sharing.is_none_or(|s| !s.owns_files()) {
            shed_committed_text(&followed.indexes.text, &mut text_loaded);
            shed_saved_vectors(&followed.indexes);
        }
        // A process sharing the store has an owner that indexes (or becomes
        // it); a read-only engine indexes in memory what no save holds.
        if sharing.is_none() {
            index_left_over_vectors(&followed.indexes, &mut draining);
        }
        followed.indexes.check_read_failures();
    }
}

/// In a process of a shared store that does not own the index files: take
/// them over if their owner is gone (its lock is free), under this process's
/// writer lock. The search state is brought to the log's end, the indexes
/// take the files' newest commit and save, and a new indexer gets every op
/// the files do not cover, in order, before any other.
fn try_take_over(conn: &Connection, followed: &Followed, sharing: &Sharing) -> Result<()> {
    let index_dir = sharing.store.dir().join(super::INDEX_DIR);
    let Some(lock) = OwnerLock::try_acquire(&index_dir)? else {
        return Ok(());
    };
    let _writes_paused = sharing.store.writer()?;
    let mut gate = sharing.gate.lock();
    let done = catch_up(conn, followed, gate.applied, &gate.published, None)?;
    gate.advance(done);
    let snapshot = conn.unchecked_transaction()?;
    let watermarks = followed.indexes.take_over()?;
    let indexer = Arc::new(Indexer::start(
        followed.indexes.clone(),
        watermarks.0,
        watermarks.1,
        sharing.threads,
    ));
    let send = |job: Job| indexer.send(job);
    recovery::replay_until(
        &snapshot,
        &followed.indexes,
        watermarks,
        done,
        &BTreeSet::new(),
        Some(&send),
    )?;
    drop(snapshot);
    let _ = sharing.indexer.set(indexer);
    *sharing.owner.lock() = Some(lock);
    Ok(())
}

/// Catch up a process of a shared store: under its writer lock, so that every
/// own write committed so far is published, from where its gate stands.
fn catch_up_shared(conn: &Connection, followed: &Followed, sharing: &Sharing) -> Result<i64> {
    let _writes_paused = sharing.store.writer()?;
    let mut gate = sharing.gate.lock();
    let send = sharing.indexer.get().map(|ix| move |job: Job| ix.send(job));
    let done = catch_up(
        conn,
        followed,
        gate.applied,
        &gate.published,
        send.as_ref().map(|f| f as &dyn Fn(Job)),
    )?;
    gate.advance(done);
    Ok(done)
}

/// Once many documents are pending, load the writer's newest text commit,
/// which holds most of them, so the buffer searched beside it stops growing.
/// `loaded`: the seq of the commit loaded last (a commit is loaded once).
fn shed_committed_text(text: &TextIndex, loaded: &mut i64) {
    if text.pending_len() < SHED_PENDING {
        return;
    }
    let on_disk = text.disk_seq();
    if on_disk != *loaded && text.follow_commits().is_ok() {
        *loaded = on_disk;
    }
}

/// Once many vectors are pending, load the writer's newest saved graph.
fn shed_saved_vectors(indexes: &Indexes) {
    if let Some(vectors) = indexes.vectors()
        && vectors.pending_len() >= SHED_PENDING
    {
        vectors.follow_saved();
    }
}

/// A read-only engine: once many vectors are pending and no newer save
/// holds them (the writer was killed with them unindexed, or saves rarely),
/// index a batch per poll into the graph held in memory until none is
/// pending (`draining` remembers that it started), so searches stop scoring
/// them exactly (10k random 384-d vectors left by a killed writer: search
/// p50 4.8 ms at open, 0.57 ms once indexed 7.7 s later;
/// benches/read_only_follower.py). A few recent writes alone stay pending:
/// the writer's next save holds them.
fn index_left_over_vectors(indexes: &Indexes, draining: &mut bool) {
    let Some(vectors) = indexes.vectors() else {
        return;
    };
    let pending = vectors.pending_len();
    *draining = pending > 0 && (*draining || pending >= SHED_PENDING);
    if !*draining {
        return;
    }
    if let Err(e) = vectors.index_pending_in_memory(LEFT_OVER_BATCH) {
        // Not tried again: the graph may be half-updated, so searches score
        // what is pending exactly from now on.
        vectors.distrust_graph();
        *draining = false;
        indexes.health.warn(format!(
            "Could not index pending vectors in memory: {e} (they are scored exactly)"
        ));
    }
}

fn data_version(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("PRAGMA data_version", [], |r| r.get(0))?)
}

/// Apply every op after `applied`; returns the last one applied. `send`
/// receives the indexer jobs of a writable engine (a node applying
/// PostgreSQL's log to its replica, `super::pg_mode`); a read-only engine
/// has no indexer and passes None.
pub(super) fn catch_up(
    conn: &Connection,
    followed: &Followed,
    applied: i64,
    published: &BTreeSet<i64>,
    send: Option<&dyn Fn(Job)>,
) -> Result<i64> {
    let indexes = &*followed.indexes;
    // One read transaction: the catalog and the ops come from the same snapshot.
    let snapshot = conn.unchecked_transaction()?;
    if oplog::last_seq(&snapshot)? <= applied {
        return Ok(applied);
    }
    // Vectors replay from what the index covers: everything, for an index
    // adopted now (ops up to `applied` were replayed before it existed).
    let mut vector_seq = applied;
    if indexes.vectors().is_none()
        && let Some(dim) = stored_dim(&snapshot)?
    {
        vector_seq = vector_seq.min(indexes.adopt_vectors(dim)?);
        *followed.dim.write() = Some(dim);
    }
    let ops = oplog::since(&snapshot, applied, INCREMENTAL_OPS + 1)?;
    let one_by_one = ops.len() <= INCREMENTAL_OPS && ops.iter().all(|op| applies_alone(op.kind));
    // Maintenance may have compacted entries this follower had not applied
    // (a process asleep for a day): the tables, not the log, are then whole.
    let log_whole = compacted_through(&snapshot)? <= applied;
    if !(log_whole && one_by_one && apply_ops(&snapshot, indexes, &ops, published)?) {
        followed.rescans.fetch_add(1, Ordering::Relaxed);
        recovery::rebuild_catalog_from(&snapshot, indexes)?;
    }
    recovery::replay_from(&snapshot, indexes, applied, vector_seq, published, send)
}

/// The seq below which maintenance may have compacted the op log.
fn compacted_through(conn: &Connection) -> Result<i64> {
    Ok(
        crate::store::meta::get(conn, super::upkeep::LOG_COMPACTED_THROUGH)?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
    )
}

/// Whether a write of `kind` can be applied from its own row: a memory (with
/// its mention links), a turn or a code chunk, which the entity graph does not
/// hold; an entity, relation or observation changes the graph itself.
fn applies_alone(kind: Kind) -> bool {
    matches!(kind, Kind::Memory | Kind::UserTurn | Kind::CodeChunk)
}

/// A write's record as the catalog files it, if the record still exists.
fn catalog_row(conn: &Connection, op: &Op) -> Result<Option<CatalogRow>> {
    match op.kind {
        Kind::Memory => memories::catalog_row(conn, &op.record_id),
        Kind::UserTurn => table::catalog_row_of::<Turns>(conn, &op.record_id),
        Kind::CodeChunk => table::catalog_row_of::<CodeChunks>(conn, &op.record_id),
        Kind::Entity | Kind::Observation => Ok(None),
    }
}

/// Apply writes to the catalog, and memories' mention links to the graph, one
/// by one (but this process's own `published` ones, which are applied
/// already). False (nothing applied) when a memory mentions an entity the
/// graph does not know yet: only a rescan brings new entities in.
fn apply_ops(
    conn: &Connection,
    indexes: &Indexes,
    ops: &[Op],
    published: &BTreeSet<i64>,
) -> Result<bool> {
    let mut retired = Vec::new();
    let mut current = Vec::new();
    let mut mentions = Vec::new();
    for op in ops.iter().filter(|op| !published.contains(&op.seq)) {
        if let Some(prev) = op.prev_key {
            retired.push(prev as u64);
        }
        let Some(row) = catalog_row(conn, op)? else {
            continue;
        };
        if op.kind == Kind::Memory && op.action == Action::Upsert {
            mentions.push((row.doc_key, relations::mentions_of(conn, &op.record_id)?));
        }
        current.push(row);
    }
    let mut links = Vec::with_capacity(mentions.len());
    {
        let graph = indexes.graph.read();
        for (key, entities) in mentions {
            let nodes: Option<Vec<_>> = entities.iter().map(|e| graph.by_entity(e)).collect();
            let Some(nodes) = nodes else {
                return Ok(false);
            };
            links.push((key, nodes));
        }
    }
    // One lock at a time, as everywhere else: never the catalog and the graph together.
    {
        let mut catalog = indexes.catalog.write();
        for key in &retired {
            catalog.remove(*key);
        }
        for row in &current {
            catalog.insert(row.doc_key, &row.labels());
        }
    }
    let mut graph = indexes.graph.write();
    for key in retired {
        graph.unlink_doc(key);
    }
    for (key, nodes) in links {
        graph.link_doc(key, nodes, true);
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use crate::engine::{Engine, EngineOptions, SearchQuery};
    use crate::memory::NewMemory;

    /// Whether `hits` becomes true within a generous deadline (polled).
    fn eventually(mut hits: impl FnMut() -> bool) -> bool {
        let deadline = Instant::now() + std::time::Duration::from_secs(20);
        while Instant::now() < deadline {
            if hits() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        hits()
    }

    #[test]
    fn a_read_only_engine_follows_stores_and_deletes() {
        let dir = tempfile::tempdir().unwrap();
        let writer = Engine::open(dir.path(), &EngineOptions::default()).unwrap();
        writer
            .store_memory(NewMemory::text("a first fact"))
            .unwrap();
        let options = EngineOptions {
            read_only: true,
            ..EngineOptions::default()
        };
        let reader = Engine::open(dir.path(), &options).unwrap();
        let query = SearchQuery::memories("default", 5);
        let found = |word: &str| !reader.search_text(&query, word).unwrap().is_empty();
        assert!(!found("zebra"));

        let zebra = writer
            .store_memory(NewMemory::text("the zebra crossed"))
            .unwrap();
        assert!(eventually(|| found("zebra")));
        writer.delete_memory("default", &zebra.id).unwrap();
        assert!(eventually(|| !found("zebra")));
    }

    #[test]
    fn a_follower_applies_turns_and_memories_without_rescanning() {
        use crate::conversation::NewTurn;

        let dir = tempfile::tempdir().unwrap();
        let writer = Engine::open(dir.path(), &EngineOptions::default()).unwrap();
        writer
            .store_memory(NewMemory::text("a first fact"))
            .unwrap();
        let options = EngineOptions {
            read_only: true,
            ..EngineOptions::default()
        };
        let reader = Engine::open(dir.path(), &options).unwrap();
        let turns = SearchQuery {
            kinds: crate::kind::KindSet::only(crate::kind::Kind::UserTurn),
            ..SearchQuery::memories("default", 5)
        };
        let memories = SearchQuery::memories("default", 5);
        for i in 0..5 {
            writer
                .record_turn(&NewTurn {
                    namespace: "default".into(),
                    conversation_id: "c".into(),
                    turn_key: format!("t{i}"),
                    user_text: format!("question about the walrus number {i}"),
                    agent_text: None,
                    thread_id: None,
                    procedures: vec![],
                    embedding: None,
                    at: None,
                })
                .unwrap();
            writer
                .store_memory(NewMemory::text(format!("the narwhal fact {i}")))
                .unwrap();
        }
        assert!(eventually(|| {
            reader.search_text(&turns, "walrus").unwrap().len() == 5
                && reader.search_text(&memories, "narwhal").unwrap().len() == 5
        }));
        let follower = reader.follower.as_ref().unwrap();
        assert_eq!(follower.rescans(), 0, "turns and memories apply one by one");
    }

    /// A unit vector pointing mostly along axis `i % 8`, slightly tilted.
    fn unit(i: usize) -> Vec<f32> {
        let mut v = vec![0.01 * (i % 7) as f32; 8];
        v[i % 8] = 1.0;
        let norm = v.iter().map(|a| a * a).sum::<f32>().sqrt();
        v.into_iter().map(|a| a / norm).collect()
    }

    #[test]
    fn a_follower_loads_the_writers_graph_instead_of_growing_its_buffer() {
        let dir = tempfile::tempdir().unwrap();
        let writer = Engine::open(dir.path(), &EngineOptions::default()).unwrap();
        let first = NewMemory {
            embedding: Some(unit(0)),
            ..NewMemory::text("memory 0")
        };
        writer.store_memory(first).unwrap();
        writer.flush().unwrap();
        let options = EngineOptions {
            read_only: true,
            ..EngineOptions::default()
        };
        let reader = Engine::open(dir.path(), &options).unwrap();
        let many = super::SHED_PENDING + 200;
        for i in 1..=many {
            let memory = NewMemory {
                embedding: Some(unit(i)),
                ..NewMemory::text(format!("memory {i}"))
            };
            writer.store_memory(memory).unwrap();
        }
        // The follower stages every new vector; once the writer saved its
        // graph, it loads it and the buffer empties.
        assert!(eventually(|| reader.index_status().vectors_pending
            >= super::SHED_PENDING
            || reader.index_status().vectors > many));
        writer.flush().unwrap();
        assert!(eventually(|| {
            let status = reader.index_status();
            status.vectors_pending == 0 && status.vectors == many + 1
        }));
        let query = SearchQuery::memories("default", 3);
        let hits = reader.search_vector(&query, &unit(many)).unwrap();
        assert!(!hits.is_empty());
    }

    #[test]
    fn a_read_only_engine_indexes_in_memory_what_the_writer_never_saved() {
        let dir = tempfile::tempdir().unwrap();
        let writer = Engine::open(dir.path(), &EngineOptions::default()).unwrap();
        let many = super::SHED_PENDING + super::LEFT_OVER_BATCH + 100;
        for i in 0..many {
            let memory = NewMemory {
                embedding: Some(unit(i)),
                ..NewMemory::text(format!("memory {i}"))
            };
            writer.store_memory(memory).unwrap();
        }
        // The writer saved no graph (as one killed before its first save):
        // the reader stages every vector at open, then indexes them in its
        // own graph, in memory, until none waits.
        let options = EngineOptions {
            read_only: true,
            ..EngineOptions::default()
        };
        let reader = Engine::open(dir.path(), &options).unwrap();
        assert!(eventually(|| reader.index_status().vectors_pending == 0));
        let status = reader.index_status();
        assert_eq!(status.vectors + status.vectors_pending, many);
        let query = SearchQuery::memories("default", 1);
        let hits = reader.search_vector(&query, &unit(many - 1)).unwrap();
        assert!(!hits.is_empty());
    }
}
