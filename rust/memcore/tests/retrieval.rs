//! Retrieval through the engine: read-your-writes, filters, recovery and
//! rebuilds, on real SQLite, usearch and tantivy.

use std::path::Path;

use memcore::{
    Engine, EngineOptions, Hit, Kind, KindSet, MemoryPatch, MemoryType, NewMemory, RecallOptions,
    SearchQuery, ValidAt,
};

const DIM: usize = 16;

fn vector(seed: u64) -> Vec<f32> {
    // A cheap deterministic pseudo-random vector (splitmix64).
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

fn open(dir: &Path) -> Engine {
    Engine::open(dir, &EngineOptions::default()).unwrap()
}

fn store(engine: &Engine, text: &str, seed: u64) -> String {
    engine
        .store_memory(NewMemory {
            embedding: Some(vector(seed)),
            ..NewMemory::text(text)
        })
        .unwrap()
        .id
}

fn top_id(engine: &Engine, hits: &[Hit]) -> Option<String> {
    hit_ids(engine, hits).into_iter().next()
}

/// The ids of `hits`' memories, in rank order.
fn hit_ids(engine: &Engine, hits: &[Hit]) -> Vec<String> {
    engine
        .memories_for(hits)
        .unwrap()
        .into_iter()
        .map(|(m, _)| m.id)
        .collect()
}

/// Store `batch` in one call and return the new ids, in order.
fn store_all(engine: &Engine, batch: Vec<NewMemory>) -> Vec<String> {
    engine
        .store_memories(batch)
        .unwrap()
        .into_iter()
        .map(|m| m.id)
        .collect()
}

#[test]
fn writes_are_searchable_immediately_and_after_flush() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let id = store(&engine, "The user prefers TypeScript over JavaScript", 1);
    for i in 2..50 {
        store(
            &engine,
            &format!("filler memory number {i} about gardening"),
            i,
        );
    }
    let q = SearchQuery::memories("default", 5);
    for _ in 0..2 {
        let by_vector = engine.search_vector(&q, &vector(1)).unwrap();
        assert_eq!(top_id(&engine, &by_vector).as_deref(), Some(id.as_str()));
        assert!((by_vector[0].scores.vector.unwrap() - 1.0).abs() < 1e-4);
        let by_text = engine.search_text(&q, "typescript").unwrap();
        assert_eq!(top_id(&engine, &by_text).as_deref(), Some(id.as_str()));
        engine.flush().unwrap();
    }
    let status = engine.index_status();
    assert_eq!(status.vectors, 49);
    assert_eq!(status.vectors_pending, 0);
    assert_eq!(status.text_pending, 0);
}

#[test]
fn updates_deletes_and_invalidation_are_seen_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let a = store(&engine, "alpha fact", 1);
    let b = store(&engine, "beta fact", 2);
    engine.flush().unwrap();
    let q = SearchQuery::memories("default", 5);

    engine
        .update_memory(
            "default",
            &a,
            MemoryPatch {
                content: Some("gamma fact".into()),
                embedding: Some(vector(3)),
                ..MemoryPatch::default()
            },
        )
        .unwrap();
    assert!(engine.search_text(&q, "alpha").unwrap().is_empty());
    assert_eq!(
        top_id(&engine, &engine.search_text(&q, "gamma").unwrap()),
        Some(a.clone())
    );
    assert_eq!(
        top_id(&engine, &engine.search_vector(&q, &vector(3)).unwrap()),
        Some(a.clone())
    );

    engine.invalidate("default", &b, None).unwrap();
    assert!(engine.search_text(&q, "beta").unwrap().is_empty());
    let history = SearchQuery {
        valid: ValidAt::Any,
        ..q
    };
    assert_eq!(
        top_id(&engine, &engine.search_text(&history, "beta").unwrap()),
        Some(b.clone())
    );

    engine.delete_memory("default", &a).unwrap();
    assert!(engine.search_text(&history, "gamma").unwrap().is_empty());
    engine.flush().unwrap();
    assert!(engine.search_text(&history, "gamma").unwrap().is_empty());
}

