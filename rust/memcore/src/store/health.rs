//! Is the database file whole? The cheap checks every open runs before SQLite
//! sees the file, and the words that tell an operator how to recover.
//!
//! SQLite opens a zero-byte file as a new, empty database, and reads the
//! missing tail of a truncated file as zeros; either way a damaged store
//! would open "fine" with its records gone. So an open first reads the
//! 100-byte header: a missing or empty file beside derived indexes (which
//! exist only after a store held its schema), a header that is not
//! SQLite's, or a file shorter than the page count its header records, is
//! refused with [`Error::Damaged`].
//!
//! The write-ahead log beside it is read too, frame by frame, as SQLite
//! will read it (see `super::wal`): a damaged frame followed by committed
//! ones would make SQLite drop those commits silently, so that open is
//! refused instead.
//!
//! What is *not* run on every open: `PRAGMA quick_check` reads every page
//! (0.1 s warm, seconds cold, for a 200 MB store of 100k memories with
//! embeddings), which would eat most of the 2 s reopen budget and pull the
//! whole file into the page cache. `memcore check` runs the full
//! `integrity_check`; the open relies on these header checks, on the op
//! log covering what the indexes recorded, and on damage SQLite reports
//! while the open scans every searchable row (see `is_damage`).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use rusqlite::ErrorCode;

use super::wal::{self, WalReport};
use crate::error::Error;

/// SQLite's file header starts with these 16 bytes.
const MAGIC: &[u8; 16] = b"SQLite format 3\0";
/// Length of the database header.
const HEADER_LEN: usize = 100;

/// What the header says about the database file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileState {
    /// No file, or an empty one.
    Empty,
    /// A whole SQLite file as far as the header can tell.
    Whole,
    /// Shorter than its header says: `expected` bytes, `actual` on disk.
    Truncated { expected: u64, actual: u64 },
    /// Not a SQLite database (or its first page is destroyed).
    NotSqlite,
}

/// Inspect the database file at `db_path` without opening it.
///
/// A non-empty write-ahead log beside the file holds pages the file does
/// not have yet (before a checkpoint), so a short file is only called
/// truncated when the log is empty; otherwise SQLite itself judges the
/// pages when they are read.
pub fn inspect(db_path: &Path) -> FileState {
    let Ok(mut file) = File::open(db_path) else {
        return FileState::Empty;
    };
    let actual = file.metadata().map_or(0, |m| m.len());
    let wal_pending = file_len(&wal_path(db_path)) > 0;
    if actual == 0 {
        // Even beside a write-ahead log: SQLite takes a zero-byte file for a
        // new database and deletes the log, so opening it would lose the log too.
        return FileState::Empty;
    }
    let mut header = [0u8; HEADER_LEN];
    if file.read_exact(&mut header).is_err() {
        return if wal_pending {
            FileState::Whole
        } else {
            FileState::Truncated {
                expected: HEADER_LEN as u64,
                actual,
            }
        };
    }
    if &header[..16] != MAGIC {
        return FileState::NotSqlite;
    }
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536,
        n => u64::from(n),
    };
    let pages = u64::from(be_u32(&header, 28));
    // The in-header size is valid only when written by the same change as
    // the change counter (SQLite's own rule; older writers left it stale).
    let size_valid = pages > 0 && be_u32(&header, 24) == be_u32(&header, 92);
    let expected = pages * page_size;
    if size_valid && actual < expected && !wal_pending {
        return FileState::Truncated { expected, actual };
    }
    FileState::Whole
}

fn be_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// The write-ahead log beside a database file.
pub fn wal_path(db_path: &Path) -> PathBuf {
    sibling(db_path, "-wal")
}

/// The shared-memory index beside a database file.
pub fn shm_path(db_path: &Path) -> PathBuf {
    sibling(db_path, "-shm")
}

