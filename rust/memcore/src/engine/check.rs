//! The truth is checked, repaired where it can be, and backed up:
//!
//! - every open refuses a database that lost data (see `store::health` for
//!   the header and write-ahead log checks, `verify` for the op log against
//!   the rows and the indexes; here damage SQLite reports while the open
//!   reads is explained);
//! - [`Engine::check`] runs `PRAGMA integrity_check` and compares each
//!   derived index with the rows (counts, and sampled keys looked up);
//! - [`repair_store`] rebuilds the derived indexes from SQLite, removing a
//!   folder that cannot even be opened, and with `accept_empty` lets an
//!   operator start over from a database that cannot be saved.
//!
//! Backups live in `backup.rs`.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use super::{Engine, EngineOptions, INDEX_DIR};
use crate::error::{Error, Result};
use crate::store::{DB_FILE, DirLock, checksum, health, oplog};
use crate::temporal::now_micros;

/// Keys looked up in each index by a check (all of them in smaller stores).
const SAMPLE: usize = 2_000;
/// Messages of `integrity_check` kept in a report.
const INTEGRITY_ROWS: i64 = 100;
/// Tables of searchable records, each row one document under `doc_key`.
const DOC_TABLES: &[&str] = &[
    "memories",
    "entities",
    "observations",
    "turns",
    "code_chunks",
];

/// Records failing their checksums named in a report (the first ones found).
const MISMATCHES_SHOWN: usize = 20;

/// The problem of records that do not match their checksums.
fn altered_records(dir: &Path, db: &Path, found: &[checksum::Found]) -> CheckProblem {
    let more = if found.len() >= MISMATCHES_SHOWN {
        " (and maybe more)"
    } else {
        ""
    };
    CheckProblem {
        area: "database".into(),
        message: format!(
            "The database {} holds {} record(s){more} altered on disk (they do not match \
             their checksums, so they are refused when read): {}",
            db.display(),
            found.len(),
            found
                .iter()
                .map(|f| f.mismatch.to_string())
                .collect::<Vec<_>>()
                .join("; ")
        ),
        fix: format!(
            "Restore the latest backup made by `memcore backup` (copy it over {db}, delete \
             {wal}, {shm} and {index} so the indexes rebuild), or run `memcore repair \
             --accept-empty --data-dir {dir}`: it drops the altered records (a copy of the \
             damaged file is kept beside it) and keeps the rest.",
            db = db.display(),
            wal = health::wal_path(db).display(),
            shm = health::shm_path(db).display(),
            index = dir.join(INDEX_DIR).display(),
            dir = dir.display(),
        ),
    }
}

/// With `accept_empty`: remove the records that do not match their
/// checksums, after keeping a copy of the damaged file as
/// `memcore.db.damaged-<time>`; returns how many writes that lost. Nothing
/// read from a damaged row is trusted: its table's indexes are rebuilt from
/// the rows first (a damaged indexed value, such as its `doc_key`, no longer
/// matches its index entries, and SQLite refuses to delete such a row), it
/// is deleted by rowid, and the op log is then made to agree with the rows
/// from the log's side (`verify::settle_log`: each write whose record is
/// gone gets a deletion). When any of that fails (a damaged id that is now
/// another record's, so the unique index cannot be rebuilt), nothing is
/// changed and the open that follows judges the database (and sets it
/// aside whole, as before checksums).
fn drop_altered_records(db: &Path, report: &mut RepairReport) -> Result<u64> {
    let mut conn = Connection::open(db)?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    let checksummed: i64 = conn.query_row(
        "SELECT count(*) FROM pragma_table_info('memories') WHERE name = ?1",
        [checksum::COLUMN],
        |r| r.get(0),
    )?;
    if checksummed == 0 {
        // An older schema: the open migrates it.
        return Ok(0);
    }
    let Ok(found) = checksum::mismatches(&conn, usize::MAX) else {
        return Ok(0);
    };
    if found.is_empty() {
        return Ok(0);
    }
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    let copy = sibling(db, &format!(".damaged-{}", now_micros()));
    std::fs::copy(db, &copy).map_err(|e| Error::io(db, e))?;
    let dropped = (|| -> Result<u64> {
        let tx = conn.transaction()?;
        let mut tables: Vec<&str> = found.iter().map(|f| f.mismatch.table).collect();
        tables.sort_unstable();
        tables.dedup();
        for table in tables {
            tx.execute_batch(&format!("REINDEX {table}"))?;
        }
        for f in &found {
            tx.execute(
                &format!("DELETE FROM {} WHERE rowid = ?1", f.mismatch.table),
                [f.rowid],
            )?;
        }
        let lost = super::verify::settle_log(&tx)?;
        tx.commit()?;
        Ok(lost)
    })();
    if let Ok(lost) = dropped {
        report.database_set_aside.get_or_insert(copy);
        Ok(lost)
    } else {
        let _ = std::fs::remove_file(&copy);
        Ok(0)
    }
}