#[test]
fn namespaces_kinds_and_threads_filter_inside_the_search() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    for i in 0..30 {
        engine
            .store_memory(NewMemory {
                namespace: if i % 2 == 0 { "a".into() } else { "b".into() },
                thread_id: (i % 3 == 0).then(|| "t1".into()),
                embedding: Some(vector(i)),
                ..NewMemory::text(format!("shared words {i}"))
            })
            .unwrap();
    }
    let q = SearchQuery {
        namespace: "a",
        thread_id: Some("t1"),
        limit: 50,
        ..SearchQuery::memories("a", 50)
    };
    let hits = engine.search_text(&q, "shared words").unwrap();
    let found = engine.memories_for(&hits).unwrap();
    assert_eq!(found.len(), 5, "i in 0,6,12,18,24");
    assert!(
        found
            .iter()
            .all(|(m, _)| m.namespace == "a" && m.thread_id.as_deref() == Some("t1"))
    );
    let by_vector = engine.search_vector(&q, &vector(7)).unwrap();
    assert_eq!(
        by_vector.len(),
        5,
        "exact fallback returns every admitted doc"
    );
    let other_kind = SearchQuery {
        kinds: KindSet::only(Kind::CodeChunk),
        ..q
    };
    assert!(
        engine
            .search_text(&other_kind, "shared")
            .unwrap()
            .is_empty()
    );
    let unknown = SearchQuery::memories("nope", 5);
    assert!(engine.search_text(&unknown, "shared").unwrap().is_empty());
}

#[test]
fn reopen_and_deleted_index_folders_rebuild_everything() {
    let dir = tempfile::tempdir().unwrap();
    let ids: Vec<String> = {
        let engine = open(dir.path());
        (0..40)
            .map(|i| store(&engine, &format!("note {i} kiwi{i}"), i))
            .collect()
    };
    for round in 0..2 {
        let engine = open(dir.path());
        let q = SearchQuery::memories("default", 3);
        for (i, id) in ids.iter().enumerate() {
            let hits = engine.search_text(&q, &format!("kiwi{i}")).unwrap();
            assert_eq!(top_id(&engine, &hits).as_ref(), Some(id), "round {round}");
            let hits = engine.search_vector(&q, &vector(i as u64)).unwrap();
            assert_eq!(top_id(&engine, &hits).as_ref(), Some(id), "round {round}");
        }
        drop(engine);
        std::fs::remove_dir_all(dir.path().join(memcore::engine::INDEX_DIR)).unwrap();
    }
}

#[test]
fn rebuild_gives_the_same_results_as_incremental() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    for i in 0..60 {
        store(&engine, &format!("topic {} item {i}", i % 7), i);
    }
    engine.flush().unwrap();
    let q = SearchQuery::memories("default", 10);
    let before_text = engine.search_text(&q, "topic 3").unwrap();
    let before_vec = engine.search_vector(&q, &vector(5)).unwrap();
    engine.rebuild_indexes().unwrap();
    assert_eq!(engine.search_text(&q, "topic 3").unwrap(), before_text);
    assert_eq!(engine.search_vector(&q, &vector(5)).unwrap(), before_vec);
    let report = engine.compact(true).unwrap();
    assert!(report.vectors_rebuilt);
    assert_eq!(engine.search_vector(&q, &vector(5)).unwrap(), before_vec);
}

/// Store-then-search while the background indexer moves vectors from the
/// pending buffer into the HNSW graph: every stored vector must be its own
/// top hit, whichever side of the move the search lands on. Needs more
/// admissible documents than the exact-search cut-off, so the graph walk runs.
#[test]
fn store_then_search_never_misses_during_indexing() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let base: Vec<NewMemory> = (0..memcore::vector::EXACT_MAX as u64 + 500)
        .map(|i| NewMemory {
            embedding: Some(vector(1_000_000 + i)),
            ..NewMemory::text(format!("background memory {i}"))
        })
        .collect();
    engine.store_memories(base).unwrap();
    engine.flush().unwrap();
    let q = SearchQuery::memories("default", 1);
    let mut missed = Vec::new();
    for i in 0..1500u64 {
        let id = store(&engine, &format!("fresh memory {i}"), i);
        let hits = engine.search_vector(&q, &vector(i)).unwrap();
        if top_id(&engine, &hits).as_deref() != Some(id.as_str()) {
            missed.push(i);
        }
    }
    assert!(
        missed.is_empty(),
        "not found right after storing: {missed:?}"
    );
}

