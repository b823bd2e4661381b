//! memcore's pure Rust core: the durable store, the derived indexes, the graph
//! and fusion. No Python here; `memcore-py` binds it.

pub mod asking;
pub mod catalog;
pub mod code;
pub mod conversation;
pub mod engine;
pub mod error;
pub mod fsutil;
pub mod fusion;
pub mod graph;
pub mod ids;
pub mod kind;
pub mod knowledge;
pub mod listing;
pub mod memory;
pub mod panics;
#[cfg(feature = "postgres")]
pub mod pg;
pub mod priority;
pub mod store;
pub mod temporal;
pub mod text;
pub mod vector;

pub use engine::{
    CompactReport, EmbeddingIdentity, Engine, EngineOptions, Hit, IndexStatus, MAX_RESULTS,
    RecallOptions, Scores, SearchQuery, THREAD_PRIOR,
};
pub use error::{Error, ErrorCode, Result};
pub use fusion::{FusionMode, Weights};
pub use kind::{Kind, KindSet};
pub use memory::{Memory, MemoryPatch, MemoryType, NewMemory, Source, Tier};
pub use store::Durability;
pub use store::memories::ListQuery;
pub use temporal::{Timestamp, ValidAt};
