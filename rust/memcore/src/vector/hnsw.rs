//! The HNSW graph (usearch) and its file on disk.
//!
//! Keys are document keys (op-log seqs): never reused, so a removed key is a
//! plain tombstone and a replay can tell "already added" from "new". The file
//! is saved atomically with a sidecar recording the highest op-log seq it
//! covers; on open, everything after that seq is replayed from the store.

use std::path::{Path, PathBuf};

use half::slice::HalfFloatSliceExt;
use parking_lot::RwLock;
use serde::{Deserialize, Serialize};
use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

use crate::error::{Error, Result};
use crate::fsutil::{commit_file, temp_sibling, write_atomic};

const INDEX_FILE: &str = "vectors.usearch";
const SIDECAR_FILE: &str = "vectors.json";
/// Concurrent callers usearch keeps search contexts for.
const THREADS: usize = 16;
/// How the graph stores and compares vectors, recorded in the sidecar (a
/// graph saved in another layout is rebuilt from the op log). Vectors are
/// kept as f16: inserts and searches are bound by fetching vectors from
/// memory, not by arithmetic, so half the bytes made inserts twice as fast
/// and halved the graph's memory, with recall@10 against exact f32 search
/// unchanged on MiniLM embeddings (0.993 vs 0.991 at 20k). SQLite keeps the
/// f32 originals, which rebuilds and exports read.
const LAYOUT: &str = "cos-f16";

/// Graph construction and search parameters.
#[derive(Debug, Clone, Copy)]
pub struct HnswParams {
    pub connectivity: usize,
    pub expansion_add: usize,
    pub expansion_search: usize,
}

impl Default for HnswParams {
    /// `expansion_search` 88, not usearch's 64: on 100k MiniLM embeddings of
    /// templated memories (dense near-duplicates), 64 gave recall@10 0.941
    /// against exact search and 80 gives 0.951, for about 15% more search
    /// time (0.49 -> 0.57 ms, raw usearch, same run); 96 gives 0.959 at +48%.
    /// Graphs built on two threads differ from run to run: at 80 their
    /// recall ranged 0.949-0.955 over four bench runs, so 88 buys a margin
    /// over 0.95 (0.951 on the one graph measured at 88, same run as raw
    /// usearch 0.632 ms vs memcore 0.728 on a busy machine).
    fn default() -> Self {
        HnswParams {
            connectivity: 16,
            expansion_add: 128,
            expansion_search: 88,
        }
    }
}

/// What the sidecar records about the saved index file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Sidecar {
    /// See [`LAYOUT`]; absent in sidecars of the first layout (f32).
    #[serde(default)]
    layout: String,
    seq: i64,
    dim: usize,
    size: usize,
    tombstones: usize,
}

/// An HNSW index with its persistence state.
pub struct Hnsw {
    index: RwLock<Index>,
    dir: PathBuf,
    dim: usize,
    params: HnswParams,
    /// Removed keys still occupying slots (for the compaction decision).
    tombstones: RwLock<usize>,
}

impl std::fmt::Debug for Hnsw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hnsw")
            .field("dir", &self.dir)
            .field("dim", &self.dim)
            .field("size", &self.len())
            .finish_non_exhaustive()
    }
}

fn usearch_err(context: &str, e: &impl std::fmt::Display) -> Error {
    Error::Index(format!("vector index: {context}: {e}"))
}

/// Copy the stored halves of `key` into `halves` and widen them into `out`;
/// false if the graph has no vector under `key`.
///
/// usearch's own f16 -> f32 cast (asked for f32 output) converts one scalar at
/// a time in software and was most of an exact search; fetching the halves
/// as they are is a copy, and `half` widens them with F16C where the CPU has it.
fn fetch_widened(index: &Index, key: u64, halves: &mut [half::f16], out: &mut [f32]) -> bool {
    let raw = usearch::f16::from_mut_i16s(bytemuck::cast_slice_mut(halves));
    if !matches!(index.get(key, raw), Ok(n) if n > 0) {
        return false;
    }
    let n = halves.len().min(out.len());
    halves[..n].convert_to_f32_slice(&mut out[..n]);
    true
}

