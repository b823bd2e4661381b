//! Reading a write-ahead log as SQLite will, before SQLite opens it.
//!
//! SQLite recovers a WAL by walking its frames from the start and keeping
//! each whose salts match the header's and whose cumulative checksum is
//! right; at the first frame that fails it stops, and the log ends at the
//! last commit frame before it. Whatever lies beyond is dropped without a
//! word. That is right for a torn tail (a write the crash cut short, never
//! acknowledged), but a damaged frame in the middle drops every commit after
//! it: acknowledged writes vanish, and pages of those commits that a
//! checkpoint had already copied into the database file stay there, mixed
//! with the older versions the log still holds.
//!
//! So the open reads the log first, with SQLite's own format (the file
//! format's "WAL file format" section): a 32-byte header (magic, version,
//! page size, checkpoint counter, two salts, a checksum of the first 24
//! bytes), then frames of a 24-byte header (page number, the database size
//! for a commit frame else 0, the salts, a cumulative checksum of the first 8
//! header bytes and the page) and the page. The checksum runs over 32-bit
//! words, big-endian when the magic's low bit is set, else little-endian.
//!
//! Past the first frame SQLite would reject, a frame of the same log (the
//! header's salts) whose checksum is right when chained from the previous
//! frame's stored checksum was written after it, by the same log: if such a
//! frame is a commit, committed writes would be dropped, and the open says
//! so. Frames of an older log left behind a restarted one carry other salts
//! and are ignored, as SQLite ignores them.
//!
//! A log cut short, or deleted, leaves no damaged frame to see. But a process
//! that died with the database open leaves its shared-memory index (`-shm`)
//! behind, whose header records how many frames the log held up to its last
//! commit (`mxFrame`) and how many a checkpoint had already copied into the
//! database (`nBackfill`); SQLite rebuilds that index from the log without
//! reading it, so the frames past what the log still holds are dropped
//! silently too. [`inspect_index`] reads it (native byte order, two copies of
//! a 48-byte header with their own checksum) so the open can compare.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

/// Magic number of a WAL whose checksums read little-endian words; `| 1`:
/// big-endian.
const MAGIC: u32 = 0x377f_0682;
/// The only WAL format version SQLite writes.
const VERSION: u32 = 3_007_000;
const HEADER_LEN: usize = 32;
const FRAME_HEADER_LEN: usize = 24;

/// What the shared-memory index of a log records, when its header is sound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexRecord {
    /// Frames of the log up to its last commit.
    pub frames: u64,
    /// Frames a checkpoint already copied into the database.
    pub backfilled: u64,
    /// The log's salts, as its header holds them.
    pub salts: [u8; 8],
}

/// The wal-index header's version.
const INDEX_VERSION: u32 = 3_007_000;
/// One copy of the wal-index header, and where the checkpoint record starts.
const INDEX_HEADER_LEN: usize = 48;
const CHECKPOINT_INFO_AT: usize = 2 * INDEX_HEADER_LEN;

/// Read the shared-memory index at `shm` (`None`: absent, or a header that
/// is not sound: SQLite then rebuilds it, as it always does after a crash).
pub fn inspect_index(shm: &Path) -> Option<IndexRecord> {
    let mut bytes = [0u8; CHECKPOINT_INFO_AT + 4];
    File::open(shm).ok()?.read_exact(&mut bytes).ok()?;
    let (first, second) = (
        &bytes[..INDEX_HEADER_LEN],
        &bytes[INDEX_HEADER_LEN..CHECKPOINT_INFO_AT],
    );
    let native = |b: &[u8], at: usize| u32::from_ne_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
    let big_endian = cfg!(target_endian = "big");
    let sound = first == second
        && native(first, 0) == INDEX_VERSION
        && first[12] == 1
        && Checksum(0, 0).over(&first[..40], big_endian)
            == Checksum(native(first, 40), native(first, 44));
    if !sound {
        return None;
    }
    let mut salts = [0u8; 8];
    salts.copy_from_slice(&first[32..40]);
    Some(IndexRecord {
        frames: u64::from(native(first, 16)),
        backfilled: u64::from(native(&bytes, CHECKPOINT_INFO_AT)),
        salts,
    })
}

/// Committed frames the shared-memory index records that neither the log
/// (`report`, `None`: no log) nor the database holds any more: the log was
/// deleted, cut short, or replaced since the process that wrote it died.
pub fn frames_lost(index: &IndexRecord, report: Option<&WalReport>) -> u64 {
    let pending = index.frames.saturating_sub(index.backfilled);
    match report {
        Some(log) if log.salts == index.salts => index.frames.saturating_sub(log.kept),
        _ => pending,
    }
}

