//! The hubness penalty through the engine's read paths: vector search and
//! code search rank chunks by the penalised cosine while callers read the
//! plain one, and memories (not `HUB_KIND`) keep ranking by the plain cosine.

use super::{Engine, EngineOptions, SearchQuery};
use crate::code::{ChunkDraft, FileChunks};
use crate::kind::{Kind, KindSet};
use crate::memory::NewMemory;
use crate::vector::dot;

const DIM: usize = 8;
/// A word no chunk or memory holds: the vector ranks alone.
const NO_TERM: &str = "qqzxjv";

fn unit(v: [f32; DIM]) -> Vec<f32> {
    let norm = v.iter().map(|a| a * a).sum::<f32>().sqrt();
    v.iter().map(|a| a / norm).collect()
}

/// Axis `i` plus `tilt` times axis `j`, normalised.
fn near(i: usize, j: usize, tilt: f32) -> Vec<f32> {
    let mut v = [0.0; DIM];
    v[i] = 1.0;
    v[j] += tilt;
    unit(v)
}

/// The hub (close to twenty crowd vectors along axis 0, and to the query
/// along axis 1), the loner (along axis 2, slightly less close to the
/// query), then the crowd.
fn layout() -> Vec<(String, Vec<f32>)> {
    let mut out = vec![
        ("hub".to_owned(), near(0, 1, 1.0)),
        ("loner".to_owned(), near(2, 3, 0.1)),
    ];
    out.extend((0..20).map(|i| (format!("crowd{i}"), near(0, 3 + i % 5, 0.2))));
    out
}

fn query() -> Vec<f32> {
    let mut q = [0.0; DIM];
    q[1] = 1.0;
    q[2] = 0.68;
    unit(q)
}

fn open() -> (Engine, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), &EngineOptions::default()).unwrap();
    (engine, dir)
}

/// The layout as code chunks, one file each.
fn index_chunks(engine: &Engine) {
    for (name, vector) in layout() {
        let chunk = ChunkDraft {
            start_line: 1,
            end_line: 2,
            chunk_type: "function".into(),
            name: Some(name.clone()),
            content: format!("def {name}(): pass"),
            content_hash: format!("c-{name}"),
            embedding: Some(vector),
            ..ChunkDraft::default()
        };
        let file = FileChunks {
            namespace: "default".into(),
            project_id: "p".into(),
            file_path: format!("{name}.py"),
            language: "python".into(),
            content_hash: format!("f-{name}"),
            size: None,
            chunks: vec![chunk],
        };
        engine.index_file(&file).unwrap();
    }
    engine.settle_hubness().unwrap();
}

fn chunk_names(engine: &Engine, hits: &[super::Hit]) -> Vec<String> {
    let found = engine.chunks_for(hits).unwrap();
    found.into_iter().map(|(c, _)| c.name.unwrap()).collect()
}

#[test]
fn vector_search_ranks_a_hub_chunk_below_a_less_similar_distinctive_one() {
    let (engine, _dir) = open();
    index_chunks(&engine);
    let q = query();
    let (cos_hub, cos_loner) = (dot(&q, &near(0, 1, 1.0)), dot(&q, &near(2, 3, 0.1)));
    assert!(cos_hub > cos_loner, "the plain cosine prefers the hub");

    let search = SearchQuery {
        kinds: KindSet::only(Kind::CodeChunk),
        ..SearchQuery::memories("default", 2)
    };
    let hits = engine.search_vector(&search, &q).unwrap();
    assert_eq!(chunk_names(&engine, &hits), ["loner", "hub"]);
    // What callers read is still the plain cosine (f16 storage: ~3 digits).
    let (loner, hub) = (hits[0].scores, hits[1].scores);
    assert!((hub.vector.unwrap() - cos_hub).abs() < 2e-3);
    assert!((loner.vector.unwrap() - cos_loner).abs() < 2e-3);
    assert!(hub.fused < hub.vector.unwrap() - 0.15);
}

#[test]
fn code_search_fuses_the_penalised_cosine() {
    let (engine, _dir) = open();
    index_chunks(&engine);
    let found = engine
        .search_code("default", NO_TERM, Some(&query()), None, None, 2)
        .unwrap();
    let names: Vec<&str> = found
        .iter()
        .map(|(c, _)| c.name.as_deref().unwrap())
        .collect();
    assert_eq!(names, ["loner", "hub"]);
    assert!(found[1].1.vector.unwrap() > found[0].1.vector.unwrap());
}

#[test]
fn memories_rank_by_the_plain_cosine() {
    let (engine, _dir) = open();
    // Chunks in the same namespace hold values; memories laid out alike get none.
    index_chunks(&engine);
    for (name, vector) in layout() {
        let new = NewMemory {
            embedding: Some(vector),
            ..NewMemory::text(&name)
        };
        engine.store_memory(new).unwrap();
    }
    engine.settle_hubness().unwrap();

    let hits = engine
        .search_vector(&SearchQuery::memories("default", 2), &query())
        .unwrap();
    let found = engine.memories_for(&hits).unwrap();
    let texts: Vec<&str> = found.iter().map(|(m, _)| m.content.as_str()).collect();
    assert_eq!(texts, ["hub", "loner"]);
    assert!((hits[0].scores.fused - hits[0].scores.vector.unwrap()).abs() < 1e-7);

    let recalled = engine
        .recall(
            &SearchQuery::memories("default", 2),
            NO_TERM,
            Some(&query()),
            &super::RecallOptions::default(),
        )
        .unwrap();
    let found = engine.memories_for(&recalled).unwrap();
    assert_eq!(found[0].0.content, "hub");
}
