//! Memory operations: store, read, update, delete, and the temporal ones
//! (invalidate, supersede). Each write is one transaction with its op-log row.

use super::Engine;
use crate::error::{Error, Result};
use crate::kind::Kind;
use crate::memory::{Memory, MemoryPatch, NewMemory, validate_namespace};
use crate::store::memories::{self as rows, ListQuery};
use crate::store::oplog::{self, Action};
use crate::temporal::{Timestamp, now_micros};

/// Largest page a listing returns.
pub const MAX_LIST_LIMIT: usize = 1000;

impl Engine {
    /// Store a new memory and return it as stored.
    pub fn store_memory(&self, new: NewMemory) -> Result<Memory> {
        new.validate()?;
        let now = now_micros();
        let NewMemory {
            namespace,
            content,
            memory_type,
            source,
            confidence,
            importance,
            metadata,
            thread_id,
            user_id,
            event_time,
            valid_from,
            expires_at,
            embedding,
        } = new;
        let memory = Memory {
            id: self.new_id("mem", now),
            namespace,
            content,
            memory_type,
            source,
            confidence,
            importance,
            metadata: metadata.unwrap_or_else(|| "{}".to_owned()),
            thread_id,
            user_id,
            event_time,
            created_at: now,
            updated_at: now,
            accessed_at: now,
            valid_from: valid_from.unwrap_or(now),
            valid_until: None,
            invalidated_at: None,
            invalidation_reason: None,
            supersedes: None,
            superseded_by: None,
            expires_at,
        };
        let dim = self.store.write(|tx| {
            let vector = embedding.map(|v| self.prepare_vector(tx, v)).transpose()?;
            let key = oplog::append(
                tx,
                now,
                Action::Upsert,
                Kind::Memory,
                &memory.id,
                &memory.namespace,
                None,
            )?;
            rows::insert(tx, &memory, key, vector.as_deref())?;
            Ok(vector.map(|v| v.len()))
        })?;
        if let Some(d) = dim {
            self.note_dim(d);
        }
        Ok(memory)
    }

    /// One memory by id. Records the access time when the store is writable.
    pub fn get_memory(&self, namespace: &str, id: &str) -> Result<Memory> {
        if self.is_read_only() {
            return self.find_memory(namespace, id);
        }
        let now = now_micros();
        self.store.write(|tx| {
            let mut memory = rows::get(tx, namespace, id)?.ok_or_else(|| not_found(id))?;
            rows::touch(tx, id, now)?;
            memory.accessed_at = now;
            Ok(memory)
        })
    }

    /// One memory by id without touching its access time.
    pub fn find_memory(&self, namespace: &str, id: &str) -> Result<Memory> {
        rows::get(&*self.store.reader()?, namespace, id)?.ok_or_else(|| not_found(id))
    }

    /// Apply a partial update. New content gets a new document key (and the
    /// new vector, when given); the old version is retired from the indexes.
    pub fn update_memory(&self, namespace: &str, id: &str, patch: MemoryPatch) -> Result<Memory> {
        patch.validate()?;
        if patch.is_empty() {
            return Err(Error::invalid(
                "patch",
                "Nothing to update: pass at least one field (content, memory_type, confidence, \
                 importance, metadata, …).",
            ));
        }
        let now = now_micros();
        let (memory, dim) = self.store.write(|tx| {
            let mut m = rows::get(tx, namespace, id)?.ok_or_else(|| not_found(id))?;
            let MemoryPatch {
                content,
                memory_type,
                source,
                confidence,
                importance,
                metadata,
                thread_id,
                user_id,
                event_time,
                expires_at,
                embedding,
            } = patch;
            set_if(&mut m.memory_type, memory_type);
            set_if(&mut m.source, source);
            set_if(&mut m.confidence, confidence);
            set_if(&mut m.importance, importance);
            set_if(&mut m.metadata, metadata);
            if thread_id.is_some() {
                m.thread_id = thread_id;
            }
            if user_id.is_some() {
                m.user_id = user_id;
            }
            if event_time.is_some() {
                m.event_time = event_time;
            }
            if expires_at.is_some() {
                m.expires_at = expires_at;
            }
            m.updated_at = now;
            let mut dim = None;
            match content {
                Some(new_content) if new_content != m.content => {
                    let vector = embedding.map(|v| self.prepare_vector(tx, v)).transpose()?;
                    let prev = rows::doc_key(tx, id)?;
                    let key =
                        oplog::append(tx, now, Action::Upsert, Kind::Memory, id, namespace, prev)?;
                    rows::update_content(tx, id, &new_content, key, vector.as_deref())?;
                    dim = vector.map(|v| v.len());
                    m.content = new_content;
                }
                _ => {
                    oplog::append(tx, now, Action::Meta, Kind::Memory, id, namespace, None)?;
                }
            }
            rows::update_fields(tx, &m)?;
            Ok((m, dim))
        })?;
        if let Some(d) = dim {
            self.note_dim(d);
        }
        Ok(memory)
    }

