//! Hubness reduction for the vector signal of code chunks.
//!
//! With MiniLM some code chunks (getters, boilerplate, generic helpers) sit
//! close to many others and come up for every query. Each stored chunk
//! vector gets a hubness value h(key): the mean cosine of its
//! [`HUB_NEIGHBOURS`] nearest other chunk vectors of the same namespace (a
//! tenant's data never shifts another's ranking). Ranking and fusion use
//! `cos(q, d) - HUB_PENALTY * h(d)` (a CSLS-style penalty); the cosine
//! callers read as similarity stays plain.
//!
//! Only [`HUB_KIND`] gets values: on conversations the same penalty cost more
//! than it bought (see [`HUB_KIND`]). A key without a value (another kind,
//! or a chunk not reached yet) counts as the mean of the known values, so it
//! is neither favoured nor penalised against the chunks it is fused with.
//!
//! The values are computed off the write path, by the background indexer:
//! new chunks get one in small batches, and a namespace's chunks are
//! recomputed whole once they grew by more than a quarter since their last
//! full pass (new vectors change their neighbours' values too).

use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::Ordering;

use parking_lot::{Mutex, RwLock};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::VectorIndex;
use crate::catalog::{Catalog, Filter, Sym};
use crate::error::Result;
use crate::fsutil::{set_aside, write_atomic};
use crate::kind::{Kind, KindSet};
use crate::temporal::{ValidAt, now_micros};

/// The kind whose vectors get hubness values: code chunks. Measured through
/// the engine (`benches/results/quality-experiments.md`, section 12.4), the
/// penalty lifts CoSQA's MRR by one point and more for the vector alone, but
/// on LoCoMo it cost memories R@1 (32.1 -> 30.8, temporal questions below
/// BM25 alone) and turns R@5, so memories, observations, turns and entities
/// rank by the plain cosine.
pub const HUB_KIND: Kind = Kind::CodeChunk;
/// Neighbours whose mean cosine is a vector's hubness value.
///
/// With [`HUB_PENALTY`], chosen on the even CoSQA queries and read on the odd
/// ones (every k from 5 to 50 with every penalty from 0.1 to 0.4 beat the
/// plain cosine; `benches/quality/hubness_lab.py`).
pub const HUB_NEIGHBOURS: usize = 10;
/// Weight of the hubness value subtracted from the cosine (see [`HUB_NEIGHBOURS`]).
pub const HUB_PENALTY: f32 = 0.25;
/// A group is recomputed whole once it holds this many times the vectors
/// it held at its last full pass.
const REFRESH_GROWTH: f64 = 1.25;
/// The end of an `index_project` pass recomputes a group whole when more
/// than this share of it is new since its last full pass (values computed
/// against a smaller group are lower, so they would favour the chunks indexed
/// early: CoSQA MRR 55.9 with the whole pass, 54.9 with values left from the
/// background work between a pass's writes).
const CATCH_UP_STALE: f64 = 0.05;

/// Hubness values by key, with their running sum for the mean.
#[derive(Debug, Default)]
pub(super) struct HubValues {
    values: HashMap<u64, f32>,
    sum: f64,
}

impl HubValues {
    fn insert(&mut self, key: u64, value: f32) {
        if let Some(old) = self.values.insert(key, value) {
            self.sum -= f64::from(old);
        }
        self.sum += f64::from(value);
    }

    fn remove(&mut self, key: u64) {
        if let Some(old) = self.values.remove(&key) {
            self.sum -= f64::from(old);
        }
    }

    /// The mean of the known values (0 when none is known: plain cosines).
    fn mean(&self) -> f32 {
        if self.values.is_empty() {
            0.0
        } else {
            (self.sum / self.values.len() as f64) as f32
        }
    }

    pub(super) fn entries(&self) -> impl Iterator<Item = (u64, f32)> + '_ {
        self.values.iter().map(|(k, v)| (*k, *v))
    }

    pub(super) fn from_entries(entries: impl IntoIterator<Item = (u64, f32)>) -> Self {
        let mut out = HubValues::default();
        for (key, value) in entries {
            out.insert(key, value);
        }
        out
    }
}

