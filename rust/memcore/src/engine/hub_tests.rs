//! The hubness penalty through the engine's read paths: vector search and
//! recall rank by the penalised cosine, callers read the plain one, and the
//! update hints of `store_memory` keep thresholds on the plain cosine.

use super::store_similar::SimilarQuery;
use super::{Engine, EngineOptions, RecallOptions, SearchQuery};
use crate::memory::{Memory, NewMemory};
use crate::vector::dot;

const DIM: usize = 8;

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

fn store(engine: &Engine, text: &str, vector: Vec<f32>) -> Memory {
    let new = NewMemory {
        embedding: Some(vector),
        ..NewMemory::text(text)
    };
    engine.store_memory(new).unwrap()
}

/// A hub (close to twenty crowd memories along axis 0, and to the query
/// along axis 1) and a loner (along axis 2, slightly less close to the query).
struct Stored {
    engine: Engine,
    hub: Memory,
    loner: Memory,
    query: Vec<f32>,
    _dir: tempfile::TempDir,
}

fn stored() -> Stored {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), &EngineOptions::default()).unwrap();
    let hub = store(&engine, "hub", near(0, 1, 1.0));
    let loner = store(&engine, "loner", near(2, 3, 0.1));
    for i in 0..20 {
        store(&engine, &format!("crowd {i}"), near(0, 3 + i % 5, 0.2));
    }
    let mut q = [0.0; DIM];
    q[1] = 1.0;
    q[2] = 0.68;
    let query = unit(q);
    engine.settle_hubness().unwrap();
    Stored {
        engine,
        hub,
        loner,
        query,
        _dir: dir,
    }
}

#[test]
fn vector_search_ranks_a_hub_below_a_less_similar_distinctive_memory() {
    let s = stored();
    let cos_hub = dot(&s.query, &near(0, 1, 1.0));
    let cos_loner = dot(&s.query, &near(2, 3, 0.1));
    assert!(cos_hub > cos_loner, "the plain cosine prefers the hub");

    let hits = s
        .engine
        .search_vector(&SearchQuery::memories("default", 2), &s.query)
        .unwrap();
    let found = s.engine.memories_for(&hits).unwrap();
    let ids: Vec<&str> = found.iter().map(|(m, _)| m.id.as_str()).collect();
    assert_eq!(ids, [s.loner.id.as_str(), s.hub.id.as_str()]);
    // What callers read is still the plain cosine (f16 storage: ~3 digits).
    let (loner_scores, hub_scores) = (found[0].1, found[1].1);
    assert!((hub_scores.vector.unwrap() - cos_hub).abs() < 2e-3);
    assert!((loner_scores.vector.unwrap() - cos_loner).abs() < 2e-3);
    assert!(hub_scores.fused < hub_scores.vector.unwrap() - 0.15);
}

#[test]
fn recall_fuses_the_penalised_cosine() {
    let s = stored();
    let query = SearchQuery::memories("default", 2);
    // No document holds the words: the vector ranks alone.
    let hits = s
        .engine
        .recall(&query, "qqzxjv", Some(&s.query), &RecallOptions::default())
        .unwrap();
    let found = s.engine.memories_for(&hits).unwrap();
    assert_eq!(found[0].0.id, s.loner.id);
    assert_eq!(found[1].0.id, s.hub.id);
    assert!(found[1].1.vector.unwrap() > found[0].1.vector.unwrap());
}

#[test]
fn store_time_similar_memories_keep_the_plain_cosine() {
    let s = stored();
    let probe = SimilarQuery {
        threshold: 0.5,
        limit: 5,
    };
    let new = NewMemory {
        embedding: Some(s.query.clone()),
        ..NewMemory::text("probe")
    };
    let (_, similar) = s
        .engine
        .store_memory_with_similar(new, Some(probe))
        .unwrap();
    let ids: Vec<&str> = similar.iter().map(|(m, _)| m.id.as_str()).collect();
    assert_eq!(ids, [s.hub.id.as_str(), s.loner.id.as_str()]);
    assert!((similar[0].1 - dot(&s.query, &near(0, 1, 1.0))).abs() < 2e-3);
}
