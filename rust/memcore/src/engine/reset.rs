//! Wiping a store: every record of every kind, and the embedding identity.

use super::Engine;
use crate::error::Result;
use crate::store::meta;

/// Tables holding records; emptied by a reset. Later schema versions append
/// their record tables here.
const RECORD_TABLES: &[&str] = &["memories"];

impl Engine {
    /// Delete every record in every namespace and forget the embedding model,
    /// in one transaction. The op log is emptied too, but its sequence keeps
    /// counting, so document keys are never reused.
    pub fn reset_all(&self) -> Result<()> {
        self.store.write(|tx| {
            for table in RECORD_TABLES {
                tx.execute(&format!("DELETE FROM {table}"), [])?;
            }
            tx.execute("DELETE FROM oplog", [])?;
            tx.execute(
                "DELETE FROM meta WHERE key IN (?1, ?2)",
                [meta::EMBEDDING_MODEL, meta::EMBEDDING_DIM],
            )?;
            Ok(())
        })?;
        *self.dim.write() = None;
        Ok(())
    }
}
