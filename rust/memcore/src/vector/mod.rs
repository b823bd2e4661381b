//! Vector search: the HNSW graph plus the pending buffer of vectors written
//! but not yet in the graph, searched together so a write is visible to the
//! next search at once (read-your-writes).

mod exact;
mod hnsw;
mod hub;

use rustc_hash::FxHashMap as HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::RwLock;

use crate::catalog::{Catalog, Filter};
use crate::error::Result;
pub use exact::{dot, top_k};
pub use hnsw::{Hnsw, HnswParams, SavedGraph};
pub use hub::{HUB_KIND, HUB_NEIGHBOURS, HUB_PENALTY};

/// A normalised vector shared between the pending buffer and the indexer.
pub type SharedVector = Arc<[f32]>;

/// Below this many admissible documents, exact search beats a graph walk.
///
/// Exact scoring costs about 0.4 us per document (fetching its halves from
/// the graph is most of it), an unfiltered walk 0.3-0.5 ms below 10k
/// documents, so the two meet near a thousand (measured on 2 cores, 384-d).
pub const EXACT_MAX: usize = 1000;

/// A filter admitting fewer than one document in this many is searched
/// exactly: the walk must step over the refused neighbours, and its cost
/// grows about as fast as the admitted share shrinks (at 37k documents a
/// filter admitting 11% took 4.6 ms walking and 3.0 exactly, 27% took 2.6
/// walking and 8.7 exactly).
const EXACT_SELECTIVITY: usize = 8;

/// Extra neighbours an unfiltered walk fetches so that a few refused ones
/// (beyond doubling `k`) do not force the filtered walk.
const WALK_SLACK: usize = 8;

/// HNSW + pending vectors.
#[derive(Debug)]
pub struct VectorIndex {
    hnsw: Hnsw,
    pending: RwLock<HashMap<u64, SharedVector>>,
    /// Set when a panic interrupted work on the graph: it may no longer hold
    /// what it should, so new vectors stay in the pending buffer, searches
    /// score exactly and the graph is never saved (the store is marked for
    /// a rebuild at the next open).
    in_doubt: AtomicBool,
    /// Hubness values of the stored vectors (see [`hub`]).
    hubs: hub::Hubness,
    /// Keys a read-only instance put into the graph it holds in memory (see
    /// [`VectorIndex::index_pending_in_memory`]), which no save it loaded
    /// holds.
    held_here: RwLock<Vec<u64>>,
}

impl VectorIndex {
    /// Open the saved graph in `dir` (or an empty one); returns the op-log
    /// seq it covers and a warning when its files were damaged (see
    /// [`Hnsw::open`]).
    pub fn open(
        dir: &Path,
        dim: usize,
        params: HnswParams,
        read_only: bool,
    ) -> Result<(Self, i64, Option<String>)> {
        let (hnsw, seq, warning) = Hnsw::open(dir, dim, params, read_only)?;
        let index = VectorIndex {
            hnsw,
            pending: RwLock::new(HashMap::default()),
            in_doubt: AtomicBool::new(false),
            hubs: hub::Hubness::default(),
            held_here: RwLock::new(Vec::new()),
        };
        let hub_warning = index.hubs.load(dir, index.hnsw.generation(), read_only);
        Ok((index, seq, warning.or(hub_warning)))
    }

    /// Stop trusting the graph (after a panic during work on it).
    pub fn distrust_graph(&self) {
        self.in_doubt.store(true, Ordering::SeqCst);
    }

    /// Whether the graph is trusted (see [`VectorIndex::distrust_graph`]).
    pub fn graph_trusted(&self) -> bool {
        !self.in_doubt.load(Ordering::SeqCst)
    }

    /// Save the graph as covering `seq`, unless it is in doubt, and the
    /// hubness values beside it.
    pub fn save(&self, seq: i64) -> Result<()> {
        if self.graph_trusted() {
            self.hnsw.save(seq)?;
            self.save_hubs();
        }
        Ok(())
    }

    /// Save the hubness values, when they changed, beside the graph last
    /// saved (best effort: missing values are recomputed after an open).
    pub fn save_hubs(&self) {
        if self.graph_trusted() {
            self.hubs.save(self.hnsw.dir(), self.hnsw.generation());
        }
    }

    /// The seq the graph loaded from disk covers (see [`Hnsw::loaded_seq`]).
    pub fn loaded_seq(&self) -> i64 {
        self.hnsw.loaded_seq()
    }