/// With `accept_empty`, before the indexes are rebuilt by replaying the op
/// log: rows whose write in the log names another record are written again
/// (`verify::align_log_records`), so the rebuild does not skip them. Returns
/// how many writes that retired; on any failure nothing is changed (the
/// open that follows judges the database).
fn align_log(db: &Path) -> u64 {
    let aligned = (|| -> Result<u64> {
        let mut conn = Connection::open(db)?;
        let tx = conn.transaction()?;
        if super::verify::align_log_records(&tx)? == 0 {
            return Ok(0);
        }
        let lost = super::verify::settle_log(&tx)?;
        tx.commit()?;
        Ok(lost)
    })();
    aligned.unwrap_or(0)
}

/// How one derived index compares with the rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexCheck {
    /// "catalog", "text" or "vectors".
    pub index: &'static str,
    /// Documents the rows say it should hold.
    pub expected: u64,
    /// Documents it holds (committed + pending; informational, since a
    /// read-only engine's committed snapshot may still hold deleted ones).
    pub found: u64,
    /// Keys looked up.
    pub sampled: usize,
    /// Looked-up keys it does not have.
    pub missing: usize,
}

/// One problem a check found, with what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckProblem {
    /// "database", "catalog", "text" or "vectors".
    pub area: String,
    pub message: String,
    pub fix: String,
}

/// What [`Engine::check`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckReport {
    /// The database file checked.
    pub path: PathBuf,
    /// `integrity_check`'s messages (`["ok"]` for a sound database).
    pub integrity: Vec<String>,
    /// The op log's highest seq.
    pub last_seq: i64,
    /// One entry per derived index.
    pub indexes: Vec<IndexCheck>,
    /// Everything wrong; empty when the store is sound.
    pub problems: Vec<CheckProblem>,
}

impl CheckReport {
    /// Whether nothing is wrong.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// What [`repair_store`] did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RepairReport {
    /// The search indexes were rebuilt from the database.
    pub indexes_rebuilt: bool,
    /// Where a damaged database was moved, or copied before the records
    /// altered on disk were dropped from it (only with `accept_empty`).
    pub database_set_aside: Option<PathBuf>,
    /// Where a copy of a damaged write-ahead log was kept before the writes
    /// past its damage were dropped (only with `accept_empty`).
    pub log_set_aside: Option<PathBuf>,
    /// Writes the database had lost (their records or their log entries),
    /// now recorded as lost so the store opens with what remains (only with
    /// `accept_empty`).
    pub lost_writes: u64,
    /// Searchable documents after the rebuild.
    pub documents: usize,
    /// The op log's highest seq.
    pub last_seq: i64,
}

/// Whether the data directory has derived indexes, which exist only after
/// a store held its schema (so a missing database beside them is a loss).
pub fn indexes_exist(dir: &Path) -> bool {
    std::fs::read_dir(dir.join(INDEX_DIR)).is_ok_and(|mut entries| entries.next().is_some())
}

/// Explain damage SQLite reported while opening: the same error and fix
/// as the header checks, instead of e.g. "Invalid column type Null".
pub fn explain_open_error(db_path: &Path, error: Error) -> Error {
    match error {
        Error::Storage(e) if health::is_damage(&e) => {
            health::damaged(db_path, &format!("is damaged ({e})"))
        }
        other => other,
    }
}

