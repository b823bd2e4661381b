//! Per-record checksums: damage is never served silently.
//!
//! SQLite checks its pages, not what they hold: a few flipped bits inside a
//! memory's text leave a sound page and valid UTF-8, and the memory would be
//! served altered (found by the damage trials, benches/reliability). So every
//! row of `memories`, `turns` and `code_chunks` carries a `checksum`: a CRC-32
//! of the columns a reader relies on, written in the statement that writes
//! them, and verified by every read that builds a record from the row
//! ([`verify`], called from each table's `from_row`), by the open's samples
//! and full scan of a small store, and by `memcore check`. A mismatch is an
//! [`Error::Damaged`] naming the record, never the altered record.
//!
//! What is covered, per table (in its `COLUMNS` order), and `doc_key`
//! (a search hit is mapped back to its record by it):
//! - `memories`: every column of the record but `accessed_at` (a read
//!   touches it; it is a hint, not content). Each UPDATE of a memory writes
//!   the checksum of the whole record it writes ([`super::memories`]).
//! - `turns` and `code_chunks`: every column of the record; their rows are
//!   never updated.
//!
//! Not covered: `embedding` (the indexes are checked against it, and a
//! damaged vector ranks a search wrongly, it alters no record; covering it
//! would make every read of a record read its vector too).
//!
//! The encoding of a value is its SQLite type (a byte) and its bytes
//! (integers and reals as 8 little-endian bytes, text and blobs with their
//! length), so `NULL`, `0`, `''` and `'0'` differ. A checksum column is a
//! part of the file format: changing what it covers needs a migration that
//! recomputes it.

use rusqlite::types::{Type, ValueRef};
use rusqlite::{Connection, OptionalExtension, Row};

use crate::error::{Error, Result};

/// The column each checksummed table keeps its rows' checksums in.
pub const COLUMN: &str = "checksum";

/// The columns one table's checksum covers: the first `count` read, less
/// `skipped` (positions), with the checksum read right after them.
#[derive(Debug, Clone, Copy)]
pub struct Covered {
    pub table: &'static str,
    /// The record columns read, in order; the checksum column follows them.
    pub columns: &'static str,
    pub count: usize,
    pub skipped: &'static [usize],
}

/// A running checksum of a record's values: their encodings gathered in one
/// buffer and hashed once (a CRC of many small pieces cost 0.7 µs a row,
/// read 50 to a listing).
#[derive(Debug, Default)]
pub struct Sum(Vec<u8>);

impl Sum {
    pub fn new() -> Self {
        Sum(Vec::with_capacity(512))
    }

    pub fn value(&mut self, v: ValueRef<'_>) -> &mut Self {
        match v {
            ValueRef::Null => self.0.push(0),
            ValueRef::Integer(i) => {
                self.0.push(1);
                self.0.extend_from_slice(&i.to_le_bytes());
            }
            ValueRef::Real(f) => {
                self.0.push(2);
                self.0.extend_from_slice(&f.to_bits().to_le_bytes());
            }
            ValueRef::Text(t) => self.bytes(3, t),
            ValueRef::Blob(b) => self.bytes(4, b),
        }
        self
    }

    fn bytes(&mut self, tag: u8, b: &[u8]) {
        self.0.push(tag);
        self.0.extend_from_slice(&(b.len() as u64).to_le_bytes());
        self.0.extend_from_slice(b);
    }

    pub fn text(&mut self, s: &str) -> &mut Self {
        self.value(ValueRef::Text(s.as_bytes()))
    }

    pub fn opt_text(&mut self, s: Option<&str>) -> &mut Self {
        self.value(s.map_or(ValueRef::Null, |s| ValueRef::Text(s.as_bytes())))
    }

    pub fn int(&mut self, i: i64) -> &mut Self {
        self.value(ValueRef::Integer(i))
    }

    pub fn opt_int(&mut self, i: Option<i64>) -> &mut Self {
        self.value(i.map_or(ValueRef::Null, ValueRef::Integer))
    }

