//! The background indexer: moves published documents into the HNSW graph and
//! the tantivy index, commits text on an interval, saves the graph now and
//! then, and records in each what op-log seq it covers.
//!
//! One thread owns all index writes, so there is never a concurrent writer;
//! searches run beside it against the committed state plus pending buffers.
//!
//! Failures never advance a watermark: a text commit or graph save that
//! fails (a full disk) leaves the recorded seq where the files really are
//! and the documents in the pending buffers, retries with a growing pause,
//! and shows in the index health until it succeeds. A panic in a round is
//! caught: the thread keeps serving, the work of that round stays in the
//! pending buffers (searched exactly), nothing more is committed or saved in
//! this process, and the store is marked for a rebuild at the next open.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, SyncSender, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::indexes::Indexes;
use crate::error::Result;
use crate::text::ScopedTerms;
use crate::vector::{SharedVector, VectorIndex};

/// How often uncommitted text is committed.
const COMMIT_INTERVAL: Duration = Duration::from_secs(1);
/// How often a changed vector graph is saved (replay covers the rest).
const SAVE_INTERVAL: Duration = Duration::from_secs(30);
/// Commit text early when this many documents wait.
const COMMIT_BATCH: usize = 20_000;
/// Save the graph early when this many changes accumulated.
const SAVE_BATCH: usize = 50_000;
/// A new indexer (an open, or a take-over of a shared store's index files)
/// that absorbed at least this many vector changes before its queue first
/// ran dry saves the graph then, not only after [`SAVE_INTERVAL`]: a process
/// that never lives that long (a server restarted again and again, an owner
/// killed in turn) otherwise left the graph unsaved for good, and every open
/// and take-over after it replayed and re-inserted every vector since
/// (`benches/reliability/processes.py`: no graph file after 100 kills, owner
/// take-overs past 10 s as the store grew).
const BACKLOG_SAVE: usize = 4096;
/// Jobs taken from the queue per round.
const ROUND: usize = 2048;
/// Longest pause between retries of a failing commit or save.
const MAX_RETRY: Duration = Duration::from_secs(30);
/// Hubness values computed between two looks at the job queue: about 30 ms
/// of searches at 100k vectors, so new writes still reach the indexes at once.
const HUB_BATCH: usize = 64;
/// Hubness values wait until no write came for this long: beside an
/// `index_project` pass (whose writes pause while the model embeds the next
/// files) they took CPU from the embedding model (1,000 files: 55 -> 62 s),
/// and the pass's end computes what its search needs anyway
/// (`crate::vector::VectorIndex::catch_up_hubs`). The background work is for
/// chunks written otherwise (a PostgreSQL node following another's writes).
const HUB_IDLE: Duration = Duration::from_secs(5);
/// Hubness values wait while more vectors than this are pending (a bulk
/// ingest the graph has not caught up with): each neighbour search scans the
/// pending buffer, and a value computed before the graph holds the batch
/// would be recomputed anyway. Computed beside an ingest of 100k, they
/// slowed the graph's inserts several times over.
const HUB_MAX_PENDING: usize = 1024;

/// One unit of index work. `to_text`/`to_vectors` say which index still
/// needs it (a replay after a crash may concern only one of them).
#[derive(Debug)]
pub enum Job {
    Add {
        seq: i64,
        key: u64,
        /// The document's scoped terms, analysed once by the write path.
        terms: ScopedTerms,
        vector: Option<SharedVector>,
        to_text: bool,
        to_vectors: bool,
    },
    Retire {
        seq: i64,
        key: u64,
        to_text: bool,
        to_vectors: bool,
    },
    /// Commit and save everything before this job, then reply.
    Flush(SyncSender<Result<()>>),
    /// Apply everything before this job, then bring the hubness values up to
    /// date, then reply: with `catch_up`, the new code chunks of that
    /// namespace (`crate::vector::VectorIndex::catch_up_hubs`); without, every
    /// changed group recomputed whole (`VectorIndex::settle_hubs`).
    SettleHubs {
        catch_up: Option<String>,
        reply: SyncSender<Result<()>>,
    },
    /// Compact the indexes (see [`compact`]), then reply.
    Compact {
        force: bool,
        reply: SyncSender<Result<CompactReport>>,
    },
    /// Start over for a rebuild (see [`Indexer::restart`]), then reply.
    Restart(SyncSender<()>),
    /// Panic inside the round (only the unit tests of the panic path).
    #[cfg(test)]
    Panic,
}