impl Engine {
    /// Check the database (`PRAGMA integrity_check`) and each derived index
    /// against the rows: counts, and up to [`SAMPLE`] keys looked up.
    pub fn check(&self) -> Result<CheckReport> {
        let covered = self.covered_seq()?;
        self.flush()?;
        let db = self.store.db_path();
        let mut report = CheckReport {
            path: db.clone(),
            integrity: Vec::new(),
            last_seq: 0,
            indexes: Vec::new(),
            problems: Vec::new(),
        };
        let reader = self.store.reader()?;
        match integrity(&reader) {
            Ok(messages) => report.integrity = messages,
            Err(e) => report.integrity = vec![e.to_string()],
        }
        if report.integrity != ["ok"] {
            report.problems.push(CheckProblem {
                area: "database".into(),
                message: format!(
                    "The database {} is damaged: {}",
                    db.display(),
                    report.integrity.join("; ")
                ),
                fix: format!(
                    "Restore the latest backup made by `memcore backup` (copy it over {}, \
                     delete {} and {} and {} so the indexes rebuild); `sqlite3 {} .recover` \
                     may salvage rows from the damaged file.",
                    db.display(),
                    health::wal_path(&db).display(),
                    health::shm_path(&db).display(),
                    self.dir().join(INDEX_DIR).display(),
                    db.display()
                ),
            });
        }
        match checksum::mismatches(&reader, MISMATCHES_SHOWN) {
            Ok(found) if found.is_empty() => {}
            Ok(found) => report
                .problems
                .push(altered_records(self.dir(), &db, &found)),
            Err(e) => report.problems.push(CheckProblem {
                area: "database".into(),
                message: format!(
                    "The records of {} cannot be read to verify their checksums: {e}",
                    db.display()
                ),
                fix: "Restore the latest backup made by `memcore backup`.".into(),
            }),
        }
        let docs = match documents(&reader, covered) {
            Ok(docs) => docs,
            Err(e) => {
                report.problems.push(CheckProblem {
                    area: "database".into(),
                    message: format!(
                        "The searchable rows of {} cannot be read: {e}",
                        db.display()
                    ),
                    fix: "Restore the latest backup made by `memcore backup`.".into(),
                });
                return Ok(report);
            }
        };
        report.last_seq = oplog::last_seq(&reader).unwrap_or(0);
        drop(reader);
        let all: Vec<u64> = docs.iter().map(|(k, _)| *k).collect();
        let with_vectors: Vec<u64> = docs.iter().filter(|(_, v)| *v).map(|(k, _)| *k).collect();

        let catalog = self.indexes.catalog.read();
        let found = catalog.len() as u64;
        let (sampled, missing) = sample_missing(&all, |k| Ok(catalog.get(k).is_some()))?;
        drop(catalog);
        report.indexes.push(IndexCheck {
            index: "catalog",
            expected: all.len() as u64,
            found,
            sampled,
            missing,
        });

        let text = &self.indexes.text;
        let (sampled, missing) = sample_missing(&all, |k| text.contains(k))?;
        report.indexes.push(IndexCheck {
            index: "text",
            expected: all.len() as u64,
            found: text.committed_len() + text.pending_len() as u64,
            sampled,
            missing,
        });

        let vectors = self.indexes.vectors();
        let (sampled, missing) = match &vectors {
            Some(v) => sample_missing(&with_vectors, |k| Ok(v.vector(k).is_some()))?,
            None => (with_vectors.len(), with_vectors.len()),
        };
        report.indexes.push(IndexCheck {
            index: "vectors",
            expected: with_vectors.len() as u64,
            found: vectors
                .as_ref()
                .map_or(0, |v| (v.hnsw().len() + v.pending_len()) as u64),
            sampled,
            missing,
        });

        for index in &report.indexes {
            if index.missing > 0 {
                report.problems.push(CheckProblem {
                    area: index.index.into(),
                    message: format!(
                        "The {} index lacks {} of {} documents looked up ({} indexed, {} in \
                         the database): searches miss them.",
                        index.index, index.missing, index.sampled, index.found, index.expected
                    ),
                    fix: format!(
                        "Run `memcore repair --data-dir {}` to rebuild the search indexes from \
                         the database (nothing stored is lost).",
                        self.dir().display()
                    ),
                });
            }
        }
        Ok(report)
    }

