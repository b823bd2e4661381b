//! Opening the derived state: the catalog is rebuilt from the tables, and
//! every op past an index's watermark is replayed from the op log into the
//! pending buffers (searchable at once) and the indexer queue (which catches
//! the indexes up in the background). So an open is quick even when an
//! index folder was deleted, and nothing acknowledged is ever missing.

use std::collections::BTreeSet;
use std::sync::Arc;

use rusqlite::Connection;

use super::documents::{load_catalog, load_graph, load_index_doc};
use super::indexer::Job;
use super::indexes::Indexes;
use crate::error::Result;
use crate::store::Store;
use crate::store::oplog::{self, Action};
use crate::text;

/// Ops read from the log per query while replaying.
const REPLAY_PAGE: usize = 4096;

/// Rebuild the catalog and the in-memory graph from the store.
pub fn rebuild_catalog(store: &Store, indexes: &Indexes) -> Result<()> {
    rebuild_catalog_from(&*store.reader()?, indexes)
}

/// [`rebuild_catalog`] on a given connection (a read-only follower reads
/// the catalog and the ops it replays in one snapshot).
pub fn rebuild_catalog_from(reader: &Connection, indexes: &Indexes) -> Result<()> {
    let memory_keys = {
        let mut catalog = indexes.catalog.write();
        catalog.clear();
        load_catalog(reader, &mut catalog)?
    };
    load_graph(reader, &mut indexes.graph.write(), &memory_keys)
}

/// The search state at open: the catalog rebuilt and every op past the
/// watermarks replayed, both from one snapshot of `reader`. Returns that
/// snapshot's last op, where the engine's follower starts. Beside other
/// writers (a shared store, a read-only open) a write may land between two
/// reads: read apart, the replay reached past the catalog's seq and the
/// follower sent those ops to the indexer a second time, so the text index
/// held two documents for one write and the next open refused it.
pub fn open_state(
    reader: &Connection,
    indexes: &Indexes,
    watermarks: (i64, i64),
    send: Option<&dyn Fn(Job)>,
) -> Result<i64> {
    let snapshot = reader.unchecked_transaction()?;
    let last = oplog::last_seq(&snapshot)?;
    rebuild_catalog_from(&snapshot, indexes)?;
    #[cfg(test)]
    super::shared_open_tests::after_catalog_snapshot();
    let replayed = replay_until(
        &snapshot,
        indexes,
        watermarks,
        i64::MAX,
        &BTreeSet::new(),
        send,
    )?;
    // Nothing new past the watermarks: the replay answers where it started.
    Ok(replayed.max(last))
}

/// Replay ops after the watermarks; `send` receives the indexer jobs (None
/// for a read-only engine, which only fills the pending buffers). Returns
/// the last seq replayed (or where it started, when nothing was new).
pub fn replay(
    store: &Store,
    indexes: &Indexes,
    text_seq: i64,
    vector_seq: i64,
    send: Option<&dyn Fn(Job)>,
) -> Result<i64> {
    replay_from(
        &*store.reader()?,
        indexes,
        text_seq,
        vector_seq,
        &BTreeSet::new(),
        send,
    )
}

/// [`replay`] on a given connection. The ops of `published` are this
/// process's own writes, already in the search state (a store other processes
/// write too, `super::sharing`): they go to the indexer only.
pub fn replay_from(
    reader: &Connection,
    indexes: &Indexes,
    text_seq: i64,
    vector_seq: i64,
    published: &BTreeSet<i64>,
    send: Option<&dyn Fn(Job)>,
) -> Result<i64> {
    replay_until(
        reader,
        indexes,
        (text_seq, vector_seq),
        i64::MAX,
        published,
        send,
    )
}

/// [`replay_from`] of the ops after the watermarks `(text, vectors)` up to
/// `until` only.
pub fn replay_until(
    reader: &Connection,
    indexes: &Indexes,
    (text_seq, vector_seq): (i64, i64),
    until: i64,
    published: &BTreeSet<i64>,
    send: Option<&dyn Fn(Job)>,
) -> Result<i64> {
    let mut after = text_seq.min(vector_seq);
    loop {
        let mut ops = oplog::since(reader, after, REPLAY_PAGE)?;
        ops.retain(|op| op.seq <= until);
        let Some(last) = ops.last() else { break };
        after = last.seq;
        for op in ops {
            let to_text = op.seq > text_seq;
            let to_vectors = op.seq > vector_seq;
            let stage = !published.contains(&op.seq);
            if !stage && send.is_none() {
                continue; // in the search state already, and nothing to index here
            }
            if let Some(prev) = op.prev_key {
                let prev = prev as u64;
                if to_text && stage {
                    indexes.text.unstage(prev);
                }
                if let Some(job) = send {
                    job(Job::Retire {
                        seq: op.seq,
                        key: prev,
                        to_text,
                        to_vectors,
                    });
                }
            }
            if op.action != Action::Upsert {
                continue;
            }
            // Only the record's current version is indexed; an older upsert
            // whose content was replaced later is skipped.
            let Some(doc) = load_index_doc(reader, op.kind, &op.record_id)? else {
                continue;
            };
            if doc.key != op.seq as u64 {
                continue;
            }
            let vector = match (&doc.vector, indexes.vectors()) {
                (Some(v), Some(index)) if v.len() == index.dim() => {
                    let shared: Arc<[f32]> = v.as_slice().into();
                    if to_vectors && stage {
                        index.stage(doc.key, shared.clone());
                    }
                    Some(shared)
                }
                _ => None,
            };
            let scope = text::scope(&op.namespace, op.kind);
            // Terms are analysed only for the text index: a replay for the
            // vectors alone (a graph saved long before the text's last
            // commit) skips the analysis of every document it reads.
            let terms = match (to_text, stage) {
                (true, true) => indexes.text.stage(doc.key, &scope, &doc.text),
                (true, false) => indexes.text.scoped_terms(&scope, &doc.text),
                (false, _) => text::ScopedTerms::default(),
            };
            if let Some(job) = send {
                job(Job::Add {
                    seq: op.seq,
                    key: doc.key,
                    terms,
                    vector,
                    to_text,
                    to_vectors,
                });
            }
        }
    }
    Ok(after)
}