    /// A read-only index: load the writer's newest saved graph (see
    /// [`Hnsw::read_newer`]) and drop the pending vectors it holds, so the
    /// buffer scored exactly beside the graph stops growing. Returns how
    /// many were dropped.
    pub fn follow_saved(&self) -> usize {
        // Read (the slow part) before locking anything: searches go on meanwhile.
        let Some(saved) = self.hnsw.read_newer() else {
            return 0;
        };
        // What this instance indexed itself and the save lacks goes back to
        // the buffer, read from the graph held until now.
        let carried: Vec<(u64, SharedVector)> = std::mem::take(&mut *self.held_here.write())
            .into_iter()
            .filter(|key| !saved.holds(*key))
            .filter_map(|key| {
                let mut buf = vec![0.0f32; self.dim()];
                self.hnsw.get(key, &mut buf).then(|| (key, Arc::from(buf)))
            })
            .collect();
        // Searches hold the pending buffer's read lock for their whole walk:
        // none sees a vector in both the new graph and the buffer, or in neither.
        let mut pending = self.pending.write();
        self.hnsw.install(saved);
        // A damaged values file was reported at open; this instance ranks
        // without the values until the writer saves sound ones.
        let _ = self
            .hubs
            .load(self.hnsw.dir(), self.hnsw.generation(), true);
        let before = pending.len();
        pending.retain(|key, _| !self.hnsw.contains(*key));
        let dropped = before - pending.len();
        pending.extend(carried);
        dropped
    }

    /// A read-only instance: put up to `max` pending vectors into the graph
    /// it holds in memory (never saved), so searches stop scoring them
    /// exactly one by one. For vectors the writer left out of its last save
    /// (it was killed, or has not saved yet): a newer save loaded later
    /// replaces the graph, and whatever it lacks of these goes back to the
    /// buffer. Returns how many were indexed. Called by one thread only (the
    /// follower), as [`VectorIndex::follow_saved`] is.
    pub fn index_pending_in_memory(&self, max: usize) -> Result<usize> {
        if !self.graph_trusted() {
            return Ok(0);
        }
        let batch: Vec<(u64, SharedVector)> = self
            .pending
            .read()
            .iter()
            .take(max)
            .map(|(key, v)| (*key, v.clone()))
            .collect();
        self.apply(&batch, &[], 1)?;
        self.held_here
            .write()
            .extend(batch.iter().map(|(key, _)| *key));
        Ok(batch.len())
    }

    /// Vector dimension.
    pub fn dim(&self) -> usize {
        self.hnsw.dim()
    }

    /// The graph itself (size, tombstones, saving).
    pub fn hnsw(&self) -> &Hnsw {
        &self.hnsw
    }

    /// Vectors written but not yet in the graph.
    pub fn pending_len(&self) -> usize {
        self.pending.read().len()
    }

    /// Make a new vector searchable now; the indexer moves it into the graph later.
    pub fn stage(&self, key: u64, vector: SharedVector) {
        self.pending.write().insert(key, vector);
    }

    /// Move staged vectors into the graph (on up to `threads` threads) and
    /// tombstone retired keys. Vectors leave the pending buffer only after
    /// they are in the graph, so no search misses them in between.
    pub fn apply(
        &self,
        added: &[(u64, SharedVector)],
        retired: &[u64],
        threads: usize,
    ) -> Result<()> {
        self.hubs.retired(retired);
        if !self.graph_trusted() {
            let mut pending = self.pending.write();
            for key in retired {
                pending.remove(key);
            }
            return Ok(());
        }
        self.hnsw.reserve_for(added.len())?;
        let threads = threads.clamp(1, 8);
        if threads == 1 || added.len() < 64 {
            for (key, v) in added {
                self.hnsw.add(*key, v)?;
            }
        } else {
            let chunk = added.len().div_ceil(threads);
            std::thread::scope(|scope| {
                let workers: Vec<_> = added
                    .chunks(chunk)
                    .map(|part| {
                        scope.spawn(move || {
                            part.iter().try_for_each(|(key, v)| self.hnsw.add(*key, v))
                        })
                    })
                    .collect();
                workers
                    .into_iter()
                    .try_for_each(|w| w.join().expect("indexer worker panicked"))
            })?;
        }
        self.reconnect(added, threads)?;
        for key in retired {
            self.hnsw.remove(*key)?;
        }
        let mut pending = self.pending.write();
        for (key, _) in added {
            pending.remove(key);
        }
        for key in retired {
            pending.remove(key);
        }
        Ok(())
    }

