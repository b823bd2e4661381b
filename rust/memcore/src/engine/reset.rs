//! Wiping a store: every record of every kind, the derived indexes and the
//! embedding identity.

use super::Engine;
use crate::error::Result;
use crate::store::{meta, oplog};

/// Tables holding records; emptied by a reset. Later schema versions append
/// their record tables here.
const RECORD_TABLES: &[&str] = &[
    "mentions",
    "relations",
    "observations",
    "entities",
    "memories",
    "document_touches",
    "document_conversations",
    "procedure_documents",
    "procedures",
    "doc_versions",
    "documents",
    "turns",
    "conversations",
    "code_chunks",
    "code_files",
    "projects",
    "turn_claims",
    "conversation_summaries",
];

impl Engine {
    /// Delete every record in every namespace, empty the indexes and forget
    /// the embedding model, in one transaction. The op log is emptied too,
    /// but its sequence keeps counting, so document keys are never reused.
    pub fn reset_all(&self) -> Result<()> {
        // Other processes would keep serving what was wiped: only alone.
        let _alone = self.store.alone("Resetting the store")?;
        self.store.write_then(
            |tx| {
                for table in RECORD_TABLES {
                    tx.execute(&format!("DELETE FROM {table}"), [])?;
                }
                tx.execute("DELETE FROM oplog", [])?;
                // The log is emptied below its sequence: mark it compacted
                // there, as maintenance does (see `verify`, `follow`).
                let through = oplog::last_seq(tx)?;
                meta::set(
                    tx,
                    super::upkeep::LOG_COMPACTED_THROUGH,
                    &through.to_string(),
                )?;
                tx.execute(
                    "DELETE FROM meta WHERE key IN (?1, ?2)",
                    [meta::EMBEDDING_MODEL, meta::EMBEDDING_DIM],
                )?;
                oplog::last_seq(tx)
            },
            |seq| {
                // Still under the writer lock, so no write slips in: finish
                // queued index work first, or it would re-add old documents.
                self.flush()?;
                self.indexes.catalog.write().clear();
                self.indexes.graph.write().clear();
                *self.dim.write() = None;
                self.indexes.drop_vectors();
                self.indexes.text.clear(seq)
            },
        )?
    }
}