/// Above the exact-search cut-off the graph walk applies the filter: a
/// thread holding 1% of the documents and a namespace where almost every
/// document was invalidated must still return everything they admit.
#[test]
fn selective_filters_on_the_graph_path_still_return_k() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    // 1% of this is more than the 50 asked for.
    let total = (memcore::vector::EXACT_MAX as u64 + 1000).max(6000);
    let batch: Vec<NewMemory> = (0..total)
        .map(|i| NewMemory {
            embedding: Some(vector(i)),
            thread_id: (i % 100 == 0).then(|| "rare".to_owned()),
            ..NewMemory::text(format!("memory {i}"))
        })
        .collect();
    let ids = store_all(&engine, batch);
    engine.flush().unwrap();

    let in_thread = SearchQuery {
        thread_id: Some("rare"),
        ..SearchQuery::memories("default", 50)
    };
    let hits = engine.search_vector(&in_thread, &vector(7)).unwrap();
    assert_eq!(hits.len(), 50);
    let found = engine.memories_for(&hits).unwrap();
    assert!(
        found
            .iter()
            .all(|(m, _)| m.thread_id.as_deref() == Some("rare"))
    );

    // Leave 20 valid documents: the walk runs out of admitted neighbours
    // and the exact fallback finds them all.
    let keep: Vec<&String> = ids.iter().step_by(ids.len() / 20).take(20).collect();
    for id in &ids {
        if !keep.contains(&id) {
            engine.invalidate("default", id, None).unwrap();
        }
    }
    let hits = engine
        .search_vector(&SearchQuery::memories("default", 50), &vector(3))
        .unwrap();
    let mut got = hit_ids(&engine, &hits);
    got.sort();
    let mut want: Vec<String> = keep.into_iter().cloned().collect();
    want.sort();
    assert_eq!(got, want);
}

/// On the graph path with a filter that may admit every vector, the walk runs
/// unfiltered and drops refused hits afterwards: invalidated neighbours of
/// the query never come back, and the k valid nearest still do.
#[test]
fn invalidated_neighbours_are_skipped_on_the_unfiltered_walk() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let total = memcore::vector::EXACT_MAX as u64 * 2;
    let batch: Vec<NewMemory> = (0..total)
        .map(|i| NewMemory {
            embedding: Some(vector(i)),
            ..NewMemory::text(format!("memory {i}"))
        })
        .collect();
    let ids = store_all(&engine, batch);
    engine.flush().unwrap();

    let q = SearchQuery::memories("default", 10);
    let before = hit_ids(&engine, &engine.search_vector(&q, &vector(5)).unwrap());
    assert_eq!(before.len(), 10);
    assert_eq!(before[0], ids[5]);
    // Invalidate the query's own memory and five more of its ten: the walk
    // fetches 2k + slack neighbours, so it still answers without the filter.
    let refused: Vec<&String> = before.iter().take(6).collect();
    for id in &refused {
        engine.invalidate("default", id, None).unwrap();
    }
    let after = hit_ids(&engine, &engine.search_vector(&q, &vector(5)).unwrap());
    assert_eq!(after.len(), 10);
    assert!(after.iter().all(|id| !refused.contains(&id)));
    assert_eq!(after[..4], before[6..], "the valid ones keep their order");
}

/// Five memories, the answer said the same way in two threads, only one of
/// which is about the trip "When was the Lisbon trip booked?" asks of (the
/// answer's own words do not name it); stored as `memory_type`. Returns the
/// answer's id in the chores thread, then in the trip thread.
fn two_threads(engine: &Engine, memory_type: MemoryType) -> (String, String) {
    let in_thread = |text: &str, thread: &str, seed: u64| NewMemory {
        embedding: Some(vector(seed)),
        thread_id: Some(thread.to_owned()),
        memory_type,
        ..NewMemory::text(text)
    };
    let ids = store_all(
        engine,
        vec![
            in_thread("We sorted out the garage and the recycling", "chores", 10),
            in_thread("It was booked on Saturday", "chores", 1),
            in_thread("The flights to Lisbon leave in May", "trip", 11),
            in_thread("The Lisbon hotel is near the old town", "trip", 12),
            in_thread("It was booked on Saturday", "trip", 1),
        ],
    );
    (ids[1].clone(), ids[4].clone())
}

