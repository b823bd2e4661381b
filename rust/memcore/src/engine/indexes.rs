//! The derived search state shared by the write path, the read path and the
//! background indexer: catalog, text index and (once the dimension is known)
//! vector index.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::RwLock;

use super::health::{Health, REBUILD_MARKER};
use crate::catalog::{Catalog, DocLabels};
use crate::error::{Error, Result};
use crate::graph::Graph;
use crate::text::{self, ScopedTerms, TextIndex};
use crate::vector::{HnswParams, SharedVector, VectorIndex};

/// Folder of the derived indexes inside a data directory; deleting it is
/// always safe: the next open rebuilds everything from the store.
pub const INDEX_DIR: &str = "index";

/// Catalog + text + vectors.
#[derive(Debug)]
pub struct Indexes {
    pub catalog: RwLock<Catalog>,
    pub graph: RwLock<Graph>,
    pub text: TextIndex,
    /// What the indexes went through since open (see [`Health`]).
    pub health: Health,
    vectors: RwLock<Option<Arc<VectorIndex>>>,
    root: PathBuf,
    vector_dir: PathBuf,
    params: HnswParams,
    /// Cleared when a process that shared the store takes over the files.
    read_only: AtomicBool,
}

/// A change to one searchable document, published by the write path after
/// its transaction committed (and while it still holds the writer lock, so
/// publications happen in op-log order).
#[derive(Debug)]
pub enum Change<'a> {
    /// New content under `key`, replacing `prev` if any.
    Upsert {
        key: u64,
        prev: Option<u64>,
        labels: DocLabels<'a>,
        text: &'a str,
        vector: Option<SharedVector>,
    },
    /// The document is gone.
    Retire { key: u64 },
    /// Same content, new metadata (validity, thread, supersession).
    Relabel { key: u64, labels: DocLabels<'a> },
}

impl Indexes {
    /// Open the text index and, when `dim` is known, the vector index.
    /// Returns the indexes and the op-log seqs they cover (text, vectors).
    ///
    /// Damaged index files are set aside and their index starts empty (see
    /// [`TextIndex::open`], [`VectorIndex::open`]), with a warning in
    /// [`Indexes::health`]; the caller's replay then refills them from the
    /// store. A store marked for a rebuild (after a panic) drops both first.
    pub fn open(
        dir: &Path,
        analyzer: &str,
        dim: Option<usize>,
        params: HnswParams,
        read_only: bool,
    ) -> Result<(Self, i64, i64)> {
        let root = dir.join(INDEX_DIR);
        let health = Health::default();
        let vector_dir = root.join("vectors");
        let text_dir = root.join("text");
        if !read_only {
            take_rebuild_marker(&root, &[&text_dir, &vector_dir], &health);
        }
        let (text, text_seq, warning) = TextIndex::open(&text_dir, analyzer, read_only)?;
        health.warn_some(warning);
        let (vectors, vector_seq) = match dim {
            Some(d) => {
                let (v, seq, warning) = VectorIndex::open(&vector_dir, d, params, read_only)?;
                health.warn_some(warning);
                (Some(Arc::new(v)), seq)
            }
            None => (None, 0),
        };
        let indexes = Indexes {
            catalog: RwLock::new(Catalog::default()),
            graph: RwLock::new(Graph::default()),
            text,
            health,
            vectors: RwLock::new(vectors),
            root,
            vector_dir,
            params,
            read_only: AtomicBool::new(read_only),
        };
        Ok((indexes, text_seq, vector_seq))
    }

    /// Record that a panic left the indexes in doubt: they are rebuilt from
    /// the store at the next writable open.
    pub fn mark_for_rebuild(&self, reason: &str) {
        if self.read_only() {
            self.health.warn(format!(
                "The indexes may be inconsistent ({reason}); reopen the store to reload them."
            ));
        } else {
            self.health.mark_for_rebuild(&self.root, reason);
        }
    }

    /// A search could not read the committed text segments (a file damaged
    /// or removed under the running process): ask for a rebuild, so the next
    /// open (or `rebuild_indexes` now) heals the index instead of failing
    /// searches until someone deletes the folder.
    pub fn check_read_failures(&self) {
        if let Some(why) = self.text.take_read_failure() {
            self.mark_for_rebuild(&format!("reading the text index failed: {why}"));
        }
    }

    /// A rebuild from the store completed: nothing is in doubt any more, so
    /// the next open need not rebuild again.
    pub fn rebuilt(&self) {
        if !self.read_only() {
            let _ = std::fs::remove_file(self.root.join(REBUILD_MARKER));
        }
        self.health.clear_warnings();
        self.health
            .warn("The indexes were rebuilt from the database (rebuild_indexes).");
    }

