//! The background indexer: moves published documents into the HNSW graph and
//! the tantivy index, commits text on an interval, saves the graph now and
//! then, and records in each what op-log seq it covers.
//!
//! One thread owns all index writes, so there is never a concurrent writer;
//! searches run beside it against the committed state plus pending buffers.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, SyncSender, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::indexes::Indexes;
use crate::error::Result;
use crate::text::ScopedTerms;
use crate::vector::SharedVector;

/// How often uncommitted text is committed.
const COMMIT_INTERVAL: Duration = Duration::from_secs(1);
/// How often a changed vector graph is saved (replay covers the rest).
const SAVE_INTERVAL: Duration = Duration::from_secs(30);
/// Commit text early when this many documents wait.
const COMMIT_BATCH: usize = 20_000;
/// Save the graph early when this many changes accumulated.
const SAVE_BATCH: usize = 50_000;
/// Jobs taken from the queue per round.
const ROUND: usize = 2048;

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
    /// Compact the indexes (see [`compact`]), then reply.
    Compact {
        force: bool,
        reply: SyncSender<Result<CompactReport>>,
    },
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
    last_error: Arc<Mutex<Option<String>>>,
}

struct Progress {
    text_seq: i64,
    vector_seq: i64,
    text_dirty: usize,
    vector_dirty: usize,
    last_commit: Instant,
    last_save: Instant,
}

impl Indexer {
    /// Start the thread; `text_seq`/`vector_seq` are what the indexes cover now.
    pub fn start(indexes: Arc<Indexes>, text_seq: i64, vector_seq: i64, threads: usize) -> Self {
        let (tx, rx) = channel();
        let last_error = Arc::new(Mutex::new(None));
        let errors = last_error.clone();
        let thread = crate::priority::spawn_named("memcore-indexer", move || {
            let progress = Progress {
                text_seq,
                vector_seq,
                text_dirty: 0,
                vector_dirty: 0,
                last_commit: Instant::now(),
                last_save: Instant::now(),
            };
            run(&indexes, &rx, progress, threads, &errors);
        })
        .expect("spawn indexer thread");
        Indexer {
            jobs: Mutex::new(Some(tx)),
            thread: Mutex::new(Some(thread)),
            last_error,
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

    /// Compact on the indexer thread and wait for the report.
    pub fn compact(&self, force: bool) -> Result<CompactReport> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.send(Job::Compact { force, reply: tx });
        rx.recv().unwrap_or(Ok(CompactReport::default()))
    }

    /// The last error the thread hit, if any (it keeps going; pending
    /// buffers keep the data searchable meanwhile).
    pub fn last_error(&self) -> Option<String> {
        self.last_error.lock().clone()
    }

    /// Finish all queued work, commit, save and stop the thread.
    pub fn stop(&self) {
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
    errors: &Mutex<Option<String>>,
) {
    let record = |r: Result<()>| {
        if let Err(e) = r {
            *errors.lock() = Some(e.to_string());
        }
    };
    loop {
        let mut round = Vec::new();
        let open = match rx.recv_timeout(COMMIT_INTERVAL) {
            Ok(job) => {
                round.push(job);
                round.extend(rx.try_iter().take(ROUND));
                true
            }
            Err(RecvTimeoutError::Timeout) => true,
            Err(RecvTimeoutError::Disconnected) => false,
        };
        let mut flushes = Vec::new();
        let mut batch = Vec::new();
        for job in round {
            match job {
                Job::Flush(reply) => {
                    record(apply(indexes, &mut batch, &mut progress, threads));
                    let result = checkpoint(indexes, &mut progress, true);
                    flushes.push((reply, result));
                }
                Job::Compact { force, reply } => {
                    record(apply(indexes, &mut batch, &mut progress, threads));
                    let _ = reply.send(compact(indexes, &mut progress, force));
                }
                other => batch.push(other),
            }
        }
        record(apply(indexes, &mut batch, &mut progress, threads));
        for (reply, result) in flushes {
            let _ = reply.send(result);
        }
        if !open {
            record(checkpoint(indexes, &mut progress, true));
            return;
        }
        record(checkpoint(indexes, &mut progress, false));
    }
}

/// Apply a batch of jobs to both indexes.
fn apply(indexes: &Indexes, batch: &mut Vec<Job>, p: &mut Progress, threads: usize) -> Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    let vectors = indexes.vectors();
    let mut added: Vec<(u64, SharedVector)> = Vec::new();
    let mut retired: Vec<u64> = Vec::new();
    let mut first_error = Ok(());
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
            Job::Flush(_) | Job::Compact { .. } => Ok(()),
        };
        if first_error.is_ok() {
            first_error = outcome;
        }
    }
    if let Some(v) = vectors {
        v.apply(&added, &retired, threads)?;
    }
    first_error
}

/// Commit text / save vectors when due (or always, when `force`).
fn checkpoint(indexes: &Indexes, p: &mut Progress, force: bool) -> Result<()> {
    let now = Instant::now();
    if p.text_dirty > 0
        && (force || p.text_dirty >= COMMIT_BATCH || now - p.last_commit >= COMMIT_INTERVAL)
    {
        indexes.text.commit(p.text_seq)?;
        p.text_dirty = 0;
        p.last_commit = now;
    }
    if p.vector_dirty > 0
        && (force || p.vector_dirty >= SAVE_BATCH || now - p.last_save >= SAVE_INTERVAL)
    {
        if let Some(v) = indexes.vectors() {
            v.hnsw().save(p.vector_seq)?;
        }
        p.vector_dirty = 0;
        p.last_save = now;
    }
    Ok(())
}

/// Rebuild the graph from its live vectors when tombstones pile up (or when
/// forced), merge text segments, and checkpoint both.
fn compact(indexes: &Indexes, p: &mut Progress, force: bool) -> Result<CompactReport> {
    let mut report = CompactReport::default();
    if let Some(index) = indexes.vectors() {
        let hnsw = index.hnsw();
        let tombstones = hnsw.tombstones();
        if force || tombstones as f64 > TOMBSTONE_RATIO * hnsw.len().max(1) as f64 {
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
    indexes.text.merge_segments()?;
    report.text_merged = true;
    checkpoint(indexes, p, true)?;
    Ok(report)
}