/// The ids `recall` ranks for the Lisbon question with thread prior `prior`,
/// best first, each with its fused score.
fn ask_about_the_trip(engine: &Engine, prior: f32) -> Vec<(String, f32)> {
    let options = RecallOptions {
        thread_prior: prior,
        ..RecallOptions::default()
    };
    let hits = engine
        .recall(
            &SearchQuery::memories("default", 5),
            "When was the Lisbon trip booked?",
            Some(&vector(1)),
            &options,
        )
        .unwrap();
    let fused = hits.iter().map(|h| h.scores.fused);
    hit_ids(engine, &hits).into_iter().zip(fused).collect()
}

/// How far the trip thread's answer ranks above the chores thread's, in
/// fused score. The two say the same words with the same vector, so without
/// the prior they tie: up to the index's reduced precision, whichever of the
/// two a tie then puts first.
fn lead_of_the_trip(ranked: &[(String, f32)], trip: &str, chores: &str) -> f32 {
    let fused = |id: &str| ranked.iter().find(|(x, _)| x == id).unwrap().1;
    fused(trip) - fused(chores)
}

/// Clearly ahead: the prior's weight times the two z-scores' gap is 1.5.
const LED_BY_THE_PRIOR: f32 = 0.5;
/// A tie, but for the vector index's precision.
const TIED: f32 = 0.01;

#[test]
fn an_episode_whose_thread_is_about_the_question_ranks_first() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let (chores, trip) = two_threads(&engine, MemoryType::Episodic);
    for _ in 0..2 {
        // Pending first, then committed: both postings are walked.
        let with_prior = ask_about_the_trip(&engine, memcore::THREAD_PRIOR);
        let lead = lead_of_the_trip(&with_prior, &trip, &chores);
        assert!(lead > LED_BY_THE_PRIOR, "{with_prior:?}");
        let without = ask_about_the_trip(&engine, 0.0);
        assert!(
            lead_of_the_trip(&without, &trip, &chores).abs() < TIED,
            "{without:?}"
        );
        engine.flush().unwrap();
    }
}

#[test]
fn a_fact_ranks_by_itself_whatever_its_thread() {
    // The same memories as standing facts (the default type): the thread
    // prior leaves them alone, until they become episodes.
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let (chores, trip) = two_threads(&engine, MemoryType::Semantic);
    let with_prior = ask_about_the_trip(&engine, memcore::THREAD_PRIOR);
    assert!(
        lead_of_the_trip(&with_prior, &trip, &chores).abs() < TIED,
        "{with_prior:?}"
    );
    for id in [&chores, &trip] {
        let patch = MemoryPatch {
            memory_type: Some(MemoryType::Episodic),
            ..MemoryPatch::default()
        };
        engine.update_memory("default", id, patch).unwrap();
    }
    let episodes = ask_about_the_trip(&engine, memcore::THREAD_PRIOR);
    assert!(
        lead_of_the_trip(&episodes, &trip, &chores) > LED_BY_THE_PRIOR,
        "{episodes:?}"
    );
    // Reopened, the catalog reads each memory's type from the store.
    drop(engine);
    let engine = open(dir.path());
    let reopened = ask_about_the_trip(&engine, memcore::THREAD_PRIOR);
    assert!(
        lead_of_the_trip(&reopened, &trip, &chores) > LED_BY_THE_PRIOR,
        "{reopened:?}"
    );
}

