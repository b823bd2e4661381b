//! Crash-safe file replacement: write beside, fsync, rename over, fsync the
//! directory. After a crash the old file or the new one is there, never a
//! torn mix.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The temporary sibling used while `path` is being replaced.
pub fn temp_sibling(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

/// Make a file written at `tmp` durable and move it over `path`.
pub fn commit_file(tmp: &Path, path: &Path) -> Result<()> {
    File::open(tmp)
        .and_then(|f| f.sync_all())
        .map_err(|e| Error::io(tmp, e))?;
    fs::rename(tmp, path).map_err(|e| Error::io(path, e))?;
    sync_dir(path.parent().unwrap_or(Path::new(".")))
}

/// Replace `path` with `bytes` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = temp_sibling(path);
    let written = File::create(&tmp)
        .and_then(|mut file| file.write_all(bytes))
        .map_err(|e| Error::io(&tmp, e))
        .and_then(|()| commit_file(&tmp, path));
    if written.is_err() {
        // A full disk leaves a partial temp file: give the space back.
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// fsync a directory so a rename inside it is durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, e))
}

/// Move a damaged derived file or folder out of the way, beside itself as
/// `<name>.corrupt-<unix seconds>` (kept for inspection; deleting it is
/// safe), and return where it went.
pub fn set_aside(path: &Path) -> Result<PathBuf> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let mut target = path.with_file_name(format!("{name}.corrupt-{stamp}"));
    let mut n = 1;
    while target.exists() {
        target = path.with_file_name(format!("{name}.corrupt-{stamp}-{n}"));
        n += 1;
    }
    fs::rename(path, &target).map_err(|e| Error::io(path, e))?;
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_atomic_replaces_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert!(!temp_sibling(&path).exists());
    }

    #[test]
    fn set_aside_moves_beside_without_clobbering() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors");
        fs::create_dir(&path).unwrap();
        let first = set_aside(&path).unwrap();
        fs::create_dir(&path).unwrap();
        let second = set_aside(&path).unwrap();
        assert_ne!(first, second);
        assert!(first.is_dir() && second.is_dir() && !path.exists());
    }
}
