//! Memories stored before their embedding existed: `store_memory` never fails
//! over a model that is still loading or failed to load (the lifecycle
//! contract): the memory is written without a vector, found by keywords at
//! once, and its vector is attached here when the model is ready (the facade
//! embeds; the core only stores).
//!
//! Attaching a vector is a new version of the memory's document (a new key,
//! the old one retired), so every index, follower and replica applies it the
//! way it applies any content change; the content, times and links stay.

use rusqlite::params;

use super::Engine;
use crate::error::Result;
use crate::kind::Kind;
use crate::memory::validate_namespace;
use crate::store::memories::{self as rows, Memories};
use crate::store::oplog::{self, Action};
use crate::store::table;
use crate::temporal::now_micros;

/// A memory waiting for its vector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingMemory {
    pub namespace: String,
    pub id: String,
    pub content: String,
}

impl Engine {
    /// Up to `limit` memories without a vector (of `namespace`, or of every
    /// namespace when None), oldest first.
    pub fn pending_vectors(
        &self,
        namespace: Option<&str>,
        limit: usize,
    ) -> Result<Vec<PendingMemory>> {
        if let Some(ns) = namespace {
            validate_namespace(ns)?;
        }
        let reader = self.store.reader()?;
        let mut stmt = reader.prepare_cached(
            "SELECT namespace, id, content FROM memories
             WHERE embedding IS NULL AND (?1 IS NULL OR namespace = ?1)
             ORDER BY created_at, id LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![namespace, limit as i64], |r| {
            Ok(PendingMemory {
                namespace: r.get(0)?,
                id: r.get(1)?,
                content: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// How many memories wait for their vector (all namespaces).
    pub fn count_pending_vectors(&self) -> Result<i64> {
        Ok(self.store.reader()?.query_row(
            "SELECT count(*) FROM memories WHERE embedding IS NULL",
            [],
            |r| r.get(0),
        )?)
    }

    /// Attach `vector` to a memory stored without one, if its content is still
    /// `content` (the vector was made from it). False when there is nothing
    /// to do: the memory is gone, has a vector already, or was edited since.
    pub fn attach_vector(
        &self,
        namespace: &str,
        id: &str,
        content: &str,
        vector: Vec<f32>,
    ) -> Result<bool> {
        validate_namespace(namespace)?;
        let now = now_micros();
        self.store.write_then(
            |tx| {
                let Some(memory) = rows::get(tx, namespace, id)? else {
                    return Ok(None);
                };
                let waiting: bool = tx.query_row(
                    "SELECT embedding IS NULL FROM memories WHERE id = ?1",
                    [id],
                    |r| r.get(0),
                )?;
                if !waiting || memory.content != content {
                    return Ok(None);
                }
                let vector = self.checked_vector(tx, Some(vector))?;
                let prev = table::doc_key::<Memories>(tx, id)?.unwrap_or_default();
                let key = oplog::append(
                    tx,
                    now,
                    Action::Upsert,
                    Kind::Memory,
                    id,
                    namespace,
                    Some(prev),
                )?;
                rows::update_content(tx, &memory, key, vector.as_deref())?;
                let mut changes = Vec::new();
                crate::store::relations::clear_found_mentions(tx, id)?;
                self.link_mentions(tx, &memory, key, Some(prev), &[], now, &mut changes)?;
                Ok(Some((memory, key, prev, vector, changes)))
            },
            |attached| {
                let Some((memory, key, prev, vector, changes)) = attached else {
                    return false;
                };
                self.publish_content(key, Some(prev), &memory, vector);
                self.apply_graph_changes(changes);
                true
            },
        )
    }
}
