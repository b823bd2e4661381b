//! The HNSW graph (usearch) and its file on disk.
//!
//! Keys are document keys (op-log seqs): never reused, so a removed key is a
//! plain tombstone and a replay can tell "already added" from "new". The file
//! is saved atomically with a sidecar recording the highest op-log seq it
//! covers; on open, everything after that seq is replayed from the store.
//!
//! Two threads adding vectors at once (the indexer uses both cores) now and
//! then leave one with no neighbour pointing at it: no search reaches it,
//! not even one by its own vector (measured: 1-8 of 20,000 random 64-d
//! vectors per build; never one added alone). So each vector added by
//! `VectorIndex::apply` is looked for by itself; one not found is added again
//! on its own ([`Hnsw::reinsert`]), and one still not found is scored exactly
//! by every search ([`Hnsw::keep_exactly`], recorded in the sidecar).
//!
//! usearch trusts the file it loads: garbage or flipped bits in it crashed
//! the process (SIGSEGV inside a later insert) or silently broke search. So
//! the sidecar also records the file's name, length and CRC-32, and carries
//! a checksum of its own; a file that does not match is never handed to
//! usearch. Each save writes a new file (`vectors.<generation>.usearch`) and
//! only then the sidecar naming it, so a crash between the two leaves the
//! previous pair intact.

use std::path::{Path, PathBuf};

use half::slice::HalfFloatSliceExt;
use parking_lot::RwLock;
use serde::{Deserialize, Serialize};
use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

use crate::error::{Error, Result};
use crate::fsutil::{set_aside, write_atomic};

const SIDECAR_FILE: &str = "vectors.json";
/// Extension of the graph files (one live at a time, named by the sidecar).
const INDEX_EXT: &str = "usearch";
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
    /// Save counter; the file is `vectors.<generation>.usearch`.
    #[serde(default)]
    generation: u64,
    /// Length and CRC-32 of that file.
    #[serde(default)]
    bytes: u64,
    #[serde(default)]
    crc: u32,
    /// Keys no search reaches, scored exactly by every search instead.
    #[serde(default)]
    unreachable: Vec<u64>,
}

impl Sidecar {
    fn file_name(&self) -> String {
        format!("vectors.{}.{INDEX_EXT}", self.generation)
    }

    /// The sidecar's bytes: its JSON, a newline, and the JSON's CRC-32.
    fn encode(&self) -> Result<Vec<u8>> {
        let mut bytes = serde_json::to_vec(self).map_err(|e| Error::Index(e.to_string()))?;
        let sum = format!("\n{:08x}\n", crc32fast::hash(&bytes));
        bytes.extend_from_slice(sum.as_bytes());
        Ok(bytes)
    }

    /// Parse [`Sidecar::encode`]'s bytes; `Ok(None)` for a sidecar written
    /// before files carried checksums (nothing to verify it by: rebuilt).
    fn decode(bytes: &[u8]) -> std::result::Result<Option<Sidecar>, String> {
        let text = std::str::from_utf8(bytes).map_err(|_| "the sidecar is not text".to_owned())?;
        let Some((json, sum)) = text.trim_end_matches('\n').rsplit_once('\n') else {
            return match serde_json::from_str::<Sidecar>(text) {
                Ok(_) => Ok(None),
                Err(e) => Err(format!("the sidecar is unreadable: {e}")),
            };
        };
        if format!("{:08x}", crc32fast::hash(json.as_bytes())) != sum {
            return Err("the sidecar fails its checksum".to_owned());
        }
        let sidecar: Sidecar =
            serde_json::from_str(json).map_err(|e| format!("the sidecar is unreadable: {e}"))?;
        Ok(Some(sidecar))
    }
}

/// What the index folder held.
enum Loaded {
    Sound(Index, Sidecar),
    /// Nothing saved yet, or saved in another layout, dimension or before
    /// checksums: rebuilt from the op log, not a fault.
    Absent,
    /// Files that fail a check, and why.
    Damaged(String),
}

/// A graph the writer saved, read by a read-only engine (see
/// [`Hnsw::read_newer`]).
pub struct SavedGraph {
    index: Index,
    sidecar: Sidecar,
}

