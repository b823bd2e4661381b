//! How many vectors of an HNSW graph its own vector cannot find: each stored
//! vector is searched for by itself, and counted unreachable when it is not
//! among the `k` results (`python -m benches.reachability` runs this through
//! the whole engine; this looks at the graph alone, to compare parameters).
//!
//! ```text
//! cargo run --release -p memcore --example reachability -- \
//!     --n 20000 --dim 64 [--vectors FILE.f32] [--build sequential|batches] \
//!     [--connectivity 16] [--expansion-add 128] [--expansion-search 88] [--k 10]
//! ```
//!
//! `--vectors` reads little-endian f32s, `--dim` per vector (what the Python
//! bench writes from real embeddings); without it, seeded Gaussian vectors.
//! `sequential` adds one vector at a time on one thread; `batches` hands them
//! to `VectorIndex::apply` 1,000 at a time on two threads, as the indexer
//! does (a store's writes, a rebuild). Prints one JSON line.

use std::time::Instant;

use memcore::vector::{HnswParams, SharedVector, VectorIndex};

struct Args {
    n: usize,
    dim: usize,
    vectors: Option<String>,
    sequential: bool,
    params: HnswParams,
    k: usize,
    seed: u64,
    threads: usize,
}

fn args() -> Args {
    let mut a = Args {
        n: 20_000,
        dim: 64,
        vectors: None,
        sequential: true,
        params: HnswParams::default(),
        k: 10,
        seed: 1,
        threads: 2,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        let number = || value.parse::<usize>().expect("a number");
        match flag.as_str() {
            "--n" => a.n = number(),
            "--dim" => a.dim = number(),
            "--vectors" => a.vectors = Some(value.clone()),
            "--build" => a.sequential = value == "sequential",
            "--connectivity" => a.params.connectivity = number(),
            "--expansion-add" => a.params.expansion_add = number(),
            "--expansion-search" => a.params.expansion_search = number(),
            "--k" => a.k = number(),
            "--seed" => a.seed = number() as u64,
            "--threads" => a.threads = number(),
            other => panic!("unknown flag {other}"),
        }
    }
    a
}

/// Seeded standard-normal vectors (xorshift + Box-Muller).
fn gaussian(n: usize, dim: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut uniform = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    (0..n)
        .map(|_| {
            (0..dim)
                .map(|_| {
                    let (u, v) = (uniform(), uniform());
                    ((-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()) as f32
                })
                .collect()
        })
        .collect()
}

fn read(path: &str, dim: usize, n: usize) -> Vec<Vec<f32>> {
    let bytes = std::fs::read(path).expect("read the vectors");
    bytes
        .chunks_exact(4 * dim)
        .take(n)
        .map(|row| {
            row.chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect()
        })
        .collect()
}

fn main() {
    let a = args();
    let mut vectors = match &a.vectors {
        Some(path) => read(path, a.dim, a.n),
        None => gaussian(a.n, a.dim, a.seed),
    };
    // The engine hands the index unit vectors.
    for v in &mut vectors {
        let norm = v
            .iter()
            .map(|x| x * x)
            .sum::<f32>()
            .sqrt()
            .max(f32::MIN_POSITIVE);
        for x in v.iter_mut() {
            *x /= norm;
        }
    }
    let dir = tempfile::tempdir().expect("a temp dir");
    let (index, _, _) = VectorIndex::open(dir.path(), a.dim, a.params, false).expect("open");
    let hnsw = index.hnsw();
    let start = Instant::now();
    if a.sequential {
        for (i, v) in vectors.iter().enumerate() {
            hnsw.reserve_for(1).expect("reserve");
            hnsw.add(i as u64 + 1, v).expect("add");
        }
    } else {
        // As the indexer applies a batch (`VectorIndex::apply`, two threads).
        for (b, batch) in vectors.chunks(1000).enumerate() {
            let added: Vec<(u64, SharedVector)> = batch
                .iter()
                .enumerate()
                .map(|(i, v)| ((b * 1000 + i) as u64 + 1, v.as_slice().into()))
                .collect();
            index.apply(&added, &[], a.threads).expect("apply");
        }
    }
    let built = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let mut unreachable = Vec::new();
    for (i, v) in vectors.iter().enumerate() {
        let key = i as u64 + 1;
        let hits = hnsw.search_all(v, a.k).expect("search");
        if !hits.iter().any(|(k, _)| *k == key) {
            unreachable.push(key);
        }
    }
    let searched = start.elapsed().as_secs_f64();
    // Still missing with a far wider search: cut off from the graph, not just
    // beyond the default search's reach.
    let cut_off = unreachable
        .iter()
        .filter(|&&key| {
            let v = &vectors[key as usize - 1];
            !hnsw
                .search_all(v, 500)
                .expect("search")
                .iter()
                .any(|(k, _)| *k == key)
        })
        .count();
    println!(
        "{{\"n\": {}, \"dim\": {}, \"source\": {:?}, \"build\": {:?}, \"connectivity\": {}, \
         \"expansion_add\": {}, \"expansion_search\": {}, \"k\": {}, \"unreachable\": {}, \
         \"unreachable_keys\": {:?}, \"cut_off_at_500\": {cut_off}, \"build_s\": {built:.2}, \"search_ms\": {:.4}}}",
        a.n,
        a.dim,
        a.vectors.as_deref().unwrap_or("gaussian"),
        if a.sequential {
            "sequential"
        } else {
            "batches"
        },
        a.params.connectivity,
        a.params.expansion_add,
        a.params.expansion_search,
        a.k,
        unreachable.len(),
        &unreachable[..unreachable.len().min(20)],
        searched * 1000.0 / vectors.len() as f64,
    );
}
