//! memcore's pure Rust core: the durable store, the derived indexes, the graph
//! and fusion. No Python here; `memcore-py` binds it.

pub mod engine;
pub mod error;
pub mod ids;
pub mod kind;
pub mod memory;
pub mod store;
pub mod temporal;

pub use engine::{EmbeddingIdentity, Engine, EngineOptions};
pub use error::{Error, Result};
pub use kind::{Kind, KindSet};
pub use memory::{Memory, MemoryPatch, MemoryType, NewMemory, Source};
pub use store::Durability;
pub use store::memories::ListQuery;
pub use temporal::{Timestamp, ValidAt};