impl SavedGraph {
    /// Whether this save holds `key`.
    pub fn holds(&self, key: u64) -> bool {
        self.index.contains(key)
    }
}

impl std::fmt::Debug for SavedGraph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SavedGraph")
            .field("generation", &self.sidecar.generation)
            .field("seq", &self.sidecar.seq)
            .finish_non_exhaustive()
    }
}

/// An HNSW index with its persistence state.
pub struct Hnsw {
    index: RwLock<Index>,
    dir: PathBuf,
    dim: usize,
    params: HnswParams,
    /// Removed keys still occupying slots (for the compaction decision).
    tombstones: RwLock<usize>,
    /// Generation of the file last saved (see the module comment).
    generation: RwLock<u64>,
    /// The op-log seq the graph loaded from disk covers (at open, or when a
    /// process that shares the store installs the owner's newer save).
    loaded_seq: RwLock<i64>,
    /// Keys the graph holds but no walk reaches (see the module comment):
    /// every search scores them exactly. A handful at most.
    unreachable: RwLock<Vec<u64>>,
}

/// Results a vector's search for itself looks through.
const SELF_K: usize = 10;
/// A search for a vector that returns [`SELF_K`] others at least this close
/// found its duplicates, so it cannot tell whether the vector itself is
/// reachable (and there is nothing to mend: its duplicates answer for it).
const DUPLICATE_COSINE: f32 = 0.9999;

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