/// Compact the graph when tombstones exceed this share of its vectors.
const TOMBSTONE_RATIO: f64 = 0.2;

/// What a compaction did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompactReport {
    /// Whether the HNSW graph was rebuilt without its tombstones.
    pub vectors_rebuilt: bool,
    /// Tombstones dropped.
    pub tombstones_dropped: usize,
    /// Whether text segments were merged.
    pub text_merged: bool,
}

/// Handle to the indexer thread.
#[derive(Debug)]
pub struct Indexer {
    jobs: Mutex<Option<Sender<Job>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// Set by [`Indexer::stop`]: the thread finishes its round and leaves
    /// the rest of the queue to the next open's replay.
    stopping: Arc<AtomicBool>,
}

struct Progress {
    text_seq: i64,
    vector_seq: i64,
    text_dirty: usize,
    vector_dirty: usize,
    last_commit: Instant,
    last_save: Instant,
    /// Last save of the hubness values alone (the graph unchanged).
    last_hub_save: Instant,
    /// After a failed commit / save: no new attempt before this (a flush
    /// tries anyway), and the pause to use after the next failure.
    text_retry: Option<(Instant, Duration)>,
    vector_retry: Option<(Instant, Duration)>,
    /// A round panicked: the indexes are in doubt, so nothing more is
    /// committed or saved (the pending buffers keep serving every document).
    frozen: bool,
    /// The queue has not yet run dry since the thread started: what it
    /// holds is the backlog the open or take-over replayed (see
    /// [`BACKLOG_SAVE`]).
    catching_up: bool,
}

impl Progress {
    fn new(text_seq: i64, vector_seq: i64) -> Self {
        Progress {
            text_seq,
            vector_seq,
            text_dirty: 0,
            vector_dirty: 0,
            last_commit: Instant::now(),
            last_save: Instant::now(),
            last_hub_save: Instant::now(),
            text_retry: None,
            vector_retry: None,
            frozen: false,
            catching_up: true,
        }
    }
}

impl Indexer {
    /// Start the thread; `text_seq`/`vector_seq` are what the indexes cover now.
    pub fn start(indexes: Arc<Indexes>, text_seq: i64, vector_seq: i64, threads: usize) -> Self {
        let (tx, rx) = channel();
        let stopping = Arc::new(AtomicBool::new(false));
        let stop = stopping.clone();
        let thread = crate::priority::spawn_named("memcore-indexer", move || {
            let progress = Progress::new(text_seq, vector_seq);
            run(&indexes, &rx, progress, threads, &stop);
        })
        .expect("spawn indexer thread");
        Indexer {
            jobs: Mutex::new(Some(tx)),
            thread: Mutex::new(Some(thread)),
            stopping,
        }
    }

    /// Queue a job (dropped silently after `stop`).
    pub fn send(&self, job: Job) {
        if let Some(tx) = self.jobs.lock().as_ref() {
            let _ = tx.send(job);
        }
    }

    /// Block until everything queued so far is committed and saved.
    pub fn flush(&self) -> Result<()> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.send(Job::Flush(tx));
        rx.recv().unwrap_or(Ok(()))
    }

    /// Like [`Indexer::flush`], for at most `timeout`: whether everything
    /// queued so far was committed and saved in time (the work goes on
    /// either way).
    pub fn flush_within(&self, timeout: Duration) -> Result<bool> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.send(Job::Flush(tx));
        match rx.recv_timeout(timeout) {
            Ok(result) => result.map(|()| true),
            // Not in time, or stopped meanwhile (what is left waits for the
            // next open).
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => Ok(false),
        }
    }

    /// Block until every write so far is indexed and the hubness values are
    /// up to date (see [`Job::SettleHubs`]).
    pub fn settle_hubs(&self, catch_up: Option<String>) -> Result<()> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.send(Job::SettleHubs {
            catch_up,
            reply: tx,
        });
        rx.recv().unwrap_or(Ok(()))
    }

    /// Compact on the indexer thread and wait for the report.
    pub fn compact(&self, force: bool) -> Result<CompactReport> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.send(Job::Compact { force, reply: tx });
        rx.recv().unwrap_or(Ok(CompactReport::default()))
    }

    /// Start over before a rebuild: the indexes cover nothing (seq 0) and the
    /// jobs that follow (a replay of the whole op log) rebuild them, with
    /// commits and saves again after a panic had frozen them. Everything
    /// queued before is dropped unapplied: the rebuild redoes it.
    pub fn restart(&self) {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.send(Job::Restart(tx));
        let _ = rx.recv();
    }

    /// Finish the round in hand, commit and save what is applied with its
    /// watermark, and stop the thread. Jobs still queued are dropped: the
    /// indexes are derived, and the next open replays the log from the
    /// watermarks (a bulk ingest of a million vectors the graph has not
    /// caught up with would otherwise hold `close()` for as long as the
    /// graph takes to insert them: 21 minutes, measured).
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::Release);
        drop(self.jobs.lock().take());
        if let Some(handle) = self.thread.lock().take() {
            let _ = handle.join();
        }
    }
}