fn sibling(db_path: &Path, suffix: &str) -> PathBuf {
    let mut name = db_path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Refuse a database file the header shows to be damaged. `held_data`:
/// whether something beside it (the derived indexes) shows the store held
/// records, which makes a missing or empty file a loss, not a new store.
/// A write-ahead log with frames says so too: SQLite writes the first page
/// of a new WAL-mode database before any frame. (The lock file does not: it
/// exists after any writable open, and deleting a store's database and
/// index folder to start over is a fair thing for an operator to do.)
pub fn ensure_whole(db_path: &Path, held_data: bool) -> Result<(), Error> {
    match inspect(db_path) {
        FileState::Whole => ensure_log_whole(db_path),
        FileState::Empty if !held_data && file_len(&wal_path(db_path)) == 0 => Ok(()),
        FileState::Empty => Err(damaged(
            db_path,
            "is missing or empty, but the search indexes or the write-ahead log beside it \
             show the store held data",
        )),
        FileState::Truncated { expected, actual } => Err(damaged(
            db_path,
            &format!("is truncated: its header records {expected} bytes, the file has {actual}"),
        )),
        FileState::NotSqlite => Err(damaged(
            db_path,
            "is not a SQLite database (its header is damaged or it was overwritten)",
        )),
    }
}

/// Refuse a write-ahead log SQLite would cut short: one with committed
/// frames past a damaged one, or one shorter than (or without) the frames
/// the shared-memory index a dead writer left records (see `super::wal`). A
/// writer of another process appending or restarting the log while it is
/// read could make a sound log look damaged for a moment, so damage is
/// confirmed by a second reading before the open is refused.
pub fn ensure_log_whole(db_path: &Path) -> Result<(), Error> {
    let Some(first) = log_damage(db_path) else {
        return Ok(());
    };
    std::thread::sleep(std::time::Duration::from_millis(50));
    match log_damage(db_path) {
        Some(again) if again == first => Err(damaged_log(db_path, &again)),
        _ => Ok(()),
    }
}

/// How a write-ahead log would lose committed writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogDamage {
    /// Committed frames follow a damaged one (or a damaged header).
    Frames(WalReport),
    /// The log is gone or holds fewer frames than its shared-memory index
    /// records, `lost` of them committed and not in the database.
    Short { lost: u64, recorded: u64 },
}

/// What would lose committed writes in the log beside `db_path`, if
/// anything (unreadable files are left to SQLite, which says what is wrong
/// with them).
pub fn log_damage(db_path: &Path) -> Option<LogDamage> {
    let page_size = page_size(db_path)?;
    // The index first: a live writer only ever adds frames after it.
    let index = wal::inspect_index(&shm_path(db_path));
    let report = wal::inspect(&wal_path(db_path), page_size).ok().flatten();
    if let Some(report) = report.as_ref().filter(|r| r.loses_commits()) {
        return Some(LogDamage::Frames(report.clone()));
    }
    let index = index?;
    let lost = wal::frames_lost(&index, report.as_ref());
    (lost > 0).then_some(LogDamage::Short {
        lost,
        recorded: index.frames,
    })
}

/// The database's page size, from its header.
fn page_size(db_path: &Path) -> Option<usize> {
    let mut header = [0u8; HEADER_LEN];
    File::open(db_path).ok()?.read_exact(&mut header).ok()?;
    if &header[..16] != MAGIC {
        return None;
    }
    Some(match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536,
        n => usize::from(n),
    })
}

/// The error for a write-ahead log that would lose committed writes.
fn damaged_log(db_path: &Path, damage: &LogDamage) -> Error {
    let dir = db_path.parent().unwrap_or(Path::new("."));
    let wal = wal_path(db_path);
    let what = match damage {
        LogDamage::Frames(report) if report.header_damaged => format!(
            "its header is damaged, so SQLite would ignore every frame and drop {} committed \
             write(s) without a word",
            report.dropped_commits
        ),
        LogDamage::Frames(report) => format!(
            "frame {} of {} fails SQLite's checksum, so SQLite would end the log at frame {} \
             and drop {} committed write(s) after the damage without a word",
            report.first_bad.map_or(0, |f| f + 1),
            report.frames,
            report.kept,
            report.dropped_commits
        ),
        LogDamage::Short { lost, recorded } => format!(
            "it is missing, shorter than, or damaged within the {recorded} frames its \
             shared-memory index {shm} records (left by a process that stopped without \
             closing the store): {lost} frame(s) of committed writes are in neither the \
             log SQLite would read nor the database",
            shm = shm_path(db_path).display()
        ),
    };
    Error::Damaged {
        path: wal.clone(),
        message: format!(
            "The write-ahead log {wal} of the memcore database {db} is damaged: {what}. It \
             was not opened, so nothing more is lost. To recover, restore a backup made by \
             `memcore backup` (copy it over {db}, delete {wal}, {shm} and {index}), or run \
             `memcore repair --accept-empty --data-dir {dir}` to keep the writes before the \
             damage (the damaged log is kept beside it); then `memcore check --data-dir \
             {dir}` says whether the store is sound.",
            wal = wal.display(),
            shm = shm_path(db_path).display(),
            db = db_path.display(),
            index = dir.join("index").display(),
            dir = dir.display(),
        ),
    }
}

