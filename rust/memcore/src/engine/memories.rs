//! Memory operations: store, read, update, delete, and the temporal ones
//! (invalidate, supersede). Each write is one transaction with its op-log
//! row, published to the catalog and the index queue while the writer lock
//! is still held.

use std::sync::Arc;

use super::Engine;
use super::documents::memory_labels;
use super::indexes::Change;
use crate::error::{Error, Result};
use crate::kind::Kind;
use crate::memory::{Memory, MemoryPatch, NewMemory, validate_namespace};
use crate::store::memories::{self as rows, ListQuery, Memories};
use crate::store::oplog::{self, Action};
use crate::store::table;
use crate::temporal::{Timestamp, now_micros};

/// Largest page a listing returns.
pub const MAX_LIST_LIMIT: usize = 1000;

impl Engine {
    /// Store a new memory and return it as stored.
    pub fn store_memory(&self, new: NewMemory) -> Result<Memory> {
        new.validate()?;
        let now = now_micros();
        let explicit = new.entities.clone();
        let (memory, embedding) = self.new_memory(new, now);
        check_expiry(&memory)?;
        self.store.write_then(
            |tx| {
                let vector = self.checked_vector(tx, embedding)?;
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
                let mut changes = Vec::new();
                self.link_mentions(tx, &memory, key, None, &explicit, now, &mut changes)?;
                Ok((key, vector, changes))
            },
            |(key, vector, changes)| {
                self.publish_content(key, None, &memory, vector);
                self.apply_graph_changes(changes);
            },
        )?;
        Ok(memory)
    }

    /// Store many memories in one transaction (bulk ingest: one commit for
    /// the whole batch). All or nothing: one invalid memory rejects the batch.
    pub fn store_memories(&self, batch: Vec<NewMemory>) -> Result<Vec<Memory>> {
        for (i, m) in batch.iter().enumerate() {
            m.validate().map_err(|e| at_index(i, e))?;
        }
        let now = now_micros();
        let prepared: Vec<(Memory, Option<Vec<f32>>, Vec<String>)> = batch
            .into_iter()
            .map(|n| {
                let explicit = n.entities.clone();
                let (m, v) = self.new_memory(n, now);
                (m, v, explicit)
            })
            .collect();
        for (i, (m, _, _)) in prepared.iter().enumerate() {
            check_expiry(m).map_err(|e| at_index(i, e))?;
        }
        self.store.write_then(
            |tx| {
                let mut written = Vec::with_capacity(prepared.len());
                let mut changes = Vec::new();
                for (i, (memory, embedding, explicit)) in prepared.iter().enumerate() {
                    let vector = self
                        .checked_vector(tx, embedding.clone())
                        .map_err(|e| at_index(i, e))?;
                    let key = oplog::append(
                        tx,
                        now,
                        Action::Upsert,
                        Kind::Memory,
                        &memory.id,
                        &memory.namespace,
                        None,
                    )?;
                    rows::insert(tx, memory, key, vector.as_deref())?;
                    self.link_mentions(tx, memory, key, None, explicit, now, &mut changes)?;
                    written.push((key, vector));
                }
                Ok((written, changes))
            },
            |(written, changes)| {
                for ((key, vector), (memory, _, _)) in written.into_iter().zip(&prepared) {
                    self.publish_content(key, None, memory, vector);
                }
                self.apply_graph_changes(changes);
            },
        )?;
        Ok(prepared.into_iter().map(|(m, _, _)| m).collect())
    }

    fn new_memory(&self, new: NewMemory, now: Timestamp) -> (Memory, Option<Vec<f32>>) {
        let memory = Memory {
            id: self.new_id("mem", now),
            namespace: new.namespace,
            content: new.content,
            memory_type: new.memory_type,
            source: new.source,
            confidence: new.confidence,
            importance: new.importance,
            metadata: new.metadata.unwrap_or_else(|| "{}".to_owned()),
            thread_id: new.thread_id,
            user_id: new.user_id,
            event_time: new.event_time,
            created_at: now,
            updated_at: now,
            accessed_at: now,
            valid_from: new.valid_from.unwrap_or(now),
            valid_until: None,
            invalidated_at: None,
            invalidation_reason: None,
            supersedes: None,
            superseded_by: None,
            expires_at: new.expires_at,
            tier: new.tier,
        };
        (memory, new.embedding)
    }