    pub fn real(&mut self, f: f64) -> &mut Self {
        self.value(ValueRef::Real(f))
    }

    /// The checksum as stored (an SQLite integer).
    pub fn finish(&self) -> i64 {
        i64::from(crc32fast::hash(&self.0))
    }
}

/// The checksum of the covered columns of a row read with `covered.columns`.
pub fn of_row(r: &Row<'_>, covered: &Covered) -> rusqlite::Result<i64> {
    let mut sum = Sum::new();
    for i in (0..covered.count).filter(|i| !covered.skipped.contains(i)) {
        sum.value(r.get_ref(i)?);
    }
    Ok(sum.finish())
}

/// A record whose stored checksum does not match its values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    pub table: &'static str,
    /// The record's id, as far as it can be read.
    pub id: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the {} record {} does not match its checksum",
            self.table,
            crate::error::shown_key(&self.id)
        )
    }
}

impl std::error::Error for Mismatch {}

/// Check a row read with `covered.columns` (the checksum at position
/// `covered.count`) before it becomes a record. A mismatch is a conversion
/// failure carrying [`Mismatch`], which [`Error`] turns into
/// [`Error::Damaged`].
pub fn verify(r: &Row<'_>, covered: &Covered) -> rusqlite::Result<()> {
    let stored: i64 = r.get(covered.count)?;
    if of_row(r, covered)? == stored {
        return Ok(());
    }
    let id = match r.get_ref(0)? {
        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
        other => format!("{other:?}"),
    };
    Err(rusqlite::Error::FromSqlConversionFailure(
        covered.count,
        Type::Integer,
        Box::new(Mismatch {
            table: covered.table,
            id,
        }),
    ))
}

/// The [`Mismatch`] an error carries, if it is one.
pub fn mismatch_of(e: &rusqlite::Error) -> Option<&Mismatch> {
    match e {
        rusqlite::Error::FromSqlConversionFailure(_, _, inner) => inner.downcast_ref(),
        _ => None,
    }
}

/// The error a mismatch is, for the database at `db_path` (None: unknown).
pub fn damaged(m: &Mismatch, db_path: Option<&std::path::Path>) -> Error {
    let db = db_path.map_or_else(|| super::DB_FILE.to_owned(), |p| p.display().to_string());
    let dir = db_path
        .and_then(|p| p.parent())
        .map_or_else(|| "<data dir>".to_owned(), |d| d.display().to_string());
    Error::Damaged {
        path: db_path.map_or_else(|| super::DB_FILE.into(), std::path::Path::to_path_buf),
        message: format!(
            "The memcore database {db} is damaged: {m} (its stored text or fields were \
             altered on disk), so it is not served. Run `memcore check --data-dir {dir}` to \
             list every damaged record, then restore a backup made by `memcore backup`, or \
             run `memcore repair --accept-empty --data-dir {dir}` to keep the sound records \
             (it sets the damaged file aside)."
        ),
    }
}

/// A conversion of a read's error that knows the database it came from: a
/// checksum mismatch becomes [`Error::Damaged`] naming its file.
pub fn read_error(conn: &Connection) -> impl Fn(rusqlite::Error) -> Error + '_ {
    move |e| match mismatch_of(&e) {
        Some(m) => damaged(m, conn.path().map(std::path::Path::new)),
        None => Error::from(e),
    }
}

/// Every checksummed table, as the current schema reads it.
pub fn tables() -> [Covered; 3] {
    [
        super::memories::COVERED,
        super::conversations::TURNS_COVERED,
        super::code::CHUNKS_COVERED,
    ]
}

/// A record found not to match its checksum by a scan, with its rowid (its
/// id may be what was altered).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub mismatch: Mismatch,
    pub rowid: i64,
}