    /// Make every vector of `added` (just put in the graph) reachable: each
    /// is looked for by itself (on up to `threads` threads, as it was
    /// added), and one not found is added again alone, which gives it
    /// neighbours pointing at it (concurrent adds now and then leave a vector
    /// with none: see [`Hnsw`]); one still not found is scored exactly by
    /// every search. Costs one search per vector added, a fraction of an add.
    fn reconnect(&self, added: &[(u64, SharedVector)], threads: usize) -> Result<()> {
        let lost_in = |part: &[(u64, SharedVector)]| -> Result<Vec<usize>> {
            let mut lost = Vec::new();
            for (i, (key, v)) in part.iter().enumerate() {
                if !self.hnsw.finds_itself(*key, v)? {
                    lost.push(i);
                }
            }
            Ok(lost)
        };
        let lost: Vec<usize> = if threads <= 1 || added.len() < 64 {
            lost_in(added)?
        } else {
            let chunk = added.len().div_ceil(threads.clamp(1, 8));
            std::thread::scope(|scope| {
                let workers: Vec<_> = added
                    .chunks(chunk)
                    .enumerate()
                    .map(|(n, part)| {
                        scope.spawn(move || {
                            lost_in(part).map(|l| l.into_iter().map(|i| n * chunk + i).collect())
                        })
                    })
                    .collect();
                workers
                    .into_iter()
                    .map(|w| w.join().expect("indexer worker panicked"))
                    .collect::<Result<Vec<Vec<usize>>>>()
            })?
            .into_iter()
            .flatten()
            .collect()
        };
        for i in lost {
            let (key, v) = &added[i];
            self.hnsw.reinsert(*key, v)?;
            if !self.hnsw.finds_itself(*key, v)? {
                self.hnsw.keep_exactly(*key);
            }
        }
        Ok(())
    }

    /// The `k` nearest admitted documents as `(key, cosine)`, best first.
    ///
    /// Small admissible sets (a thread, a project, a rare kind) are searched
    /// exactly, so selective filters still return `k` results; otherwise the
    /// graph walk applies the filter at every step and the pending buffer is
    /// scanned beside it.
    ///
    /// The pending buffer stays read-locked for the whole search: the indexer
    /// removes a vector from it only after adding it to the graph, and only
    /// under the write lock, so every vector is in the graph or in the buffer
    /// as this search sees them (never in neither).
    pub fn search(
        &self,
        query: &[f32],
        k: usize,
        filter: &Filter,
        catalog: &Catalog,
    ) -> Result<Vec<(u64, f32)>> {
        let admissible = catalog.estimate(filter);
        if admissible == 0 || k == 0 {
            return Ok(Vec::new());
        }
        let pending = self.pending.read();
        if admissible < EXACT_MAX
            || admissible.saturating_mul(EXACT_SELECTIVITY) < catalog.len()
            || !self.graph_trusted()
        {
            let candidates = catalog.candidates(filter);
            return Ok(self.exact_in(&pending, query, k, &candidates, filter, catalog));
        }
        let mut hits = self.walk(query, k, admissible, |key| catalog.admits(key, filter))?;
        // A key is in the graph and the buffer at once only for the moment
        // between the indexer's insert and its removal: look for it among
        // the walk's few hits, never among the buffer's own (that made a
        // search quadratic in the buffer: 3.2 s at 100k pending).
        let walked = hits.len();
        for (key, v) in pending.iter() {
            if catalog.admits(*key, filter) && !hits[..walked].iter().any(|(h, _)| h == key) {
                hits.push((*key, dot(query, v)));
            }
        }
        if hits.len() < k.min(admissible) {
            // The walk ran out of admitted neighbours (e.g. most are invalid).
            let candidates = catalog.candidates(filter);
            return Ok(self.exact_in(&pending, query, k, &candidates, filter, catalog));
        }
        Ok(top_k(hits, k))
    }

