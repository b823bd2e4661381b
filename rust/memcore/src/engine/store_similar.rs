//! `store_memory` with its update hints: store a memory, then find the valid
//! memories its vector is close to, in one engine call, so a caller crossing
//! from another language converts and crosses once instead of twice.

use super::Engine;
use crate::error::Result;
use crate::memory::{Memory, NewMemory};

/// Which stored memories to return beside a new one: those at least
/// `threshold` cosine-similar to it, at most `limit`, most similar first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimilarQuery {
    pub threshold: f32,
    pub limit: usize,
}

impl Engine {
    /// Store `new` (as [`Engine::store_memory`]), then, when it has a vector
    /// and `similar` is given, the valid memories of its namespace close to
    /// it, itself excluded (as [`Engine::similar_memories`]).
    ///
    /// Returns the memory as stored and the `(memory, cosine)` pairs found
    /// (none without a vector or a query).
    pub fn store_memory_with_similar(
        &self,
        new: NewMemory,
        similar: Option<SimilarQuery>,
    ) -> Result<(Memory, Vec<(Memory, f32)>)> {
        let probe = similar.and_then(|q| new.embedding.clone().map(|v| (q, v)));
        let namespace = new.namespace.clone();
        let stored = self.store_memory(new)?;
        let found = match probe {
            Some((q, vector)) => self.similar_memories(
                &namespace,
                &vector,
                Some(stored.id.as_str()),
                q.threshold,
                q.limit,
            )?,
            None => Vec::new(),
        };
        Ok((stored, found))
    }
}
