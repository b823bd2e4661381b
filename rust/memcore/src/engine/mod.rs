//! The engine ties the store and the derived indexes together: every public
//! operation of the core goes through it, so the write path and the read path
//! each exist exactly once.

mod backup;
mod check;
mod code;
mod code_weights;
mod context;
mod conversation;
mod db_check;
mod documents;
mod embedding;
mod follow;
mod graph_quality;
mod graph_rank;
mod graph_read;
mod graph_write;
mod health;
mod hits;
#[cfg(test)]
mod hub_tests;
mod index_owner;
mod indexer;
mod indexes;
mod maintenance;
mod memories;
mod mentions;
mod overview;
mod pending_vectors;
#[cfg(feature = "postgres")]
mod pg_mode;
mod query;
mod recovery;
mod replies;
mod reset;
mod restore;
mod search;
#[cfg(test)]
mod shared_open_tests;
mod sharing;
mod store_similar;
mod summaries;
mod thread_prior;
mod thread_spread;
mod turn_claims;
mod upkeep;
mod verify;

use std::path::Path;
use std::sync::{Arc, OnceLock};

use parking_lot::RwLock;

use crate::error::{Error, Result};
use crate::ids::IdGenerator;
use crate::store::{DB_FILE, Durability, Store, StoreOptions, health as store_health, meta};
use crate::temporal::now_micros;
use crate::vector::HnswParams;

pub use backup::BackupReport;
pub use check::{CheckProblem, CheckReport, IndexCheck, RepairReport, repair_store};
pub use code::{FileOutcome, chunk_labels};
pub use code_weights::{DESCRIPTION_WEIGHTS, IDENTIFIER_WEIGHTS, code_recall, names_identifier};
pub use context::{
    CHARS_PER_TOKEN, ContextItem, ContextRequest, ContextResult, ContextScoring, ProcedureView,
    VersionSignal, estimate_tokens,
};
pub use conversation::{DocumentHistory, DocumentState};
pub use embedding::EmbeddingIdentity;
pub use graph_quality::GraphQuality;
pub use graph_read::{
    Analytics, Connected, EntityView, GraphArrays, GraphPage, MAX_DEPTH, MAX_PATH, RecentChange,
    RelatedEntity,
};
pub use graph_write::{ObservationDraft, WriteContext};
pub use hits::{Hit, Scores};
pub use indexer::CompactReport;
use indexer::{Indexer, Job};
pub use indexes::INDEX_DIR;
use indexes::{Change, Indexes};
pub use memories::MAX_LIST_LIMIT;
pub use overview::{DirEntry, top_terms};
pub use pending_vectors::PendingMemory;
#[cfg(feature = "postgres")]
pub use pg_mode::{MIN_SEQ_WAIT, ReplicaReset, Written, database_key, reset_replica};
pub use query::SearchQuery;
pub use restore::{ExportKind, Restorable, RestoreReport};
pub use search::{MAX_RESULTS, RecallOptions, THREAD_PRIOR};
pub use store_similar::SimilarQuery;
pub use summaries::summarize;
pub use turn_claims::TurnClaim;
pub use upkeep::{MaintenanceOptions, MaintenanceReport};

/// Tables whose records carry generated ids (`prefix_` + 26-char body).
const ID_TABLES: &[&str] = &[
    "memories",
    "entities",
    "observations",
    "relations",
    "turns",
    "documents",
    "doc_versions",
    "procedures",
    "code_chunks",
];

/// Metadata key: the text analyser the BM25 index was built with.
const TEXT_ANALYZER: &str = "text_analyzer";
/// The analyser used when none is configured.
pub const DEFAULT_ANALYZER: &str = "english";