    /// The graph's `k` nearest vectors that `admit` accepts.
    ///
    /// When the filter may admit as many documents as the graph holds vectors
    /// (one namespace's memories: the usual search), the walk runs without the
    /// predicate, whose call at every visited node was a third of a search at
    /// 100k, for a few more than `k`, and the refused (superseded, say) are
    /// dropped afterwards. Only if that leaves fewer than `k` does the
    /// filtered walk run.
    fn walk(
        &self,
        query: &[f32],
        k: usize,
        admissible: usize,
        admit: impl Fn(u64) -> bool,
    ) -> Result<Vec<(u64, f32)>> {
        if admissible >= self.hnsw.len() {
            let mut wide = self.hnsw.search_all(query, k * 2 + WALK_SLACK)?;
            wide.retain(|(key, _)| admit(*key));
            if wide.len() >= k {
                wide.truncate(k);
                return Ok(wide);
            }
        }
        self.hnsw.search(query, k, admit)
    }

    /// Exact cosine over `candidates` (those the filter admits).
    pub fn exact(
        &self,
        query: &[f32],
        k: usize,
        candidates: &[u64],
        filter: &Filter,
        catalog: &Catalog,
    ) -> Vec<(u64, f32)> {
        self.exact_in(&self.pending.read(), query, k, candidates, filter, catalog)
    }

    /// [`Self::exact`] with the pending buffer already locked by the caller.
    fn exact_in(
        &self,
        pending: &HashMap<u64, SharedVector>,
        query: &[f32],
        k: usize,
        candidates: &[u64],
        filter: &Filter,
        catalog: &Catalog,
    ) -> Vec<(u64, f32)> {
        let mut hits = Vec::with_capacity(candidates.len().min(4096));
        let admitted = candidates
            .iter()
            .copied()
            .filter(|&key| catalog.admits(key, filter));
        let mut in_graph = Vec::new();
        for key in admitted {
            match pending.get(&key) {
                Some(v) => hits.push((key, dot(query, v))),
                None => in_graph.push(key),
            }
        }
        // One lock of the graph for all of them; text-only documents have no vector.
        self.hnsw.score_keys(&in_graph, query, &mut hits);
        top_k(hits, k)
    }

    /// Cosine of `query` (normalised) with the stored vector of each key that
    /// has one, pending or in the graph, as `(key, cosine)`; one lock each.
    pub fn cosines(&self, keys: &[u64], query: &[f32]) -> Vec<(u64, f32)> {
        let mut out = Vec::with_capacity(keys.len());
        let mut in_graph = Vec::new();
        {
            let pending = self.pending.read();
            for &key in keys {
                match pending.get(&key) {
                    Some(v) => out.push((key, dot(query, v))),
                    None => in_graph.push(key),
                }
            }
        }
        self.hnsw.score_keys(&in_graph, query, &mut out);
        out
    }

    /// The stored vector of a key (pending or in the graph).
    pub fn vector(&self, key: u64) -> Option<Vec<f32>> {
        if let Some(v) = self.pending.read().get(&key) {
            return Some(v.to_vec());
        }
        let mut buf = vec![0.0f32; self.dim()];
        self.hnsw.get(key, &mut buf).then_some(buf)
    }