    /// The last write the search state holds: a read-only engine's follower
    /// may be a poll behind the rows, and a write in flight publishes to the
    /// indexes just after its commit, so a check looks only at documents up
    /// to this seq (and never reports a write that is on its way as missing).
    fn covered_seq(&self) -> Result<i64> {
        if let Some(follower) = &self.follower {
            return Ok(follower.applied());
        }
        // Publications happen under the writer lock: once it is ours, every
        // committed write up to the log's end is in the search state.
        let _writes_paused = self.store.writer()?;
        oplog::last_seq(&*self.store.reader()?)
    }

    /// Rebuild the derived indexes from the database, writes paused
    /// meanwhile (the online form of [`repair_store`]).
    pub fn repair(&self) -> Result<RepairReport> {
        self.rebuild_indexes()?;
        finish(self, RepairReport::default())
    }
}

/// Rebuild the derived indexes of the store in `dir` from its database,
/// under the writer lock (so no writer may be running).
///
/// A store that opens has its indexes rebuilt in place; an index folder
/// that cannot be opened is removed, and rebuilt by the open that follows
/// (it is derived: nothing is lost). A damaged database is refused with
/// the fix, unless `accept_empty`: then a write-ahead log damaged in the
/// middle is cut there (a copy kept as `memcore.db-wal.damaged-<time>`),
/// an unreadable database is moved aside (kept as
/// `memcore.db.damaged-<time>`), the operation log of a readable one that
/// lost writes is made to agree with the rows that remain, and the store
/// starts from what remains. An index folder the database does not explain
/// is rebuilt once the database checks sound.
pub fn repair_store(
    dir: &Path,
    options: &EngineOptions,
    accept_empty: bool,
) -> Result<RepairReport> {
    let db = dir.join(DB_FILE);
    if !db.exists() && !indexes_exist(dir) && !health::wal_path(&db).exists() {
        return Err(Error::NotFound {
            kind: "Store",
            id: db.display().to_string(),
        });
    }
    let mut report = RepairReport::default();
    let options = EngineOptions {
        read_only: false,
        ..options.clone()
    };
    match Engine::open(dir, &options) {
        Ok(engine) => {
            engine.rebuild_indexes()?;
            return finish(&engine, report);
        }
        // An index the database does not explain: the database is checked
        // below, and if it is sound the indexes are rebuilt from it.
        Err(Error::Damaged { path, .. }) if path == dir.join(INDEX_DIR) => {}
        Err(e @ Error::Damaged { .. }) if !accept_empty => return Err(e),
        Err(e @ Error::ResourceBusy { .. }) => return Err(e),
        Err(_) => {}
    }
    {
        // Nobody opens the store while its files move.
        let _lock = DirLock::acquire(dir)?;
        if accept_empty && health::log_damage(&db).is_some() {
            report.log_set_aside = cut_log_at_damage(&db)?;
        }
        if !database_readable(&db) {
            if !accept_empty {
                return Err(health::damaged(
                    &db,
                    "is damaged (it fails SQLite's quick_check)",
                ));
            }
            let wal = health::wal_path(&db);
            if db.exists() {
                report.database_set_aside = Some(set_aside(&db)?);
            } else if wal.exists() {
                // A log without its database (deleted after a crash): left
                // in place, it would keep the new empty store refused, since
                // frames beside a missing file show the store held data.
                let aside = sibling(&wal, &format!(".damaged-{}", now_micros()));
                std::fs::rename(&wal, &aside).map_err(|e| Error::io(&wal, e))?;
                report.log_set_aside = Some(aside);
            }
            let _ = std::fs::remove_file(health::shm_path(&db));
        } else if let Err(disagreement) = log_agrees(&db) {
            if !accept_empty {
                return Err(disagreement);
            }
            let mut conn = Connection::open(&db)?;
            let tx = conn.transaction()?;
            report.lost_writes = super::verify::settle_log(&tx)?;
            tx.commit()?;
        }
        if accept_empty && db.exists() {
            // Records altered on disk in sound pages (their checksums):
            // dropped, the rest kept.
            report.lost_writes += drop_altered_records(&db, &mut report)?;
            report.lost_writes += align_log(&db);
        }
        let index = dir.join(INDEX_DIR);
        if index.exists() {
            std::fs::remove_dir_all(&index).map_err(|e| Error::io(&index, e))?;
        }
    }
    let engine = match Engine::open(dir, &options) {
        // Damage SQLite's checks cannot see (a record's text that is no
        // longer UTF-8) still refuses the open: starting empty, the damaged
        // file kept, is what `accept_empty` asked for.
        Err(Error::Damaged { path, .. }) if accept_empty && path == db => {
            let lock = DirLock::acquire(dir)?;
            report.database_set_aside = Some(set_aside(&db)?);
            let _ = std::fs::remove_file(health::shm_path(&db));
            let index = dir.join(INDEX_DIR);
            if index.exists() {
                std::fs::remove_dir_all(&index).map_err(|e| Error::io(&index, e))?;
            }
            drop(lock);
            Engine::open(dir, &options)?
        }
        other => other?,
    };
    finish(&engine, report)
}