/// "budget" said most often in the planning thread, once in the travel
/// thread and once in a memory of no thread; the planning thread's three
/// hold the three best matches.
fn budget_threads(engine: &Engine) {
    let memory = |text: &str, thread: Option<&str>, seed: u64| NewMemory {
        embedding: Some(vector(seed)),
        thread_id: thread.map(str::to_owned),
        ..NewMemory::text(text)
    };
    store_all(
        engine,
        vec![
            memory("budget budget: the budget review", Some("planning"), 20),
            memory("budget budget: cut the budget", Some("planning"), 21),
            memory("budget budget: a budget for hiring", Some("planning"), 22),
            memory(
                "The trip has a small budget and two cities",
                Some("travel"),
                23,
            ),
            memory(
                "Ask about the budget of the garden project sometime soon",
                None,
                24,
            ),
        ],
    );
}

/// `recall` for `question` (top 10) with `max_per_thread`.
fn recall_capped(
    engine: &Engine,
    question: &str,
    max_per_thread: Option<usize>,
) -> memcore::Result<Vec<Hit>> {
    let options = RecallOptions {
        max_per_thread,
        ..RecallOptions::default()
    };
    let query = SearchQuery::memories("default", 10);
    engine.recall(&query, question, None, &options)
}

/// The thread of each memory `recall` returns for `question`, best first.
fn threads_ranked(
    engine: &Engine,
    question: &str,
    max_per_thread: Option<usize>,
) -> Vec<Option<String>> {
    let hits = recall_capped(engine, question, max_per_thread).unwrap();
    engine
        .memories_for(&hits)
        .unwrap()
        .into_iter()
        .map(|(m, _)| m.thread_id)
        .collect()
}

#[test]
fn max_per_thread_lets_other_threads_in_before_a_thread_s_next_hit() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    budget_threads(&engine);
    let planning = Some("planning".to_owned());
    let by_score = threads_ranked(&engine, "budget", None);
    assert_eq!(
        by_score[..3],
        [planning.clone(), planning.clone(), planning.clone()]
    );
    let spread = threads_ranked(&engine, "budget", Some(1));
    assert_eq!(spread.len(), 5, "nothing is dropped: {spread:?}");
    assert_eq!(spread[0], planning);
    let first_three: std::collections::HashSet<_> = spread[..3].iter().collect();
    assert_eq!(first_three.len(), 3, "one per thread first: {spread:?}");
    assert_eq!(spread[3..], [planning.clone(), planning]);
    // A cap as large as the list changes nothing.
    assert_eq!(threads_ranked(&engine, "budget", Some(3)), by_score);
}

/// Six memories of the "march" thread say "books" more often than the one
/// of the "june" thread.
fn reading_threads(engine: &Engine) {
    let memory = |text: String, thread: &str, seed: u64| NewMemory {
        embedding: Some(vector(seed)),
        thread_id: Some(thread.to_owned()),
        ..NewMemory::text(text)
    };
    let mut batch: Vec<NewMemory> = (0..6)
        .map(|i| {
            let shelf = format!("books, books and more books: shelf {i}");
            memory(shelf, "march", 30 + i)
        })
        .collect();
    batch.push(memory(
        "Finished two books on the flight".into(),
        "june",
        40,
    ));
    store_all(engine, batch);
}

#[test]
fn a_question_asking_for_a_list_spreads_across_threads() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    reading_threads(&engine);
    let june_at = |question: &str, cap: Option<usize>| {
        let threads = threads_ranked(&engine, question, cap);
        assert_eq!(threads.len(), 7, "nothing is dropped: {threads:?}");
        threads.iter().position(|t| t.as_deref() == Some("june"))
    };
    // By score, the "march" thread holds the first six places.
    assert_eq!(june_at("What book did the user read?", None), Some(6));
    // Asked for a list, each thread's best four come first.
    let books = "What books did the user read?";
    assert_eq!(june_at(books, None), Some(memcore::listing::LIST_SPREAD));
    // A cap at the limit ranks by score alone; the caller's cap wins.
    assert_eq!(june_at(books, Some(10)), Some(6));
    assert_eq!(june_at(books, Some(1)), Some(1));
}

#[test]
fn a_cap_of_zero_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    budget_threads(&engine);
    let err = recall_capped(&engine, "budget", Some(0)).unwrap_err();
    assert_eq!(err.code(), "INVALID_PARAMETER");
}

