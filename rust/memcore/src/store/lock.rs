//! Who may write a data directory, and who writes its index files.
//!
//! `memcore.lock`: every process that writes the store holds it *shared*, so
//! any number of them can (SQLite serialises their writes); a store that must
//! have one writer only (a PostgreSQL node's replica, or an older memcore,
//! which took it exclusive) holds it *exclusive*, and the two never mix.
//! `index/owner.lock`: the one process that persists the derived index files
//! (snapshots, compaction) holds it exclusive; the others keep what they
//! apply in memory and try to take it over when its holder exits or dies.
//!
//! Locks are held by open file handles, so the kernel releases them when the
//! process dies (even by `kill -9`); a stale pid in a file never blocks anyone.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// File name of the writer lock inside a data directory.
pub const LOCK_FILE: &str = "memcore.lock";

/// Proof that this process is the directory's only writer; released on drop.
#[derive(Debug)]
pub struct DirLock {
    file: File,
    path: PathBuf,
}

impl DirLock {
    /// Take the lock on `dir` shared, beside any other process that writes it
    /// the same way, or fail with `RESOURCE_BUSY` naming the process that holds
    /// it alone.
    pub fn acquire_shared(dir: &Path) -> Result<Self> {
        let path = dir.join(LOCK_FILE);
        let mut file = open_lock_file(&path)?;
        match file.try_lock_shared() {
            Ok(()) => Ok(DirLock { file, path }),
            Err(TryLockError::WouldBlock) => {
                let holder = read_holder(&mut file);
                Err(Error::ResourceBusy {
                    message: format!(
                        "The data directory {} is open for writing by a process that must be \
                         its only writer (pid {holder}: a PostgreSQL node's replica, or an \
                         older memcore). Close that process, or use another data directory.",
                        dir.display()
                    ),
                })
            }
            Err(TryLockError::Error(e)) => Err(Error::io(&path, e)),
        }
    }

    /// Take the writer lock on `dir` alone, or fail with `RESOURCE_BUSY` naming the holder.
    pub fn acquire(dir: &Path) -> Result<Self> {
        let path = dir.join(LOCK_FILE);
        let mut file = open_lock_file(&path)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                // Held shared (writers that share the store) or alone (one
                // that wrote its pid): a shared probe tells which.
                let shared = file.try_lock_shared().is_ok();
                let who = if shared {
                    "other processes that share it (agent windows, servers)".to_owned()
                } else {
                    format!("another process (pid {})", read_holder(&mut file))
                };
                let _ = file.unlock();
                return Err(Error::ResourceBusy {
                    message: format!(
                        "The data directory {} is already open for writing by {who}. Close \
                         it, use another data directory, or open this one read-only.",
                        dir.display()
                    ),
                });
            }
            Err(TryLockError::Error(e)) => return Err(Error::io(&path, e)),
        }
        write_holder(&mut file, std::process::id()).map_err(|e| Error::io(&path, e))?;
        Ok(DirLock { file, path })
    }

    /// Path of the lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Turn a shared hold into a sole one, if no other process holds the
    /// lock; else `RESOURCE_BUSY` saying that `what` needs the store alone.
    pub fn upgrade(&self, what: &str) -> Result<()> {
        match self.file.try_lock() {
            Ok(()) => Ok(()),
            Err(TryLockError::WouldBlock) => Err(Error::ResourceBusy {
                message: format!(
                    "{what} needs the store alone, and other processes have it open for \
                     writing (other agent windows or servers); close them and retry."
                ),
            }),
            Err(TryLockError::Error(e)) => Err(Error::io(&self.path, e)),
        }
    }

    /// Back to a shared hold after [`DirLock::upgrade`].
    pub fn downgrade(&self) {
        let _ = self.file.try_lock_shared();
    }
}

/// Proof that this process writes the derived index files; released on drop
/// (or by the kernel when the process dies), so another process can take over.
#[derive(Debug)]
pub struct OwnerLock {
    _file: File,
}

/// File name of the index owner's lock inside the index folder.
pub const OWNER_FILE: &str = "owner.lock";

impl OwnerLock {
    /// Take ownership of the index files in `index_dir` if no process holds it.
    pub fn try_acquire(index_dir: &Path) -> Result<Option<Self>> {
        std::fs::create_dir_all(index_dir).map_err(|e| Error::io(index_dir, e))?;
        let path = index_dir.join(OWNER_FILE);
        let mut file = open_lock_file(&path)?;
        match file.try_lock() {
            Ok(()) => {
                write_holder(&mut file, std::process::id()).map_err(|e| Error::io(&path, e))?;
                Ok(Some(OwnerLock { _file: file }))
            }
            Err(TryLockError::WouldBlock) => Ok(None),
            Err(TryLockError::Error(e)) => Err(Error::io(&path, e)),
        }
    }

    /// The pid of the process that owns the index files in `index_dir`, as it
    /// wrote it ("unknown" when none did).
    pub fn holder(index_dir: &Path) -> String {
        open_lock_file(&index_dir.join(OWNER_FILE))
            .map_or_else(|_| "unknown".to_owned(), |mut f| read_holder(&mut f))
    }
}

fn open_lock_file(path: &Path) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| Error::io(path, e))
}

fn read_holder(file: &mut File) -> String {
    let mut text = String::new();
    let _ = file.seek(SeekFrom::Start(0));
    let _ = file.read_to_string(&mut text);
    let pid = text.trim();
    if pid.is_empty() {
        "unknown".to_owned()
    } else {
        pid.to_owned()
    }
}

fn write_holder(file: &mut File, pid: u32) -> std::io::Result<()> {
    file.set_len(0)?;
    file.seek(SeekFrom::Start(0))?;
    writeln!(file, "{pid}")?;
    file.sync_data()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_in_same_process_is_refused_with_pid() {
        let dir = tempfile::tempdir().unwrap();
        let first = DirLock::acquire(dir.path()).unwrap();
        let err = DirLock::acquire(dir.path()).unwrap_err();
        assert_eq!(err.code(), "RESOURCE_BUSY");
        assert!(err.to_string().contains(&std::process::id().to_string()));
        drop(first);
        DirLock::acquire(dir.path()).unwrap();
    }

    #[test]
    fn shared_writers_exclude_a_sole_writer_and_back() {
        let dir = tempfile::tempdir().unwrap();
        let a = DirLock::acquire_shared(dir.path()).unwrap();
        let b = DirLock::acquire_shared(dir.path()).unwrap();
        assert_eq!(
            DirLock::acquire(dir.path()).unwrap_err().code(),
            "RESOURCE_BUSY"
        );
        drop((a, b));
        let sole = DirLock::acquire(dir.path()).unwrap();
        let err = DirLock::acquire_shared(dir.path()).unwrap_err();
        assert_eq!(err.code(), "RESOURCE_BUSY");
        assert!(err.to_string().contains("only writer"), "{err}");
        drop(sole);
    }

    #[test]
    fn one_process_owns_the_index_files_until_it_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("index");
        let owner = OwnerLock::try_acquire(&index).unwrap().unwrap();
        assert!(OwnerLock::try_acquire(&index).unwrap().is_none());
        assert_eq!(OwnerLock::holder(&index), std::process::id().to_string());
        drop(owner);
        assert!(OwnerLock::try_acquire(&index).unwrap().is_some());
    }
}