/// The indexer's queue of hubness work.
#[derive(Debug, Default)]
struct HubWork {
    /// Keys added to the index that have no value yet, oldest first.
    fresh: VecDeque<u64>,
    /// Keys of groups being recomputed whole (they keep their old value meanwhile).
    refresh: VecDeque<u64>,
    /// The keys in `refresh` (a group growing again before its pass is done
    /// does not queue them twice).
    in_refresh: HashSet<u64>,
    /// Size of each namespace+kind group at its last full pass.
    refreshed: HashMap<(Sym, Kind), usize>,
    /// Values computed for new keys of each group since its last full pass
    /// (against a group that kept growing, so some are stale).
    since_full: HashMap<(Sym, Kind), usize>,
    /// Whether the keys present at open were checked for missing values.
    scanned: bool,
    /// Groups that gained a vector since they were last settled (see
    /// [`VectorIndex::settle_hubs`]).
    changed: HashSet<(Sym, Kind)>,
    /// A vector was retired since the last settle of every group (its group
    /// is no longer known: the catalog forgot the key first).
    retired: bool,
}

/// Hubness values and the work of keeping them (held by [`VectorIndex`]).
#[derive(Debug, Default)]
pub(super) struct Hubness {
    pub(super) values: RwLock<HubValues>,
    work: Mutex<HubWork>,
    /// Values changed since they were last saved.
    dirty: std::sync::atomic::AtomicBool,
}

impl Hubness {
    /// Retired vectors lose their value.
    pub(super) fn retired(&self, keys: &[u64]) {
        if keys.is_empty() {
            return;
        }
        let mut values = self.values.write();
        for key in keys {
            values.remove(*key);
        }
        self.work.lock().retired = true;
    }

    /// Forget every value and all queued work (a reset or a rebuild).
    pub(super) fn clear(&self) {
        *self.values.write() = HubValues::default();
        *self.work.lock() = HubWork::default();
    }

    /// Start with the values saved beside graph `generation` in `dir`, if
    /// any (keys without one are found by the first step's scan). A values
    /// file of another save of the graph is quietly ignored (a crash between
    /// the two writes); a damaged one is set aside (unless `read_only`) and
    /// reported, and the values are computed again.
    pub(super) fn load(&self, dir: &Path, generation: u64, read_only: bool) -> Option<String> {
        let path = dir.join(VALUES_FILE);
        match read_values(&path, generation) {
            Ok(Some(values)) => {
                *self.values.write() = values;
                *self.work.lock() = HubWork::default();
                None
            }
            Ok(None) => None,
            Err(why) if read_only => Some(format!(
                "The vector hubness values at {} are damaged ({why}); this read-only \
                 instance ranks vectors without them until the store is opened for writing.",
                path.display()
            )),
            Err(why) => Some(match set_aside(&path) {
                Ok(aside) => format!(
                    "The vector hubness values were damaged ({why}); they were moved to {} \
                     and are being computed again.",
                    aside.display()
                ),
                Err(e) => format!(
                    "The vector hubness values at {} are damaged ({why}) and could not be \
                     moved aside ({e}); they are being computed again.",
                    path.display()
                ),
            }),
        }
    }

    /// Save the values beside graph `generation` when they changed since the
    /// last save. Best effort: a file that is missing or belongs to another
    /// generation only means the values are recomputed after the next open.
    pub(super) fn save(&self, dir: &Path, generation: u64) {
        if !self.dirty.swap(false, Ordering::SeqCst) {
            return;
        }
        let entries: Vec<(u64, f32)> = self.values.read().entries().collect();
        if write_values(dir, generation, &entries).is_err() {
            self.dirty.store(true, Ordering::SeqCst);
        }
    }
}

/// The file of the values, beside the graph's files.
const VALUES_FILE: &str = "hubness.bin";
/// First bytes of that file (the layout's name and version).
const MAGIC: &[u8; 8] = b"MCHUBS1\n";