/// What reading a write-ahead log found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WalReport {
    /// Whole frames in the file.
    pub frames: u64,
    /// Frames SQLite keeps: up to its last commit before any bad frame.
    pub kept: u64,
    /// The first frame SQLite rejects (0-based), when one is followed by
    /// frames of the same log.
    pub first_bad: Option<u64>,
    /// Commit frames of this log past `first_bad` whose checksums are
    /// right: committed writes SQLite would drop.
    pub dropped_commits: u64,
    /// Whether the header itself is damaged (SQLite then ignores every frame).
    pub header_damaged: bool,
    /// The header's salts, as stored.
    pub salts: [u8; 8],
}

impl WalReport {
    /// Whether opening would silently lose committed writes.
    pub fn loses_commits(&self) -> bool {
        self.dropped_commits > 0
    }
}

/// A running checksum over 32-bit words of the chosen byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Checksum(u32, u32);

impl Checksum {
    fn over(mut self, bytes: &[u8], big_endian: bool) -> Checksum {
        for pair in bytes.chunks_exact(8) {
            let word = |b: &[u8]| {
                let b = [b[0], b[1], b[2], b[3]];
                if big_endian {
                    u32::from_be_bytes(b)
                } else {
                    u32::from_le_bytes(b)
                }
            };
            self.0 = self.0.wrapping_add(word(&pair[..4])).wrapping_add(self.1);
            self.1 = self.1.wrapping_add(word(&pair[4..])).wrapping_add(self.0);
        }
        self
    }

    fn stored(bytes: &[u8]) -> Checksum {
        Checksum(be_u32(bytes, 0), be_u32(bytes, 4))
    }
}

fn be_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

/// One frame as read.
struct Frame {
    salts: (u32, u32),
    commit: bool,
    stored: Checksum,
}