impl Drop for Indexer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn run(
    indexes: &Indexes,
    rx: &Receiver<Job>,
    mut progress: Progress,
    threads: usize,
    stopping: &AtomicBool,
) {
    let mut last_job = Instant::now();
    loop {
        let mut round = Vec::new();
        // Waiting hubness work, the graph caught up, no write for HUB_IDLE:
        // only look at the queue, then compute a batch.
        let hub_pending = !progress.frozen
            && indexes.vectors().is_some_and(|v| {
                v.hub_work_pending() && v.graph_trusted() && v.pending_len() <= HUB_MAX_PENDING
            });
        let idle = last_job.elapsed();
        let hub_work = hub_pending && idle >= HUB_IDLE;
        let wait = if hub_work {
            Duration::ZERO
        } else if hub_pending {
            HUB_IDLE.saturating_sub(idle).min(COMMIT_INTERVAL)
        } else {
            COMMIT_INTERVAL
        };
        let open = match rx.recv_timeout(wait) {
            Ok(job) => {
                last_job = Instant::now();
                round.push(job);
                round.extend(rx.try_iter().take(ROUND));
                true
            }
            Err(RecvTimeoutError::Timeout) => true,
            Err(RecvTimeoutError::Disconnected) => false,
        };
        // A round short of a full one took everything queued.
        let drained = round.len() <= ROUND;
        let p = &mut progress;
        indexes.check_read_failures();
        if let Err(panic) = crate::panics::catch(|| run_round(indexes, round, p, threads, open)) {
            freeze(
                indexes,
                p,
                &format!("the background indexer panicked: {panic}"),
            );
        }
        if drained && p.catching_up {
            p.catching_up = false;
            if p.vector_dirty >= BACKLOG_SAVE && !p.frozen {
                let _ = save_vectors(indexes, p, Instant::now());
            }
        }
        if !open {
            return;
        }
        if stopping.load(Ordering::Acquire) {
            // The rest of the queue is replayed at the next open.
            let _ = checkpoint(indexes, &mut progress, true);
            return;
        }
        if hub_work && !progress.frozen {
            let _ = hub_guarded(indexes, |v| {
                v.hub_step(&indexes.catalog, HUB_BATCH).map(|_| ())
            });
        }
    }
}

/// Run hubness work on the vector index. It only reads the indexes, so a
/// failure or a panic leaves nothing in doubt: it is shown in the health
/// and the queued work is dropped (values are recomputed at the next open).
fn hub_guarded(indexes: &Indexes, work: impl FnOnce(&VectorIndex) -> Result<()>) -> Result<()> {
    let Some(v) = indexes.vectors() else {
        return Ok(());
    };
    let outcome = match crate::panics::catch(|| work(&v)) {
        Ok(outcome) => outcome,
        Err(panic) => Err(crate::error::Error::Index(format!(
            "computing hubness values panicked: {panic}"
        ))),
    };
    if let Err(e) = &outcome {
        v.drop_hub_work();
        indexes.health.warn(format!(
            "{e} (vector ranking goes on without the hubness penalty for new vectors)"
        ));
    }
    outcome
}

/// Settle the hubness values (see [`Job::SettleHubs`]); a namespace the
/// catalog never saw has nothing to catch up.
fn settle_hubs(indexes: &Indexes, catch_up: Option<&str>, threads: usize) -> Result<()> {
    let catalog = &indexes.catalog;
    let Some(namespace) = catch_up else {
        return hub_guarded(indexes, |v| v.settle_hubs(catalog, threads));
    };
    let Some(sym) = catalog.read().sym(namespace) else {
        return Ok(());
    };
    hub_guarded(indexes, |v| v.catch_up_hubs(catalog, sym, threads))
}

