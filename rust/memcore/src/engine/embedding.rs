//! The dimension/model guard and the checks every incoming vector passes.
//!
//! The first open with a model records its id and dimension; later opens
//! compare, because vectors of two models (or two dimensions) are not
//! comparable and mixing them silently ruins every search.

use rusqlite::Connection;

use super::Engine;
use crate::error::{Error, Result};
use crate::store::meta;

/// Which model made the stored vectors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddingIdentity {
    /// Model id, or `None` when vectors were given directly without a model.
    pub model: Option<String>,
    pub dim: usize,
}

pub(super) fn stored_dim(conn: &Connection) -> Result<Option<usize>> {
    Ok(meta::get(conn, meta::EMBEDDING_DIM)?.and_then(|v| v.parse().ok()))
}

impl Engine {
    /// The recorded model and dimension, if any vector or model was ever recorded.
    pub fn embedding_identity(&self) -> Result<Option<EmbeddingIdentity>> {
        let conn = self.store.reader()?;
        let Some(dim) = stored_dim(&conn)? else {
            return Ok(None);
        };
        let model = meta::get(&conn, meta::EMBEDDING_MODEL)?;
        Ok(Some(EmbeddingIdentity { model, dim }))
    }

    /// Compare the configured model with the recorded one; record it when the
    /// store has none yet. Fails with `DIMENSION_MISMATCH` on any difference.
    pub fn check_embedding_identity(&self, model: &str, dim: usize) -> Result<()> {
        if dim == 0 {
            return Err(Error::invalid(
                "dim",
                "An embedding dimension must be at least 1.",
            ));
        }
        match self.embedding_identity()? {
            Some(stored) if stored.dim != dim => Err(Error::DimensionMismatch {
                message: format!(
                    "Dimension mismatch: database has {}d vectors, configured model produces \
                     {dim}d. Use --force-model or --reset-memory",
                    stored.dim
                ),
            }),
            Some(EmbeddingIdentity {
                model: Some(stored_model),
                ..
            }) if stored_model != model => Err(Error::DimensionMismatch {
                message: format!(
                    "Model mismatch: database vectors were made by '{stored_model}', configured \
                     model is '{model}' (both {dim}d, but not comparable). Use --force-model or \
                     --reset-memory"
                ),
            }),
            Some(EmbeddingIdentity { model: Some(_), .. }) => Ok(()),
            // No model recorded yet (empty store, or raw vectors only): adopt this one.
            _ if self.is_read_only() => Ok(()),
            _ => self.set_embedding_identity(model, dim),
        }
    }

    /// Record `model` and `dim` as the store's identity (first open, or after a reset).
    pub fn set_embedding_identity(&self, model: &str, dim: usize) -> Result<()> {
        self.store.write(|tx| {
            meta::set(tx, meta::EMBEDDING_MODEL, model)?;
            meta::set(tx, meta::EMBEDDING_DIM, &dim.to_string())
        })?;
        *self.dim.write() = Some(dim);
        Ok(())
    }

    /// Validate an incoming vector and return it L2-normalised (so a dot product
    /// is the cosine everywhere downstream). The first vector of a store without
    /// a recorded dimension fixes the dimension inside the caller's transaction.
    pub(super) fn prepare_vector(
        &self,
        conn: &Connection,
        mut vector: Vec<f32>,
    ) -> Result<Vec<f32>> {
        // Inside the writer's transaction: a dimension fixed by a concurrent
        // first write has committed by now even if `self.dim` lags behind.
        let expected = match *self.dim.read() {
            Some(d) => Some(d),
            None => stored_dim(conn)?,
        };
        match expected {
            Some(d) if d != vector.len() => {
                return Err(Error::invalid(
                    "vector",
                    format!(
                        "The vector has {} dimensions; this store holds {d}-dimensional vectors.",
                        vector.len()
                    ),
                ));
            }
            None if vector.is_empty() => {
                return Err(Error::invalid("vector", "The vector is empty."));
            }
            None => meta::set(conn, meta::EMBEDDING_DIM, &vector.len().to_string())?,
            Some(_) => {}
        }
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        if !norm.is_finite() {
            return Err(Error::invalid(
                "vector",
                "The vector contains NaN or infinite values.",
            ));
        }
        if norm == 0.0 {
            return Err(Error::invalid(
                "vector",
                "The vector is all zeros and has no direction; pass a real embedding.",
            ));
        }
        for x in &mut vector {
            *x /= norm;
        }
        Ok(vector)
    }

    /// Validate and normalise an incoming vector, and make sure the vector
    /// index exists for its dimension before anything commits.
    pub(super) fn checked_vector(
        &self,
        tx: &rusqlite::Connection,
        embedding: Option<Vec<f32>>,
    ) -> Result<Option<Vec<f32>>> {
        let Some(raw) = embedding else {
            return Ok(None);
        };
        let vector = self.prepare_vector(tx, raw)?;
        self.indexes.vectors_for(vector.len())?;
        Ok(Some(vector))
    }

    /// Called after a transaction that fixed the dimension has committed.
    pub(super) fn note_dim(&self, dim: usize) {
        let mut guard = self.dim.write();
        if guard.is_none() {
            *guard = Some(dim);
        }
    }
}
