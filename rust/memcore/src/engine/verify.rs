//! What a crash (or a damaged file) can leave inconsistent, checked at every
//! open, cheaply: reads bounded by the op log's tail and a few index probes,
//! never a scan of the store.
//!
//! - The op log covers what the indexes recorded: an index that saw writes
//!   the log no longer has means the database lost them.
//! - The tail agrees with the rows: every write after the indexes'
//!   watermark that left a current document has its row, every row written
//!   after it has its write, and no write in the tail is missing. (A damaged
//!   write-ahead log that SQLite cut short, with pages of later commits
//!   already checkpointed into the file, leaves exactly this disagreement.)
//! - Each index holds what it claims: no more documents up to its watermark
//!   than the database can explain (more means the database lost rows the
//!   index saw, or the folder is another store's: refused, since the two
//!   cannot be told apart here), and sampled rows up to the watermark are in
//!   it as the database has them (a document's first term, its vector): one
//!   missing or different means the index lost documents or is another
//!   store's, so it is emptied and rebuilt from the database, with a
//!   warning (derived data heals).
//!
//! Whatever does not add up on the database's side is an
//! [`Error::Damaged`] naming `memcore check`, `repair` and `backup`; it is
//! never opened quietly.

use std::collections::HashSet;
use std::path::Path;

use rusqlite::Connection;

use super::INDEX_DIR;
use super::documents::{IndexDoc, load_index_doc};
use super::indexes::Indexes;
use super::upkeep::LOG_COMPACTED_THROUGH;
use crate::error::{Error, Result};
use crate::kind::Kind;
use crate::store::{Store, checksum, health, meta, oplog};
use crate::temporal::now_micros;
use crate::text::{self, TextIndex};
use crate::vector::VectorIndex;

/// Tables of searchable records, each row one document under `doc_key`,
/// with the kind their ops carry.
const DOC_TABLES: &[(&str, Kind)] = &[
    ("memories", Kind::Memory),
    ("entities", Kind::Entity),
    ("observations", Kind::Observation),
    ("turns", Kind::UserTurn),
    ("code_chunks", Kind::CodeChunk),
];
/// Ops read per query from the tail.
const PAGE: usize = 4096;
/// Rows sampled per table at each end of an index's range, and at random
/// points inside it, to see that the index holds them.
const SAMPLE_ENDS: i64 = 4;
const SAMPLE_INSIDE: usize = 8;

/// Verify the store against the indexes just opened at `text_seq` and
/// `vector_seq`; returns the watermarks to replay from (0 for an index that
/// lacked documents and was emptied to be rebuilt). `index_read_only`: this
/// process may not write the index files (a read-only open, or a process
/// of a shared store that does not own them), so it cannot rebuild one.
pub fn at_open(
    store: &Store,
    indexes: &Indexes,
    text_seq: i64,
    vector_seq: i64,
    index_read_only: bool,
) -> Result<(i64, i64)> {
    let reader = store.reader()?;
    // One snapshot for every read below (a writer of another process may
    // commit meanwhile); rolled back when dropped.
    let snapshot = reader.unchecked_transaction()?;
    let vectors = indexes.vectors();
    let covered = if vectors.is_some() {
        text_seq.max(vector_seq)
    } else {
        text_seq
    };
    let last = oplog::last_seq(&snapshot)?;
    if last < covered {
        return Err(health::damaged(
            &store.db_path(),
            &format!(
                "ends at write {last}, but its search indexes cover writes up to {covered}: \
                 it lost writes (truncated, or replaced by an older copy)"
            ),
        ));
    }
    let compacted: i64 = meta::get(&snapshot, LOG_COMPACTED_THROUGH)?
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let lowest = if vectors.is_some() {
        text_seq.min(vector_seq)
    } else {
        text_seq
    };
    let tail = Tail::read(&snapshot, &store.db_path(), lowest.max(compacted), last)?;
    tail.agrees_with_rows(&snapshot, &store.db_path())?;
    let counts = Counts::read(&snapshot)?;

    let dir = store.dir();
    let read_only = index_read_only;
    let mut text_from = text_seq;
    if text_seq >= compacted {
        let held = indexes.text.committed_len();
        let explained = counts.explained(&snapshot, &tail, text_seq)?;
        if held > explained {
            return Err(index_ahead(dir, "text", held, text_seq, explained));
        }
        let missing = sample_missing(&snapshot, text_seq, false, |d| text_holds(&indexes.text, d))?;
        if let Some(key) = missing {
            lacking(dir, "text", key, text_seq, read_only)?;
            indexes.text.clear(0)?;
            indexes.health.warn(rebuilding("text", key, text_seq));
            text_from = 0;
        }
    }
    let mut vector_from = vector_seq;
    if let Some(v) = vectors.filter(|_| vector_seq >= compacted) {
        let held = v.hnsw().len() as u64;
        let explained = counts.explained(&snapshot, &tail, vector_seq)?;
        if held > explained {
            return Err(index_ahead(dir, "vector", held, vector_seq, explained));
        }
        let missing = sample_missing(&snapshot, vector_seq, true, |d| Ok(vector_holds(&v, d)))?;
        if let Some(key) = missing {
            lacking(dir, "vector", key, vector_seq, read_only)?;
            v.clear()?;
            indexes.health.warn(rebuilding("vector", key, vector_seq));
            vector_from = 0;
        }
    }
    Ok((text_from, vector_from))
}