    /// Drop everything (a reset, or a rebuild: the fresh graph is trusted).
    pub fn clear(&self) -> Result<()> {
        self.pending.write().clear();
        self.held_here.write().clear();
        self.hubs.clear();
        self.hnsw.clear()?;
        self.in_doubt.store(false, Ordering::SeqCst);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seeded unit vectors (xorshift), `dim` wide.
    fn units(n: usize, dim: usize, seed: u64) -> Vec<SharedVector> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                let v: Vec<f32> = (0..dim)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        (x % 2001) as f32 / 1000.0 - 1.0
                    })
                    .collect();
                let norm = v.iter().map(|a| a * a).sum::<f32>().sqrt();
                v.into_iter().map(|a| a / norm).collect()
            })
            .collect()
    }

    /// Vectors added by concurrent workers are each found by a search for
    /// themselves. Without the reconnection, this graph (8 workers, 20,000
    /// 8-d vectors, 8 neighbours a node) left 8 to 49 of them with no way in
    /// over six builds; a graph of 20,000 random 64-d vectors at the default
    /// parameters, 1 to 18 of them on two workers.
    #[test]
    fn every_vector_added_concurrently_finds_itself() {
        let dir = tempfile::tempdir().unwrap();
        let params = HnswParams {
            connectivity: 8,
            expansion_add: 64,
            expansion_search: 88,
        };
        let (index, _, _) = VectorIndex::open(dir.path(), 8, params, false).unwrap();
        let vectors = units(20_000, 8, 7);
        for (b, batch) in vectors.chunks(1000).enumerate() {
            let added: Vec<(u64, SharedVector)> = batch
                .iter()
                .enumerate()
                .map(|(i, v)| ((b * 1000 + i) as u64 + 1, v.clone()))
                .collect();
            index.apply(&added, &[], 8).unwrap();
        }
        let lost: Vec<u64> = vectors
            .iter()
            .enumerate()
            .map(|(i, v)| (i as u64 + 1, v))
            .filter(|(key, v)| {
                let hits = index.hnsw().search_all(v, 10).unwrap();
                !hits.iter().any(|(k, _)| k == key)
            })
            .map(|(key, _)| key)
            .collect();
        assert_eq!(
            lost,
            Vec::<u64>::new(),
            "vectors no search by themselves finds"
        );
    }

    /// A vector that stays unreachable is scored exactly by every search,
    /// filtered or not, and the graph remembers it across a save.
    #[test]
    fn a_vector_kept_exactly_is_found_by_every_search_and_survives_a_save() {
        let dir = tempfile::tempdir().unwrap();
        let (index, _, _) = VectorIndex::open(dir.path(), 8, HnswParams::default(), false).unwrap();
        let vectors = units(50, 8, 3);
        let added: Vec<(u64, SharedVector)> = vectors
            .iter()
            .enumerate()
            .map(|(i, v)| (i as u64 + 1, v.clone()))
            .collect();
        index.apply(&added, &[], 1).unwrap();
        index.hnsw().keep_exactly(7);
        let hits = index.hnsw().search_all(&vectors[6], 3).unwrap();
        assert_eq!(
            hits.iter().filter(|(k, _)| *k == 7).count(),
            1,
            "once: {hits:?}"
        );
        assert_eq!(hits[0].0, 7);
        let hits = index.hnsw().search(&vectors[6], 3, |k| k != 7).unwrap();
        assert!(
            hits.iter().all(|(k, _)| *k != 7),
            "the filter applies to it too"
        );
        index.save(50).unwrap();
        let (reopened, seq, _) =
            VectorIndex::open(dir.path(), 8, HnswParams::default(), false).unwrap();
        assert_eq!((seq, reopened.hnsw().unreachable()), (50, vec![7]));
        reopened.apply(&[], &[7], 1).unwrap();
        assert_eq!(
            reopened.hnsw().unreachable(),
            Vec::<u64>::new(),
            "removed with its key"
        );
    }

    fn keyed(vectors: &[SharedVector], first: u64) -> Vec<(u64, SharedVector)> {
        vectors
            .iter()
            .enumerate()
            .map(|(i, v)| (first + i as u64, v.clone()))
            .collect()
    }

    /// A read-only instance indexes what is pending into the graph it holds;
    /// a newer save from the writer that lacks some of those vectors gives
    /// them back to the buffer, so none is ever lost to searches.
    #[test]
    fn vectors_indexed_in_memory_survive_loading_a_save_without_them() {
        let dir = tempfile::tempdir().unwrap();
        let params = HnswParams::default();
        let (writer, _, _) = VectorIndex::open(dir.path(), 8, params, false).unwrap();
        let vectors = units(300, 8, 11);
        writer.apply(&keyed(&vectors[..100], 1), &[], 1).unwrap();
        writer.save(100).unwrap();
        let (reader, seq, _) = VectorIndex::open(dir.path(), 8, params, true).unwrap();
        assert_eq!((seq, reader.hnsw().len()), (100, 100));
        for (key, v) in keyed(&vectors[100..], 101) {
            reader.stage(key, v);
        }
        assert_eq!(reader.index_pending_in_memory(150).unwrap(), 150);
        assert_eq!((reader.pending_len(), reader.hnsw().len()), (50, 250));
        // The writer saves a graph holding only the next 20 of them.
        writer
            .apply(&keyed(&vectors[100..120], 101), &[], 1)
            .unwrap();
        writer.save(120).unwrap();
        reader.follow_saved();
        assert_eq!(reader.hnsw().len(), 120);
        assert_eq!(
            reader.pending_len(),
            180,
            "130 carried back, 50 still pending"
        );
        let lost: Vec<u64> = (1..=300).filter(|k| reader.vector(*k).is_none()).collect();
        assert_eq!(lost, Vec::<u64>::new(), "in the graph or in the buffer");
    }
}