/// Move a damaged database aside as `memcore.db.damaged-<time>`, its log
/// along under the matching name (the pair may still be salvaged with
/// `sqlite3 FILE .recover`); returns where it went.
fn set_aside(db: &Path) -> Result<PathBuf> {
    let aside = sibling(db, &format!(".damaged-{}", now_micros()));
    std::fs::rename(db, &aside).map_err(|e| Error::io(db, e))?;
    let wal = health::wal_path(db);
    if wal.exists() {
        let wal_aside = health::wal_path(&aside);
        std::fs::rename(&wal, &wal_aside).map_err(|e| Error::io(&wal, e))?;
    }
    Ok(aside)
}

fn finish(engine: &Engine, mut report: RepairReport) -> Result<RepairReport> {
    engine.flush()?;
    report.indexes_rebuilt = true;
    report.documents = engine.index_status().documents;
    report.last_seq = oplog::last_seq(&*engine.store.reader()?)?;
    Ok(report)
}

/// Keep a copy of the damaged write-ahead log beside it (if there is one),
/// then let SQLite recover what comes before the damage and fold it into
/// the database (the log is emptied). Returns where the copy is.
fn cut_log_at_damage(db: &Path) -> Result<Option<PathBuf>> {
    let wal = health::wal_path(db);
    let aside = wal
        .exists()
        .then(|| sibling(&wal, &format!(".damaged-{}", now_micros())));
    if let Some(aside) = &aside {
        std::fs::copy(&wal, aside).map_err(|e| Error::io(&wal, e))?;
    }
    // SQLite rebuilds its shared-memory index from the log (no process has
    // it open): the frames it recorded and the log lost are given up.
    let _ = std::fs::remove_file(health::shm_path(db));
    let conn = Connection::open(db)?;
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    Ok(aside)
}

/// Whether the database's rows agree with its operation log (see `verify`).
/// A database without memcore's tables agrees: its schema was written only
/// to a log that is gone (a store that never checkpointed), nothing remains,
/// and the open that follows creates the schema in it.
fn log_agrees(db: &Path) -> Result<()> {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let tables: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'oplog'",
        [],
        |r| r.get(0),
    )?;
    if tables == 0 {
        return Ok(());
    }
    super::verify::log_agrees(&conn, db)
}

/// Whether the database file is whole and SQLite finds it sound.
fn database_readable(db: &Path) -> bool {
    if health::inspect(db) != health::FileState::Whole {
        return false;
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY;
    Connection::open_with_flags(db, flags)
        .and_then(|c| c.query_row("PRAGMA quick_check", [], |r| r.get::<_, String>(0)))
        .is_ok_and(|result| result == "ok")
}

fn integrity(conn: &Connection) -> Result<Vec<String>> {
    let mut stmt = conn.prepare(&format!("PRAGMA integrity_check({INTEGRITY_ROWS})"))?;
    let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// Every searchable document written up to `covered`: its key and whether
/// it has a vector.
fn documents(conn: &Connection, covered: i64) -> Result<Vec<(u64, bool)>> {
    let mut docs = Vec::new();
    for table in DOC_TABLES {
        let mut stmt = conn.prepare(&format!(
            "SELECT doc_key, embedding IS NOT NULL FROM {table} WHERE doc_key <= ?1"
        ))?;
        let rows = stmt.query_map([covered], |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)))?;
        for row in rows {
            docs.push(row?);
        }
    }
    docs.sort_unstable();
    Ok(docs)
}