/// Make the operation log agree with the rows that remain, in the caller's
/// (write) transaction: what `repair --accept-empty` keeps of a database
/// that lost part of its writes. A write whose record is gone gets a
/// deletion after it; a record whose write is gone is written again (a new
/// upsert, the record's key moved to it); holes in the log are marked as
/// compacted, as maintenance marks what it removes. Returns how many writes
/// were lost (their records, or their log entries).
pub fn settle_log(conn: &Connection) -> Result<u64> {
    let compacted: i64 = meta::get(conn, LOG_COMPACTED_THROUGH)?
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let last = oplog::last_seq(conn)?;
    let probe = Tail::read_with_holes(conn, compacted, last)?;
    let mut lost: u64 = probe
        .holes
        .iter()
        .map(|(from, to)| (to - from + 1) as u64)
        .sum();
    let after = match probe.holes.last() {
        Some(&(_, to)) => {
            meta::set(conn, LOG_COMPACTED_THROUGH, &to.to_string())?;
            to
        }
        None => compacted,
    };
    let tail = Tail::read_with_holes(conn, after, last)?;
    let (without_row, without_op) = tail.disagreements(conn)?;
    let now = now_micros();
    for seq in &without_row {
        let (kind, record, namespace): (i64, String, String) = conn.query_row(
            "SELECT kind, record_id, namespace FROM oplog WHERE seq = ?1",
            [seq],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        let kind = Kind::from_code(kind).unwrap_or(Kind::Memory);
        oplog::append(
            conn,
            now,
            oplog::Action::Delete,
            kind,
            &record,
            &namespace,
            Some(*seq),
        )?;
    }
    for key in &without_op {
        for (table, kind) in DOC_TABLES {
            let found: Option<(String, String)> = conn
                .query_row(
                    &format!("SELECT id, namespace FROM {table} WHERE doc_key = ?1"),
                    [key],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .ok();
            if let Some((id, namespace)) = found {
                write_again(conn, now, (table, *kind), &id, &namespace, *key)?;
                break;
            }
        }
    }
    lost += (without_row.len() + without_op.len()) as u64;
    Ok(lost)
}

/// Rows whose write in the op log names another record (the log's own row
/// damaged, its record id altered), which an index rebuilt by replaying the
/// log would skip: each is written again (a new upsert naming it, its key
/// moved there), and its old write, now without a record, is retired by
/// [`settle_log`] (run it after). For `repair --accept-empty`, which
/// rebuilds the indexes. Returns how many rows were written again.
pub fn align_log_records(conn: &Connection) -> Result<u64> {
    let now = now_micros();
    let mut moved = 0;
    for (table, kind) in DOC_TABLES {
        let rows: Vec<(String, String, i64)> = conn
            .prepare(&format!(
                "SELECT t.id, t.namespace, t.doc_key FROM {table} t
                 JOIN oplog o ON o.seq = t.doc_key WHERE o.record_id IS NOT t.id"
            ))?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?;
        for (id, namespace, key) in rows {
            write_again(conn, now, (table, *kind), &id, &namespace, key)?;
            moved += 1;
        }
    }
    Ok(moved)
}

/// Log a new upsert of the row at `key` in `table` and move the row (and its
/// checksum) to the new write's seq, so a replay of the log indexes it.
fn write_again(
    conn: &Connection,
    now: i64,
    (table, kind): (&str, Kind),
    id: &str,
    namespace: &str,
    key: i64,
) -> Result<()> {
    let seq = oplog::append(conn, now, oplog::Action::Upsert, kind, id, namespace, None)?;
    checksum::rekey(conn, table, key, seq)
}

/// Whether every row of the database agrees with its whole operation log
/// (what an open checks of the tail), for `repair`.
pub fn log_agrees(conn: &Connection, db: &Path) -> Result<()> {
    let compacted: i64 = meta::get(conn, LOG_COMPACTED_THROUGH)?
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let last = oplog::last_seq(conn)?;
    Tail::read(conn, db, compacted, last)?.agrees_with_rows(conn, db)
}

/// The op log after a seq: what the rows written since must agree with.
struct Tail {
    after: i64,
    /// Upserts whose document is still current (no later op retired it).
    current: HashSet<i64>,
    /// Every key an op of the tail retired, with the op's seq.
    retired: Vec<(i64, i64)>,
    /// Ranges of seqs missing from the tail.
    holes: Vec<(i64, i64)>,
}

impl Tail {
    /// Read the ops after `after` up to `last`; the ones missing from the
    /// middle or the end of that range (none is ever pruned above the
    /// indexes' watermarks and the compaction mark) are damage.
    fn read(conn: &Connection, db: &Path, after: i64, last: i64) -> Result<Tail> {
        let tail = Tail::read_with_holes(conn, after, last)?;
        match tail.holes.first() {
            Some(&(from, to)) if to == last => Err(health::damaged(
                db,
                &format!(
                    "lost its last writes, {from} to {to}, from its operation log (its \
                     counter is at {last}): a damaged write-ahead log or file"
                ),
            )),
            Some(&(from, to)) => Err(health::damaged(
                db,
                &format!(
                    "lost writes {from} to {to} from its operation log (the log goes on \
                     after them): a damaged write-ahead log or file"
                ),
            )),
            None => Ok(tail),
        }
    }

    /// [`Tail::read`], keeping the holes found (first and last seq of each).
    fn read_with_holes(conn: &Connection, after: i64, last: i64) -> Result<Tail> {
        let mut tail = Tail {
            after,
            current: HashSet::new(),
            retired: Vec::new(),
            holes: Vec::new(),
        };
        let mut upserts = Vec::new();
        let mut cursor = after;
        let mut expected: Option<i64> = None;
        loop {
            let ops = oplog::since(conn, cursor, PAGE)?;
            let Some(end) = ops.last().map(|op| op.seq) else {
                break;
            };
            for op in &ops {
                // Ops before the first one present may be gone (a store reset
                // before resets marked the log compacted); a gap after it is not.
                if let Some(next) = expected
                    && op.seq != next
                {
                    tail.holes.push((next, op.seq - 1));
                }
                expected = Some(op.seq + 1);
                if let Some(prev) = op.prev_key {
                    tail.retired.push((prev, op.seq));
                }
                if op.action == oplog::Action::Upsert {
                    upserts.push(op.seq);
                }
            }
            cursor = end;
        }
        match expected {
            Some(next) if next <= last => tail.holes.push((next, last)),
            None if last > after => tail.holes.push((after + 1, last)),
            _ => {}
        }
        let retired: HashSet<i64> = tail.retired.iter().map(|(key, _)| *key).collect();
        tail.current = upserts
            .into_iter()
            .filter(|s| !retired.contains(s))
            .collect();
        Ok(tail)
    }

    /// Every current upsert of the tail has its row, and every row written
    /// in the tail has its upsert.
    fn agrees_with_rows(&self, conn: &Connection, db: &Path) -> Result<()> {
        let (without_row, without_op) = self.disagreements(conn)?;
        let mut what = Vec::new();
        if let Some(first) = without_row.first() {
            what.push(format!(
                "{} write(s) of its log have no record (the first: write {first})",
                without_row.len()
            ));
        }
        if let Some(first) = without_op.first() {
            what.push(format!(
                "{} record(s) carry writes its log does not have (the first: write {first})",
                without_op.len()
            ));
        }
        if what.is_empty() {
            return Ok(());
        }
        Err(health::damaged(
            db,
            &format!(
                "does not agree with its own operation log after write {}: {}. Part of its \
                 writes were lost (a damaged write-ahead log or file)",
                self.after,
                what.join(", and ")
            ),
        ))
    }

    /// The current upserts of the tail without a row, and the rows written
    /// in the tail without an upsert, each sorted.
    fn disagreements(&self, conn: &Connection) -> Result<(Vec<i64>, Vec<i64>)> {
        let mut rows = HashSet::new();
        for (table, _) in DOC_TABLES {
            let mut stmt =
                conn.prepare(&format!("SELECT doc_key FROM {table} WHERE doc_key > ?1"))?;
            let keys = stmt.query_map([self.after], |r| r.get::<_, i64>(0))?;
            for key in keys {
                rows.insert(key?);
            }
        }
        let mut without_row: Vec<i64> = self.current.difference(&rows).copied().collect();
        let mut without_op: Vec<i64> = rows.difference(&self.current).copied().collect();
        without_row.sort_unstable();
        without_op.sort_unstable();
        Ok((without_row, without_op))
    }

    /// Keys at or below `seq` that ops after `seq` retired: documents an
    /// index at `seq` still held.
    fn retired_through(&self, seq: i64) -> u64 {
        self.retired
            .iter()
            .filter(|(key, by)| *key <= seq && *by > seq)
            .count() as u64
    }
}

/// Row counts of the searchable tables.
struct Counts {
    rows: u64,
}

impl Counts {
    fn read(conn: &Connection) -> Result<Counts> {
        let mut rows = 0u64;
        for (table, _) in DOC_TABLES {
            let n: i64 =
                conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))?;
            rows += n as u64;
        }
        Ok(Counts { rows })
    }

    /// The most documents an index at `seq` can hold: the rows written up
    /// to `seq`, and the versions up to `seq` that later writes retired.
    fn explained(&self, conn: &Connection, tail: &Tail, seq: i64) -> Result<u64> {
        let mut newer = 0u64;
        for (table, _) in DOC_TABLES {
            let n: i64 = conn.query_row(
                &format!("SELECT count(*) FROM {table} WHERE doc_key > ?1"),
                [seq],
                |r| r.get(0),
            )?;
            newer += n as u64;
        }
        Ok(self.rows - newer.min(self.rows) + tail.retired_through(seq))
    }
}

