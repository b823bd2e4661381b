//! Maintenance: compacting and rebuilding the derived indexes.

use super::Engine;
use super::recovery;
use crate::error::Result;

pub use super::indexer::CompactReport;

impl Engine {
    /// Rebuild the HNSW graph without its tombstones (when they exceed ~20%
    /// of the graph, or always with `force`) and merge the text segments.
    /// Runs on the indexer thread, between index writes.
    pub fn compact(&self, force: bool) -> Result<CompactReport> {
        match self.indexer.get() {
            Some(ix) => ix.compact(force),
            None => Ok(CompactReport::default()),
        }
    }

    /// Drop both indexes and rebuild them from the store (the op log is
    /// replayed from the beginning). Writes wait until it is done.
    ///
    /// Heals in place what a panic left in doubt (the indexer starts over,
    /// the graph is trusted again) and, once done, withdraws the request for
    /// a rebuild at the next open. Until it is done the text index records
    /// that it covers nothing, so a crash in the middle leaves a store whose
    /// next open replays everything, never one that misses documents.
    pub fn rebuild_indexes(&self) -> Result<()> {
        self.ensure_index_owner("Rebuilding the indexes")?;
        let _writes_paused = self.store.writer()?;
        // Best effort: a frozen or failing indexer is what this repairs.
        let _ = self.flush();
        if let Some(ix) = self.indexer.get() {
            ix.restart();
        }
        self.indexes.text.clear(0)?;
        if let Some(index) = self.indexes.vectors() {
            index.clear()?;
        }
        recovery::rebuild_catalog(&self.store, &self.indexes)?;
        let send = |job| {
            if let Some(ix) = self.indexer.get() {
                ix.send(job);
            }
        };
        recovery::replay(&self.store, &self.indexes, 0, 0, Some(&send))?;
        self.flush()?;
        self.indexes.rebuilt();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::health::REBUILD_MARKER;
    use crate::engine::indexer::Job;
    use crate::engine::{Engine, EngineOptions, SearchQuery};
    use crate::memory::NewMemory;

    #[test]
    fn rebuilding_after_a_panic_heals_the_indexes_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("index").join(REBUILD_MARKER);
        let engine = Engine::open(dir.path(), &EngineOptions::default()).unwrap();
        engine
            .store_memory(NewMemory::text("the alpha fact"))
            .unwrap();
        engine.indexer.get().unwrap().send(Job::Panic);
        // The first flush may be answered by the panicking round itself.
        engine.flush().unwrap();
        engine.flush().unwrap();
        assert!(marker.exists());
        // Frozen: new documents are only pending.
        engine
            .store_memory(NewMemory::text("the beta fact"))
            .unwrap();
        engine.flush().unwrap();
        assert!(engine.index_status().text_pending >= 1);

        engine.rebuild_indexes().unwrap();
        assert!(!marker.exists(), "the rebuild withdrew its request");
        let status = engine.index_status();
        assert_eq!((status.text_documents, status.text_pending), (2, 0));
        // Commits resumed: a later write is committed too.
        engine
            .store_memory(NewMemory::text("the gamma fact"))
            .unwrap();
        engine.flush().unwrap();
        assert_eq!(engine.index_status().text_documents, 3);
        drop(engine);

        let engine = Engine::open(dir.path(), &EngineOptions::default()).unwrap();
        let warnings = engine.index_status().warnings;
        assert!(
            warnings.iter().all(|w| !w.contains("being rebuilt")),
            "{warnings:?}"
        );
        let query = SearchQuery::memories("default", 5);
        for word in ["alpha", "beta", "gamma"] {
            assert_eq!(engine.search_text(&query, word).unwrap().len(), 1, "{word}");
        }
    }
}
