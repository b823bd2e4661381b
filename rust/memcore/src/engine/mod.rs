//! The engine ties the store and the derived indexes together: every public
//! operation of the core goes through it, so the write path and the read path
//! each exist exactly once.

mod embedding;
mod memories;
mod reset;

use std::path::Path;

use parking_lot::RwLock;

use crate::error::{Error, Result};
use crate::ids::IdGenerator;
use crate::store::{Durability, Store, StoreOptions, meta};
use crate::temporal::now_micros;

pub use embedding::EmbeddingIdentity;

/// How to open an engine.
#[derive(Debug, Clone, Default)]
pub struct EngineOptions {
    /// Open without the writer lock; every write fails.
    pub read_only: bool,
    /// Commit durability (see [`Durability`]).
    pub durability: Durability,
}

/// An open memcore data directory. `Sync`: share it across threads freely.
#[derive(Debug)]
pub struct Engine {
    store: Store,
    ids: IdGenerator,
    /// Dimension of stored vectors, once known (from metadata or the first vector).
    dim: RwLock<Option<usize>>,
}

impl Engine {
    /// Open (or create) the data directory `dir`.
    pub fn open(dir: &Path, options: &EngineOptions) -> Result<Self> {
        let store = Store::open(
            dir,
            StoreOptions {
                read_only: options.read_only,
                durability: options.durability,
            },
        )?;
        if !store.is_read_only() {
            store.write(|tx| {
                if meta::get(tx, meta::CREATED_AT)?.is_none() {
                    meta::set(tx, meta::CREATED_AT, &now_micros().to_string())?;
                }
                Ok(())
            })?;
        }
        let dim = embedding::stored_dim(&*store.reader()?)?;
        Ok(Engine {
            store,
            ids: IdGenerator::default(),
            dim: RwLock::new(dim),
        })
    }

    /// The data directory.
    pub fn dir(&self) -> &Path {
        self.store.dir()
    }

    /// Whether this engine refuses writes.
    pub fn is_read_only(&self) -> bool {
        self.store.is_read_only()
    }

    /// The underlying store (for maintenance and inspection).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Every metadata key/value of the store.
    pub fn metadata(&self) -> Result<Vec<(String, String)>> {
        meta::all(&*self.store.reader()?)
    }

    /// Run SQLite's integrity check; `Ok(())` when the database is sound.
    pub fn quick_check(&self) -> Result<()> {
        let result: String = self
            .store
            .reader()?
            .query_row("PRAGMA quick_check", [], |r| r.get(0))?;
        if result == "ok" {
            Ok(())
        } else {
            Err(Error::Index(format!("quick_check failed: {result}")))
        }
    }

    fn new_id(&self, prefix: &str, now: i64) -> String {
        self.ids.next(prefix, (now / 1000) as u64)
    }
}