/// Look up every key, or [`SAMPLE`] evenly spread ones; returns how many
/// were looked up and how many were absent.
fn sample_missing(keys: &[u64], has: impl Fn(u64) -> Result<bool>) -> Result<(usize, usize)> {
    let step = keys.len().div_ceil(SAMPLE).max(1);
    let mut sampled = 0;
    let mut missing = 0;
    for &key in keys.iter().step_by(step) {
        sampled += 1;
        if !has(key)? {
            missing += 1;
        }
    }
    Ok((sampled, missing))
}

pub(super) fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::NewMemory;

    fn open(dir: &Path) -> Engine {
        Engine::open(dir, &EngineOptions::default()).unwrap()
    }

    fn fill(engine: &Engine, from: usize, to: usize) {
        for i in from..to {
            let text = format!("fact number {i}");
            engine.store_memory(NewMemory::text(&text)).unwrap();
        }
        engine.flush().unwrap();
    }

    /// The files a process that died with the store open leaves behind (the
    /// database, its log with the last writes, the log's shared-memory
    /// index), copied into `to` while `engine` still has them open. The
    /// index folder stays behind: the copy's indexes rebuild from its
    /// database, so only the log checks can see what the database lacks.
    fn crash_copy(engine: &Engine, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        let db = engine.store.db_path();
        for path in [db.clone(), health::wal_path(&db), health::shm_path(&db)] {
            std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
        }
    }

    #[test]
    fn a_log_deleted_or_cut_short_after_a_crash_is_refused_and_repaired() {
        let dir = tempfile::tempdir().unwrap();
        let engine = open(dir.path());
        fill(&engine, 0, 30);
        let copies = tempfile::tempdir().unwrap();
        let copy = |name: &str| {
            let to = copies.path().join(name);
            crash_copy(&engine, &to);
            to
        };
        let whole = copy("whole");
        let deleted = copy("deleted");
        let cut = copy("cut");
        let alone = copy("alone");
        drop(engine);

        // What a kill -9 leaves opens with every write, without a word.
        let reopened = open(&whole);
        assert_eq!(reopened.count_memories("default").unwrap(), 30);
        drop(reopened);

        // The log deleted, or cut short: SQLite would open the database
        // without the writes the log held (all 30: no checkpoint ran yet).
        let wal = health::wal_path(&deleted.join(DB_FILE));
        std::fs::remove_file(&wal).unwrap();
        let cut_wal = health::wal_path(&cut.join(DB_FILE));
        let len = std::fs::metadata(&cut_wal).unwrap().len();
        std::fs::File::options()
            .write(true)
            .open(&cut_wal)
            .unwrap()
            .set_len(len / 2)
            .unwrap();
        for (store, log) in [(&deleted, &wal), (&cut, &cut_wal)] {
            match Engine::open(store, &EngineOptions::default()) {
                Err(Error::Damaged { path, message }) => {
                    assert_eq!(&path, log);
                    assert!(
                        message.contains("frame(s) of committed writes are in neither"),
                        "{message}"
                    );
                }
                Ok(engine) => panic!(
                    "opened with {} of 30 memories",
                    engine.count_memories("default").unwrap()
                ),
                Err(other) => panic!("{other:?}"),
            }
            // Refused again: the refusal did not wipe its own evidence.
            assert!(Engine::open(store, &EngineOptions::default()).is_err());
            let report = repair_store(store, &EngineOptions::default(), true).unwrap();
            assert_eq!(report.log_set_aside.is_some(), store == &cut, "{report:?}");
            let repaired = open(store);
            assert!(repaired.count_memories("default").unwrap() < 30);
            assert!(repaired.check().unwrap().is_ok());
        }

        // The database deleted with its log left: repair sets the log aside
        // and starts empty (the log alone keeps every open refused).
        std::fs::remove_file(alone.join(DB_FILE)).unwrap();
        assert!(Engine::open(&alone, &EngineOptions::default()).is_err());
        let report = repair_store(&alone, &EngineOptions::default(), true).unwrap();
        assert!(report.log_set_aside.is_some(), "{report:?}");
        assert_eq!(open(&alone).count_memories("default").unwrap(), 0);
    }

    #[test]
    fn a_stored_text_that_is_no_longer_utf8_is_refused_as_damage_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        fill(&open(dir.path()), 0, 5);
        // A flipped bit inside a record's text: SQLite's pages stay sound.
        Connection::open(dir.path().join(DB_FILE))
            .unwrap()
            .execute_batch(
                "UPDATE memories SET content = CAST(X'66ff6f' AS TEXT) WHERE doc_key = \
                 (SELECT min(doc_key) FROM memories)",
            )
            .unwrap();
        match Engine::open(dir.path(), &EngineOptions::default()) {
            Err(Error::Damaged { path, message }) => {
                assert_eq!(path, dir.path().join(DB_FILE));
                assert!(message.contains("memcore backup"), "{message}");
            }
            Ok(_) => panic!("opened"),
            Err(other) => panic!("refused without the fix: {other:?}"),
        }
        // SQLite finds its pages sound, so only starting over gets past it:
        // the record that fails its checksum is dropped (a copy of the
        // damaged file kept), the four sound ones are kept.
        let options = EngineOptions::default();
        assert!(repair_store(dir.path(), &options, false).is_err());
        let report = repair_store(dir.path(), &options, true).unwrap();
        assert!(
            report.database_set_aside.as_ref().unwrap().exists(),
            "{report:?}"
        );
        let repaired = open(dir.path());
        assert_eq!(repaired.count_memories("default").unwrap(), 4);
        assert!(repaired.check().unwrap().is_ok());
    }

    #[test]
    fn a_healthy_store_checks_clean_and_its_backup_opens_with_every_memory() {
        let dir = tempfile::tempdir().unwrap();
        let engine = open(dir.path());
        fill(&engine, 0, 20);
        let report = engine.check().unwrap();
        assert!(report.is_ok(), "{report:?}");
        assert_eq!(report.integrity, ["ok"]);
        assert!(report.indexes.iter().all(|i| i.missing == 0));

        let into = tempfile::tempdir().unwrap();
        let copy = engine.backup(into.path()).unwrap();
        assert_eq!(copy.path, into.path().join(DB_FILE));
        let again = engine.backup(into.path()).unwrap_err();
        assert_eq!(again.code(), "INVALID_PARAMETER");
        drop(engine);
        let restored = open(into.path());
        assert_eq!(restored.count_memories("default").unwrap(), 20);
        assert!(restored.check().unwrap().is_ok());
    }

    #[test]
    fn check_finds_a_document_missing_from_a_live_index() {
        let dir = tempfile::tempdir().unwrap();
        let engine = open(dir.path());
        fill(&engine, 0, 20);
        // A document lost by the text index while the store is open (what
        // the open's sample cannot see).
        engine.indexes.text.delete(7).unwrap();
        engine.indexes.text.commit(20).unwrap();
        let report = engine.check().unwrap();
        let areas: Vec<&str> = report.problems.iter().map(|p| p.area.as_str()).collect();
        assert_eq!(areas, ["text"], "{report:?}");
        assert!(report.problems[0].fix.contains("memcore repair"));
        engine.repair().unwrap();
        assert!(engine.check().unwrap().is_ok());
    }

    #[test]
    fn a_database_behind_its_indexes_is_refused_until_they_are_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        let old = tempfile::tempdir().unwrap();
        let engine = open(dir.path());
        fill(&engine, 0, 5);
        engine.backup(old.path()).unwrap();
        fill(&engine, 5, 10);
        drop(engine);
        std::fs::copy(old.path().join(DB_FILE), dir.path().join(DB_FILE)).unwrap();
        let err = Engine::open(dir.path(), &EngineOptions::default()).unwrap_err();
        assert!(matches!(err, Error::Damaged { .. }), "{err:?}");
        assert!(err.to_string().contains("lost writes"), "{err}");

        let refused = repair_store(dir.path(), &EngineOptions::default(), false).unwrap_err();
        assert!(matches!(refused, Error::Damaged { .. }), "{refused:?}");
        let report = repair_store(dir.path(), &EngineOptions::default(), true).unwrap();
        assert_eq!(report.documents, 5);
        assert_eq!(
            report.database_set_aside, None,
            "the database itself is sound"
        );
        assert_eq!(open(dir.path()).count_memories("default").unwrap(), 5);
    }
}