    /// Publish new content of a memory (after commit, under the writer lock).
    pub(super) fn publish_content(
        &self,
        key: i64,
        prev: Option<i64>,
        memory: &Memory,
        vector: Option<Vec<f32>>,
    ) {
        if let Some(v) = &vector {
            self.note_dim(v.len());
        }
        self.publish(
            key,
            &Change::Upsert {
                key: key as u64,
                prev: prev.map(|p| p as u64),
                labels: memory_labels(memory),
                text: &memory.content,
                vector: vector.map(Arc::from),
            },
        );
    }

    fn publish_labels(&self, seq: i64, key: i64, memory: &Memory) {
        self.publish(
            seq,
            &Change::Relabel {
                key: key as u64,
                labels: memory_labels(memory),
            },
        );
    }

    /// One memory by id. Records the access time when the engine records
    /// access (see `Engine::records_access`).
    pub fn get_memory(&self, namespace: &str, id: &str) -> Result<Memory> {
        validate_namespace(namespace)?;
        if !self.records_access() {
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
        validate_namespace(namespace)?;
        rows::get(&*self.store.reader()?, namespace, id)?.ok_or_else(|| not_found(id))
    }

    /// Apply a partial update. New content gets a new document key (and the
    /// new vector, when given); the old version is retired from the indexes.
    pub fn update_memory(&self, namespace: &str, id: &str, patch: MemoryPatch) -> Result<Memory> {
        validate_namespace(namespace)?;
        patch.validate()?;
        if patch.is_empty() {
            return Err(Error::invalid(
                "patch",
                "Nothing to update: pass at least one field (content, memory_type, confidence, \
                 importance, metadata, …).",
            ));
        }
        let now = now_micros();
        let mut patch = patch;
        let embedding = patch.embedding.take();
        self.store.write_then(
            |tx| {
                let mut m = rows::get(tx, namespace, id)?.ok_or_else(|| not_found(id))?;
                let prev = table::doc_key::<Memories>(tx, id)?.unwrap_or_default();
                let new_content = apply_patch(&mut m, patch, now);
                check_expiry(&m)?;
                let mut changes = Vec::new();
                let (seq, content_change) = if let Some(content) = new_content {
                    let vector = self.checked_vector(tx, embedding)?;
                    let seq = oplog::append(
                        tx,
                        now,
                        Action::Upsert,
                        Kind::Memory,
                        id,
                        namespace,
                        Some(prev),
                    )?;
                    m.content = content;
                    rows::update_content(tx, &m, seq, vector.as_deref())?;
                    // Names are matched again on the new text; explicit links stay.
                    crate::store::relations::clear_found_mentions(tx, id)?;
                    self.link_mentions(tx, &m, seq, Some(prev), &[], now, &mut changes)?;
                    (seq, Some(vector))
                } else {
                    let seq =
                        oplog::append(tx, now, Action::Meta, Kind::Memory, id, namespace, None)?;
                    (seq, None)
                };
                rows::update_fields(tx, &m)?;
                Ok((m, seq, prev, content_change, changes))
            },
            |(m, seq, prev, content_change, changes)| {
                match content_change {
                    Some(vector) => self.publish_content(seq, Some(prev), &m, vector),
                    None => self.publish_labels(seq, prev, &m),
                }
                self.apply_graph_changes(changes);
                m
            },
        )
    }

    /// Delete a memory for good (no history is kept; use `invalidate` for that).
    pub fn delete_memory(&self, namespace: &str, id: &str) -> Result<()> {
        validate_namespace(namespace)?;
        let now = now_micros();
        self.store.write_then(
            |tx| {
                let key = rows::delete(tx, namespace, id)?.ok_or_else(|| not_found(id))?;
                let seq = oplog::append(
                    tx,
                    now,
                    Action::Delete,
                    Kind::Memory,
                    id,
                    namespace,
                    Some(key),
                )?;
                Ok((seq, key))
            },
            |(seq, key)| {
                self.indexes.graph.write().unlink_doc(key as u64);
                self.publish(seq, &Change::Retire { key: key as u64 });
            },
        )
    }

    /// Memories of a namespace, newest first.
    pub fn list_memories(&self, namespace: &str, query: &ListQuery) -> Result<Vec<Memory>> {
        validate_namespace(namespace)?;
        check_limit(query.limit)?;
        rows::list(&*self.store.reader()?, namespace, query, now_micros())
    }

    /// Number of memories in a namespace, in every state.
    pub fn count_memories(&self, namespace: &str) -> Result<i64> {
        table::count::<Memories>(&*self.store.reader()?, namespace)
    }

    /// Close a memory's validity now (a soft delete: history still sees it).
    pub fn invalidate(&self, namespace: &str, id: &str, reason: Option<String>) -> Result<Memory> {
        validate_namespace(namespace)?;
        let now = now_micros();
        self.store.write_then(
            |tx| {
                let mut m = rows::get(tx, namespace, id)?.ok_or_else(|| not_found(id))?;
                if m.invalidated_at.is_some() || m.valid_until.is_some_and(|until| until <= now) {
                    let by = m
                        .superseded_by
                        .as_deref()
                        .map(|s| format!(" (superseded by {s})"));
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
                let key = table::doc_key::<Memories>(tx, id)?.unwrap_or_default();
                let seq = oplog::append(tx, now, Action::Meta, Kind::Memory, id, namespace, None)?;
                Ok((m, seq, key))
            },
            |(m, seq, key)| {
                self.publish_labels(seq, key, &m);
                m
            },
        )
    }

    /// Mark `old_id` as replaced by `new_id`: link both ways and close the old
    /// interval where the new one starts. Returns (old, new) as updated.
    pub fn supersede_memory(
        &self,
        namespace: &str,
        old_id: &str,
        new_id: &str,
    ) -> Result<(Memory, Memory)> {
        validate_namespace(namespace)?;
        if old_id == new_id {
            return Err(Error::invalid(
                "new_memory_id",
                "A memory cannot supersede itself; pass the id of the newer memory.",
            ));
        }
        let now = now_micros();
        self.store.write_then(
            |tx| {
                let mut old = rows::get(tx, namespace, old_id)?.ok_or_else(|| not_found(old_id))?;
                let mut new = rows::get(tx, namespace, new_id)?.ok_or_else(|| not_found(new_id))?;
                check_supersede(&old, &new)?;
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
                let old_key = table::doc_key::<Memories>(tx, old_id)?.unwrap_or_default();
                let old_seq =
                    oplog::append(tx, now, Action::Meta, Kind::Memory, old_id, namespace, None)?;
                let new_key = table::doc_key::<Memories>(tx, new_id)?.unwrap_or_default();
                let new_seq =
                    oplog::append(tx, now, Action::Meta, Kind::Memory, new_id, namespace, None)?;
                Ok((old, new, [(old_seq, old_key), (new_seq, new_key)]))
            },
            |(old, new, keys)| {
                self.publish_labels(keys[0].0, keys[0].1, &old);
                self.publish_labels(keys[1].0, keys[1].1, &new);
                (old, new)
            },
        )
    }
}

fn check_supersede(old: &Memory, new: &Memory) -> Result<()> {
    if let Some(existing) = &old.superseded_by {
        return Err(Error::invalid(
            "old_memory_id",
            format!("Memory {} is already superseded by {existing}.", old.id),
        ));
    }
    if let Some(earlier) = &new.supersedes {
        return Err(Error::invalid(
            "new_memory_id",
            format!(
                "Memory {} already supersedes {earlier}; a memory replaces at most one older \
                 memory. Store a separate new memory for {}.",
                new.id, old.id
            ),
        ));
    }
    if let Some(newer) = &new.superseded_by {
        return Err(Error::invalid(
            "new_memory_id",
            format!(
                "Memory {} is itself superseded by {newer}; supersede with {newer} instead.",
                new.id
            ),
        ));
    }
    Ok(())
}

/// Apply every field of `patch` except the content; returns the new content
/// when it differs from the current one.
fn apply_patch(m: &mut Memory, patch: MemoryPatch, now: Timestamp) -> Option<String> {
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
        tier,
        embedding: _,
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
    set_if(&mut m.tier, tier);
    m.updated_at = now;
    content.filter(|c| *c != m.content)
}

/// A memory must be able to hold at some point: its expiry comes after the
/// start of its validity.
fn check_expiry(m: &Memory) -> Result<()> {
    match m.expires_at {
        Some(exp) if exp <= m.valid_from => Err(Error::invalid(
            "expires_at",
            "expires_at must be later than valid_from (by default, now); the memory would \
             never be valid.",
        )),
        _ => Ok(()),
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

/// Prefix a batch item's error with its position.
fn at_index(i: usize, e: Error) -> Error {
    match e {
        Error::InvalidParameter { field, message } => Error::InvalidParameter {
            field: format!("memories[{i}].{field}"),
            message: format!("memories[{i}]: {message}"),
        },
        other => other,
    }
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
