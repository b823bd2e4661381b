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
        match &self.indexer {
            Some(ix) => ix.compact(force),
            None => Ok(CompactReport::default()),
        }
    }

    /// Drop both indexes and rebuild them from the store (the op log is
    /// replayed from the beginning). Writes wait until it is done.
    pub fn rebuild_indexes(&self) -> Result<()> {
        let _writes_paused = self.store.writer()?;
        self.flush()?;
        let seq = crate::store::oplog::last_seq(&*self.store.reader()?)?;
        self.indexes.text.clear(seq)?;
        if let Some(index) = self.indexes.vectors() {
            index.clear()?;
        }
        recovery::rebuild_catalog(&self.store, &self.indexes)?;
        let send = |job| {
            if let Some(ix) = &self.indexer {
                ix.send(job);
            }
        };
        recovery::replay(&self.store, &self.indexes, 0, 0, Some(&send))?;
        self.flush()
    }
}
