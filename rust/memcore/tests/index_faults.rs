//! Faults in the derived indexes through the engine: damaged files set aside
//! and rebuilt, a rebuild asked for after a panic, and what `index_status`
//! says about them; on real SQLite, usearch and tantivy.

use std::path::Path;

use memcore::{Engine, EngineOptions, NewMemory, SearchQuery};

const DIM: usize = 8;
const COUNT: u64 = 40;

fn vector(seed: u64) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(1);
    (0..DIM)
        .map(|_| {
            x ^= x >> 30;
            x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
            x ^= x >> 27;
            ((x % 2000) as f32 / 1000.0) - 1.0
        })
        .collect()
}

fn open(dir: &Path, read_only: bool) -> Engine {
    let options = EngineOptions {
        read_only,
        ..EngineOptions::default()
    };
    Engine::open(dir, &options).unwrap()
}

/// A store of `COUNT` memories, each with a vector and a word of its own.
fn populate(dir: &Path) {
    let engine = open(dir, false);
    for i in 0..COUNT {
        engine
            .store_memory(NewMemory {
                embedding: Some(vector(i)),
                ..NewMemory::text(format!("memory {i} marker zq{i}x"))
            })
            .unwrap();
    }
    engine.flush().unwrap();
}

/// The memories not found first by their own word or vector.
fn misses(engine: &Engine) -> Vec<String> {
    let q = SearchQuery::memories("default", 1);
    let mut missed = Vec::new();
    for i in 0..COUNT {
        let word = format!("zq{i}x");
        let first = |hits: &[memcore::Hit]| {
            engine
                .memories_for(hits)
                .unwrap()
                .first()
                .is_some_and(|(m, _)| m.content.contains(&word))
        };
        if !first(&engine.search_text(&q, &word).unwrap()) {
            missed.push(format!("word {i}"));
        }
        if !first(&engine.search_vector(&q, &vector(i)).unwrap()) {
            missed.push(format!("vector {i}"));
        }
    }
    missed
}

/// Overwrite the middle third of every file under `dir` with garbage.
fn damage_all(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let mut bytes = std::fs::read(&path).unwrap();
        let (from, to) = (bytes.len() / 3, 2 * bytes.len() / 3);
        for (n, b) in bytes[from..to].iter_mut().enumerate() {
            *b = (n as u8).wrapping_mul(31) ^ 0xa5;
        }
        std::fs::write(&path, bytes).unwrap();
    }
}

#[test]
fn damaged_index_folders_are_rebuilt_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    populate(dir.path());
    let index = dir.path().join("index");
    damage_all(&index.join("text"));
    damage_all(&index.join("vectors"));

    let read_only = open(dir.path(), true);
    assert_eq!(misses(&read_only), Vec::<String>::new());
    assert_eq!(
        read_only.index_status().warnings.len(),
        2,
        "text and vectors"
    );
    drop(read_only);

    let engine = open(dir.path(), false);
    assert_eq!(
        misses(&engine),
        Vec::<String>::new(),
        "served while rebuilding"
    );
    let warnings = engine.index_status().warnings;
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings
            .iter()
            .all(|w| w.contains("rebuilt from the database"))
    );
    engine.flush().unwrap();
    let status = engine.index_status();
    assert_eq!(
        (status.text_documents, status.vectors),
        (COUNT, COUNT as usize)
    );
    drop(engine);
    let aside = std::fs::read_dir(&index)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".corrupt-"))
        .count();
    assert_eq!(aside, 2);

    let engine = open(dir.path(), false);
    assert!(engine.index_status().warnings.is_empty());
    assert_eq!(misses(&engine), Vec::<String>::new());
}

#[test]
fn a_rebuild_asked_for_happens_at_the_next_open() {
    let dir = tempfile::tempdir().unwrap();
    populate(dir.path());
    {
        let engine = open(dir.path(), false);
        engine.mark_for_rebuild("internal error: test");
        let warnings = engine.index_status().warnings;
        assert!(warnings[0].contains("at the next open"), "{warnings:?}");
    }
    let engine = open(dir.path(), false);
    let warnings = engine.index_status().warnings;
    assert!(warnings[0].contains("internal error: test"), "{warnings:?}");
    assert_eq!(misses(&engine), Vec::<String>::new());
    engine.flush().unwrap();
    assert_eq!(engine.index_status().text_documents, COUNT);
    drop(engine);
    assert!(open(dir.path(), false).index_status().warnings.is_empty());
}

/// Overwrite every fast-field file of the text index with zeros, in place
/// (the running process keeps them mapped: it reads the damage).
fn zero_text_fast_fields(dir: &Path) {
    let text = dir.join("index").join("text");
    for entry in std::fs::read_dir(text).unwrap().flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|x| x == "fast") {
            let len = std::fs::metadata(&path).unwrap().len() as usize;
            std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .and_then(|mut f| std::io::Write::write_all(&mut f, &vec![0; len]))
                .unwrap();
        }
    }
}

#[test]
fn text_damaged_while_open_asks_for_a_rebuild_and_rebuild_heals_it_in_place() {
    let dir = tempfile::tempdir().unwrap();
    populate(dir.path());
    let engine = open(dir.path(), false);
    let q = SearchQuery::memories("default", 1);
    assert_eq!(engine.search_text(&q, "zq7x").unwrap().len(), 1);

    zero_text_fast_fields(dir.path());
    assert!(engine.search_text(&q, "zq7x").is_err());
    engine.flush().unwrap(); // an indexer round notices the failed read
    let marker = dir.path().join("index").join("REBUILD");
    assert!(marker.exists(), "a failed read must ask for a rebuild");
    let status = engine.index_status();
    assert!(
        status
            .warnings
            .iter()
            .any(|w| w.contains("reading the text index failed")),
        "{:?}",
        status.warnings
    );

    engine.rebuild_indexes().unwrap();
    assert!(!marker.exists());
    assert!(misses(&engine).is_empty(), "{:?}", misses(&engine));
}