/// A current row at or below `seq` that the index does not hold as it is
/// (the text index: the document with the first of its terms; the vector
/// index: its vector), from a sample: the oldest and newest rows of each
/// table up to `seq` and a few in between, each one index seek.
fn sample_missing(
    conn: &Connection,
    seq: i64,
    vectors: bool,
    holds: impl Fn(&Sampled) -> Result<bool>,
) -> Result<Option<u64>> {
    if seq <= 0 {
        return Ok(None);
    }
    let has_vector = if vectors {
        "embedding IS NOT NULL"
    } else {
        "1"
    };
    for (table, kind) in DOC_TABLES {
        let mut keys: Vec<i64> = Vec::new();
        for order in ["ASC", "DESC"] {
            let mut stmt = conn.prepare(&format!(
                "SELECT doc_key FROM {table} WHERE doc_key <= ?1 AND {has_vector}
                 ORDER BY doc_key {order} LIMIT ?2"
            ))?;
            let found = stmt.query_map([seq, SAMPLE_ENDS], |r| r.get::<_, i64>(0))?;
            for key in found {
                keys.push(key?);
            }
        }
        let mut stmt = conn.prepare(&format!(
            "SELECT doc_key FROM {table} WHERE doc_key >= ?1 AND doc_key <= ?2 AND {has_vector}
             ORDER BY doc_key LIMIT 1"
        ))?;
        for i in 1..=SAMPLE_INSIDE as i64 {
            let from = seq * i / (SAMPLE_INSIDE as i64 + 1);
            if let Some(key) = stmt
                .query_map([from, seq], |r| r.get::<_, i64>(0))?
                .next()
                .transpose()?
            {
                keys.push(key);
            }
        }
        keys.sort_unstable();
        keys.dedup();
        let mut record = conn.prepare(&format!(
            "SELECT id, namespace FROM {table} WHERE doc_key = ?1"
        ))?;
        for key in keys {
            // A sampled record altered on disk is refused, whichever index
            // is being checked (its checksum, `store::checksum`).
            checksum::verify_doc(conn, table, key)?;
            let (id, namespace): (String, String) =
                record.query_row([key], |r| Ok((r.get(0)?, r.get(1)?)))?;
            let Some(doc) = load_index_doc(conn, *kind, &id)? else {
                continue;
            };
            let sampled = Sampled {
                key: key as u64,
                scope: text::scope(&namespace, *kind),
                doc,
            };
            if !holds(&sampled)? {
                return Ok(Some(key as u64));
            }
        }
    }
    Ok(None)
}