/// One round: apply the jobs, answer flushes and compactions, checkpoint.
fn run_round(indexes: &Indexes, round: Vec<Job>, p: &mut Progress, threads: usize, open: bool) {
    let mut flushes = Vec::new();
    let mut batch = Vec::new();
    for job in round {
        match job {
            Job::Flush(reply) => {
                apply(indexes, &mut batch, p, threads);
                let result = checkpoint(indexes, p, true);
                flushes.push((reply, result));
            }
            Job::SettleHubs { catch_up, reply } => {
                apply(indexes, &mut batch, p, threads);
                let result = if p.frozen {
                    Ok(())
                } else {
                    settle_hubs(indexes, catch_up.as_deref(), threads)
                };
                let _ = reply.send(result);
            }
            Job::Compact { force, reply } => {
                apply(indexes, &mut batch, p, threads);
                let _ = reply.send(compact(indexes, p, force));
            }
            Job::Restart(reply) => {
                batch.clear();
                *p = Progress::new(0, 0);
                let _ = reply.send(());
            }
            other => batch.push(other),
        }
    }
    apply(indexes, &mut batch, p, threads);
    for (reply, result) in flushes {
        let _ = reply.send(result);
    }
    let _ = checkpoint(indexes, p, !open);
}

/// Stop committing and saving after a panic, and ask for a rebuild.
fn freeze(indexes: &Indexes, p: &mut Progress, reason: &str) {
    p.frozen = true;
    indexes.text.discard_writer();
    if let Some(v) = indexes.vectors() {
        v.distrust_graph();
    }
    indexes.mark_for_rebuild(reason);
}

/// Apply a batch of jobs to both indexes. A failure is recorded in the
/// health and leaves the documents pending; the text index's journal resends
/// them with the next commit (see `crate::text`).
fn apply(indexes: &Indexes, batch: &mut Vec<Job>, p: &mut Progress, threads: usize) {
    if batch.is_empty() {
        return;
    }
    let vectors = indexes.vectors();
    let mut added: Vec<(u64, SharedVector)> = Vec::new();
    let mut retired: Vec<u64> = Vec::new();
    let mut first_error: Result<()> = Ok(());
    for job in batch.drain(..) {
        let outcome = match job {
            Job::Add {
                seq,
                key,
                terms,
                vector,
                to_text,
                to_vectors,
            } => {
                if to_vectors {
                    if let Some(v) = vector {
                        added.push((key, v));
                    }
                    p.vector_seq = p.vector_seq.max(seq);
                    p.vector_dirty += 1;
                }
                if to_text {
                    p.text_seq = p.text_seq.max(seq);
                    p.text_dirty += 1;
                    indexes.text.add(key, &terms)
                } else {
                    Ok(())
                }
            }
            Job::Retire {
                seq,
                key,
                to_text,
                to_vectors,
            } => {
                if to_vectors {
                    retired.push(key);
                    p.vector_seq = p.vector_seq.max(seq);
                    p.vector_dirty += 1;
                }
                if to_text {
                    p.text_seq = p.text_seq.max(seq);
                    p.text_dirty += 1;
                    indexes.text.delete(key)
                } else {
                    Ok(())
                }
            }
            Job::Flush(_) | Job::SettleHubs { .. } | Job::Compact { .. } | Job::Restart(_) => {
                Ok(())
            }
            #[cfg(test)]
            Job::Panic => panic!("injected indexer panic"),
        };
        if first_error.is_ok() {
            first_error = outcome;
        }
    }
    if let Err(e) = first_error {
        indexes.health.set_text_error(Some(e.to_string()));
    }
    if let Some(v) = vectors {
        v.queue_hubs(&indexes.catalog, &added);
        match crate::panics::catch(|| v.apply(&added, &retired, threads)) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => indexes.health.set_vector_error(Some(e.to_string())),
            Err(panic) => {
                // The graph may be half-updated: serve vectors exactly from
                // now on and rebuild the graph at the next open.
                v.distrust_graph();
                indexes.mark_for_rebuild(&format!("adding to the vector graph panicked: {panic}"));
            }
        }
    }
}

