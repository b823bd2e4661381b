//! One store written by several engines at once, as several processes do
//! (every agent window starts its own server): each reads its own writes at
//! once and the others' within a poll, one owns the index files and indexes
//! every write in order, and the store reopens whole. Two engines in one
//! process hold their locks through separate file handles, as two processes
//! do.

use std::time::{Duration, Instant};

use memcore::engine::{SearchQuery, TurnClaim};
use memcore::temporal::now_micros;
use memcore::{Engine, EngineOptions, NewMemory};

fn shared(dir: &std::path::Path) -> Engine {
    Engine::open(
        dir,
        &EngineOptions {
            shared: true,
            ..EngineOptions::default()
        },
    )
    .unwrap()
}

fn unit(seed: u32) -> Vec<f32> {
    let raw: Vec<f32> = (0..16u32)
        .map(|i| ((seed.wrapping_mul(2_654_435_761) ^ (i * 40_503)) % 1000) as f32 - 500.0)
        .collect();
    let norm = raw.iter().map(|x| x * x).sum::<f32>().sqrt();
    raw.into_iter().map(|x| x / norm).collect()
}

/// A word of letters only, different for each `i`.
fn tag(i: u32) -> String {
    let letter = |n: u32| char::from(b'a' + (n % 26) as u8);
    format!("zq{}{}{}", letter(i / 676), letter(i / 26), letter(i))
}

fn store(engine: &Engine, i: u32) -> String {
    engine
        .store_memory(NewMemory {
            embedding: Some(unit(i)),
            ..NewMemory::text(format!("fact about {}", tag(i)))
        })
        .unwrap()
        .id
}

fn finds(engine: &Engine, i: u32) -> bool {
    let hits = engine
        .search_text(&SearchQuery::memories("default", 5), &tag(i))
        .unwrap();
    !hits.is_empty()
}

fn finds_by_vector(engine: &Engine, i: u32) -> bool {
    let hits = engine
        .search_vector(&SearchQuery::memories("default", 1), &unit(i))
        .unwrap();
    let memories = engine.memories_for(&hits).unwrap();
    memories
        .first()
        .is_some_and(|(m, _)| m.content.ends_with(&tag(i)))
}

/// Whether `cond` holds within a second (the promise to another process).
fn within_a_second(mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(1);
    loop {
        if cond() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn each_engine_reads_its_writes_at_once_and_the_others_within_a_second() {
    let dir = tempfile::tempdir().unwrap();
    let a = shared(dir.path());
    let b = shared(dir.path());
    assert!(
        a.owns_indexes() && !b.owns_indexes(),
        "the first open owns the files"
    );
    store(&a, 1);
    assert!(finds(&a, 1) && finds_by_vector(&a, 1), "own write at once");
    assert!(within_a_second(|| finds(&b, 1) && finds_by_vector(&b, 1)));
    store(&b, 2);
    assert!(finds(&b, 2) && finds_by_vector(&b, 2), "own write at once");
    assert!(within_a_second(|| finds(&a, 2) && finds_by_vector(&a, 2)));
    let id = store(&b, 3);
    a.delete_memory("default", &id).unwrap();
    assert!(!finds(&a, 3));
    assert!(within_a_second(|| !finds(&b, 3)));
}

#[test]
fn interleaved_writes_are_all_indexed_by_the_owner_and_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let count = 300u32;
    {
        let a = shared(dir.path());
        let b = shared(dir.path());
        std::thread::scope(|s| {
            s.spawn(|| (0..count).step_by(2).for_each(|i| drop(store(&a, i))));
            s.spawn(|| (1..count).step_by(2).for_each(|i| drop(store(&b, i))));
        });
        assert!(within_a_second(
            || (0..count).all(|i| finds(&a, i) && finds(&b, i))
        ));
        a.flush().unwrap();
        let report = a.check().unwrap();
        assert!(
            report.indexes.iter().all(|i| i.missing == 0),
            "{:?}",
            report.indexes
        );
    }
    // Reopened from the owner's files and the log: nothing missing.
    let again = shared(dir.path());
    assert!((0..count).all(|i| finds(&again, i) && finds_by_vector(&again, i)));
    let report = again.check().unwrap();
    assert!(report.indexes.iter().all(|i| i.missing == 0));
}

#[test]
fn one_process_owns_the_files_once_the_owner_closed() {
    let dir = tempfile::tempdir().unwrap();
    let a = shared(dir.path());
    let b = shared(dir.path());
    store(&a, 1);
    drop(a);
    // A new open or the running process: whichever is first, only one.
    let c = shared(dir.path());
    std::thread::sleep(Duration::from_millis(600));
    assert!(b.owns_indexes() != c.owns_indexes());
    store(&b, 2);
    assert!(within_a_second(|| finds(&c, 2) && finds(&c, 1)));
}

#[test]
fn a_sole_writer_and_shared_writers_exclude_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let a = shared(dir.path());
    let err = Engine::open(dir.path(), &EngineOptions::default()).unwrap_err();
    assert_eq!(err.code(), "RESOURCE_BUSY");
    drop(a);
    let sole = Engine::open(dir.path(), &EngineOptions::default()).unwrap();
    let err = Engine::open(
        dir.path(),
        &EngineOptions {
            shared: true,
            ..EngineOptions::default()
        },
    )
    .unwrap_err();
    assert_eq!(err.code(), "RESOURCE_BUSY");
    drop(sole);
}