/// A sampled document as the database has it.
struct Sampled {
    key: u64,
    scope: String,
    doc: IndexDoc,
}

/// Whether the text index holds `sampled` with the first of its terms.
fn text_holds(text: &TextIndex, sampled: &Sampled) -> Result<bool> {
    let terms = text.scoped_terms(&sampled.scope, &sampled.doc.text);
    match terms.first() {
        Some(term) => text.holds_term(sampled.key, term),
        None => text.contains(sampled.key),
    }
}

/// Whether the vector graph holds `sampled` with its own vector (as the
/// graph keeps it, in half precision). A vector of another dimension is
/// never indexed, and one half precision cannot hold is not judged.
fn vector_holds(vectors: &VectorIndex, sampled: &Sampled) -> bool {
    let Some(stored) = &sampled.doc.vector else {
        return true;
    };
    if stored.len() != vectors.dim() {
        return true;
    }
    if !vectors.hnsw().contains(sampled.key) {
        return false;
    }
    let Some(held) = vectors.vector(sampled.key) else {
        return false;
    };
    if !held.iter().all(|x| x.is_finite()) {
        return true;
    }
    let dot: f32 = stored.iter().zip(&held).map(|(a, b)| a * b).sum();
    let norms = stored.iter().map(|a| a * a).sum::<f32>().sqrt()
        * held.iter().map(|b| b * b).sum::<f32>().sqrt();
    if norms == 0.0 {
        return stored.iter().chain(&held).all(|x| *x == 0.0);
    }
    dot / norms > 0.99
}

