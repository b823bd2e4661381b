//! `memcore._core`: PyO3 bindings of the pure Rust core. Conversion and error
//! mapping only; every algorithm lives in the `memcore` crate.

// PyO3 extracts arguments as owned values; taking them by reference would
// only add a copy at the boundary.
#![allow(clippy::needless_pass_by_value)]

mod arrays;
mod code;
mod conversation;
mod engine;
mod errors;
mod graph;
mod json;
mod memories;
mod placement;
mod records;
mod replication;
mod restore;
mod search;
mod store_health;
mod writes;

use pyo3::prelude::*;

/// mimalloc for every allocation of the core: a bulk write allocates per
/// memory (rows, terms, postings, vectors), and glibc's malloc and free were a
/// tenth of store_memories' thread. Interleaved ingests of 60k-100k went
/// 8-24% faster; searches and resident memory did not move (312 vs 319 MB at
/// 100k after queries). SQLite and usearch keep the system allocator (their
/// own C/C++ calls). Local-dynamic TLS because this library is dlopen'ed by
/// Python: the initial-exec model can fail to load ("cannot allocate memory
/// in static TLS block") once other extensions used up the static TLS space.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Native core of memcore (storage, indexes, graph, fusion).
#[pymodule]
mod _core {
    use pyo3::prelude::*;

    #[pymodule_export]
    use crate::engine::PyEngine;
    #[pymodule_export]
    use crate::store_health::repair_store;

    #[pymodule_export]
    use crate::code::snippet_of;
    #[pymodule_export]
    use crate::conversation::turn_vector_text;
    #[pymodule_export]
    use crate::placement::{namespace_bucket, parse_namespace_range};
    #[pymodule_export]
    use crate::replication::{database_key, reset_replica};

    // The records the engine returns (records/).
    #[pymodule_export]
    use crate::records::code::CodeHit;
    #[pymodule_export]
    use crate::records::conversation::{
        ContextItem, ContextProcedure, ContextResult, DocumentHistory, DocumentSignal,
        DocumentState, DocumentVersion, ProcedureRecord, TurnRecord, VersionTouch,
    };
    #[pymodule_export]
    use crate::records::facts::{CompactReport, IndexHealth, MemoryRecord, Scores, SearchHit};
    #[pymodule_export]
    use crate::records::graph::{
        Analytics, ConnectedEntity, EntityHit, EntityRecord, EntityView, GraphPage, GraphQuality,
        GraphView, ImportantEntity, ObservationRecord, OrphanedEntity, RecentChange, RelatedEntity,
        RelationRecord,
    };
    #[pymodule_export]
    use crate::records::store::{
        BackupReport, CheckProblem, IndexCheck, MaintenanceReport, RepairReport, StoreCheck,
    };

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))?;
        m.add("SCHEMA_VERSION", memcore::store::schema_version())?;
        // Fusion weights (vector, bm25, ppr): the measured default and the
        // first design's preset, defined once in the core.
        let w = |w: memcore::Weights| (w.vector, w.bm25, w.ppr);
        m.add("DEFAULT_WEIGHTS", w(memcore::Weights::TUNED))?;
        m.add("DESIGN_WEIGHTS", w(memcore::Weights::DESIGN))?;
        m.add("DEFAULT_THREAD_PRIOR", memcore::THREAD_PRIOR)?;
        m.add("DEFAULT_QUESTION_PENALTY", memcore::asking::ASKING_PENALTY)?;
        m.add("LIST_SPREAD", memcore::listing::LIST_SPREAD)?;
        // Size limits the core enforces, for the facade to check first.
        m.add("MAX_TEXT_BYTES", memcore::memory::MAX_TEXT_BYTES)?;
        m.add("MAX_ARGS_BYTES", memcore::conversation::MAX_ARGS_BYTES)?;
        m.add("SNIPPET_MAX_CHARS", crate::records::code::SNIPPET_MAX_CHARS)?;
        m.add("MAX_RESULTS", memcore::MAX_RESULTS)?;
        // The knowledge-graph contract's limits, for the tool schemas to state.
        {
            use memcore::knowledge::rules as r;
            m.add("MAX_NAME_CHARS", r::MAX_NAME_CHARS)?;
            m.add("MAX_TYPE_CHARS", r::MAX_TYPE_CHARS)?;
            m.add("MIN_OBSERVATION_CHARS", r::MIN_OBSERVATION_CHARS)?;
            m.add("MAX_OBSERVATION_CHARS", r::MAX_OBSERVATION_CHARS)?;
            m.add("MAX_SENTENCES", r::MAX_SENTENCES)?;
        }
        crate::errors::register_codes(m)
    }
}