/// How to open an engine.
#[derive(Debug, Clone, Default)]
pub struct EngineOptions {
    /// Open without the writer lock; every write fails. A background thread
    /// follows the writer's commits into the search state (see `follow`).
    pub read_only: bool,
    /// Commit durability (see [`Durability`]).
    pub durability: Durability,
    /// BM25 analyser ("english" when None and none stored). Changing it
    /// rebuilds the text index from the store.
    pub text_analyzer: Option<String>,
    /// HNSW parameters.
    pub hnsw: HnswParams,
    /// Threads the indexer may use to insert into HNSW (0 = all cores).
    pub index_threads: usize,
    /// Other processes may open the store for writing too (`sharing`): each
    /// follows the others' writes, and one of them owns the index files.
    pub shared: bool,
    /// On a PostgreSQL node: a replica that is another database's copy,
    /// holds writes its database lost, or is damaged, is emptied and built
    /// again from the database instead of refused (`--replica-rebuild`).
    pub replica_rebuild: bool,
}

/// Sizes and health of the derived indexes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexStatus {
    /// Live searchable documents (all kinds).
    pub documents: usize,
    /// Vectors in the HNSW graph.
    pub vectors: usize,
    /// Vectors searchable but not yet in the graph.
    pub vectors_pending: usize,
    /// Removed vectors still occupying graph slots.
    pub vector_tombstones: usize,
    /// Vector dimension, once known.
    pub dim: Option<usize>,
    /// Documents committed to the text index.
    pub text_documents: u64,
    /// Documents searchable but not yet committed to the text index.
    pub text_pending: usize,
    /// The indexing failure not yet recovered from (a commit or save that
    /// keeps failing), if any; cleared once the indexes catch up.
    pub last_error: Option<String>,
    /// What an operator should know since open: damaged index files set
    /// aside and rebuilt, panics caught, rebuilds asked for.
    pub warnings: Vec<String>,
}

/// An open memcore data directory. `Sync`: share it across threads freely.
#[derive(Debug)]
pub struct Engine {
    /// Shared with the thread applying PostgreSQL's log on a node (`pg_mode`).
    store: Arc<Store>,
    ids: IdGenerator,
    /// Dimension of stored vectors, once known (from metadata or the first
    /// vector; shared with a read-only engine's follower, which learns it
    /// when the writer stores the first vector).
    dim: Arc<RwLock<Option<usize>>>,
    indexes: Arc<Indexes>,
    /// The indexer of the owner of the index files; shared with the
    /// PostgreSQL log's applier, like `store`, and set later in a process of a
    /// shared store that takes the files over (`sharing`).
    indexer: Arc<OnceLock<Arc<Indexer>>>,
    /// Conversations retrieval surfaced since the last flush: (namespace,
    /// conversation) → when. Kept in memory so a read never writes; flushed
    /// by maintenance (before archiving) and on close. Losing it in a crash
    /// only makes archiving a little more eager.
    surfaced: parking_lot::Mutex<std::collections::HashMap<(String, String), i64>>,
    /// A read-only engine's thread applying the writer's new commits (or, in
    /// a store other processes write too, their writes).
    follower: Option<follow::Follower>,
    /// In a store other processes write too: the order in which this
    /// process's own writes reach its search state and indexer (`sharing`).
    gate: Option<Arc<sharing::Gate>>,
    /// Held while this process owns the index files of a shared store.
    _owner: Arc<parking_lot::Mutex<Option<crate::store::OwnerLock>>>,
    /// A check of a large database running in the background (`db_check`).
    _db_check: Option<db_check::Background>,
    /// `save_memory` calls and rejections since open (`get_analytics`).
    graph_stats: graph_quality::GraphStats,
    /// The node's side of PostgreSQL: its follower of the shared log.
    #[cfg(feature = "postgres")]
    pg: Option<pg_mode::PgNode>,
}

impl Engine {
    /// Open (or create) the data directory `dir`: the store, then the derived
    /// indexes, caught up from the op log. A database that lost data is
    /// refused with the fix (see `check`), never opened as an empty store.
    pub fn open(dir: &Path, options: &EngineOptions) -> Result<Self> {
        let db_path = dir.join(DB_FILE);
        store_health::ensure_whole(&db_path, check::indexes_exist(dir))?;
        Self::open_whole(dir, options).map_err(|e| check::explain_open_error(&db_path, e))
    }