/// The refusal of an index holding more documents than the database explains.
fn index_ahead(dir: &Path, index: &str, held: u64, seq: i64, explained: u64) -> Error {
    let folder = dir.join(INDEX_DIR);
    Error::Damaged {
        path: folder.clone(),
        message: format!(
            "The {index} index in {folder} holds {held} documents up to write {seq}, but the \
             database {db} explains at most {explained}: the database lost records the index \
             saw, or the index folder belongs to another store. It was not opened, so nothing \
             more is lost. Run `memcore repair --data-dir {dir}`: it checks the database \
             and, if it is sound, rebuilds the indexes from it; if the database lost \
             records it says so, and you restore a backup made by `memcore backup` (copy it \
             over {db} and delete {folder}) or keep what remains with `memcore repair \
             --accept-empty`. `memcore check --data-dir {dir}` then confirms the store is \
             sound.",
            folder = folder.display(),
            db = dir.join(crate::store::DB_FILE).display(),
            dir = dir.display(),
        ),
    }
}

/// An index lacking a document it claims: an engine that may not write the
/// index files cannot rebuild it, so it refuses; their owner goes on to
/// rebuild.
fn lacking(dir: &Path, index: &str, key: u64, seq: i64, read_only: bool) -> Result<()> {
    if !read_only {
        return Ok(());
    }
    let folder = dir.join(INDEX_DIR);
    Err(Error::Damaged {
        path: folder.clone(),
        message: format!(
            "The {index} index in {folder} claims every write up to {seq} but lacks \
             document {key}: this process cannot rebuild it (it opened the store read-only, \
             or another process owns the index files). Open the store for writing once \
             with no other process on it, or run `memcore repair --data-dir {dir}` \
             (nothing stored is lost).",
            folder = folder.display(),
            dir = dir.display(),
        ),
    })
}