/// A question, its answer and some filler, stored as memories; the question
/// holds more of the query's words than the answer does.
fn camping(engine: &Engine) -> (String, String) {
    let asked = store(engine, "When did you go camping with the kids?", 1);
    let told = store(
        engine,
        "We went camping at the lake with the kids in June.",
        2,
    );
    for i in 3..20 {
        store(
            engine,
            &format!("filler memory number {i} about gardening"),
            i,
        );
    }
    (asked, told)
}

fn ask_about_camping(engine: &Engine) -> Vec<String> {
    ask_about_camping_with(engine, &RecallOptions::default())
}

fn ask_about_camping_with(engine: &Engine, options: &RecallOptions) -> Vec<String> {
    let q = SearchQuery::memories("default", 5);
    let text = "when did Melanie go camping with the kids";
    let hits = engine.recall(&q, text, None, options).unwrap();
    hit_ids(engine, &hits)
}

#[test]
fn a_memory_that_only_asks_ranks_below_the_one_that_tells() {
    let dir = tempfile::tempdir().unwrap();
    let (asked, told) = {
        let engine = open(dir.path());
        let ids = camping(&engine);
        // BM25 alone puts the question first: it holds "go" too.
        let q = SearchQuery::memories("default", 5);
        let text = "when did Melanie go camping with the kids";
        let by_words = engine.search_text(&q, text).unwrap();
        assert_eq!(top_id(&engine, &by_words), Some(ids.0.clone()));
        assert_eq!(
            ask_about_camping(&engine)[..2],
            [ids.1.clone(), ids.0.clone()]
        );
        let off = RecallOptions {
            question_penalty: 0.0,
            ..RecallOptions::default()
        };
        assert_eq!(ask_about_camping_with(&engine, &off)[0], ids.0);
        ids
    };
    // The catalog rebuilt from SQLite knows it too.
    let engine = open(dir.path());
    assert_eq!(ask_about_camping(&engine)[..2], [told, asked]);
}

#[test]
fn a_question_rewritten_as_a_statement_no_longer_falls() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let (asked, told) = camping(&engine);
    engine
        .update_memory(
            "default",
            &asked,
            MemoryPatch {
                content: Some("We did go camping with the kids, and loved it.".into()),
                embedding: Some(vector(1)),
                ..MemoryPatch::default()
            },
        )
        .unwrap();
    assert_eq!(ask_about_camping(&engine)[..2], [asked, told]);
}

/// A conversation saved as episodes of one thread (or, with `Semantic`, as
/// standing facts): a question, its reply, which shares no word with the
/// query, and small talk; the id of the reply.
fn question_and_reply(engine: &Engine, memory_type: MemoryType) -> String {
    let said = |text: &str, seed: u64| NewMemory {
        embedding: Some(vector(seed)),
        thread_id: Some("chat".to_owned()),
        memory_type,
        ..NewMemory::text(text)
    };
    let mut batch = vec![
        said("When did you go camping with the kids?", 1),
        said("Last weekend, at the lake!", 2),
    ];
    for i in 3..15 {
        batch.push(said(&format!("small talk number {i} about the garden"), i));
    }
    store_all(engine, batch)[1].clone()
}

fn finds(engine: &Engine, options: &RecallOptions, id: &str) -> bool {
    ask_about_camping_with(engine, options)
        .iter()
        .any(|h| h == id)
}

#[test]
fn the_reply_to_a_matching_question_is_found_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let reply = question_and_reply(&engine, MemoryType::Episodic);
    assert!(finds(&engine, &RecallOptions::default(), &reply));
    // Only through its question: it holds none of the query's words.
    let off = RecallOptions {
        question_penalty: 0.0,
        ..RecallOptions::default()
    };
    assert!(!finds(&engine, &off, &reply));
    let rrf = RecallOptions {
        mode: memcore::FusionMode::Rrf,
        ..RecallOptions::default()
    };
    assert!(!finds(&engine, &rrf, &reply));
}

#[test]
fn a_fact_saved_after_a_question_is_not_its_reply() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let fact = question_and_reply(&engine, MemoryType::Semantic);
    assert!(!finds(&engine, &RecallOptions::default(), &fact));
}