    /// Whether these indexes only read the files (a read-only engine, or a
    /// process sharing the store with the owner of the files).
    pub fn read_only(&self) -> bool {
        self.read_only.load(Ordering::Acquire)
    }

    /// Take over the files of a shared store whose owner is gone: hold in
    /// memory exactly what the files hold (their newest commit and save), and
    /// write them from now on. Returns the seqs the files cover (text,
    /// vectors), from where the new indexer takes the log.
    pub fn take_over(&self) -> Result<(i64, i64)> {
        let text_seq = self.text.take_over()?;
        let vector_seq = match self.vectors() {
            Some(v) => {
                v.follow_saved();
                v.loaded_seq()
            }
            None => text_seq,
        };
        self.read_only.store(false, Ordering::Release);
        Ok((text_seq, vector_seq))
    }

    /// The vector index, if the store has vectors.
    pub fn vectors(&self) -> Option<Arc<VectorIndex>> {
        self.vectors.read().clone()
    }

    /// The vector index for `dim`, created empty on the first vector.
    pub fn vectors_for(&self, dim: usize) -> Result<Arc<VectorIndex>> {
        if let Some(v) = self.vectors()
            && v.dim() == dim
        {
            return Ok(v);
        }
        let mut slot = self.vectors.write();
        match slot.as_ref() {
            Some(v) if v.dim() == dim => Ok(v.clone()),
            Some(v) => Err(Error::Index(format!(
                "vector index holds {}d vectors, got {dim}d",
                v.dim()
            ))),
            None => {
                // Only the owner of the index files may clear them; a process
                // that shares the store loads whatever the owner saved.
                if !self.read_only() {
                    let _ = std::fs::remove_dir_all(&self.vector_dir);
                }
                let (v, _, warning) =
                    VectorIndex::open(&self.vector_dir, dim, self.params, self.read_only())?;
                self.health.warn_some(warning);
                let v = Arc::new(v);
                *slot = Some(v.clone());
                Ok(v)
            }
        }
    }

    /// A read-only engine's vector index, once the writer stored the first
    /// vector: the writer's saved graph if any (never removed, unlike
    /// [`Indexes::vectors_for`]). Returns the op-log seq it covers.
    pub fn adopt_vectors(&self, dim: usize) -> Result<i64> {
        let mut slot = self.vectors.write();
        if slot.is_some() {
            return Ok(0);
        }
        let (v, seq, warning) =
            VectorIndex::open(&self.vector_dir, dim, self.params, self.read_only())?;
        self.health.warn_some(warning);
        *slot = Some(Arc::new(v));
        Ok(seq)
    }

    /// Drop the vector index entirely (after a reset, the next model may
    /// have another dimension).
    pub fn drop_vectors(&self) {
        if let Some(v) = self.vectors.write().take() {
            let _ = v.clear();
        }
        let _ = std::fs::remove_dir_all(&self.vector_dir);
    }

    /// Apply a change to the catalog and the pending buffers: searchable now.
    /// Returns the scoped terms of new content, for the indexer.
    pub fn publish(&self, change: &Change<'_>) -> Option<ScopedTerms> {
        match change {
            Change::Upsert {
                key,
                prev,
                labels,
                text,
                vector,
            } => {
                let scope = text::scope(labels.namespace, labels.kind);
                let terms = self.text.stage(*key, &scope, text);
                if let (Some(v), Some(index)) = (vector, self.vectors()) {
                    index.stage(*key, v.clone());
                }
                let mut catalog = self.catalog.write();
                if let Some(p) = prev {
                    catalog.remove(*p);
                }
                catalog.insert(*key, labels);
                drop(catalog);
                if let Some(p) = prev {
                    self.text.unstage(*p);
                }
                Some(terms)
            }
            Change::Retire { key } => {
                self.catalog.write().remove(*key);
                self.text.unstage(*key);
                None
            }
            Change::Relabel { key, labels } => {
                self.catalog.write().insert(*key, labels);
                None
            }
        }
    }
}

/// If a rebuild was asked for (see [`Health::mark_for_rebuild`]), drop the
/// index folders `dirs` so they start over, and say why.
fn take_rebuild_marker(root: &Path, dirs: &[&Path], health: &Health) {
    let marker = root.join(REBUILD_MARKER);
    let Ok(reason) = std::fs::read_to_string(&marker) else {
        return;
    };
    for dir in dirs {
        let _ = std::fs::remove_dir_all(dir);
    }
    if std::fs::remove_file(&marker).is_ok() {
        health.warn(format!(
            "The indexes are being rebuilt from the database, as asked after: {reason}."
        ));
    }
}