/// The error for a damaged database: what is wrong with which file, and
/// the two ways out (a backup, or starting empty on purpose).
pub fn damaged(db_path: &Path, what: &str) -> Error {
    let dir = db_path.parent().unwrap_or(Path::new("."));
    Error::Damaged {
        path: db_path.to_path_buf(),
        message: format!(
            "The memcore database {db} {what}. It was not opened, so nothing more is \
             lost. To recover, restore a backup made by `memcore backup`: copy it over \
             {db}, delete {wal} and {shm} (what is left of the damaged file's log) and \
             {index} so the search indexes rebuild from it. To start \
             empty on purpose, run `memcore repair --accept-empty --data-dir {dir}` (it \
             keeps the damaged file beside it) or delete {index}; `memcore check --data-dir \
             {dir}` then says whether the store is sound.",
            db = db_path.display(),
            wal = wal_path(db_path).display(),
            shm = shm_path(db_path).display(),
            index = dir.join("index").display(),
            dir = dir.display(),
        ),
    }
}

/// Whether a SQLite error means the file's pages are damaged (rather than
/// a busy lock, a full disk or a bad query): corruption, "not a database",
/// or a NULL read from a NOT NULL column because a page came back zeroed.
pub fn is_damage(error: &rusqlite::Error) -> bool {
    match error {
        rusqlite::Error::SqliteFailure(e, _) => {
            matches!(e.code, ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
        }
        rusqlite::Error::InvalidColumnType(..)
        | rusqlite::Error::FromSqlConversionFailure(..)
        // A flipped bit in a stored text that is no longer UTF-8: the page
        // is sound to SQLite, the record is not (found by the damage trials).
        | rusqlite::Error::Utf8Error(..)
        | rusqlite::Error::IntegralValueOutOfRange(..) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store_file(dir: &Path) -> PathBuf {
        let path = dir.join("x.db");
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE t (v BLOB); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 \
             FROM n WHERE i < 200) INSERT INTO t SELECT randomblob(1000) FROM n;",
        )
        .unwrap();
        path
    }

    #[test]
    fn a_whole_file_passes_and_a_missing_one_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = store_file(dir.path());
        assert_eq!(inspect(&path), FileState::Whole);
        assert_eq!(inspect(&dir.path().join("none.db")), FileState::Empty);
        ensure_whole(&dir.path().join("none.db"), false).unwrap();
    }

    #[test]
    fn empty_beside_indexes_and_truncated_files_are_refused_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let path = store_file(dir.path());
        let len = std::fs::metadata(&path).unwrap().len();
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(len / 2)
            .unwrap();
        assert!(matches!(inspect(&path), FileState::Truncated { .. }));
        let err = ensure_whole(&path, false).unwrap_err();
        assert_eq!(err.code(), "STORAGE_ERROR");
        assert!(err.to_string().contains("memcore backup"), "{err}");
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(0)
            .unwrap();
        ensure_whole(&path, false).unwrap();
        let err = ensure_whole(&path, true).unwrap_err();
        assert!(err.to_string().contains("--accept-empty"), "{err}");
        std::fs::write(wal_path(&path), b"frames").unwrap();
        let err = ensure_whole(&path, false).unwrap_err();
        assert!(err.to_string().contains("write-ahead log"), "{err}");
    }

    #[test]
    fn an_overwritten_header_is_not_sqlite() {
        let dir = tempfile::tempdir().unwrap();
        let path = store_file(dir.path());
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[..16].copy_from_slice(b"garbage garbage!");
        std::fs::write(&path, bytes).unwrap();
        assert_eq!(inspect(&path), FileState::NotSqlite);
    }
}
