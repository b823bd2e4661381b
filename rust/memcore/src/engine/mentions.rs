//! Memory ↔ entity links without NLP: the names a caller gives explicitly
//! (unknown ones become bare entities), plus every known entity name found
//! in the memory's text as a whole word.

use rusqlite::Connection;

use super::Engine;
use super::graph_write::{GraphChange, WriteContext};
use crate::error::Result;
use crate::knowledge::IMPLICIT_ENTITY_TYPE;
use crate::knowledge::save::EntityDraft;
use crate::memory::Memory;
use crate::store::relations as rel;
use crate::temporal::Timestamp;

impl Engine {
    /// Inside a write: link `memory` (whose document key is `doc_key`, and
    /// `prev` before this write) to its entities, recording the links and
    /// the graph change to apply after commit.
    #[allow(clippy::too_many_arguments)] // one transaction's context, passed through
    pub(super) fn link_mentions(
        &self,
        tx: &Connection,
        memory: &Memory,
        doc_key: i64,
        prev: Option<i64>,
        explicit: &[String],
        now: Timestamp,
        changes: &mut Vec<GraphChange>,
    ) -> Result<()> {
        let ctx = WriteContext {
            namespace: memory.namespace.clone(),
            thread_id: memory.thread_id.clone(),
            ..WriteContext::default()
        };
        for name in explicit {
            let draft = EntityDraft {
                name: name.clone(),
                entity_type: IMPLICIT_ENTITY_TYPE.to_owned(),
                ..EntityDraft::default()
            };
            let (entity, _, _) = self.upsert_entity(tx, &ctx, &draft, now, changes)?;
            rel::add_mention(tx, &memory.id, &entity.id, true)?;
        }
        let found: Vec<String> = {
            let graph = self.indexes.graph.read();
            graph
                .find_mentions(&memory.namespace, &memory.content)
                .into_iter()
                .map(|n| graph.node(n).entity_id.clone())
                .collect()
        };
        if explicit.is_empty() && found.is_empty() && prev.is_none() {
            return Ok(()); // the common case: nothing to link, no query needed
        }
        for entity_id in &found {
            rel::add_mention(tx, &memory.id, entity_id, false)?;
        }
        let entity_ids = rel::entities_of_memory(tx, &memory.id)?;
        if !entity_ids.is_empty() || prev.is_some() {
            changes.push(GraphChange::MemoryLinks {
                doc_key: doc_key as u64,
                prev: prev.map(|p| p as u64),
                entity_ids,
            });
        }
        Ok(())
    }
}