    fn open_whole(dir: &Path, options: &EngineOptions) -> Result<Self> {
        let shared = options.shared && !options.read_only;
        let store = Arc::new(Store::open(
            dir,
            StoreOptions {
                read_only: options.read_only,
                durability: options.durability,
                shared,
            },
        )?);
        // A small database is checked whole before anything reads or writes
        // it; a larger one in the background, below (`db_check`).
        let checked_now = db_check::small_enough(&store.db_path(), db_check::CHECK_AT_OPEN_BYTES);
        if checked_now {
            db_check::now(&store)?;
        }
        if !store.is_read_only() {
            store.write(|tx| {
                if meta::get(tx, meta::CREATED_AT)?.is_none() {
                    meta::set(tx, meta::CREATED_AT, &now_micros().to_string())?;
                }
                Ok(())
            })?;
        }
        // In a shared store, one process at a time writes the index files;
        // the others keep what they apply in memory (`sharing`).
        let owner = if shared {
            index_owner::acquire_or_wait(&dir.join(INDEX_DIR))?
        } else {
            None
        };
        let index_read_only = options.read_only || (shared && owner.is_none());
        let analyzer =
            Self::settle_analyzer(&store, options.text_analyzer.as_deref(), index_read_only)?;
        let dim = embedding::stored_dim(&*store.reader()?)?;
        let (indexes, text_seq, vector_seq) =
            Indexes::open(dir, &analyzer, dim, options.hnsw, index_read_only)?;
        let (text_seq, vector_seq) =
            verify::at_open(&store, &indexes, text_seq, vector_seq, index_read_only)?;
        let indexes = Arc::new(indexes);
        // The writer of the index files checks a larger database in the
        // background (one process of a shared store, not each of them).
        let db_check = if !checked_now && !index_read_only {
            Some(db_check::Background::start(&store, indexes.clone())?)
        } else {
            None
        };
        let threads = match options.index_threads {
            0 => std::thread::available_parallelism().map_or(1, usize::from),
            n => n,
        };
        let indexer = (!index_read_only).then(|| {
            Arc::new(Indexer::start(
                indexes.clone(),
                text_seq,
                vector_seq,
                threads,
            ))
        });
        let send = indexer.as_ref().map(|ix| move |j| ix.send(j));
        let replayed = recovery::open_state(
            &*store.reader()?,
            &indexes,
            (text_seq, vector_seq),
            send.as_ref().map(|f| f as &dyn Fn(Job)),
        )?;
        let indexer_slot: Arc<OnceLock<Arc<Indexer>>> = Arc::new(OnceLock::new());
        if let Some(ix) = indexer {
            let _ = indexer_slot.set(ix);
        }
        let owner_slot = Arc::new(parking_lot::Mutex::new(owner));
        let dim = Arc::new(RwLock::new(dim));
        let followed = || follow::Followed {
            indexes: indexes.clone(),
            dim: dim.clone(),
            rescans: Arc::default(),
        };
        let (follower, gate) = if store.is_read_only() {
            let follower = follow::Follower::start(
                &store.db_path(),
                store.connect()?,
                followed(),
                replayed,
                None,
            )?;
            (Some(follower), None)
        } else if shared {
            // Nothing of this process's own is written yet: the replay
            // reached every op of its snapshot, and the follower's first
            // catch-up (which always runs) gets the rest.
            let applied = replayed;
            let gate = Arc::new(sharing::Gate::new(applied));
            let sharing = follow::Sharing {
                store: store.clone(),
                gate: gate.clone(),
                indexer: indexer_slot.clone(),
                owner: owner_slot.clone(),
                threads,
            };
            let follower = follow::Follower::start(
                &store.db_path(),
                store.connect()?,
                followed(),
                applied,
                Some(sharing),
            )?;
            (Some(follower), Some(gate))
        } else {
            (None, None)
        };
        let ids = IdGenerator::default();
        for table in ID_TABLES {
            let newest: Option<String> = store.reader()?.query_row(
                &format!("SELECT max(substr(id, instr(id, '_') + 1)) FROM {table}"),
                [],
                |r| r.get(0),
            )?;
            if let Some(body) = newest {
                ids.resume_after(&body);
            }
        }
        Ok(Engine {
            store,
            ids,
            dim,
            indexes,
            indexer: indexer_slot,
            surfaced: parking_lot::Mutex::default(),
            follower,
            gate,
            _owner: owner_slot,
            _db_check: db_check,
            graph_stats: graph_quality::GraphStats::default(),
            #[cfg(feature = "postgres")]
            pg: None,
        })
    }