/// Commit text / save vectors when due (or always, when `force`).
///
/// A failure keeps the dirty counts (so the work is retried, after a pause
/// that doubles up to [`MAX_RETRY`]) and stays in the health until an
/// attempt succeeds; the watermarks move only with a successful write.
fn checkpoint(indexes: &Indexes, p: &mut Progress, force: bool) -> Result<()> {
    if p.frozen {
        return Ok(());
    }
    let now = Instant::now();
    let mut outcome = Ok(());
    let due = |dirty: usize, batch: usize, last: Instant, interval: Duration, retry| {
        let waiting = matches!(retry, Some((at, _)) if at > now);
        dirty > 0 && (force || (!waiting && (dirty >= batch || now - last >= interval)))
    };
    if due(
        p.text_dirty,
        COMMIT_BATCH,
        p.last_commit,
        COMMIT_INTERVAL,
        p.text_retry,
    ) {
        match indexes.text.commit(p.text_seq) {
            Ok(()) => {
                p.text_dirty = 0;
                p.last_commit = now;
                p.text_retry = None;
                indexes.health.set_text_error(None);
            }
            Err(e) => {
                p.text_retry = Some(next_retry(p.text_retry, now));
                indexes.health.set_text_error(Some(format!(
                    "{e} (the documents stay searchable from memory; retrying)"
                )));
                outcome = Err(e);
            }
        }
    }
    if due(
        p.vector_dirty,
        SAVE_BATCH,
        p.last_save,
        SAVE_INTERVAL,
        p.vector_retry,
    ) && let Err(e) = save_vectors(indexes, p, now)
        && outcome.is_ok()
    {
        outcome = Err(e);
    }
    // Hubness values computed while the graph did not change are saved
    // beside the graph already on disk (a no-op when none changed).
    if force || now - p.last_hub_save >= SAVE_INTERVAL {
        if let Some(v) = indexes.vectors() {
            v.save_hubs();
        }
        p.last_hub_save = now;
    }
    outcome
}

/// Save the vector graph with its watermark; a failure keeps the dirty
/// count, pauses the next attempt and shows in the health (see
/// [`checkpoint`]).
fn save_vectors(indexes: &Indexes, p: &mut Progress, now: Instant) -> Result<()> {
    let saved = indexes.vectors().map_or(Ok(()), |v| v.save(p.vector_seq));
    match saved {
        Ok(()) => {
            p.vector_dirty = 0;
            p.last_save = now;
            p.vector_retry = None;
            indexes.health.set_vector_error(None);
            Ok(())
        }
        Err(e) => {
            p.vector_retry = Some(next_retry(p.vector_retry, now));
            indexes.health.set_vector_error(Some(format!(
                "{e} (the vector graph keeps working in memory; retrying)"
            )));
            Err(e)
        }
    }
}

/// When to try again after a failure, and the pause after the next one.
fn next_retry(previous: Option<(Instant, Duration)>, now: Instant) -> (Instant, Duration) {
    let pause = previous.map_or(COMMIT_INTERVAL, |(_, pause)| (pause * 2).min(MAX_RETRY));
    (now + pause, pause)
}

