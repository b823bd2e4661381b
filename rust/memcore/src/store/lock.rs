//! One writer per data directory: an advisory exclusive lock on `memcore.lock`.
//!
//! The lock is held by the open file handle, so the kernel releases it when the
//! process dies (even by `kill -9`); a stale pid in the file never blocks anyone.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// File name of the writer lock inside a data directory.
pub const LOCK_FILE: &str = "memcore.lock";

/// Proof that this process is the directory's only writer; released on drop.
#[derive(Debug)]
pub struct DirLock {
    _file: File,
    path: PathBuf,
}

impl DirLock {
    /// Take the writer lock on `dir`, or fail with `RESOURCE_BUSY` naming the holder.
    pub fn acquire(dir: &Path) -> Result<Self> {
        let path = dir.join(LOCK_FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let holder = read_holder(&mut file);
                return Err(Error::ResourceBusy {
                    message: format!(
                        "The data directory {} is already open for writing by another \
                         process (pid {holder}). Close that process, use another data \
                         directory, or open this one read-only.",
                        dir.display()
                    ),
                });
            }
            Err(TryLockError::Error(e)) => return Err(Error::io(&path, e)),
        }
        write_holder(&mut file, std::process::id()).map_err(|e| Error::io(&path, e))?;
        Ok(DirLock { _file: file, path })
    }

    /// Path of the lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
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
}