    /// The analyser to use: the configured one (recording it, and dropping
    /// a text index built with another), else the stored one, else English.
    fn settle_analyzer(
        store: &Store,
        wanted: Option<&str>,
        index_read_only: bool,
    ) -> Result<String> {
        let stored = meta::get(&*store.reader()?, TEXT_ANALYZER)?;
        let chosen = wanted
            .map(str::to_owned)
            .or_else(|| stored.clone())
            .unwrap_or_else(|| DEFAULT_ANALYZER.to_owned());
        crate::text::analyzer::build(&chosen)?;
        if let Some(current) = stored.as_deref().filter(|s| *s != chosen)
            && index_read_only
            && !store.is_read_only()
        {
            // Another process owns the text index it would rebuild.
            return Err(Error::ResourceBusy {
                message: format!(
                    "This store's text index uses the {current} analyser and another \
                     process owns it; open with text_analyzer={current:?} (or none), or \
                     change it while no other process has the store open."
                ),
            });
        }
        if stored.as_deref() != Some(chosen.as_str()) && !store.is_read_only() {
            if stored.is_some() {
                let text_dir = store.dir().join(INDEX_DIR).join("text");
                let _ = std::fs::remove_dir_all(text_dir);
            }
            store.write(|tx| meta::set(tx, TEXT_ANALYZER, &chosen))?;
        }
        Ok(chosen)
    }

    /// The data directory.
    pub fn dir(&self) -> &Path {
        self.store.dir()
    }

    /// Whether this engine refuses writes.
    pub fn is_read_only(&self) -> bool {
        self.store.is_read_only()
    }

    /// Whether this process writes the index files (always, but for a
    /// read-only engine and a process that shares its store with the owner).
    pub fn owns_indexes(&self) -> bool {
        self.indexer.get().is_some()
    }