fn rebuilding(index: &str, key: u64, seq: i64) -> String {
    format!(
        "The {index} index claimed every write up to {seq} but lacked document {key}; it \
         was emptied and is being rebuilt from the database (searches meanwhile read the \
         documents from memory)."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Engine, EngineOptions, SearchQuery};
    use crate::memory::NewMemory;
    use crate::store::DB_FILE;

    fn open(dir: &Path) -> Result<Engine> {
        Engine::open(dir, &EngineOptions::default())
    }

    fn vector(i: usize) -> Vec<f32> {
        (0..8)
            .map(|d| ((i * 7 + d * 3) % 11) as f32 + 1.0)
            .collect()
    }

    /// A closed store of `n` memories with vectors, every write indexed.
    fn filled(dir: &Path, n: usize) -> Vec<String> {
        let engine = open(dir).unwrap();
        let ids = (0..n)
            .map(|i| {
                let memory = NewMemory {
                    embedding: Some(vector(i)),
                    ..NewMemory::text(format!("fact number {i} marker zq{i}x"))
                };
                engine.store_memory(memory).unwrap().id
            })
            .collect();
        engine.flush().unwrap();
        ids
    }

    /// Change the closed store's database behind memcore's back.
    fn sql(dir: &Path, statements: &str) {
        let conn = Connection::open(dir.join(DB_FILE)).unwrap();
        conn.execute_batch(statements).unwrap();
    }

    fn damaged(result: Result<Engine>) -> (std::path::PathBuf, String) {
        match result {
            Err(Error::Damaged { path, message }) => (path, message),
            other => panic!("expected a refusal as damaged, got {other:?}"),
        }
    }

    #[test]
    fn a_write_of_the_tail_without_its_record_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        filled(dir.path(), 10);
        // The log says a memory was written after what the indexes saw; its
        // row is gone (as when SQLite cut a damaged log short).
        sql(
            dir.path(),
            "INSERT INTO oplog(at, action, kind, record_id, namespace, prev_key)
             VALUES (1, 1, 1, 'mem_gone', 'default', NULL)",
        );
        let (path, message) = damaged(open(dir.path()));
        assert_eq!(path, dir.path().join(DB_FILE));
        assert!(
            message.contains("have no record (the first: write 11)"),
            "{message}"
        );
        for fix in ["memcore backup", "memcore repair", "memcore check"] {
            assert!(message.contains(fix), "{message}");
        }
    }

    #[test]
    fn a_record_written_after_the_log_ends_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        filled(dir.path(), 10);
        sql(
            dir.path(),
            "UPDATE memories SET doc_key = 40 WHERE doc_key = 10",
        );
        // A record as written, its checksum right: the log is what disagrees.
        let conn = Connection::open(dir.path().join(crate::store::DB_FILE)).unwrap();
        for covered in checksum::tables() {
            checksum::fill(&conn, &covered).unwrap();
        }
        drop(conn);
        let (_, message) = damaged(open(dir.path()));
        assert!(
            message.contains("writes its log does not have"),
            "{message}"
        );
        // Its counter past the log's last entry: the last writes are lost.
        sql(
            dir.path(),
            "UPDATE sqlite_sequence SET seq = 40 WHERE name = 'oplog'",
        );
        let (_, message) = damaged(open(dir.path()));
        assert!(
            message.contains("lost its last writes, 11 to 40"),
            "{message}"
        );
    }

    #[test]
    fn a_hole_in_the_tail_of_the_log_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        filled(dir.path(), 10);
        sql(
            dir.path(),
            "INSERT INTO oplog(at, action, kind, record_id, namespace, prev_key) VALUES
               (1, 3, 1, 'mem_a', 'default', NULL), (1, 3, 1, 'mem_b', 'default', NULL),
               (1, 3, 1, 'mem_c', 'default', NULL);
             DELETE FROM oplog WHERE seq = 12;",
        );
        let (_, message) = damaged(open(dir.path()));
        assert!(message.contains("lost writes 12 to 12"), "{message}");
        // The end of the log is checked too.
        sql(dir.path(), "DELETE FROM oplog WHERE seq = 13");
        let (_, message) = damaged(open(dir.path()));
        assert!(
            message.contains("lost its last writes, 12 to 13"),
            "{message}"
        );
    }

    #[test]
    fn records_the_indexes_saw_but_the_database_lost_are_refused_until_repaired() {
        let dir = tempfile::tempdir().unwrap();
        filled(dir.path(), 10);
        // Rows before the indexes' watermark vanish, with their log entries
        // kept: what a page of an older version of the table leaves.
        sql(dir.path(), "DELETE FROM memories WHERE doc_key IN (4, 5)");
        let (path, message) = damaged(open(dir.path()));
        assert_eq!(path, dir.path().join(INDEX_DIR));
        assert!(message.contains("explains at most 8"), "{message}");
        assert!(message.contains("memcore check"), "{message}");
        // Repair sees the database lost records: it refuses until told to
        // keep what remains, then the log agrees with the rows again.
        let refused = crate::engine::repair_store(dir.path(), &EngineOptions::default(), false);
        let (path, message) = damaged(refused.map(|_| unreachable!()));
        assert_eq!(path, dir.path().join(DB_FILE));
        assert!(
            message.contains("2 write(s) of its log have no record"),
            "{message}"
        );
        let report =
            crate::engine::repair_store(dir.path(), &EngineOptions::default(), true).unwrap();
        assert_eq!((report.lost_writes, report.documents), (2, 8));
        assert_eq!(report.database_set_aside, None);
        let engine = open(dir.path()).unwrap();
        assert_eq!(engine.count_memories("default").unwrap(), 8);
        assert!(engine.check().unwrap().is_ok());
    }

    #[test]
    fn an_index_the_database_cannot_explain_is_rebuilt_by_repair_when_the_database_is_sound() {
        let dir = tempfile::tempdir().unwrap();
        let bigger = tempfile::tempdir().unwrap();
        // Writes 1-5 stored, 6-8 deleted three of them, 9-12 stored: 6 records.
        let ids = filled(dir.path(), 5);
        let engine = open(dir.path()).unwrap();
        for id in &ids[..3] {
            engine.delete_memory("default", id).unwrap();
        }
        filled_more(&engine, 4);
        drop(engine);
        // Another store's index of 12 documents at write 12.
        filled(bigger.path(), 12);
        let index = dir.path().join(INDEX_DIR);
        std::fs::remove_dir_all(&index).unwrap();
        copy_dir(&bigger.path().join(INDEX_DIR), &index);
        let (path, message) = damaged(open(dir.path()));
        assert_eq!(path, index);
        assert!(
            message.contains("holds 12 documents up to write 12"),
            "{message}"
        );
        assert!(message.contains("explains at most 6"), "{message}");
        // The database agrees with its log: repair rebuilds the indexes from it.
        let report =
            crate::engine::repair_store(dir.path(), &EngineOptions::default(), false).unwrap();
        assert_eq!((report.documents, report.lost_writes), (6, 0));
        assert!(open(dir.path()).unwrap().check().unwrap().is_ok());
    }

    #[test]
    fn an_index_lacking_documents_it_claims_is_rebuilt_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        filled(dir.path(), 12);
        // Another store's index folder with fewer documents at a lower
        // watermark (a stale copy): this store's first documents are absent.
        let engine = open(other.path()).unwrap();
        for i in 0..5 {
            let memory = NewMemory {
                embedding: Some(vector(100 + i)),
                ..NewMemory::text(format!("another store {i}"))
            };
            let id = engine.store_memory(memory).unwrap().id;
            if i < 2 {
                engine.delete_memory("default", &id).unwrap();
            }
        }
        engine.flush().unwrap();
        drop(engine);
        let index = dir.path().join(INDEX_DIR);
        std::fs::remove_dir_all(&index).unwrap();
        copy_dir(&other.path().join(INDEX_DIR), &index);

        let engine = open(dir.path()).unwrap();
        let warnings = engine.index_status().warnings.join(" ");
        assert!(warnings.contains("text index claimed"), "{warnings}");
        assert!(warnings.contains("vector index claimed"), "{warnings}");
        let query = SearchQuery::memories("default", 1);
        // Memory i was write i + 1.
        let hits = engine.search_text(&query, "zq0x").unwrap();
        assert_eq!(hits.first().map(|h| h.key), Some(1));
        let hits = engine.search_vector(&query, &vector(3)).unwrap();
        assert_eq!(hits.first().map(|h| h.key), Some(4));
        engine.flush().unwrap();
        assert!(engine.check().unwrap().is_ok());
    }

    #[test]
    fn another_stores_index_with_the_same_keys_is_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        filled(dir.path(), 12);
        let engine = open(other.path()).unwrap();
        filled_more(&engine, 12);
        drop(engine);
        let index = dir.path().join(INDEX_DIR);
        std::fs::remove_dir_all(&index).unwrap();
        copy_dir(&other.path().join(INDEX_DIR), &index);
        // Same watermark, same keys, same counts: only the content differs.
        let engine = open(dir.path()).unwrap();
        let warnings = engine.index_status().warnings.join(" ");
        assert!(warnings.contains("text index claimed"), "{warnings}");
        assert!(warnings.contains("vector index claimed"), "{warnings}");
        let query = SearchQuery::memories("default", 1);
        let hits = engine.search_text(&query, "zq7x").unwrap();
        assert_eq!(hits.first().map(|h| h.key), Some(8));
    }

    #[test]
    fn a_sound_store_with_updates_and_deletes_opens_quietly() {
        let dir = tempfile::tempdir().unwrap();
        let ids = filled(dir.path(), 20);
        let engine = open(dir.path()).unwrap();
        for id in &ids[..5] {
            engine.delete_memory("default", id).unwrap();
        }
        engine.reset_all().unwrap();
        filled_more(&engine, 5);
        drop(engine);
        let engine = open(dir.path()).unwrap();
        assert_eq!(engine.index_status().warnings, Vec::<String>::new());
        assert_eq!(engine.count_memories("default").unwrap(), 5);
        drop(engine);
        // A deleted index folder replays the whole log, gaps of the reset included.
        std::fs::remove_dir_all(dir.path().join(INDEX_DIR)).unwrap();
        let engine = open(dir.path()).unwrap();
        assert_eq!(engine.count_memories("default").unwrap(), 5);
    }

    fn filled_more(engine: &Engine, n: usize) {
        for i in 0..n {
            let memory = NewMemory {
                embedding: Some(vector(200 + i)),
                ..NewMemory::text(format!("after the reset {i}"))
            };
            engine.store_memory(memory).unwrap();
        }
    }

    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                copy_dir(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), target).unwrap();
            }
        }
    }
}