    /// Delete a memory for good (no history is kept; use `invalidate` for that).
    pub fn delete_memory(&self, namespace: &str, id: &str) -> Result<()> {
        let now = now_micros();
        self.store.write(|tx| {
            let key = rows::delete(tx, namespace, id)?.ok_or_else(|| not_found(id))?;
            oplog::append(tx, now, Action::Delete, Kind::Memory, id, namespace, Some(key))?;
            Ok(())
        })
    }

    /// Memories of a namespace, newest first.
    pub fn list_memories(&self, namespace: &str, query: &ListQuery) -> Result<Vec<Memory>> {
        validate_namespace(namespace)?;
        check_limit(query.limit)?;
        rows::list(&*self.store.reader()?, namespace, query, now_micros())
    }

    /// Number of memories in a namespace, in every state.
    pub fn count_memories(&self, namespace: &str) -> Result<i64> {
        rows::count(&*self.store.reader()?, namespace)
    }

    /// Close a memory's validity now (a soft delete: history still sees it).
    pub fn invalidate(&self, namespace: &str, id: &str, reason: Option<String>) -> Result<Memory> {
        let now = now_micros();
        self.store.write(|tx| {
            let mut m = rows::get(tx, namespace, id)?.ok_or_else(|| not_found(id))?;
            if m.valid_until.is_some_and(|until| until <= now) {
                let by = m.superseded_by.as_deref().map(|s| format!(" (superseded by {s})"));
                return Err(Error::invalid(
                    "id",
                    format!(
                        "Memory {id} is already invalid{}; nothing to do.",
                        by.unwrap_or_default()
                    ),
                ));
            }
            m.valid_until = Some(now.max(m.valid_from));
            m.invalidated_at = Some(now);
            m.invalidation_reason = reason;
            m.updated_at = now;
            rows::update_fields(tx, &m)?;
            oplog::append(tx, now, Action::Meta, Kind::Memory, id, namespace, None)?;
            Ok(m)
        })
    }

    /// Mark `old_id` as replaced by `new_id`: link both ways and close the old
    /// interval where the new one starts. Returns (old, new) as updated.
    pub fn supersede_memory(
        &self,
        namespace: &str,
        old_id: &str,
        new_id: &str,
    ) -> Result<(Memory, Memory)> {
        if old_id == new_id {
            return Err(Error::invalid(
                "new_memory_id",
                "A memory cannot supersede itself; pass the id of the newer memory.",
            ));
        }
        let now = now_micros();
        self.store.write(|tx| {
            let mut old = rows::get(tx, namespace, old_id)?.ok_or_else(|| not_found(old_id))?;
            let mut new = rows::get(tx, namespace, new_id)?.ok_or_else(|| not_found(new_id))?;
            if let Some(existing) = &old.superseded_by {
                return Err(Error::invalid(
                    "old_memory_id",
                    format!("Memory {old_id} is already superseded by {existing}."),
                ));
            }
            if let Some(newer) = &new.superseded_by {
                return Err(Error::invalid(
                    "new_memory_id",
                    format!(
                        "Memory {new_id} is itself superseded by {newer}; supersede with {newer} \
                         instead."
                    ),
                ));
            }
            let close: Timestamp = new.valid_from.max(old.valid_from);
            old.valid_until = Some(old.valid_until.map_or(close, |u| u.min(close)));
            old.superseded_by = Some(new_id.to_owned());
            old.invalidated_at.get_or_insert(now);
            old.invalidation_reason
                .get_or_insert_with(|| format!("superseded by {new_id}"));
            old.updated_at = now;
            new.supersedes = Some(old_id.to_owned());
            new.updated_at = now;
            rows::update_fields(tx, &old)?;
            rows::update_fields(tx, &new)?;
            oplog::append(tx, now, Action::Meta, Kind::Memory, old_id, namespace, None)?;
            oplog::append(tx, now, Action::Meta, Kind::Memory, new_id, namespace, None)?;
            Ok((old, new))
        })
    }
}

fn set_if<T>(slot: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *slot = v;
    }
}

fn not_found(id: &str) -> Error {
    Error::MemoryNotFound { id: id.to_owned() }
}

/// Listing limits: at least one, at most [`MAX_LIST_LIMIT`].
pub fn check_limit(limit: usize) -> Result<()> {
    if (1..=MAX_LIST_LIMIT).contains(&limit) {
        Ok(())
    } else {
        Err(Error::invalid(
            "limit",
            format!("limit must be between 1 and {MAX_LIST_LIMIT}, got {limit}."),
        ))
    }
}