    /// Refuse work on the index files in a process that does not own them.
    fn ensure_index_owner(&self, what: &str) -> Result<()> {
        if self.owns_indexes() || self.is_read_only() {
            return Ok(());
        }
        let pid = crate::store::OwnerLock::holder(&self.store.dir().join(INDEX_DIR));
        Err(Error::ResourceBusy {
            message: format!(
                "{what} needs the index files, which another process that has this store \
                 open owns (pid {pid}); run it there, or once that process has closed."
            ),
        })
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

    /// Block until every write so far is in the indexes, committed and saved.
    pub fn flush(&self) -> Result<()> {
        self.indexer.get().map_or(Ok(()), |ix| ix.flush())
    }

    /// Wait at most `timeout` (forever with `None`) for the indexes to hold
    /// every write made so far, committed and saved: whether they do.
    /// `close()` does not wait for them (the next open replays what they
    /// lack); a bulk ingest that wants its indexes on disk waits here. A
    /// process that indexes nothing to disk (read-only, or not the owner of
    /// a shared store's index files) has nothing to wait for.
    pub fn wait_indexed(&self, timeout: Option<std::time::Duration>) -> Result<bool> {
        match (self.indexer.get(), timeout) {
            (None, _) => Ok(true),
            (Some(ix), None) => ix.flush().map(|()| true),
            (Some(ix), Some(t)) => ix.flush_within(t),
        }
    }

    /// Block until every write so far is in the indexes and the hubness
    /// values of code chunks (see `crate::vector::HUB_KIND`) of every
    /// namespace that changed since it was last settled are computed again
    /// for the vectors present: rankings then no longer depend on when
    /// background work ran. Costs one neighbour search per vector of those
    /// groups.
    pub fn settle_hubness(&self) -> Result<()> {
        self.indexer.get().map_or(Ok(()), |ix| ix.settle_hubs(None))
    }

    /// Block until every write so far is in the indexes and the code chunks
    /// of `namespace` without a hubness value have theirs (the end of an
    /// `index_project` pass; see `crate::vector::VectorIndex::catch_up_hubs`).
    pub fn catch_up_code_hubness(&self, namespace: &str) -> Result<()> {
        self.indexer
            .get()
            .map_or(Ok(()), |ix| ix.settle_hubs(Some(namespace.to_owned())))
    }

    /// Sizes and health of the derived indexes.
    pub fn index_status(&self) -> IndexStatus {
        let vectors = self.indexes.vectors();
        IndexStatus {
            documents: self.indexes.catalog.read().len(),
            vectors: vectors.as_ref().map_or(0, |v| v.hnsw().len()),
            vectors_pending: vectors.as_ref().map_or(0, |v| v.pending_len()),
            vector_tombstones: vectors.as_ref().map_or(0, |v| v.hnsw().tombstones()),
            dim: vectors.as_ref().map(|v| v.dim()),
            text_documents: self.indexes.text.committed_len(),
            text_pending: self.indexes.text.pending_len(),
            last_error: self.indexes.health.last_error(),
            warnings: self.indexes.health.warnings(),
        }
    }

    /// Record that a panic interrupted work on this engine: the derived
    /// indexes may no longer match the store, so they are rebuilt from it at
    /// the next writable open (the bindings call this when they catch one).
    pub fn mark_for_rebuild(&self, reason: &str) {
        self.indexes.mark_for_rebuild(reason);
    }

    /// Whether reads record when they happened (access times, surfaced
    /// conversations): not on a read-only engine, which cannot write, nor on
    /// a PostgreSQL node, where each read would become a shared write.
    fn records_access(&self) -> bool {
        #[cfg(feature = "postgres")]
        if self.pg.is_some() {
            return false;
        }
        !self.is_read_only()
    }

    /// Note the conversations behind retrieved items (see `surfaced`).
    fn note_surfaced(&self, namespace: &str, items: &[ContextItem], now: i64) {
        if !self.records_access() {
            return;
        }
        let mut surfaced = self.surfaced.lock();
        for item in items {
            surfaced.insert(
                (namespace.to_owned(), item.turn.conversation_id.clone()),
                now,
            );
        }
    }

    /// Write the surfaced conversations' last-hit times.
    fn flush_surfaced(&self) -> Result<()> {
        let pending = std::mem::take(&mut *self.surfaced.lock());
        if pending.is_empty() || self.is_read_only() {
            return Ok(());
        }
        self.store.write(|tx| {
            for ((namespace, conversation), at) in &pending {
                let one = std::slice::from_ref(conversation);
                crate::store::conversations::mark_hits(tx, namespace, one, *at)?;
            }
            Ok(())
        })
    }

    fn new_id(&self, prefix: &str, now: i64) -> String {
        self.ids.next(prefix, (now / 1000) as u64)
    }

    /// Make a committed change searchable and queue it for the indexer.
    /// Called by the write path inside `Store::write_then`.
    fn publish(&self, seq: i64, change: &Change<'_>) {
        let terms = self.indexes.publish(change);
        // In a shared store the indexer takes writes in seq order only.
        if let Some(gate) = &self.gate
            && gate.published(seq) == sharing::Turn::Later
        {
            return;
        }
        let Some(indexer) = self.indexer.get() else {
            return;
        };
        match change {
            Change::Upsert {
                key, prev, vector, ..
            } => {
                if let Some(p) = prev {
                    indexer.send(Job::Retire {
                        seq,
                        key: *p,
                        to_text: true,
                        to_vectors: true,
                    });
                }
                indexer.send(Job::Add {
                    seq,
                    key: *key,
                    terms: terms.unwrap_or_default(),
                    vector: vector.clone(),
                    to_text: true,
                    to_vectors: true,
                });
            }
            Change::Retire { key } => indexer.send(Job::Retire {
                seq,
                key: *key,
                to_text: true,
                to_vectors: true,
            }),
            Change::Relabel { .. } => {}
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // The log's applier writes into the store and feeds the indexer:
        // it stops before they do.
        #[cfg(feature = "postgres")]
        drop(self.pg.take());
        // A shared store's follower feeds the indexer too: it stops first.
        drop(self.follower.take());
        let _ = self.flush_surfaced();
        if let Some(indexer) = self.indexer.get() {
            indexer.stop();
        }
    }
}
