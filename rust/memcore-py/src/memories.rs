//! Memory operations on `Engine`: conversion in, one core call without the
//! GIL, conversion out.

use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

use memcore::engine::SimilarQuery;
use memcore::{ListQuery, MemoryPatch, MemoryType, NewMemory, Source, Tier, ValidAt};

use crate::arrays::{owned_rows, owned_vector};
use crate::engine::PyEngine;
use crate::errors::{BindError, BindResult, run};
use crate::records::facts::MemoryRecord;
use crate::writes::run_write;

/// The validity filter of a listing: an instant wins over `valid_only`.
pub fn valid_at(as_of: Option<i64>, valid_only: bool) -> ValidAt {
    match (as_of, valid_only) {
        (Some(t), _) => ValidAt::At(t),
        (None, true) => ValidAt::Now,
        (None, false) => ValidAt::Any,
    }
}

#[pymethods]
impl PyEngine {
    /// Store a memory; returns it as stored, and the valid memories it may
    /// update (one call, one conversion: the facade's `store_memory` needs both).
    ///
    /// Args:
    ///     namespace: Isolation boundary.
    ///     content: The fact.
    ///     vector: Its embedding (float32, 1-D), or None for a text-only memory.
    ///     metadata: JSON text.
    ///     event_time, valid_from, expires_at: Microseconds since the epoch.
    ///     similar_threshold: With a vector, also return the valid memories at least
    ///         this cosine-similar to the new one (itself excluded); None for none.
    ///     similar_limit: At most this many of them.
    ///
    /// Returns:
    ///     `(memory, [(similar memory, cosine), ...])`, most similar first.
    ///
    /// Raises:
    ///     InvalidParameterError: A value is out of range or malformed.
    ///     PayloadTooLargeError: Content or metadata is over the size limit.
    #[pyo3(signature = (namespace, content, *, memory_type = "semantic", source = "extracted",
        confidence = 1.0, importance = 0.5, metadata = None, thread_id = None, user_id = None,
        event_time = None, valid_from = None, expires_at = None, tier = "durable", vector = None,
        entities = None, similar_threshold = None, similar_limit = 5))]
    #[allow(clippy::too_many_arguments)]
    fn store_memory<'py>(
        &self,
        py: Python<'py>,
        namespace: String,
        content: String,
        memory_type: &str,
        source: &str,
        confidence: f64,
        importance: f64,
        metadata: Option<String>,
        thread_id: Option<String>,
        user_id: Option<String>,
        event_time: Option<i64>,
        valid_from: Option<i64>,
        expires_at: Option<i64>,
        tier: &str,
        vector: Option<PyReadonlyArray1<'py, f32>>,
        entities: Option<Vec<String>>,
        similar_threshold: Option<f32>,
        similar_limit: usize,
    ) -> BindResult<(MemoryRecord, Vec<(MemoryRecord, f32)>)> {
        let engine = self.engine()?;
        let new = NewMemory {
            namespace,
            content,
            memory_type: MemoryType::parse(memory_type)?,
            source: Source::parse(source)?,
            confidence,
            importance,
            metadata,
            thread_id,
            user_id,
            event_time,
            valid_from,
            expires_at,
            tier: Tier::parse(tier)?,
            embedding: owned_vector(vector),
            entities: entities.unwrap_or_default(),
        };
        let similar = similar_threshold.map(|threshold| SimilarQuery {
            threshold,
            limit: similar_limit,
        });
        let (memory, found) = run_write(py, &engine, new, |new| {
            engine.store_memory_with_similar(new, similar)
        })?;
        let found = found
            .into_iter()
            .map(|(m, cosine)| (MemoryRecord::from(m), cosine))
            .collect();
        Ok((MemoryRecord::from(memory), found))
    }

    /// Store many memories in one transaction (all or nothing).
    ///
    /// Args:
    ///     contents: The facts.
    ///     vectors: One row per content (float32, 2-D), or None.
    ///     metadatas: JSON text per content (or None entries), or None.
    ///     thread_ids: Thread per content (or None entries), or None.
    #[pyo3(signature = (namespace, contents, *, vectors = None, memory_type = "semantic",
        source = "extracted", confidence = 1.0, importance = 0.5, metadatas = None,
        thread_ids = None, user_id = None))]
    #[allow(clippy::too_many_arguments)]
    fn store_memories<'py>(
        &self,
        py: Python<'py>,
        namespace: String,
        contents: Vec<String>,
        vectors: Option<PyReadonlyArray2<'py, f32>>,
        memory_type: &str,
        source: &str,
        confidence: f64,
        importance: f64,
        metadatas: Option<Vec<Option<String>>>,
        thread_ids: Option<Vec<Option<String>>>,
        user_id: Option<String>,
    ) -> BindResult<Vec<MemoryRecord>> {
        let engine = self.engine()?;
        let n = contents.len();
        let mut vectors = owned_rows(vectors);
        for (field, len) in [
            ("vectors", vectors.as_ref().map(Vec::len)),
            ("metadatas", metadatas.as_ref().map(Vec::len)),
            ("thread_ids", thread_ids.as_ref().map(Vec::len)),
        ] {
            if let Some(len) = len.filter(|l| *l != n) {
                return Err(BindError::Core(memcore::Error::invalid(
                    field,
                    format!("{field} has {len} entries but there are {n} contents."),
                )));
            }
        }
        let memory_type = MemoryType::parse(memory_type)?;
        let source = Source::parse(source)?;
        let mut metadatas = metadatas.map(Vec::into_iter);
        let mut thread_ids = thread_ids.map(Vec::into_iter);
        let mut vector_rows = vectors.take().map(Vec::into_iter);
        let batch: Vec<NewMemory> = contents
            .into_iter()
            .map(|content| NewMemory {
                namespace: namespace.clone(),
                content,
                memory_type,
                source,
                confidence,
                importance,
                metadata: metadatas.as_mut().and_then(Iterator::next).flatten(),
                thread_id: thread_ids.as_mut().and_then(Iterator::next).flatten(),
                user_id: user_id.clone(),
                embedding: vector_rows.as_mut().and_then(Iterator::next),
                ..NewMemory::default()
            })
            .collect();
        let stored = run_write(py, &engine, batch, |batch| engine.store_memories(batch))?;
        Ok(stored.into_iter().map(MemoryRecord::from).collect())
    }

    /// One memory by id (records the access time).
    ///
    /// Raises:
    ///     MemoryNotFoundError: No such memory in the namespace.
    fn get_memory(&self, py: Python<'_>, namespace: &str, id: &str) -> BindResult<MemoryRecord> {
        let engine = self.engine()?;
        let memory = run(py, &engine, || engine.get_memory(namespace, id))?;
        Ok(MemoryRecord::from(memory))
    }

    /// Update some fields of a memory; a new `content` needs its new `vector`
    /// when the store keeps vectors.
    #[pyo3(signature = (namespace, id, *, content = None, memory_type = None, source = None,
        confidence = None, importance = None, metadata = None, thread_id = None, user_id = None,
        event_time = None, expires_at = None, tier = None, vector = None))]
    #[allow(clippy::too_many_arguments)]
    fn update_memory<'py>(
        &self,
        py: Python<'py>,
        namespace: &str,
        id: &str,
        content: Option<String>,
        memory_type: Option<&str>,
        source: Option<&str>,
        confidence: Option<f64>,
        importance: Option<f64>,
        metadata: Option<String>,
        thread_id: Option<String>,
        user_id: Option<String>,
        event_time: Option<i64>,
        expires_at: Option<i64>,
        tier: Option<&str>,
        vector: Option<PyReadonlyArray1<'py, f32>>,
    ) -> BindResult<MemoryRecord> {
        let engine = self.engine()?;
        let patch = MemoryPatch {
            content,
            memory_type: memory_type.map(MemoryType::parse).transpose()?,
            source: source.map(Source::parse).transpose()?,
            confidence,
            importance,
            metadata,
            thread_id,
            user_id,
            event_time,
            expires_at,
            tier: tier.map(Tier::parse).transpose()?,
            embedding: owned_vector(vector),
        };
        let memory = run_write(py, &engine, patch, |patch| {
            engine.update_memory(namespace, id, patch)
        })?;
        Ok(MemoryRecord::from(memory))
    }

    /// Delete a memory for good.
    fn delete_memory(&self, py: Python<'_>, namespace: &str, id: &str) -> BindResult<()> {
        let engine = self.engine()?;
        run_write(py, &engine, (), |()| engine.delete_memory(namespace, id))
    }

    /// Memories newest first. `as_of` (microseconds) shows what was valid
    /// then; `valid_only` shows what is valid now; neither shows everything.
    #[pyo3(signature = (namespace, *, limit = 20, offset = 0, thread_id = None, as_of = None,
        valid_only = false))]
    #[allow(clippy::too_many_arguments)]
    fn list_memories(
        &self,
        py: Python<'_>,
        namespace: &str,
        limit: usize,
        offset: usize,
        thread_id: Option<String>,
        as_of: Option<i64>,
        valid_only: bool,
    ) -> BindResult<Vec<MemoryRecord>> {
        let engine = self.engine()?;
        let query = ListQuery {
            limit,
            offset,
            thread_id,
            valid: valid_at(as_of, valid_only),
        };
        let memories = run(py, &engine, || engine.list_memories(namespace, &query))?;
        Ok(memories.into_iter().map(MemoryRecord::from).collect())
    }

    /// Up to `limit` memories stored without a vector (of `namespace`, or of
    /// every namespace), oldest first: `(namespace, id, content)`.
    #[pyo3(signature = (namespace = None, limit = 256))]
    fn pending_vectors(
        &self,
        py: Python<'_>,
        namespace: Option<&str>,
        limit: usize,
    ) -> BindResult<Vec<(String, String, String)>> {
        let engine = self.engine()?;
        let pending = run(py, &engine, || engine.pending_vectors(namespace, limit))?;
        Ok(pending
            .into_iter()
            .map(|p| (p.namespace, p.id, p.content))
            .collect())
    }

    /// How many memories wait for their vector, all namespaces.
    fn count_pending_vectors(&self, py: Python<'_>) -> BindResult<i64> {
        let engine = self.engine()?;
        run(py, &engine, || engine.count_pending_vectors())
    }

    /// Attach `vector` to a memory stored without one whose content is still
    /// `content`; False when there was nothing to do.
    fn attach_vector<'py>(
        &self,
        py: Python<'py>,
        namespace: &str,
        id: &str,
        content: &str,
        vector: PyReadonlyArray1<'py, f32>,
    ) -> BindResult<bool> {
        let engine = self.engine()?;
        let vector = owned_vector(Some(vector)).unwrap_or_default();
        run_write(py, &engine, vector, |vector| {
            engine.attach_vector(namespace, id, content, vector)
        })
    }

    /// Number of memories in a namespace (every state).
    fn count_memories(&self, py: Python<'_>, namespace: &str) -> BindResult<i64> {
        let engine = self.engine()?;
        run(py, &engine, || engine.count_memories(namespace))
    }

    /// Close a memory's validity now; it stays visible to `as_of` reads.
    #[pyo3(signature = (namespace, id, reason = None))]
    fn invalidate(
        &self,
        py: Python<'_>,
        namespace: &str,
        id: &str,
        reason: Option<String>,
    ) -> BindResult<MemoryRecord> {
        let engine = self.engine()?;
        let memory = run_write(py, &engine, reason, |reason| {
            engine.invalidate(namespace, id, reason)
        })?;
        Ok(MemoryRecord::from(memory))
    }

    /// Mark `old_id` superseded by `new_id`; returns `(old, new)` as updated.
    fn supersede_memory(
        &self,
        py: Python<'_>,
        namespace: &str,
        old_id: &str,
        new_id: &str,
    ) -> BindResult<(MemoryRecord, MemoryRecord)> {
        let engine = self.engine()?;
        let (old, new) = run_write(py, &engine, (), |()| {
            engine.supersede_memory(namespace, old_id, new_id)
        })?;
        Ok((MemoryRecord::from(old), MemoryRecord::from(new)))
    }
}