/// Delete the graph files other than `keep` (older generations). Best
/// effort: a leftover only costs space, and the next save tries again.
fn remove_graph_files_except(dir: &Path, keep: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|x| x == INDEX_EXT) && entry.file_name() != keep {
            let _ = std::fs::remove_file(path);
        }
    }
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
    /// Load the saved index in `dir`, or start empty. Returns the index, the
    /// op-log seq it covers (0 when starting empty: the caller replays) and
    /// a warning when the files were damaged.
    ///
    /// Damaged files are set aside as `vectors.corrupt-<time>` and the graph
    /// starts empty; a read-only engine leaves them alone and starts empty in
    /// memory. Either way the replay then puts every vector in the pending
    /// buffer, which searches score exactly while the graph is rebuilt.
    pub fn open(
        dir: &Path,
        dim: usize,
        params: HnswParams,
        read_only: bool,
    ) -> Result<(Self, i64, Option<String>)> {
        let loaded = crate::panics::catch(|| Self::load(dir, dim, params))
            .unwrap_or_else(|panic| Loaded::Damaged(format!("loading it panicked: {panic}")));
        let (index, sidecar, warning) = match loaded {
            Loaded::Sound(index, sidecar) => (index, sidecar, None),
            Loaded::Absent => (new_index(dim, params)?, Sidecar::default(), None),
            Loaded::Damaged(why) if read_only => {
                let warning = format!(
                    "The vector index at {} is damaged ({why}); this read-only instance \
                     searches vectors exactly; open the store for writing once to rebuild it.",
                    dir.display()
                );
                (new_index(dim, params)?, Sidecar::default(), Some(warning))
            }
            Loaded::Damaged(why) => {
                let aside = set_aside(dir)?;
                let warning = format!(
                    "The vector index was damaged ({why}); it was moved to {} and is being \
                     rebuilt from the database (searches meanwhile score vectors exactly).",
                    aside.display()
                );
                (new_index(dim, params)?, Sidecar::default(), Some(warning))
            }
        };
        if !read_only {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let hnsw = Hnsw {
            index: RwLock::new(index),
            dir: dir.to_path_buf(),
            dim,
            params,
            tombstones: RwLock::new(sidecar.tombstones),
            generation: RwLock::new(sidecar.generation),
            loaded_seq: RwLock::new(sidecar.seq),
            unreachable: RwLock::new(sidecar.unreachable.clone()),
        };
        Ok((hnsw, sidecar.seq, warning))
    }

    fn load(dir: &Path, dim: usize, params: HnswParams) -> Loaded {
        let bytes = match std::fs::read(dir.join(SIDECAR_FILE)) {
            Ok(bytes) => bytes,
            // Never saved (or the process stopped before the first sidecar).
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Loaded::Absent,
            Err(e) => return Loaded::Damaged(format!("the sidecar is unreadable: {e}")),
        };
        let sidecar = match Sidecar::decode(&bytes) {
            Ok(Some(sidecar)) => sidecar,
            Ok(None) => return Loaded::Absent,
            Err(why) => return Loaded::Damaged(why),
        };
        if sidecar.dim != dim || sidecar.layout != LAYOUT {
            return Loaded::Absent;
        }
        let file = dir.join(sidecar.file_name());
        let data = match std::fs::read(&file) {
            Ok(data) => data,
            Err(e) => return Loaded::Damaged(format!("{}: {e}", file.display())),
        };
        if data.len() as u64 != sidecar.bytes {
            return Loaded::Damaged(format!(
                "{} holds {} bytes, {} were saved",
                file.display(),
                data.len(),
                sidecar.bytes
            ));
        }
        if crc32fast::hash(&data) != sidecar.crc {
            return Loaded::Damaged(format!("{} fails its checksum", file.display()));
        }
        let index = match new_index(dim, params) {
            Ok(index) => index,
            Err(e) => return Loaded::Damaged(e.to_string()),
        };
        if let Err(e) = index.load_from_buffer(&data) {
            return Loaded::Damaged(format!("usearch refused it: {e}"));
        }
        if index.size() != sidecar.size || index.dimensions() != dim {
            return Loaded::Damaged(format!(
                "it holds {} vectors of {} dimensions, the sidecar says {} of {dim}",
                index.size(),
                index.dimensions(),
                sidecar.size
            ));
        }
        let capacity = (index.size() * 2).max(1024);
        if let Err(e) = index.reserve_capacity_and_threads(capacity, THREADS) {
            return Loaded::Damaged(format!("reserve: {e}"));
        }
        index.change_expansion_search(params.expansion_search);
        index.change_expansion_add(params.expansion_add);
        Loaded::Sound(index, sidecar)
    }

    /// A read-only engine's graph: the one the writer saved last, read from
    /// disk when it is another save than the one held (see
    /// [`Hnsw::install`]). No lock is held while reading.
    ///
    /// Only the sidecar is read while nothing new was saved; a save that is
    /// damaged or replaced while being read is skipped (the next call tries
    /// again), since the graph held keeps serving meanwhile.
    pub fn read_newer(&self) -> Option<SavedGraph> {
        let saved = std::fs::read(self.dir.join(SIDECAR_FILE))
            .ok()
            .and_then(|bytes| Sidecar::decode(&bytes).ok().flatten());
        if saved.is_none_or(|s| s.generation == *self.generation.read()) {
            return None;
        }
        match crate::panics::catch(|| Self::load(&self.dir, self.dim, self.params)) {
            Ok(Loaded::Sound(index, sidecar)) => Some(SavedGraph { index, sidecar }),
            _ => None,
        }
    }

    /// Serve `saved` (from [`Hnsw::read_newer`]) from now on.
    pub fn install(&self, saved: SavedGraph) {
        *self.index.write() = saved.index;
        *self.tombstones.write() = saved.sidecar.tombstones;
        *self.generation.write() = saved.sidecar.generation;
        *self.loaded_seq.write() = saved.sidecar.seq;
        *self.unreachable.write() = saved.sidecar.unreachable;
    }

    /// The seq the graph loaded from disk covers: what a process that never
    /// added to it (one sharing the store with the owner) holds.
    pub fn loaded_seq(&self) -> i64 {
        *self.loaded_seq.read()
    }

    /// Vector dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The folder of the graph's files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Save counter of the graph last saved or loaded (files saved beside it
    /// name it, to be read back only with that graph).
    pub fn generation(&self) -> u64 {
        *self.generation.read()
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

    /// Whether a search for `vector` (stored under `key`) finds it among
    /// its [`SELF_K`] nearest, or finds that many duplicates of it.
    pub fn finds_itself(&self, key: u64, vector: &[f32]) -> Result<bool> {
        let hits = self.nearest(SELF_K, |index| index.search(vector, SELF_K))?;
        Ok(hits.iter().any(|(k, _)| *k == key)
            || hits.len() == SELF_K && hits.iter().all(|(_, c)| *c >= DUPLICATE_COSINE))
    }

    /// Add `key` again, alone, so that it gets neighbours pointing at it:
    /// its old slot becomes a tombstone.
    pub fn reinsert(&self, key: u64, vector: &[f32]) -> Result<()> {
        self.remove(key)?;
        self.reserve_for(1)?;
        self.add(key, vector)
    }

    /// Score `key` exactly in every search from now on (it stays unreachable).
    pub fn keep_exactly(&self, key: u64) {
        let mut keys = self.unreachable.write();
        if !keys.contains(&key) {
            keys.push(key);
        }
    }

    /// Keys scored exactly by every search because no walk reaches them.
    pub fn unreachable(&self) -> Vec<u64> {
        self.unreachable.read().clone()
    }

    /// Tombstone a key (a no-op when absent).
    pub fn remove(&self, key: u64) -> Result<()> {
        self.unreachable.write().retain(|k| *k != key);
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
        let mut hits = self.nearest(k, |index| index.filtered_search(query, k, &admit))?;
        self.with_unreachable(query, k, &mut hits, admit);
        Ok(hits)
    }

    /// [`Self::search`] admitting every vector (no predicate call per visited node).
    pub fn search_all(&self, query: &[f32], k: usize) -> Result<Vec<(u64, f32)>> {
        let mut hits = self.nearest(k, |index| index.search(query, k))?;
        self.with_unreachable(query, k, &mut hits, |_| true);
        Ok(hits)
    }

    /// Merge the admitted keys no walk reaches, scored exactly, into `hits`
    /// (the best `k`, best first).
    fn with_unreachable(
        &self,
        query: &[f32],
        k: usize,
        hits: &mut Vec<(u64, f32)>,
        admit: impl Fn(u64) -> bool,
    ) {
        let keys: Vec<u64> = self
            .unreachable
            .read()
            .iter()
            .copied()
            .filter(|key| admit(*key) && !hits.iter().any(|(h, _)| h == key))
            .collect();
        if keys.is_empty() || k == 0 {
            return;
        }
        // Unit vectors, as the pending buffer's scoring assumes too.
        self.score_keys(&keys, query, hits);
        hits.sort_by(|a, b| b.1.total_cmp(&a.1));
        hits.truncate(k);
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
    ///
    /// The new file is complete and durable before the sidecar names it; on
    /// any failure (a full disk) the previous file and sidecar stay in force,
    /// so the recorded seq never runs ahead of a readable graph.
    pub fn save(&self, seq: i64) -> Result<()> {
        let index = self.index.read();
        let mut data = vec![0u8; index.serialized_length()];
        index
            .save_to_buffer(&mut data)
            .map_err(|e| usearch_err("save", &e))?;
        let sidecar = Sidecar {
            layout: LAYOUT.to_owned(),
            seq,
            dim: self.dim,
            size: index.size(),
            tombstones: *self.tombstones.read(),
            generation: *self.generation.read() + 1,
            bytes: data.len() as u64,
            crc: crc32fast::hash(&data),
            unreachable: self.unreachable(),
        };
        drop(index);
        let file = self.dir.join(sidecar.file_name());
        write_atomic(&file, &data)?;
        if let Err(e) = write_atomic(&self.dir.join(SIDECAR_FILE), &sidecar.encode()?) {
            let _ = std::fs::remove_file(&file);
            return Err(e);
        }
        *self.generation.write() = sidecar.generation;
        remove_graph_files_except(&self.dir, &sidecar.file_name());
        Ok(())
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
        self.unreachable.write().clear();
        Ok(())
    }

    /// Drop every vector (a reset).
    pub fn clear(&self) -> Result<()> {
        *self.index.write() = new_index(self.dim, self.params)?;
        *self.tombstones.write() = 0;
        self.unreachable.write().clear();
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
        let (hnsw, _, _) = Hnsw::open(dir, 16, HnswParams::default(), false).unwrap();
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
        let (hnsw, seq, warning) =
            Hnsw::open(dir.path(), 16, HnswParams::default(), false).unwrap();
        assert_eq!((seq, hnsw.len(), warning), (42, 100, None));
        assert_eq!(hnsw.search(&unit(9, 16), 1, |_| true).unwrap()[0].0, 9);
    }

    #[test]
    fn a_graph_saved_in_another_layout_or_dimension_is_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        filled(dir.path()).save(42).unwrap();
        // A sidecar of the first layout (f32 vectors), which did not name it.
        let path = dir.path().join(SIDECAR_FILE);
        let mut sidecar = Sidecar::decode(&std::fs::read(&path).unwrap())
            .unwrap()
            .unwrap();
        sidecar.layout = String::new();
        std::fs::write(&path, sidecar.encode().unwrap()).unwrap();
        let (hnsw, seq, warning) =
            Hnsw::open(dir.path(), 16, HnswParams::default(), false).unwrap();
        assert_eq!(
            (seq, hnsw.len(), warning),
            (0, 0, None),
            "the op log must be replayed"
        );
        filled(dir.path()).save(42).unwrap();
        let (hnsw, seq, _) = Hnsw::open(dir.path(), 32, HnswParams::default(), false).unwrap();
        assert_eq!((seq, hnsw.len()), (0, 0));
        // A sidecar written before checksums (plain JSON) is rebuilt quietly too.
        std::fs::write(
            &path,
            br#"{"layout":"cos-f16","seq":42,"dim":16,"size":100,"tombstones":0}"#,
        )
        .unwrap();
        let (_, seq, warning) = Hnsw::open(dir.path(), 16, HnswParams::default(), false).unwrap();
        assert_eq!((seq, warning), (0, None));
    }

    /// The graph file the sidecar in `dir` names.
    fn graph_file(dir: &Path) -> PathBuf {
        let sidecar = Sidecar::decode(&std::fs::read(dir.join(SIDECAR_FILE)).unwrap())
            .unwrap()
            .unwrap();
        dir.join(sidecar.file_name())
    }

    #[test]
    fn a_damaged_graph_file_is_never_loaded() {
        type Damage = fn(&mut Vec<u8>);
        let damages: [(&str, Damage); 3] = [
            ("bit flip", |b| {
                let middle = b.len() / 2;
                b[middle] ^= 0x10;
            }),
            ("truncation", |b| b.truncate(b.len() / 3)),
            ("garbage", |b| {
                b.iter_mut().step_by(7).for_each(|x| *x = 0xff);
            }),
        ];
        for (what, damage) in damages {
            let root = tempfile::tempdir().unwrap();
            let dir = root.path().join("vectors");
            filled(&dir).save(42).unwrap();
            let file = graph_file(&dir);
            let mut bytes = std::fs::read(&file).unwrap();
            damage(&mut bytes);
            std::fs::write(&file, bytes).unwrap();

            let (hnsw, seq, warning) = Hnsw::open(&dir, 16, HnswParams::default(), true).unwrap();
            assert_eq!((seq, hnsw.len()), (0, 0), "{what}: read-only starts empty");
            assert!(warning.unwrap().contains("read-only"), "{what}");
            assert!(file.exists(), "{what}: a read-only open moves nothing");

            let (hnsw, seq, warning) = Hnsw::open(&dir, 16, HnswParams::default(), false).unwrap();
            assert_eq!((seq, hnsw.len()), (0, 0), "{what}");
            assert!(warning.unwrap().contains("moved to"), "{what}");
            assert!(!file.exists(), "{what}: set aside");
            let aside = std::fs::read_dir(root.path())
                .unwrap()
                .flatten()
                .filter(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with("vectors.corrupt-")
                })
                .count();
            assert_eq!(aside, 1, "{what}");
        }
    }

    #[test]
    fn a_damaged_sidecar_is_refused_and_saves_keep_one_file() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("vectors");
        let hnsw = filled(&dir);
        hnsw.save(41).unwrap();
        hnsw.save(42).unwrap();
        let graphs = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == INDEX_EXT))
            .count();
        assert_eq!(graphs, 1, "older generations are removed");
        drop(hnsw);
        // "seq":42 -> "seq":43 still parses: only the checksum catches it.
        let path = dir.join(SIDECAR_FILE);
        let text = String::from_utf8(std::fs::read(&path).unwrap()).unwrap();
        std::fs::write(&path, text.replace("\"seq\":42", "\"seq\":43")).unwrap();
        let (_, seq, warning) = Hnsw::open(&dir, 16, HnswParams::default(), false).unwrap();
        assert_eq!(seq, 0);
        assert!(warning.unwrap().contains("checksum"));
    }
}