/// Read the log at `wal` for a database of `page_size` bytes a page.
/// `Ok(None)`: no log, or one too short to hold a frame.
pub fn inspect(wal: &Path, page_size: usize) -> std::io::Result<Option<WalReport>> {
    let file = match File::open(wal) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let len = file.metadata()?.len();
    let frame_len = (FRAME_HEADER_LEN + page_size) as u64;
    if page_size < 512 || len < HEADER_LEN as u64 + frame_len {
        return Ok(None);
    }
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut header = [0u8; HEADER_LEN];
    reader.read_exact(&mut header)?;
    let magic = be_u32(&header, 0);
    let big_endian = magic & 1 == 1;
    let header_sound = magic & !1 == MAGIC
        && be_u32(&header, 4) == VERSION
        && be_u32(&header, 8) as usize == page_size
        && Checksum(0, 0).over(&header[..24], big_endian) == Checksum::stored(&header[24..]);
    let frames = (len - HEADER_LEN as u64) / frame_len;
    let mut report = WalReport {
        frames,
        header_damaged: !header_sound,
        ..WalReport::default()
    };
    report.salts.copy_from_slice(&header[16..24]);
    // The log's salts: the header's, or with a damaged header the first
    // frame's (a log restarts at frame 0, so frame 0 is always of this log).
    let mut salts = header_sound.then(|| (be_u32(&header, 16), be_u32(&header, 20)));
    let mut chain = Checksum::stored(&header[24..]);
    let mut valid = header_sound;
    // Past the first rejected frame: the stored checksum of the frame before,
    // and for the frame right after the rejected one also the checksum SQLite
    // computed for it (its stored one may be what was damaged).
    let mut previous: Option<Checksum> = None;
    let mut computed_at_break: Option<Checksum> = None;
    let mut buffer = vec![0u8; FRAME_HEADER_LEN + page_size];
    for index in 0..frames {
        reader.read_exact(&mut buffer)?;
        let frame = Frame {
            salts: (be_u32(&buffer, 8), be_u32(&buffer, 12)),
            commit: be_u32(&buffer, 4) != 0,
            stored: Checksum::stored(&buffer[16..24]),
        };
        let ours = frame.salts == *salts.get_or_insert(frame.salts);
        let sum_from = |start: Checksum| {
            start
                .over(&buffer[..8], big_endian)
                .over(&buffer[FRAME_HEADER_LEN..], big_endian)
        };
        if valid {
            let computed = sum_from(chain);
            if ours && computed == frame.stored {
                chain = computed;
                if frame.commit {
                    report.kept = index + 1;
                }
            } else {
                valid = false;
                report.first_bad = Some(index);
                computed_at_break = Some(computed);
            }
        } else {
            report.first_bad.get_or_insert(index);
            let chained = [previous, computed_at_break.take()]
                .into_iter()
                .flatten()
                .any(|start| sum_from(start) == frame.stored);
            if ours && chained && frame.commit {
                report.dropped_commits += 1;
            }
        }
        previous = Some(frame.stored);
    }
    Ok(Some(report))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;
    use std::path::PathBuf;

    const PAGE: usize = 4096;

    /// A database and its WAL holding `commits` commits of one row each, the
    /// log never checkpointed; copied while the writer is open (a closing
    /// connection would fold the log in). Returns the copy's paths.
    fn logged(dir: &Path, commits: usize, restart_after: Option<usize>) -> (PathBuf, PathBuf) {
        let live = dir.join("live.db");
        let conn = Connection::open(&live).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;
             CREATE TABLE t (i INTEGER PRIMARY KEY, v BLOB);",
        )
        .unwrap();
        for i in 0..commits {
            if restart_after == Some(i) {
                conn.execute_batch("PRAGMA wal_checkpoint(RESTART)")
                    .unwrap();
            }
            conn.execute("INSERT INTO t VALUES (?1, randomblob(3000))", [i as i64])
                .unwrap();
        }
        let db = dir.join("copy.db");
        std::fs::copy(&live, &db).unwrap();
        let wal = dir.join("copy.db-wal");
        std::fs::copy(dir.join("live.db-wal"), &wal).unwrap();
        drop(conn);
        (db, wal)
    }

    fn frame_offset(frame: u64) -> u64 {
        HEADER_LEN as u64 + frame * (FRAME_HEADER_LEN + PAGE) as u64
    }

    fn flip(path: &Path, at: u64) {
        let mut bytes = std::fs::read(path).unwrap();
        bytes[at as usize] ^= 0x10;
        std::fs::write(path, bytes).unwrap();
    }

    /// The rows SQLite sees when it opens the copy (it recovers the log).
    /// None: not even the table (its creation was in the log).
    fn rows_seen(db: &Path) -> Option<i64> {
        Connection::open(db)
            .unwrap()
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .ok()
    }

    #[test]
    fn a_sound_log_keeps_every_commit() {
        let dir = tempfile::tempdir().unwrap();
        let (_db, wal) = logged(dir.path(), 30, None);
        let report = inspect(&wal, PAGE).unwrap().unwrap();
        assert!(!report.loses_commits(), "{report:?}");
        assert_eq!(report.kept, report.frames);
        assert_eq!(report.first_bad, None);
    }

    #[test]
    fn a_damaged_frame_in_the_middle_would_drop_the_commits_after_it() {
        let dir = tempfile::tempdir().unwrap();
        let (db, wal) = logged(dir.path(), 30, None);
        let frames = inspect(&wal, PAGE).unwrap().unwrap().frames;
        let middle = frames / 2;
        flip(&wal, frame_offset(middle) + FRAME_HEADER_LEN as u64 + 100);
        let report = inspect(&wal, PAGE).unwrap().unwrap();
        assert_eq!(report.first_bad, Some(middle), "{report:?}");
        assert!(report.loses_commits(), "{report:?}");
        assert!(report.kept <= middle);
        // What SQLite does with it: the commits past the damage are gone.
        assert!(
            rows_seen(&db).unwrap() < 30,
            "SQLite dropped the commits the report names"
        );
    }

    #[test]
    fn a_damaged_stored_checksum_is_seen_too() {
        let dir = tempfile::tempdir().unwrap();
        let (_db, wal) = logged(dir.path(), 30, None);
        let frames = inspect(&wal, PAGE).unwrap().unwrap().frames;
        flip(&wal, frame_offset(frames / 2) + 17);
        let report = inspect(&wal, PAGE).unwrap().unwrap();
        assert!(report.loses_commits(), "{report:?}");
    }

    #[test]
    fn a_damaged_header_would_drop_every_commit() {
        let dir = tempfile::tempdir().unwrap();
        let (db, wal) = logged(dir.path(), 10, None);
        flip(&wal, 18);
        let report = inspect(&wal, PAGE).unwrap().unwrap();
        assert!(
            report.header_damaged && report.loses_commits(),
            "{report:?}"
        );
        assert_eq!(rows_seen(&db), None, "SQLite ignored the whole log");
    }

    #[test]
    fn a_torn_last_frame_loses_nothing_committed() {
        let dir = tempfile::tempdir().unwrap();
        let (_db, wal) = logged(dir.path(), 10, None);
        let frames = inspect(&wal, PAGE).unwrap().unwrap().frames;
        flip(&wal, frame_offset(frames - 1) + FRAME_HEADER_LEN as u64 + 7);
        let report = inspect(&wal, PAGE).unwrap().unwrap();
        assert_eq!(report.first_bad, Some(frames - 1));
        assert!(!report.loses_commits(), "{report:?}");
        // A frame cut short by the end of the file is not a frame at all.
        let len = std::fs::metadata(&wal).unwrap().len();
        File::options()
            .write(true)
            .open(&wal)
            .unwrap()
            .set_len(len - 100)
            .unwrap();
        let report = inspect(&wal, PAGE).unwrap().unwrap();
        assert_eq!(report.frames, frames - 1);
        assert!(!report.loses_commits(), "{report:?}");
    }

    #[test]
    fn frames_of_an_older_log_behind_a_restarted_one_are_not_damage() {
        let dir = tempfile::tempdir().unwrap();
        let (db, wal) = logged(dir.path(), 40, Some(30));
        let report = inspect(&wal, PAGE).unwrap().unwrap();
        assert!(
            report.frames > report.kept,
            "older frames follow: {report:?}"
        );
        assert!(!report.loses_commits(), "{report:?}");
        assert_eq!(rows_seen(&db), Some(40));
    }

    /// The copies of a live database, its log and its shared-memory index.
    fn crashed(dir: &Path, commits: usize) -> (PathBuf, PathBuf, PathBuf) {
        let (db, wal) = logged(dir, commits, None);
        let shm = dir.join("copy.db-shm");
        // `logged` dropped its connection; open one again that keeps the log.
        let live = dir.join("live2.db");
        let conn = Connection::open(&live).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;
             CREATE TABLE t (i INTEGER PRIMARY KEY, v BLOB);",
        )
        .unwrap();
        for i in 0..commits {
            conn.execute("INSERT INTO t VALUES (?1, randomblob(3000))", [i as i64])
                .unwrap();
        }
        for (from, to) in [
            ("live2.db", &db),
            ("live2.db-wal", &wal),
            ("live2.db-shm", &shm),
        ] {
            std::fs::copy(dir.join(from), to).unwrap();
        }
        drop(conn);
        (db, wal, shm)
    }

    #[test]
    fn a_log_deleted_or_cut_short_after_a_crash_is_seen_in_its_shared_index() {
        let dir = tempfile::tempdir().unwrap();
        let (db, wal, shm) = crashed(dir.path(), 20);
        let index = inspect_index(&shm).expect("a sound index");
        assert!(index.frames > index.backfilled, "{index:?}");
        let whole = inspect(&wal, PAGE).unwrap().unwrap();
        assert_eq!(frames_lost(&index, Some(&whole)), 0);
        assert_eq!(crate::store::health::log_damage(&db), None);

        // Cut short at a frame boundary: no damaged frame, commits gone.
        let keep = frame_offset(whole.frames / 2);
        File::options()
            .write(true)
            .open(&wal)
            .unwrap()
            .set_len(keep)
            .unwrap();
        let short = inspect(&wal, PAGE).unwrap().unwrap();
        assert!(!short.loses_commits());
        assert!(frames_lost(&index, Some(&short)) > 0);
        assert!(matches!(
            crate::store::health::log_damage(&db),
            Some(crate::store::health::LogDamage::Short { .. })
        ));

        // Deleted.
        std::fs::remove_file(&wal).unwrap();
        assert_eq!(frames_lost(&index, None), index.frames - index.backfilled);
        let refused = crate::store::health::ensure_log_whole(&db).unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("frame(s) of committed writes are in neither"),
            "{refused}"
        );

        // A damaged index is no evidence (SQLite rebuilds it anyway).
        let mut bytes = std::fs::read(&shm).unwrap();
        bytes[20] ^= 1;
        std::fs::write(&shm, bytes).unwrap();
        assert_eq!(inspect_index(&shm), None);
    }

    #[test]
    fn no_log_or_a_short_one_is_nothing_to_read() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(inspect(&dir.path().join("none-wal"), PAGE).unwrap(), None);
        std::fs::write(dir.path().join("short-wal"), [0u8; 40]).unwrap();
        assert_eq!(inspect(&dir.path().join("short-wal"), PAGE).unwrap(), None);
    }
}