/// `MAGIC`, the graph generation, the count, `(key u64, value f32)` pairs
/// (little-endian), then the CRC-32 of all of it.
fn write_values(dir: &Path, generation: u64, entries: &[(u64, f32)]) -> Result<()> {
    let mut bytes = Vec::with_capacity(28 + entries.len() * 12);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&generation.to_le_bytes());
    bytes.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    for (key, value) in entries {
        bytes.extend_from_slice(&key.to_le_bytes());
        bytes.extend_from_slice(&value.to_le_bytes());
    }
    let crc = crc32fast::hash(&bytes);
    bytes.extend_from_slice(&crc.to_le_bytes());
    write_atomic(&dir.join(VALUES_FILE), &bytes)
}

/// The values in `path` if saved beside graph `generation`: `Ok(None)` when
/// the file is missing or belongs to another save, `Err` (why) when damaged.
fn read_values(path: &Path, generation: u64) -> std::result::Result<Option<HubValues>, String> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("unreadable: {e}")),
    };
    let Some((body, crc)) = bytes.split_last_chunk::<4>() else {
        return Err("the file is truncated".to_owned());
    };
    if crc32fast::hash(body) != u32::from_le_bytes(*crc) {
        return Err("the file fails its checksum".to_owned());
    }
    let header = body
        .strip_prefix(MAGIC)
        .and_then(|rest| rest.split_first_chunk::<8>())
        .and_then(|(saved, rest)| rest.split_first_chunk::<8>().map(|(n, p)| (saved, n, p)));
    let Some((saved_generation, count, pairs)) = header else {
        return Err("not a hubness values file".to_owned());
    };
    if u64::from_le_bytes(*count) as usize * 12 != pairs.len() {
        return Err("its count does not match its length".to_owned());
    }
    if u64::from_le_bytes(*saved_generation) != generation {
        return Ok(None);
    }
    let entries = pairs.chunks_exact(12).map(|pair| {
        let (key, value) = pair.split_at(8);
        let key = u64::from_le_bytes(key.try_into().unwrap_or_default());
        let value = f32::from_le_bytes(value.try_into().unwrap_or_default());
        (key, value)
    });
    Ok(Some(HubValues::from_entries(entries)))
}

impl VectorIndex {
    /// What ranking subtracts from each key's cosine: `HUB_PENALTY * h(key)`,
    /// the mean value for a key without one (one lock for all).
    pub fn hub_penalties(&self, keys: &[u64]) -> Vec<f32> {
        let values = self.hubs.values.read();
        let mean = values.mean();
        keys.iter()
            .map(|k| HUB_PENALTY * values.values.get(k).copied().unwrap_or(mean))
            .collect()
    }

    /// Queue the new vectors of [`HUB_KIND`] for a value (the other kinds
    /// never get one, so they cost no hubness work).
    pub fn queue_hubs(&self, catalog: &RwLock<Catalog>, added: &[(u64, super::SharedVector)]) {
        let catalog = catalog.read();
        let chunks = added
            .iter()
            .map(|(key, _)| *key)
            .filter(|key| catalog.get(*key).is_some_and(|m| m.kind == HUB_KIND));
        self.hubs.work.lock().fresh.extend(chunks);
    }

    /// Whether hubness work is waiting (the indexer keeps stepping while so).
    pub fn hub_work_pending(&self) -> bool {
        let work = self.hubs.work.lock();
        !work.scanned || !work.fresh.is_empty() || !work.refresh.is_empty()
    }

    /// Compute up to `budget` hubness values: new keys first, then the keys
    /// of groups being recomputed. Returns how many were computed.
    ///
    /// The catalog is read-locked per key, never for the whole batch, so
    /// writers wait no longer than one search.
    pub fn hub_step(&self, catalog: &RwLock<Catalog>, budget: usize) -> Result<usize> {
        if !self.hubs.work.lock().scanned {
            self.scan_for_missing(catalog);
        }
        let mut done = 0;
        let mut grown: HashSet<(Sym, Kind)> = HashSet::default();
        while done < budget {
            let next = {
                let mut work = self.hubs.work.lock();
                match work.fresh.pop_front() {
                    Some(key) => Some((key, true)),
                    None => work.refresh.pop_front().map(|key| {
                        work.in_refresh.remove(&key);
                        (key, false)
                    }),
                }
            };
            let Some((key, fresh)) = next else { break };
            if let Some(group) = self.compute_hub(catalog, key)? {
                done += 1;
                if fresh {
                    grown.insert(group);
                    let mut work = self.hubs.work.lock();
                    work.changed.insert(group);
                    *work.since_full.entry(group).or_default() += 1;
                }
            }
            // Check growth after each batch of new keys, before the refresh
            // queue is served (so a grown group is recomputed in order).
            if fresh && self.hubs.work.lock().fresh.is_empty() {
                self.queue_grown_groups(catalog, &grown);
                grown.clear();
            }
        }
        if !grown.is_empty() {
            self.queue_grown_groups(catalog, &grown);
        }
        if done > 0 {
            self.hubs.dirty.store(true, Ordering::SeqCst);
        }
        Ok(done)
    }

