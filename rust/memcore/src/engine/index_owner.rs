//! Who writes the index files of a shared store, decided at open.
//!
//! The owner of `index/owner.lock` creates the index files during its own
//! open, a few milliseconds after taking the lock. A process that opens the
//! store in between (agent windows started at once on a new store) would
//! find no files: it would index in memory, could never load the owner's
//! commits, and could not take the files over when the owner left, so the
//! store would run without an owner. Such a process waits for the files
//! instead, or for the lock to come free (then it owns them itself).
//!
//! The same holds on the first open after an upgrade that changed the text
//! index's layout (`text::BODY`): the files are there, but of the older
//! layout, which the owner is about to start over. A process waits until
//! they are of the current layout, not merely present.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::Result;
use crate::store::OwnerLock;

/// Longest wait at open for the owner to create the index files; past it
/// the process goes on in memory (warned), as before the owner existed.
const FILES_WAIT: Duration = Duration::from_secs(10);
/// How often the lock and the files are looked at meanwhile.
const POLL: Duration = Duration::from_millis(20);

/// The owner lock of `index_dir` when this process gets it, else `None`
/// once the owner's text index exists (or [`FILES_WAIT`] has passed).
pub fn acquire_or_wait(index_dir: &Path) -> Result<Option<OwnerLock>> {
    let deadline = Instant::now() + FILES_WAIT;
    loop {
        if let Some(lock) = OwnerLock::try_acquire(index_dir)? {
            return Ok(Some(lock));
        }
        if owner_made_files(index_dir) || Instant::now() >= deadline {
            return Ok(None);
        }
        std::thread::sleep(POLL);
    }
}

/// The owner has created the text index, of the current layout: tantivy
/// writes `meta.json` (which holds the schema) atomically when it creates
/// one, and the owner does so at open.
fn owner_made_files(index_dir: &Path) -> bool {
    crate::text::layout_is_current(&index_dir.join("text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_the_lock_when_it_comes_free_before_the_files_exist() {
        let dir = tempfile::tempdir().unwrap();
        let held = OwnerLock::try_acquire(dir.path()).unwrap().unwrap();
        let path = dir.path().to_owned();
        let waiter = std::thread::spawn(move || acquire_or_wait(&path).unwrap().is_some());
        std::thread::sleep(Duration::from_millis(200));
        drop(held); // the owner died before creating the files
        assert!(
            waiter.join().unwrap(),
            "the waiter should own the files now"
        );
    }

    #[test]
    fn stops_waiting_once_the_owner_made_the_files() {
        let dir = tempfile::tempdir().unwrap();
        let _held = OwnerLock::try_acquire(dir.path()).unwrap().unwrap();
        let path = dir.path().to_owned();
        let started = Instant::now();
        let waiter = std::thread::spawn(move || acquire_or_wait(&path).unwrap().is_none());
        std::thread::sleep(Duration::from_millis(200));
        crate::text::TextIndex::open(&dir.path().join("text"), "english", false).unwrap();
        assert!(waiter.join().unwrap(), "the owner still holds the lock");
        assert!(started.elapsed() < FILES_WAIT, "{:?}", started.elapsed());
    }

    #[test]
    fn files_of_an_older_layout_are_waited_past() {
        // The first open after an upgrade: the owner holds the lock and the
        // folder still holds the previous release's text index.
        let dir = tempfile::tempdir().unwrap();
        let _held = OwnerLock::try_acquire(dir.path()).unwrap().unwrap();
        let text = dir.path().join("text");
        older_layout(&text);
        assert!(!owner_made_files(dir.path()));
        let path = dir.path().to_owned();
        let waiter = std::thread::spawn(move || {
            let lock = acquire_or_wait(&path).unwrap();
            (
                lock.is_none(),
                crate::text::layout_is_current(&path.join("text")),
            )
        });
        std::thread::sleep(Duration::from_millis(300));
        assert!(!waiter.is_finished(), "it went on with the older files");
        // The owner starts the older index over (`TextIndex::open`).
        crate::text::TextIndex::open(&text, "english", false).unwrap();
        assert_eq!(waiter.join().unwrap(), (true, true));
    }

    /// A text index as the release before `terms_v5` made it.
    fn older_layout(dir: &Path) {
        use tantivy::schema::{FAST, INDEXED, Schema, TEXT};
        std::fs::create_dir_all(dir).unwrap();
        let mut builder = Schema::builder();
        builder.add_u64_field("key", INDEXED | FAST);
        builder.add_text_field("terms_v4", TEXT);
        tantivy::Index::create_in_dir(dir, builder.build()).unwrap();
        assert!(dir.join("meta.json").is_file());
    }
}