#[test]
fn work_on_the_index_files_or_the_whole_store_asks_for_them() {
    let dir = tempfile::tempdir().unwrap();
    let a = shared(dir.path());
    let b = shared(dir.path());
    store(&a, 1);
    let err = b.rebuild_indexes().unwrap_err();
    assert_eq!(err.code(), "RESOURCE_BUSY");
    assert!(
        err.to_string().contains(&std::process::id().to_string()),
        "{err}"
    );
    assert_eq!(a.reset_all().unwrap_err().code(), "RESOURCE_BUSY");
    assert!(finds(&a, 1), "nothing was reset");
    drop(b);
    a.reset_all().unwrap();
    assert!(!finds(&a, 1));
}

#[test]
fn a_turn_is_claimed_once_whichever_process_asks() {
    let dir = tempfile::tempdir().unwrap();
    let a = shared(dir.path());
    let b = shared(dir.path());
    let now = now_micros();
    assert_eq!(
        a.claim_turn("default", "s", "t", now, 60_000_000).unwrap(),
        TurnClaim::Claimed
    );
    assert_eq!(
        b.claim_turn("default", "s", "t", now, 60_000_000).unwrap(),
        TurnClaim::Busy(now)
    );
}

#[test]
fn a_running_process_takes_the_index_files_over_when_the_owner_closes() {
    let dir = tempfile::tempdir().unwrap();
    let a = shared(dir.path());
    let b = shared(dir.path());
    for i in 0..50 {
        store(&a, i);
        store(&b, 100 + i);
    }
    assert!(!b.owns_indexes());
    drop(a);
    // B notices at its next poll and becomes the owner.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !b.owns_indexes() {
        assert!(Instant::now() < deadline, "B never took the files over");
        std::thread::sleep(Duration::from_millis(20));
    }
    for i in 50..80 {
        store(&b, 100 + i);
    }
    b.flush().unwrap();
    let report = b.check().unwrap();
    assert!(
        report.indexes.iter().all(|i| i.missing == 0),
        "{:?}",
        report.indexes
    );
    drop(b);
    // Its files cover everything: a fresh open finds every memory.
    let c = shared(dir.path());
    assert!((0..50).all(|i| finds(&c, i) && finds_by_vector(&c, i)));
    assert!((100..180).all(|i| finds(&c, i) && finds_by_vector(&c, i)));
    assert!(c.check().unwrap().indexes.iter().all(|i| i.missing == 0));
}

/// The checks every open runs on the write-ahead log and its shared-memory
/// index (a log shorter than the frames the index records is refused as
/// damaged: store/health.rs) read files another process is writing: a writer
/// appends frames and, once a checkpoint copied them all, starts the log over
/// with new salts. None of that may look like damage to a process opening
/// beside it.
#[test]
fn opens_beside_a_busy_writer_are_never_refused_as_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let writer = shared(dir.path());
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        let writing = scope.spawn(|| {
            // 2 KiB a memory: the log passes the checkpoint thread's 1000
            // pages every few hundred writes and restarts after it. Bounded,
            // so a slow machine does not fill its disk.
            let filler = "x".repeat(2_000);
            let mut i = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) && i < 6_000 {
                writer
                    .store_memory(NewMemory::text(format!("{} {filler}", tag(i))))
                    .unwrap();
                i += 1;
            }
            i
        });
        let mut refused = Vec::new();
        // The log's salts, new at each restart of the log.
        let mut salts = std::collections::HashSet::new();
        for _ in 0..12 {
            if let Ok(header) = std::fs::read(dir.path().join("memcore.db-wal")) {
                salts.extend(header.get(16..24).map(<[u8]>::to_vec));
            }
            match Engine::open(
                dir.path(),
                &EngineOptions {
                    shared: true,
                    ..EngineOptions::default()
                },
            ) {
                Ok(engine) => drop(engine),
                Err(e) => refused.push(e.to_string()),
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let written = writing.join().unwrap();
        assert!(
            refused.is_empty(),
            "{} refused: {}",
            refused.len(),
            refused[0]
        );
        assert!(written > 300, "the writer wrote only {written}");
        assert!(
            salts.len() > 1,
            "the log never restarted ({written} writes)"
        );
    });
}