/// The records of every checksummed table that do not match their
/// checksums, up to `limit` (a full scan: `memcore check`, the open of a
/// small store, `repair --accept-empty`). Rows that cannot be read at all
/// are SQLite's to report.
pub fn mismatches(conn: &Connection, limit: usize) -> Result<Vec<Found>> {
    let mut found = Vec::new();
    for covered in tables() {
        let sql = format!(
            "SELECT {}, {COLUMN}, rowid FROM {}",
            covered.columns, covered.table
        );
        let mut stmt = conn.prepare(&sql)?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            if let Err(e) = verify(r, &covered) {
                let Some(m) = mismatch_of(&e) else {
                    return Err(e.into());
                };
                found.push(Found {
                    mismatch: m.clone(),
                    rowid: r.get(covered.count + 1)?,
                });
                if found.len() >= limit {
                    return Ok(found);
                }
            }
        }
    }
    Ok(found)
}

/// Verify the checksum of the row of `table` under document key `key`, if
/// the table is checksummed and the row exists (the open's samples).
pub fn verify_doc(conn: &Connection, table: &str, key: i64) -> Result<()> {
    let Some(covered) = tables().into_iter().find(|c| c.table == table) else {
        return Ok(());
    };
    conn.prepare_cached(&format!(
        "SELECT {}, {COLUMN} FROM {} WHERE doc_key = ?1",
        covered.columns, covered.table
    ))?
    .query_row([key], |r| verify(r, &covered))
    .optional()
    .map_err(read_error(conn))?;
    Ok(())
}

/// Write the checksum of every row of `covered.table` (a migration: rows
/// written before checksums existed are trusted once, here).
pub fn fill(conn: &Connection, covered: &Covered) -> Result<u64> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {}, rowid FROM {}",
        covered.columns, covered.table
    ))?;
    let mut update = conn.prepare(&format!(
        "UPDATE {} SET {COLUMN} = ?1 WHERE rowid = ?2",
        covered.table
    ))?;
    let mut rows = stmt.query([])?;
    let mut n = 0;
    while let Some(r) = rows.next()? {
        let sum = of_row(r, covered)?;
        let rowid: i64 = r.get(covered.count)?;
        update.execute([sum, rowid])?;
        n += 1;
    }
    Ok(n)
}

/// Write the checksum of the row `id` of `table`, if the table is
/// checksummed (a replica applying a row PostgreSQL sent: the row is
/// trusted as it arrives, and protected from then on).
pub fn refresh(conn: &Connection, table: &str, id: &rusqlite::types::Value) -> Result<()> {
    refresh_where(conn, table, "id", id)
}

/// Move the row of `table` under document key `from` to `to` (a repair
/// making the op log agree with the rows), its checksum kept right only if
/// it was: a damaged row stays damaged.
pub fn rekey(conn: &Connection, table: &str, from: i64, to: i64) -> Result<()> {
    let sound = match tables().into_iter().find(|c| c.table == table) {
        Some(covered) => conn
            .query_row(
                &format!(
                    "SELECT {}, {COLUMN} FROM {table} WHERE doc_key = ?1",
                    covered.columns
                ),
                [from],
                |r| Ok(verify(r, &covered).is_ok()),
            )
            .optional()?
            .unwrap_or(false),
        None => false,
    };
    conn.execute(
        &format!("UPDATE {table} SET doc_key = ?1 WHERE doc_key = ?2"),
        [to, from],
    )?;
    if sound {
        refresh_where(conn, table, "doc_key", &rusqlite::types::Value::Integer(to))?;
    }
    Ok(())
}