/// usearch's cosine distances as `(key, cosine)`, nearest first.
fn as_cosines(matches: usearch::ffi::Matches) -> Vec<(u64, f32)> {
    matches
        .keys
        .into_iter()
        .zip(matches.distances)
        .map(|(key, d)| (key, 1.0 - d))
        .collect()
}

fn new_index(dim: usize, params: HnswParams) -> Result<Index> {
    let options = IndexOptions {
        dimensions: dim,
        metric: MetricKind::Cos,
        quantization: ScalarKind::F16,
        connectivity: params.connectivity,
        expansion_add: params.expansion_add,
        expansion_search: params.expansion_search,
        multi: false,
    };
    let index = Index::new(&options).map_err(|e| usearch_err("create", &e))?;
    index
        .reserve_capacity_and_threads(1024, THREADS)
        .map_err(|e| usearch_err("reserve", &e))?;
    Ok(index)
}

impl Hnsw {
    /// Load the saved index in `dir`, or start empty. Returns the index and
    /// the op-log seq it covers (0 when starting empty or when the files are
    /// missing, damaged or of another dimension: the caller replays).
    pub fn open(dir: &Path, dim: usize, params: HnswParams) -> Result<(Self, i64)> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let (index, sidecar) = match Self::load(dir, dim, params) {
            Some(loaded) => loaded,
            None => (new_index(dim, params)?, Sidecar::default()),
        };
        let hnsw = Hnsw {
            index: RwLock::new(index),
            dir: dir.to_path_buf(),
            dim,
            params,
            tombstones: RwLock::new(sidecar.tombstones),
        };
        Ok((hnsw, sidecar.seq))
    }

    fn load(dir: &Path, dim: usize, params: HnswParams) -> Option<(Index, Sidecar)> {
        let sidecar: Sidecar =
            serde_json::from_slice(&std::fs::read(dir.join(SIDECAR_FILE)).ok()?).ok()?;
        if sidecar.dim != dim || sidecar.layout != LAYOUT {
            return None;
        }
        let index = new_index(dim, params).ok()?;
        index.load(dir.join(INDEX_FILE).to_str()?).ok()?;
        if index.size() != sidecar.size {
            return None;
        }
        let capacity = (index.size() * 2).max(1024);
        index.reserve_capacity_and_threads(capacity, THREADS).ok()?;
        index.change_expansion_search(params.expansion_search);
        index.change_expansion_add(params.expansion_add);
        Some((index, sidecar))
    }

    /// Vector dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Vectors present (tombstones excluded).
    pub fn len(&self) -> usize {
        self.index.read().size()
    }

    /// Whether the index holds no vectors.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removed keys still occupying slots.
    pub fn tombstones(&self) -> usize {
        *self.tombstones.read()
    }

    /// Whether `key` is in the graph.
    pub fn contains(&self, key: u64) -> bool {
        self.index.read().contains(key)
    }

    /// Make room for `extra` more vectors, growing capacity geometrically.
    pub fn reserve_for(&self, extra: usize) -> Result<()> {
        let needed = self.index.read().size() + extra;
        if needed <= self.index.read().capacity() {
            return Ok(());
        }
        let index = self.index.write();
        let capacity = needed.max(index.capacity() * 2).max(1024);
        index
            .reserve_capacity_and_threads(capacity, THREADS)
            .map_err(|e| usearch_err("reserve", &e))
    }

    /// Add one vector (call `reserve_for` first). A key already present is
    /// left alone, so replays are idempotent.
    pub fn add(&self, key: u64, vector: &[f32]) -> Result<()> {
        let index = self.index.read();
        if index.contains(key) {
            return Ok(());
        }
        index.add(key, vector).map_err(|e| usearch_err("add", &e))
    }

    /// Tombstone a key (a no-op when absent).
    pub fn remove(&self, key: u64) -> Result<()> {
        let removed = self
            .index
            .read()
            .remove(key)
            .map_err(|e| usearch_err("remove", &e))?;
        if removed > 0 {
            *self.tombstones.write() += removed;
        }
        Ok(())
    }

    /// Approximate nearest neighbours among keys `admit` accepts, as
    /// `(key, cosine similarity)`, best first.
    pub fn search(
        &self,
        query: &[f32],
        k: usize,
        admit: impl Fn(u64) -> bool,
    ) -> Result<Vec<(u64, f32)>> {
        self.nearest(k, |index| index.filtered_search(query, k, admit))
    }

    /// [`Self::search`] admitting every vector (no predicate call per visited node).
    pub fn search_all(&self, query: &[f32], k: usize) -> Result<Vec<(u64, f32)>> {
        self.nearest(k, |index| index.search(query, k))
    }

    /// Run one of usearch's searches under the read lock, unless there is
    /// nothing to find, and turn its distances into cosines.
    fn nearest<E: std::fmt::Display>(
        &self,
        k: usize,
        run: impl FnOnce(&Index) -> std::result::Result<usearch::ffi::Matches, E>,
    ) -> Result<Vec<(u64, f32)>> {
        let index = self.index.read();
        if index.size() == 0 || k == 0 {
            return Ok(Vec::new());
        }
        let matches = run(&index).map_err(|e| usearch_err("search", &e))?;
        Ok(as_cosines(matches))
    }

    /// Copy the stored vector of `key` into `out`; false when absent.
    pub fn get(&self, key: u64, out: &mut [f32]) -> bool {
        let mut halves = vec![half::f16::ZERO; self.dim];
        fetch_widened(&self.index.read(), key, &mut halves, out)
    }

    /// Append `(key, cosine to query)` for every key of `keys` in the graph,
    /// under a single read lock (the exact-search path scores thousands).
    pub fn score_keys(&self, keys: &[u64], query: &[f32], out: &mut Vec<(u64, f32)>) {
        let index = self.index.read();
        let mut halves = vec![half::f16::ZERO; self.dim];
        let mut widened = vec![0.0f32; self.dim];
        for &key in keys {
            if fetch_widened(&index, key, &mut halves, &mut widened) {
                out.push((key, super::dot(query, &widened)));
            }
        }
    }

    /// Save atomically, recording that everything up to `seq` is covered.
    pub fn save(&self, seq: i64) -> Result<()> {
        let path = self.dir.join(INDEX_FILE);
        let tmp = temp_sibling(&path);
        let index = self.index.read();
        let tmp_str = tmp
            .to_str()
            .ok_or_else(|| Error::Index(format!("non-UTF-8 path {}", tmp.display())))?;
        index.save(tmp_str).map_err(|e| usearch_err("save", &e))?;
        commit_file(&tmp, &path)?;
        let sidecar = Sidecar {
            layout: LAYOUT.to_owned(),
            seq,
            dim: self.dim,
            size: index.size(),
            tombstones: *self.tombstones.read(),
        };
        let bytes = serde_json::to_vec(&sidecar).map_err(|e| Error::Index(e.to_string()))?;
        write_atomic(&self.dir.join(SIDECAR_FILE), &bytes)
    }

    /// Replace the graph with a fresh one holding exactly `vectors` (a
    /// compaction: tombstones are dropped and the graph is rebuilt).
    pub fn rebuild(&self, vectors: &[(u64, Vec<f32>)]) -> Result<()> {
        let fresh = new_index(self.dim, self.params)?;
        fresh
            .reserve_capacity_and_threads((vectors.len() * 2).max(1024), THREADS)
            .map_err(|e| usearch_err("reserve", &e))?;
        for (key, v) in vectors {
            fresh.add(*key, v).map_err(|e| usearch_err("add", &e))?;
        }
        *self.index.write() = fresh;
        *self.tombstones.write() = 0;
        Ok(())
    }

    /// Drop every vector (a reset).
    pub fn clear(&self) -> Result<()> {
        *self.index.write() = new_index(self.dim, self.params)?;
        *self.tombstones.write() = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(seed: u64, dim: usize) -> Vec<f32> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let v: Vec<f32> = (0..dim)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 2000) as f32 / 1000.0 - 1.0
            })
            .collect();
        let norm = v.iter().map(|a| a * a).sum::<f32>().sqrt();
        v.into_iter().map(|a| a / norm).collect()
    }

    fn filled(dir: &Path) -> Hnsw {
        let (hnsw, _) = Hnsw::open(dir, 16, HnswParams::default()).unwrap();
        hnsw.reserve_for(100).unwrap();
        for key in 1..=100 {
            hnsw.add(key, &unit(key, 16)).unwrap();
        }
        hnsw
    }

    #[test]
    fn search_scores_are_cosines() {
        let dir = tempfile::tempdir().unwrap();
        let hnsw = filled(dir.path());
        let query = unit(7, 16);
        let hits = hnsw.search(&query, 5, |_| true).unwrap();
        assert_eq!(hits[0].0, 7);
        for (key, score) in hits {
            let cosine = super::super::dot(&query, &unit(key, 16));
            // f16 storage: about three decimal digits.
            assert!((score - cosine).abs() < 2e-3, "{score} vs {cosine}");
        }
    }

    #[test]
    fn fetched_vectors_and_exact_scores_match_the_originals() {
        let dir = tempfile::tempdir().unwrap();
        let hnsw = filled(dir.path());
        let mut fetched = vec![0.0f32; 16];
        assert!(hnsw.get(9, &mut fetched));
        for (got, want) in fetched.iter().zip(unit(9, 16)) {
            assert!((got - want).abs() < 1e-3, "{got} vs {want}");
        }
        assert!(!hnsw.get(1000, &mut fetched), "absent key");

        let query = unit(3, 16);
        let mut scored = Vec::new();
        hnsw.score_keys(&[3, 50, 1000], &query, &mut scored);
        let keys: Vec<u64> = scored.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, [3, 50], "absent keys are skipped");
        for (key, score) in scored {
            let cosine = super::super::dot(&query, &unit(key, 16));
            assert!((score - cosine).abs() < 2e-3, "{score} vs {cosine}");
        }
    }

    #[test]
    fn a_saved_graph_reopens_with_the_seq_it_covers() {
        let dir = tempfile::tempdir().unwrap();
        filled(dir.path()).save(42).unwrap();
        let (hnsw, seq) = Hnsw::open(dir.path(), 16, HnswParams::default()).unwrap();
        assert_eq!((seq, hnsw.len()), (42, 100));
        assert_eq!(hnsw.search(&unit(9, 16), 1, |_| true).unwrap()[0].0, 9);
    }

    #[test]
    fn a_graph_saved_in_another_layout_or_dimension_is_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        filled(dir.path()).save(42).unwrap();
        // A sidecar of the first layout (f32 vectors), which did not name it.
        let path = dir.path().join(SIDECAR_FILE);
        let mut sidecar: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        sidecar.as_object_mut().unwrap().remove("layout");
        std::fs::write(&path, serde_json::to_vec(&sidecar).unwrap()).unwrap();
        let (hnsw, seq) = Hnsw::open(dir.path(), 16, HnswParams::default()).unwrap();
        assert_eq!((seq, hnsw.len()), (0, 0), "the op log must be replayed");
        filled(dir.path()).save(42).unwrap();
        let (hnsw, seq) = Hnsw::open(dir.path(), 32, HnswParams::default()).unwrap();
        assert_eq!((seq, hnsw.len()), (0, 0));
    }
}