/// Texts a release before CJK pairs and folding indexed whole (`上海` was
/// not a term of the first), each with a word that finds it now.
const BEYOND_ENGLISH: [(&str, &str); 3] = [
    ("用户住在上海，喜欢喝绿茶", "上海"),
    ("ユーザーは東京に住んでいます", "東京"),
    ("She moved to München", "Munchen"),
];

fn finds_word(engine: &Engine, word: &str) -> bool {
    !engine
        .search_text(&SearchQuery::memories("default", 5), word)
        .unwrap()
        .is_empty()
}

/// A store whose text index is of the layout before `terms_v5`, covering
/// the whole op log: were it kept, nothing would be replayed into it and
/// no word of [`BEYOND_ENGLISH`] would be found.
fn store_of_the_previous_layout(dir: &std::path::Path) {
    let seq = {
        let engine = Engine::open(dir, &EngineOptions::default()).unwrap();
        for (text, _) in BEYOND_ENGLISH {
            engine.store_memory(NewMemory::text(text)).unwrap();
        }
        engine.flush().unwrap();
        memcore::store::oplog::last_seq(&engine.store().reader().unwrap()).unwrap()
    };
    let text_dir = dir.join("index").join("text");
    std::fs::remove_dir_all(&text_dir).unwrap();
    std::fs::create_dir_all(&text_dir).unwrap();
    let mut builder = tantivy::schema::Schema::builder();
    let key = builder.add_u64_field("key", tantivy::schema::INDEXED | tantivy::schema::FAST);
    let body = builder.add_text_field("terms_v4", tantivy::schema::STRING);
    let index = tantivy::Index::create_in_dir(&text_dir, builder.build()).unwrap();
    let mut writer: tantivy::IndexWriter = index.writer_with_num_threads(1, 15_000_000).unwrap();
    let scope = memcore::text::scope("default", memcore::Kind::Memory);
    for (n, (text, _)) in BEYOND_ENGLISH.iter().enumerate() {
        let mut doc = tantivy::TantivyDocument::default();
        doc.add_u64(key, n as u64 + 1);
        doc.add_text(body, memcore::text::scoped(&scope, text));
        writer.add_document(doc).unwrap();
    }
    let mut commit = writer.prepare_commit().unwrap();
    commit.set_payload(&seq.to_string());
    commit.commit().unwrap();
}

#[test]
fn the_first_open_after_the_upgrade_reindexes_text_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    store_of_the_previous_layout(dir.path());
    let engine = Engine::open(dir.path(), &EngineOptions::default()).unwrap();
    for (_, word) in BEYOND_ENGLISH {
        assert!(finds_word(&engine, word), "{word}");
    }
    engine.flush().unwrap();
    assert!(
        engine
            .check()
            .unwrap()
            .indexes
            .iter()
            .all(|i| i.missing == 0)
    );
}

#[test]
fn processes_opening_an_upgraded_store_at_once_share_the_reindexed_files() {
    let dir = tempfile::tempdir().unwrap();
    store_of_the_previous_layout(dir.path());
    // Agent windows started together on the upgraded store: whichever owns
    // the files starts them over; the others wait for the new layout, so
    // each finds every word and can take the files over later.
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| shared(dir.path()));
        let b = s.spawn(|| shared(dir.path()));
        (a.join().unwrap(), b.join().unwrap())
    });
    assert!(a.owns_indexes() != b.owns_indexes());
    for engine in [&a, &b] {
        for (_, word) in BEYOND_ENGLISH {
            assert!(within_a_second(|| finds_word(engine, word)), "{word}");
        }
    }
    let (owner, other) = if a.owns_indexes() { (a, b) } else { (b, a) };
    drop(owner);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !other.owns_indexes() {
        assert!(Instant::now() < deadline, "the files were never taken over");
        std::thread::sleep(Duration::from_millis(20));
    }
    other
        .store_memory(NewMemory::text("她在深圳当护士"))
        .unwrap();
    other.flush().unwrap();
    assert!(finds_word(&other, "深圳"));
    assert!(
        other
            .check()
            .unwrap()
            .indexes
            .iter()
            .all(|i| i.missing == 0)
    );
}
