//! Backups: SQLite's online backup API copies the live database into one
//! consistent file that opens as a store, while writers go on.

use std::path::{Path, PathBuf};

use rusqlite::Connection;
use rusqlite::backup::Backup;

use super::Engine;
use super::check::sibling;
use crate::error::{Error, Result};
use crate::store::{DB_FILE, Store, oplog};

/// What [`Engine::backup`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupReport {
    /// The backup file.
    pub path: PathBuf,
    /// Its size.
    pub bytes: u64,
    /// The op log's highest seq in the copy: every write up to it is there.
    pub last_seq: i64,
}

impl Engine {
    /// Copy the database to `dest` with SQLite's online backup API: one
    /// consistent snapshot, taken while writers go on, that opens as a
    /// store (the indexes rebuild from it). `dest` must not exist; an
    /// existing directory receives `memcore.db`, making it a data directory.
    pub fn backup(&self, dest: &Path) -> Result<BackupReport> {
        let target = if dest.is_dir() {
            dest.join(DB_FILE)
        } else {
            dest.to_path_buf()
        };
        if target.exists() {
            return Err(Error::invalid(
                "dest",
                format!(
                    "{} already exists; a backup never overwrites a file. Pass a new path \
                     or an empty directory.",
                    target.display()
                ),
            ));
        }
        let partial = sibling(&target, ".partial");
        let _ = std::fs::remove_file(&partial);
        let copied = copy_database(&self.store, &partial);
        let last_seq = match copied {
            Ok(seq) => seq,
            Err(e) => {
                let _ = std::fs::remove_file(&partial);
                return Err(e);
            }
        };
        std::fs::rename(&partial, &target).map_err(|e| Error::io(&target, e))?;
        let bytes = std::fs::metadata(&target)
            .map_err(|e| Error::io(&target, e))?
            .len();
        Ok(BackupReport {
            path: target,
            bytes,
            last_seq,
        })
    }
}

/// Copy every page in one step, so the copy is one read snapshot of the
/// source (a step-by-step copy restarts whenever the writer commits and
/// might never finish under a steady stream of writes). WAL lets the
/// writer go on meanwhile. Returns the copy's last op seq.
fn copy_database(store: &Store, dest: &Path) -> Result<i64> {
    let source = store.reader()?;
    let mut copy = Connection::open(dest)?;
    {
        let backup = Backup::new(&source, &mut copy)?;
        loop {
            match backup.step(-1)? {
                rusqlite::backup::StepResult::Done => break,
                // Busy or locked: another connection holds a lock for a moment.
                _ => std::thread::sleep(std::time::Duration::from_millis(20)),
            }
        }
    }
    // A single self-contained file: no WAL to carry around.
    copy.pragma_update(None, "journal_mode", "DELETE")?;
    let check: String = copy.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
    if check != "ok" {
        return Err(Error::Damaged {
            path: dest.to_path_buf(),
            message: format!(
                "The backup copy {} failed SQLite's quick_check ({check}); the store itself \
                 is untouched. Run `memcore check`, then try the backup again.",
                dest.display()
            ),
        });
    }
    let seq = oplog::last_seq(&copy)?;
    drop(copy);
    // Durable before it is renamed into place.
    std::fs::File::open(dest)
        .and_then(|f| f.sync_all())
        .map_err(|e| Error::io(dest, e))?;
    Ok(seq)
}