    /// Give up the queued work (after a failure): keys without a value keep
    /// counting as the mean until the next open scans for them again.
    pub fn drop_hub_work(&self) {
        let mut work = self.hubs.work.lock();
        work.fresh.clear();
        work.refresh.clear();
        work.in_refresh.clear();
        work.changed.clear();
        work.retired = false;
        work.scanned = true;
    }

    /// Bring the values of every group that changed since it was last
    /// settled to what they are for the vectors present now: each of its
    /// values is computed again, so they no longer depend on when the
    /// background work ran (two stores holding the same vectors rank alike).
    /// Costs one neighbour search per vector of those groups; the queued work
    /// for them is dropped.
    pub fn settle_hubs(&self, catalog: &RwLock<Catalog>, threads: usize) -> Result<()> {
        if !self.hubs.work.lock().scanned {
            self.scan_for_missing(catalog);
        }
        let groups: Vec<((Sym, Kind), Vec<u64>)> = {
            let catalog = catalog.read();
            let mut work = self.hubs.work.lock();
            let mut due: HashSet<(Sym, Kind)> = std::mem::take(&mut work.changed);
            let queued = work.fresh.iter().filter_map(|k| catalog.get(*k));
            due.extend(queued.map(|m| (m.namespace, m.kind)));
            if work.retired {
                due.extend(
                    catalog
                        .keys()
                        .filter_map(|k| catalog.get(k))
                        .map(|m| (m.namespace, m.kind)),
                );
            }
            due.retain(|g| g.1 == HUB_KIND);
            work.retired = false;
            // Their queued work is done here.
            let in_due = |key: &u64| {
                catalog
                    .get(*key)
                    .is_some_and(|m| due.contains(&(m.namespace, m.kind)))
            };
            work.fresh.retain(|k| !in_due(k));
            let HubWork {
                refresh,
                in_refresh,
                ..
            } = &mut *work;
            refresh.retain(|k| {
                let keep = !in_due(k);
                if !keep {
                    in_refresh.remove(k);
                }
                keep
            });
            due.into_iter()
                .map(|(namespace, kind)| ((namespace, kind), catalog.group_keys(namespace, kind)))
                .collect()
        };
        for (group, keys) in groups {
            self.compute_hubs(catalog, &keys, threads)?;
            let mut work = self.hubs.work.lock();
            work.refreshed.insert(group, keys.len());
            work.since_full.remove(&group);
        }
        Ok(())
    }

