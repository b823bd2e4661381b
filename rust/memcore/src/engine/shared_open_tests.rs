//! An engine that opens a shared store while another process writes: the
//! writes that land during its open reach its search state and its indexer
//! once each (`recovery::open_state` reads the catalog and the replay from
//! one snapshot; the follower takes the rest).

use std::cell::RefCell;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Engine, EngineOptions, SearchQuery};
use crate::memory::NewMemory;

thread_local! {
    /// Run once by the next open on this thread, between reading the catalog
    /// and replaying the log.
    static AFTER_CATALOG: RefCell<Option<Box<dyn FnOnce()>>> = const { RefCell::new(None) };
}

/// Called by `recovery::open_state` (test builds only).
pub(super) fn after_catalog_snapshot() {
    if let Some(hook) = AFTER_CATALOG.with(|h| h.borrow_mut().take()) {
        hook();
    }
}

fn shared(dir: &std::path::Path) -> Engine {
    let options = EngineOptions {
        shared: true,
        ..EngineOptions::default()
    };
    Engine::open(dir, &options).unwrap()
}

fn owns_files(engine: &Engine) -> bool {
    engine.indexer.get().is_some()
}

/// Open `dir` as the owner of its index files while `writer` (another
/// engine, as another process) stores `during` memories mid-open. None when
/// the writer's follower took the files over first (the owner's lock was
/// free for a moment).
fn open_while_writing(
    dir: &std::path::Path,
    writer: &Arc<Engine>,
    during: usize,
) -> Option<Engine> {
    let writer = writer.clone();
    AFTER_CATALOG.with(|h| {
        *h.borrow_mut() = Some(Box::new(move || {
            for i in 0..during {
                let text = format!("written during the open {i}");
                writer.store_memory(NewMemory::text(text)).unwrap();
            }
        }));
    });
    let engine = shared(dir);
    AFTER_CATALOG.with(|h| h.borrow_mut().take());
    owns_files(&engine).then_some(engine)
}

#[test]
fn writes_landing_during_an_owners_open_are_indexed_once() {
    const BEFORE: usize = 20;
    const DURING: usize = 30;
    for _attempt in 0..10 {
        let dir = tempfile::tempdir().unwrap();
        let first = shared(dir.path());
        for i in 0..BEFORE {
            first
                .store_memory(NewMemory::text(format!("written before {i}")))
                .unwrap();
        }
        let writer = Arc::new(shared(dir.path()));
        assert!(owns_files(&first) && !owns_files(&writer));
        drop(first);
        let Some(owner) = open_while_writing(dir.path(), &writer, DURING) else {
            continue;
        };
        let query = SearchQuery::memories("default", 50);
        let deadline = Instant::now() + Duration::from_secs(20);
        while owner.search_text(&query, "during").unwrap().len() < DURING {
            assert!(Instant::now() < deadline, "the owner never saw the writes");
            std::thread::sleep(Duration::from_millis(20));
        }
        owner.flush().unwrap();
        assert_eq!(
            owner.indexes.text.committed_len(),
            (BEFORE + DURING) as u64,
            "one document per write in the committed text index"
        );
        drop(owner);
        drop(writer);
        // And the store reopens: its index holds no more than the log explains.
        let reopened = Engine::open(dir.path(), &EngineOptions::default()).unwrap();
        assert_eq!(
            reopened.search_text(&query, "during").unwrap().len(),
            DURING
        );
        return;
    }
    panic!("the writer's follower took the index files over in every attempt");
}