/// Rebuild the graph from its live vectors when tombstones pile up (or when
/// forced), merge text segments, and checkpoint both.
fn compact(indexes: &Indexes, p: &mut Progress, force: bool) -> Result<CompactReport> {
    let mut report = CompactReport::default();
    if let Some(index) = indexes.vectors() {
        let hnsw = index.hnsw();
        let tombstones = hnsw.tombstones();
        let crowded = tombstones as f64 > TOMBSTONE_RATIO * hnsw.len().max(1) as f64;
        // A graph in doubt is rebuilt from the store at the next open instead.
        if (force || crowded) && index.graph_trusted() && !p.frozen {
            let live: Vec<u64> = indexes.catalog.read().keys().collect();
            let vectors: Vec<(u64, Vec<f32>)> = live
                .into_iter()
                .filter_map(|k| index.vector(k).map(|v| (k, v)))
                .collect();
            hnsw.rebuild(&vectors)?;
            report.vectors_rebuilt = true;
            report.tombstones_dropped = tombstones;
            p.vector_dirty += 1;
        }
    }
    // Commit what is queued before merging: a deletion still queued would
    // land on the merged segment afterwards and stay in BM25's statistics.
    checkpoint(indexes, p, true)?;
    indexes.text.merge_segments()?;
    report.text_merged = true;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::health::REBUILD_MARKER;
    use crate::vector::HnswParams;
    use std::path::Path;

    fn add(indexes: &Indexes, key: u64, text: &str) -> Job {
        Job::Add {
            seq: key as i64,
            key,
            terms: indexes.text.stage(key, "s", text),
            vector: None,
            to_text: true,
            to_vectors: true,
        }
    }

    #[test]
    fn compaction_purges_a_deletion_still_queued() {
        let score = |indexes: &Indexes| {
            let scopes = ["s".to_owned()];
            indexes.text.search("falcon", &scopes, 5, |_| true).unwrap()
        };
        let open = |dir: &Path| {
            let params = HnswParams::default();
            let (ix, t, v) = Indexes::open(dir, "english", Some(4), params, false).unwrap();
            let ix = Arc::new(ix);
            let indexer = Indexer::start(ix.clone(), t, v, 1);
            (ix, indexer)
        };
        let dir = tempfile::tempdir().unwrap();
        let (indexes, indexer) = open(dir.path());
        for key in 1..=3 {
            indexer.send(add(&indexes, key, "falcon launch"));
        }
        indexer.send(add(&indexes, 4, "weather report"));
        indexer.flush().unwrap();
        indexer.send(Job::Retire {
            seq: 5,
            key: 3,
            to_text: true,
            to_vectors: true,
        });
        indexer.compact(true).unwrap();

        let clean_dir = tempfile::tempdir().unwrap();
        let (clean, clean_indexer) = open(clean_dir.path());
        for (key, text) in [
            (1, "falcon launch"),
            (2, "falcon launch"),
            (4, "weather report"),
        ] {
            clean_indexer.send(add(&clean, key, text));
        }
        clean_indexer.flush().unwrap();
        assert_eq!(score(&indexes), score(&clean));
        indexer.stop();
        clean_indexer.stop();
    }

    #[test]
    fn a_panicking_round_keeps_the_thread_serving_and_asks_for_a_rebuild() {
        let dir = tempfile::tempdir().unwrap();
        let params = HnswParams::default();
        let (indexes, t, v) = Indexes::open(dir.path(), "english", Some(4), params, false).unwrap();
        let indexes = Arc::new(indexes);
        let indexer = Indexer::start(indexes.clone(), t, v, 1);
        indexer.send(add(&indexes, 1, "first note"));
        indexer.send(Job::Panic);
        indexer.send(add(&indexes, 2, "second note"));
        indexer.flush().unwrap();
        indexer.flush().unwrap();

        let warnings = indexes.health.warnings();
        assert!(
            warnings.iter().any(|w| w.contains("panicked")),
            "{warnings:?}"
        );
        assert!(dir.path().join("index").join(REBUILD_MARKER).exists());
        assert!(!indexes.vectors().unwrap().graph_trusted());
        // Frozen: nothing is committed after the panic, and the documents
        // stay searchable from the pending buffer.
        assert!(indexes.text.pending_len() >= 1);
        let scopes = ["s".to_owned()];
        let hits = indexes.text.search("second", &scopes, 5, |_| true).unwrap();
        assert_eq!(hits.first().map(|h| h.0), Some(2));
        indexer.stop();
    }

    /// A new indexer handed a backlog of vectors saves the graph once it has
    /// absorbed them, well before the save interval.
    #[test]
    fn a_backlog_of_vectors_is_saved_once_the_queue_runs_dry() {
        let dir = tempfile::tempdir().unwrap();
        let params = HnswParams::default();
        let (indexes, t, v) = Indexes::open(dir.path(), "english", Some(4), params, false).unwrap();
        let indexes = Arc::new(indexes);
        let vectors = indexes.vectors_for(4).unwrap();
        let jobs: Vec<Job> = (1..=(BACKLOG_SAVE as u64 + 100))
            .map(|key| {
                let angle = key as f32 * 0.001;
                let vector: SharedVector = Arc::from(vec![angle.cos(), angle.sin(), 0.5, 0.1]);
                vectors.stage(key, vector.clone());
                Job::Add {
                    seq: key as i64,
                    key,
                    terms: ScopedTerms::default(),
                    vector: Some(vector),
                    to_text: false,
                    to_vectors: true,
                }
            })
            .collect();
        // Queued before the thread starts, as an open's replay is.
        let indexer = Indexer::start(indexes.clone(), t, v, 1);
        for job in jobs {
            indexer.send(job);
        }
        let sidecar = dir
            .path()
            .join("index")
            .join("vectors")
            .join("vectors.json");
        let deadline = Instant::now() + Duration::from_secs(20);
        while !sidecar.exists() {
            assert!(Instant::now() < deadline, "the graph was not saved");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(SAVE_INTERVAL > Duration::from_secs(20));
        indexer.stop();
    }
}