    /// Compute the values of `keys` on up to `threads` threads (each value
    /// depends only on the vectors present, not on the order).
    fn compute_hubs(&self, catalog: &RwLock<Catalog>, keys: &[u64], threads: usize) -> Result<()> {
        if keys.is_empty() {
            return Ok(());
        }
        let threads = threads.clamp(1, 8);
        let part = keys.len().div_ceil(threads).max(256);
        std::thread::scope(|scope| {
            let workers: Vec<_> = keys
                .chunks(part)
                .map(|part| {
                    scope.spawn(move || {
                        part.iter()
                            .try_for_each(|key| self.compute_hub(catalog, *key).map(|_| ()))
                    })
                })
                .collect();
            workers
                .into_iter()
                .try_for_each(|w| w.join().expect("hubness worker panicked"))
        })?;
        self.hubs.dirty.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// Give the code chunks of `namespace` that have no value yet theirs, as the end of an `index_project` pass needs: the
    /// keys queued for it are computed now, or the whole group when more
    /// than [`CATCH_UP_STALE`] of it is new since its last full pass, or it
    /// outgrew that pass by a quarter (new values alone would leave the
    /// others stale). Unlike [`Self::settle_hubs`] the values
    /// already known stay, so a watched file's edit costs one neighbour
    /// search per new chunk, not one per chunk of the project.
    pub fn catch_up_hubs(
        &self,
        catalog: &RwLock<Catalog>,
        namespace: Sym,
        threads: usize,
    ) -> Result<()> {
        let group = (namespace, HUB_KIND);
        if !self.hubs.work.lock().scanned {
            self.scan_for_missing(catalog);
        }
        let keys: Vec<u64> = {
            let catalog = catalog.read();
            let mut work = self.hubs.work.lock();
            let in_group = |key: &u64| {
                catalog
                    .get(*key)
                    .is_some_and(|m| (m.namespace, m.kind) == group)
            };
            let mut keys: Vec<u64> = work.fresh.iter().copied().filter(in_group).collect();
            work.fresh.retain(|k| !in_group(k));
            let all = catalog.group_keys(group.0, group.1);
            let last = work.refreshed.get(&group).copied().unwrap_or(0);
            let stale = work.since_full.get(&group).copied().unwrap_or(0) + keys.len();
            if all.len() as f64 > last as f64 * REFRESH_GROWTH
                || stale as f64 > all.len() as f64 * CATCH_UP_STALE
            {
                let HubWork {
                    refresh,
                    in_refresh,
                    refreshed,
                    since_full,
                    ..
                } = &mut *work;
                refresh.retain(|k| !(in_group(k) && in_refresh.remove(k)));
                refreshed.insert(group, all.len());
                since_full.remove(&group);
                keys = all;
            } else {
                *work.since_full.entry(group).or_default() += keys.len();
            }
            if !keys.is_empty() {
                work.changed.insert(group);
            }
            keys
        };
        self.compute_hubs(catalog, &keys, threads)
    }

    /// Queue the keys present without a value (after open, with or without
    /// values read from disk). Each group's present size counts as its last
    /// full pass: the missing values are computed against the whole group as
    /// it is, and the values read back were current when last saved.
    fn scan_for_missing(&self, catalog: &RwLock<Catalog>) {
        let catalog = catalog.read();
        let values = self.hubs.values.read();
        let mut work = self.hubs.work.lock();
        let mut sizes: HashMap<(Sym, Kind), usize> = HashMap::default();
        for key in catalog.keys() {
            let Some(meta) = catalog.get(key).filter(|m| m.kind == HUB_KIND) else {
                continue;
            };
            *sizes.entry((meta.namespace, meta.kind)).or_default() += 1;
            if !values.values.contains_key(&key) && self.has_vector(key) {
                work.fresh.push_back(key);
            }
        }
        for (group, size) in sizes {
            work.refreshed.entry(group).or_insert(size);
        }
        work.scanned = true;
    }

    /// Queue the whole of each group in `groups` that outgrew its last full pass.
    fn queue_grown_groups(&self, catalog: &RwLock<Catalog>, groups: &HashSet<(Sym, Kind)>) {
        let catalog = catalog.read();
        let mut work = self.hubs.work.lock();
        for &(namespace, kind) in groups {
            let keys = catalog.group_keys(namespace, kind);
            let last = work.refreshed.get(&(namespace, kind)).copied().unwrap_or(0);
            if keys.len() as f64 > last as f64 * REFRESH_GROWTH {
                work.refreshed.insert((namespace, kind), keys.len());
                work.since_full.remove(&(namespace, kind));
                for key in keys {
                    if work.in_refresh.insert(key) {
                        work.refresh.push_back(key);
                    }
                }
            }
        }
    }

    fn has_vector(&self, key: u64) -> bool {
        self.pending.read().contains_key(&key) || self.hnsw.contains(key)
    }

    /// Compute and store `key`'s value; returns its group, or None when the
    /// key is gone, is not of [`HUB_KIND`] or has no vector.
    fn compute_hub(&self, catalog: &RwLock<Catalog>, key: u64) -> Result<Option<(Sym, Kind)>> {
        let Some(vector) = self.vector(key) else {
            return Ok(None);
        };
        let catalog = catalog.read();
        let group = match catalog.get(key) {
            Some(meta) if meta.kind == HUB_KIND => (meta.namespace, meta.kind),
            _ => return Ok(None),
        };
        let filter = Filter {
            namespace: group.0,
            kinds: KindSet::only(group.1),
            thread: None,
            scope: None,
            tag: None,
            exclude_scope: None,
            valid: ValidAt::Now,
            now: now_micros(),
        };
        let found = self.search(&vector, HUB_NEIGHBOURS + 1, &filter, &catalog)?;
        drop(catalog);
        let neighbours: Vec<f32> = found
            .into_iter()
            .filter(|(k, _)| *k != key)
            .take(HUB_NEIGHBOURS)
            .map(|(_, cosine)| cosine)
            .collect();
        if neighbours.is_empty() {
            return Ok(Some(group));
        }
        let value = neighbours.iter().sum::<f32>() / neighbours.len() as f32;
        self.hubs.values.write().insert(key, value);
        Ok(Some(group))
    }

    /// The hubness value of `key`, if computed (tests and diagnostics).
    pub fn hub_value(&self, key: u64) -> Option<f32> {
        self.hubs.values.read().values.get(&key).copied()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::catalog::DocLabels;
    use crate::vector::HnswParams;

    const DIM: usize = 8;

    fn unit(v: &[f32]) -> Arc<[f32]> {
        let norm = v.iter().map(|a| a * a).sum::<f32>().sqrt();
        v.iter().map(|a| a / norm).collect()
    }

    /// Axis `i` plus `tilt` times axis `j`, normalised.
    fn near(i: usize, j: usize, tilt: f32) -> Arc<[f32]> {
        let mut v = [0.0f32; DIM];
        v[i] = 1.0;
        v[j] += tilt;
        unit(&v)
    }

    struct Fixture {
        index: VectorIndex,
        catalog: RwLock<Catalog>,
        dir: tempfile::TempDir,
    }

    impl Fixture {
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            let (index, _, _) =
                VectorIndex::open(dir.path(), DIM, HnswParams::default(), false).unwrap();
            Fixture {
                index,
                catalog: RwLock::new(Catalog::default()),
                dir,
            }
        }

        /// A code chunk's vector.
        fn add(&self, key: u64, namespace: &str, vector: Arc<[f32]>) {
            self.add_kind(key, namespace, HUB_KIND, vector);
        }

        fn add_kind(&self, key: u64, namespace: &str, kind: Kind, vector: Arc<[f32]>) {
            self.catalog.write().insert(
                key,
                &DocLabels {
                    kind,
                    namespace,
                    thread: None,
                    scope: None,
                    tag: None,
                    valid_from: 0,
                    valid_end: None,
                    superseded: false,
                    asks: 0,
                },
            );
            self.index.stage(key, vector.clone());
            let added = [(key, vector)];
            self.index.queue_hubs(&self.catalog, &added);
            self.index.apply(&added, &[], 1).unwrap();
        }

        fn settle(&self) {
            self.index.settle_hubs(&self.catalog, 2).unwrap();
        }
    }

    /// Key 1 sits in a crowd (keys 10..30, all near axis 0), key 2 alone
    /// near axis 2: a hub and a distinctive vector.
    fn hub_and_loner(f: &Fixture) {
        f.add(1, "a", near(0, 1, 1.0));
        f.add(2, "a", near(2, 3, 0.1));
        for key in 10..30 {
            f.add(key, "a", near(0, 3 + (key as usize % 5), 0.2));
        }
    }

    #[test]
    fn a_hub_is_penalised_more_than_a_distinctive_vector() {
        let f = Fixture::new();
        hub_and_loner(&f);
        assert_eq!(
            f.index.hub_penalties(&[1, 2]),
            [0.0, 0.0],
            "no value known yet: plain cosines"
        );
        f.settle();
        let (hub, loner) = (f.index.hub_value(1).unwrap(), f.index.hub_value(2).unwrap());
        // The hub's ten nearest are crowd members at cosine ~0.69.
        assert!((hub - 0.69).abs() < 0.02, "{hub}");
        assert!(loner < 0.05, "{loner}");
        let penalties = f.index.hub_penalties(&[1, 2]);
        assert!((penalties[0] - HUB_PENALTY * hub).abs() < 1e-6);
        assert!(penalties[0] - penalties[1] > 0.15, "{penalties:?}");
        assert!(!f.index.hub_work_pending());
    }

    #[test]
    fn only_code_chunks_get_values() {
        let f = Fixture::new();
        hub_and_loner(&f);
        // Twenty memories right beside the loner chunk: they get no value
        // and are not its neighbours (memories rank by the plain cosine).
        for key in 40..60 {
            f.add_kind(key, "a", Kind::Memory, near(2, 3, 0.1 + key as f32 * 1e-3));
        }
        f.settle();
        assert!(!f.index.hub_work_pending());
        assert_eq!(f.index.hub_value(40), None);
        assert!(f.index.hub_value(2).unwrap() < 0.05);
        // Reopened without saved values, the scan queues only the chunks.
        f.index.hubs.clear();
        f.index.settle_hubs(&f.catalog, 2).unwrap();
        assert_eq!(f.index.hub_value(40), None);
        assert!(f.index.hub_value(1).is_some());
    }

    #[test]
    fn catching_up_computes_new_keys_and_a_changed_group_whole() {
        let f = Fixture::new();
        hub_and_loner(&f);
        f.settle();
        let loner = f.index.hub_value(2).unwrap();
        let a = f.catalog.read().sym("a").unwrap();
        // A chunk beside the loner: it gets a value, the loner keeps its own
        // (1 of 23 is new: under CATCH_UP_STALE).
        f.add(40, "a", near(2, 3, 0.11));
        f.index.catch_up_hubs(&f.catalog, a, 2).unwrap();
        assert!(f.index.hub_value(40).unwrap() > 0.05);
        assert_eq!(f.index.hub_value(2), Some(loner));
        // One more: 2 of 24 new since the last full pass, so the whole group.
        f.add(41, "a", near(2, 3, 0.12));
        f.index.catch_up_hubs(&f.catalog, a, 2).unwrap();
        let recomputed = f.index.hub_value(2).unwrap();
        assert!(recomputed > loner + 0.1, "{recomputed} vs {loner}");
        // Ten more: the whole group again, the loner close to all of them.
        for key in 50..60 {
            f.add(key, "a", near(2, 3, 0.1 + key as f32 * 1e-3));
        }
        f.index.catch_up_hubs(&f.catalog, a, 2).unwrap();
        assert!(f.index.hub_value(2).unwrap() > recomputed + 0.5);
        assert!(f.index.hub_value(59).is_some());
        assert!(!f.index.hub_work_pending());
    }

    #[test]
    fn another_namespace_does_not_change_a_value() {
        let f = Fixture::new();
        hub_and_loner(&f);
        f.settle();
        let before = f.index.hub_value(2).unwrap();
        // Twenty vectors right beside the loner, in another namespace: its
        // group (namespace "a", code chunks) grew by nothing.
        for key in 100..120 {
            f.add(key, "b", near(2, 3, 0.1 + key as f32 * 1e-3));
        }
        f.settle();
        assert!((f.index.hub_value(2).unwrap() - before).abs() < 1e-6);
        assert!(f.index.hub_value(100).unwrap() > 0.99, "b's own crowd");
        // The same vectors in namespace "a" do raise it (the group grew
        // past a quarter, so it was recomputed whole).
        for key in 200..220 {
            f.add(key, "a", near(2, 3, 0.1 + key as f32 * 1e-4));
        }
        f.settle();
        assert!(f.index.hub_value(2).unwrap() > 0.99);
    }

    #[test]
    fn settled_values_do_not_depend_on_when_they_were_computed() {
        // One store computed values as vectors came in (and saw one retired),
        // the other only at the end: once settled, both hold the same values.
        let step_by_step = Fixture::new();
        step_by_step.add(1, "a", near(0, 1, 1.0));
        step_by_step.add(2, "a", near(2, 3, 0.1));
        step_by_step.add(3, "a", near(0, 2, 0.3));
        step_by_step
            .index
            .hub_step(&step_by_step.catalog, 10)
            .unwrap();
        step_by_step.catalog.write().remove(3);
        step_by_step.index.apply(&[], &[3], 1).unwrap();
        for key in 10..15 {
            step_by_step.add(key, "a", near(0, 3 + key as usize % 5, 0.2));
        }
        step_by_step.settle();

        let at_once = Fixture::new();
        at_once.add(1, "a", near(0, 1, 1.0));
        at_once.add(2, "a", near(2, 3, 0.1));
        for key in 10..15 {
            at_once.add(key, "a", near(0, 3 + key as usize % 5, 0.2));
        }
        at_once.settle();
        for key in [1, 2, 10, 14] {
            let (a, b) = (
                step_by_step.index.hub_value(key),
                at_once.index.hub_value(key),
            );
            assert!(
                (a.unwrap() - b.unwrap()).abs() < 1e-6,
                "{key}: {a:?} vs {b:?}"
            );
        }
    }

    #[test]
    fn a_key_without_a_value_counts_as_the_mean() {
        let f = Fixture::new();
        hub_and_loner(&f);
        f.settle();
        let known: Vec<u64> = [1, 2].into_iter().chain(10..30).collect();
        let mean = known
            .iter()
            .map(|k| f.index.hub_value(*k).unwrap())
            .sum::<f32>()
            / known.len() as f32;
        f.add(50, "a", near(5, 6, 0.5));
        assert_eq!(f.index.hub_value(50), None);
        let penalty = f.index.hub_penalties(&[50])[0];
        assert!(
            (penalty - HUB_PENALTY * mean).abs() < 1e-5,
            "{penalty} vs {mean}"
        );
        // A retired key's value leaves the mean.
        f.catalog.write().remove(1);
        f.index.apply(&[], &[1], 1).unwrap();
        assert_eq!(f.index.hub_value(1), None);
        let rest = known[1..]
            .iter()
            .map(|k| f.index.hub_value(*k).unwrap())
            .sum::<f32>()
            / (known.len() - 1) as f32;
        let penalty = f.index.hub_penalties(&[50])[0];
        assert!((penalty - HUB_PENALTY * rest).abs() < 1e-5);
    }

    #[test]
    fn values_are_saved_with_the_graph_and_read_back_only_with_it() {
        let f = Fixture::new();
        hub_and_loner(&f);
        f.settle();
        f.index.save(7).unwrap();
        let hub = f.index.hub_value(1).unwrap();
        let dir = f.dir.path();
        let (reopened, seq, _) = VectorIndex::open(dir, DIM, HnswParams::default(), false).unwrap();
        assert_eq!(seq, 7);
        assert_eq!(reopened.hub_value(1), Some(hub));
        assert_eq!(reopened.hub_value(2), f.index.hub_value(2));

        // Values of another save of the graph, or damaged ones, are dropped
        // (recomputed in the background).
        let path = dir.join(VALUES_FILE);
        let saved = std::fs::read(&path).unwrap();
        let generation = reopened.hnsw().generation();
        write_values(dir, generation + 1, &[(1, 0.5)]).unwrap();
        let (other, _, _) = VectorIndex::open(dir, DIM, HnswParams::default(), false).unwrap();
        assert_eq!(other.hub_value(1), None);
        let mut flipped = saved.clone();
        flipped[30] ^= 0x01;
        std::fs::write(&path, flipped).unwrap();
        let (damaged, _, warning) =
            VectorIndex::open(dir, DIM, HnswParams::default(), true).unwrap();
        assert_eq!(damaged.hub_value(1), None);
        assert!(warning.unwrap().contains("read-only"));
        assert!(path.exists(), "a read-only open moves nothing");
        let (damaged, _, warning) =
            VectorIndex::open(dir, DIM, HnswParams::default(), false).unwrap();
        assert_eq!(damaged.hub_value(1), None);
        assert!(warning.unwrap().contains("checksum"));
        assert!(!path.exists(), "set aside");
        assert!(damaged.hub_work_pending(), "missing values are queued");
    }
}