fn refresh_where(
    conn: &Connection,
    table: &str,
    column: &str,
    value: &rusqlite::types::Value,
) -> Result<()> {
    let Some(covered) = tables().into_iter().find(|c| c.table == table) else {
        return Ok(());
    };
    let sum = conn
        .prepare_cached(&format!(
            "SELECT {} FROM {} WHERE {column} = ?1",
            covered.columns, covered.table
        ))?
        .query_row([value], |r| of_row(r, &covered));
    let sum = match sum {
        Ok(sum) => sum,
        Err(rusqlite::Error::QueryReturnedNoRows) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    conn.prepare_cached(&format!(
        "UPDATE {} SET {COLUMN} = ?1 WHERE {column} = ?2",
        covered.table
    ))?
    .execute(rusqlite::params![sum, value])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::*;
    use crate::conversation::NewTurn;
    use crate::engine::{Engine, EngineOptions, SearchQuery, repair_store};
    use crate::memory::{MemoryPatch, NewMemory};
    use crate::store::DB_FILE;
    use crate::store::memories::ListQuery;

    fn open(dir: &std::path::Path) -> Engine {
        Engine::open(dir, &EngineOptions::default()).unwrap()
    }

    /// Alter a stored value behind memcore's back (what a flipped bit in a
    /// sound page is to SQLite), leaving the checksum as it was.
    fn alter(dir: &std::path::Path, sql: &str, id: &str) {
        let n = Connection::open(dir.join(DB_FILE))
            .unwrap()
            .execute(sql, [id])
            .unwrap();
        assert_eq!(n, 1);
    }

    fn assert_damaged(e: &Error, id: &str) {
        assert!(matches!(e, Error::Damaged { .. }), "{e:?}");
        assert_eq!(e.code(), "STORAGE_ERROR");
        let message = e.to_string();
        for needle in [id, "memcore check", "memcore backup", "memcore repair"] {
            assert!(message.contains(needle), "{needle} not in {message}");
        }
    }

    #[test]
    fn a_memory_altered_on_disk_is_refused_by_every_read_and_found_by_check() {
        let dir = tempfile::tempdir().unwrap();
        let engine = open(dir.path());
        let kept = engine
            .store_memory(NewMemory::text("the harbour crane lifts containers"))
            .unwrap();
        let hit = engine
            .store_memory(NewMemory::text("the deploy key lives in vault path ops"))
            .unwrap();
        // One letter changed: a sound page, valid UTF-8, the same length.
        alter(
            dir.path(),
            "UPDATE memories SET content = 'the deploy key lives in vault path oqs' \
             WHERE id = ?1",
            &hit.id,
        );
        assert_damaged(&engine.get_memory("default", &hit.id).unwrap_err(), &hit.id);
        assert_damaged(
            &engine.find_memory("default", &hit.id).unwrap_err(),
            &hit.id,
        );
        let listing = ListQuery {
            limit: 10,
            ..ListQuery::default()
        };
        assert_damaged(
            &engine.list_memories("default", &listing).unwrap_err(),
            &hit.id,
        );
        let found = engine
            .search_text(&SearchQuery::memories("default", 5), "deploy key vault")
            .unwrap();
        assert!(!found.is_empty());
        assert_damaged(&engine.memories_for(&found).unwrap_err(), &hit.id);
        // The overview quotes texts: it reads whole records too.
        assert_damaged(
            &engine.overview(Some("default"), 2, 10).unwrap_err(),
            &hit.id,
        );
        // An update reads the record first: damage is not written over.
        let patch = MemoryPatch {
            importance: Some(0.9),
            ..MemoryPatch::default()
        };
        assert_damaged(
            &engine.update_memory("default", &hit.id, patch).unwrap_err(),
            &hit.id,
        );
        // The sound one is served.
        assert_eq!(
            engine.get_memory("default", &kept.id).unwrap().content,
            kept.content
        );
        let report = engine.check().unwrap();
        let [problem] = report.problems.as_slice() else {
            panic!("{report:?}")
        };
        assert_eq!(problem.area, "database");
        assert!(problem.message.contains(&hit.id), "{problem:?}");
        assert!(
            problem.fix.contains("memcore repair --accept-empty"),
            "{problem:?}"
        );
        drop(engine);

        // The open of a small store verifies every record: refused, twice.
        for _ in 0..2 {
            let refused = Engine::open(dir.path(), &EngineOptions::default()).unwrap_err();
            assert!(matches!(refused, Error::Damaged { .. }), "{refused:?}");
            assert!(refused.to_string().contains(&hit.id), "{refused}");
        }
        assert!(repair_store(dir.path(), &EngineOptions::default(), false).is_err());
        // Starting over keeps every sound record and drops the altered one.
        let report = repair_store(dir.path(), &EngineOptions::default(), true).unwrap();
        assert!(report.database_set_aside.unwrap().exists());
        assert_eq!(report.lost_writes, 1);
        let repaired = open(dir.path());
        assert_eq!(repaired.count_memories("default").unwrap(), 1);
        assert_eq!(
            repaired.get_memory("default", &kept.id).unwrap().content,
            kept.content
        );
        assert!(repaired.check().unwrap().is_ok());
    }

    #[test]
    fn a_byte_flipped_in_the_file_is_refused_at_open_naming_the_record() {
        let dir = tempfile::tempdir().unwrap();
        let engine = open(dir.path());
        let mut ids = Vec::new();
        for i in 0..50 {
            let m = engine
                .store_memory(NewMemory::text(format!("fact number {i} marker zq{i}x")))
                .unwrap();
            ids.push(m.id);
        }
        drop(engine);
        let db = dir.path().join(DB_FILE);
        Connection::open(&db)
            .unwrap()
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
        let mut bytes = std::fs::read(&db).unwrap();
        // Every copy of the text (a page split may leave a stale one in a
        // free page), one bit each: 'q' becomes 'p'.
        let needle = b"marker zq17x";
        let found: Vec<usize> = (0..bytes.len() - needle.len())
            .filter(|&i| &bytes[i..i + needle.len()] == needle)
            .collect();
        assert!(!found.is_empty());
        for at in found {
            bytes[at + 8] ^= 0x01;
        }
        std::fs::write(&db, bytes).unwrap();
        let refused = Engine::open(dir.path(), &EngineOptions::default()).unwrap_err();
        assert!(matches!(refused, Error::Damaged { .. }), "{refused:?}");
        let message = refused.to_string();
        assert!(message.contains(&ids[17]), "{message}");
        assert!(message.contains("altered on disk"), "{message}");
    }

    #[test]
    fn repair_drops_a_record_whose_indexed_id_was_altered_and_keeps_the_rest() {
        // The id of one memory altered in its table page only: its entry in
        // the id index no longer matches (SQLite's quick_check cannot see
        // that, and refuses to delete such a row until the index is rebuilt).
        let dir = tempfile::tempdir().unwrap();
        let engine = open(dir.path());
        let ids: Vec<String> = (0..3)
            .map(|i| {
                engine
                    .store_memory(NewMemory::text(format!("fact number {i}")))
                    .unwrap()
                    .id
            })
            .collect();
        drop(engine);
        let db = dir.path().join(DB_FILE);
        let (root, size) = {
            let conn = Connection::open(&db).unwrap();
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                .unwrap();
            let root: i64 = conn
                .query_row(
                    "SELECT rootpage FROM sqlite_master WHERE name = 'memories'",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            let size: i64 = conn
                .query_row("PRAGMA page_size", [], |r| r.get(0))
                .unwrap();
            (root as usize, size as usize)
        };
        let mut bytes = std::fs::read(&db).unwrap();
        let page = &mut bytes[(root - 1) * size..root * size];
        let needle = ids[1].as_bytes();
        let at = (0..page.len() - needle.len())
            .find(|&i| &page[i..i + needle.len()] == needle)
            .unwrap();
        // A character of the time part: the altered id is no other's (ids
        // made together differ in their last characters).
        page[at + needle.len() - 18] ^= 0x01;
        std::fs::write(&db, bytes).unwrap();

        assert!(Engine::open(dir.path(), &EngineOptions::default()).is_err());
        let report = repair_store(dir.path(), &EngineOptions::default(), true).unwrap();
        assert!(report.database_set_aside.as_ref().unwrap().exists());
        assert_eq!(report.lost_writes, 1, "{report:?}");
        let repaired = open(dir.path());
        assert!(repaired.check().unwrap().is_ok());
        assert_eq!(repaired.count_memories("default").unwrap(), 2);
        for i in [0, 2] {
            assert_eq!(
                repaired.get_memory("default", &ids[i]).unwrap().content,
                format!("fact number {i}")
            );
        }
        assert!(repaired.get_memory("default", &ids[1]).is_err());
    }

    #[test]
    fn repair_rebuilds_a_kept_record_whose_write_names_another() {
        // One memory altered (dropped by the repair), and the log's row of
        // another's write damaged too: its record id no longer the memory's.
        // Replaying the log would skip that memory; the repair writes it again.
        let dir = tempfile::tempdir().unwrap();
        let engine = open(dir.path());
        let a = engine
            .store_memory(NewMemory::text("alpha walrus"))
            .unwrap();
        let b = engine
            .store_memory(NewMemory::text("bravo narwhal"))
            .unwrap();
        drop(engine);
        alter(
            dir.path(),
            "UPDATE memories SET content = 'alpha walrut' WHERE id = ?1",
            &a.id,
        );
        alter(
            dir.path(),
            "UPDATE oplog SET record_id = 'mem_damaged' \
             WHERE seq = (SELECT doc_key FROM memories WHERE id = ?1)",
            &b.id,
        );
        let report = repair_store(dir.path(), &EngineOptions::default(), true).unwrap();
        assert!(report.database_set_aside.is_some(), "{report:?}");
        let repaired = open(dir.path());
        assert!(repaired.check().unwrap().is_ok());
        let found = repaired
            .search_text(&SearchQuery::memories("default", 5), "bravo narwhal")
            .unwrap();
        let rows = repaired.memories_for(&found).unwrap();
        assert_eq!(rows.len(), 1, "{found:?}");
        assert_eq!(rows[0].0.id, b.id);
    }

    #[test]
    fn every_write_path_keeps_checksums_right() {
        let dir = tempfile::tempdir().unwrap();
        let engine = open(dir.path());
        let a = engine.store_memory(NewMemory::text("first fact")).unwrap();
        let b = engine.store_memory(NewMemory::text("second fact")).unwrap();
        let patch = MemoryPatch {
            content: Some("first fact, revised".into()),
            importance: Some(0.8),
            metadata: Some(r#"{"k": 1}"#.into()),
            ..MemoryPatch::default()
        };
        engine.update_memory("default", &a.id, patch).unwrap();
        engine.get_memory("default", &a.id).unwrap();
        engine
            .invalidate("default", &b.id, Some("stale".into()))
            .unwrap();
        let c = engine.store_memory(NewMemory::text("third fact")).unwrap();
        let d = engine.store_memory(NewMemory::text("fourth fact")).unwrap();
        engine.supersede_memory("default", &c.id, &d.id).unwrap();
        engine
            .record_turn(&NewTurn {
                namespace: "default".into(),
                conversation_id: "c1".into(),
                turn_key: "t1".into(),
                user_text: "how do I deploy?".into(),
                agent_text: Some("with the script".into()),
                ..NewTurn::default()
            })
            .unwrap();
        let conn = engine.store().reader().unwrap();
        assert_eq!(mismatches(&conn, 10).unwrap(), []);
        for covered in tables() {
            let zero: i64 = conn
                .query_row(
                    &format!("SELECT count(*) FROM {} WHERE checksum = 0", covered.table),
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(zero, 0, "{}", covered.table);
        }
        drop(conn);
        assert!(engine.check().unwrap().is_ok());
    }

    #[test]
    fn an_altered_turn_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let engine = open(dir.path());
        let outcome = engine
            .record_turn(&NewTurn {
                namespace: "default".into(),
                conversation_id: "c1".into(),
                turn_key: "t1".into(),
                user_text: "where is the config?".into(),
                ..NewTurn::default()
            })
            .unwrap();
        let _ = outcome;
        let id: String = engine
            .store()
            .reader()
            .unwrap()
            .query_row("SELECT id FROM turns", [], |r| r.get(0))
            .unwrap();
        alter(
            dir.path(),
            "UPDATE turns SET user_text = 'where is the confih?' WHERE id = ?1",
            &id,
        );
        assert_damaged(&engine.get_turn("default", "c1", "t1").unwrap_err(), &id);
        assert_damaged(
            &engine.conversation_turns("default", "c1", 10).unwrap_err(),
            &id,
        );
    }
}
