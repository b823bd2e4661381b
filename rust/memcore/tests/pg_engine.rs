//! Engines as nodes of one PostgreSQL database (`Engine::open_postgres`,
//! docs/scale-out.md): each node writes through PostgreSQL and follows its
//! log live, so a write on one node is readable and searchable on another
//! once that node applied the write's seq, without reopening anything.

mod pg_support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use memcore::pg::Namespaces;
use memcore::{Engine, EngineOptions, MemoryPatch, NewMemory, RecallOptions, SearchQuery};

const NAMESPACE: &str = "default";
/// Writes each node makes at the same time in the concurrency test.
const EACH: usize = 15;
/// Generous: the machine running the tests may be busy.
const WAIT: Duration = Duration::from_secs(30);

fn node(url: &str, dir: &Path) -> Engine {
    Engine::open_postgres(url, dir, Namespaces::All, &EngineOptions::default()).unwrap()
}

/// Store `memory` on `engine`; the memory's id and the write's seq.
fn store(engine: &Engine, memory: &NewMemory) -> (String, i64) {
    let written = engine.written(|e| e.store_memory(memory.clone())).unwrap();
    let position = written.position.expect("a shipped write has a position");
    assert_eq!(position.namespace, NAMESPACE);
    (written.value.id, position.seq)
}

fn with_vector(text: &str, vector: [f32; 4]) -> NewMemory {
    NewMemory {
        embedding: Some(vector.to_vec()),
        ..NewMemory::text(text)
    }
}

/// The contents of the memories `engine` finds for `word`.
fn found(engine: &Engine, word: &str) -> Vec<String> {
    let query = SearchQuery::memories(NAMESPACE, 10);
    let hits = engine.search_text(&query, word).unwrap();
    let mut contents: Vec<String> = engine
        .memories_for(&hits)
        .unwrap()
        .into_iter()
        .map(|(m, _)| m.content)
        .collect();
    contents.sort();
    contents
}

/// Every memory of the namespace on `engine`: id → content.
fn contents(engine: &Engine) -> BTreeMap<String, String> {
    let query = memcore::ListQuery {
        limit: 1000,
        ..memcore::ListQuery::default()
    };
    engine
        .list_memories(NAMESPACE, &query)
        .unwrap()
        .into_iter()
        .map(|m| (m.id, m.content))
        .collect()
}

fn oplog_len(engine: &Engine) -> i64 {
    engine
        .store()
        .reader()
        .unwrap()
        .query_row("SELECT count(*) FROM oplog", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_write_on_one_node_is_readable_and_searchable_on_another_after_its_seq() {
    let Some(url) = pg_support::fresh_database() else {
        return;
    };
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = node(&url, dir_a.path());
    let b = node(&url, dir_b.path());

    let (zebra, seq) = store(&a, &with_vector("The zebra crossed", [1.0, 0.0, 0.0, 0.0]));
    assert_eq!(b.wait_for_seq(NAMESPACE, seq, WAIT).unwrap(), seq);
    assert_eq!(b.applied_seq(NAMESPACE), seq);
    assert_eq!(
        b.get_memory(NAMESPACE, &zebra).unwrap().content,
        "The zebra crossed"
    );
    assert_eq!(found(&b, "zebra"), ["The zebra crossed"]);
    let query = SearchQuery::memories(NAMESPACE, 5);
    let recalled = b
        .recall(
            &query,
            "zebra",
            Some(&[1.0, 0.0, 0.0, 0.0]),
            &RecallOptions::default(),
        )
        .unwrap();
    let (first, _) = &b.memories_for(&recalled).unwrap()[0];
    assert_eq!(first.id, zebra);

    // The other way round, and changes to a record B did not write.
    let (lion, seq) = store(&b, &NewMemory::text("A lion slept"));
    assert_eq!(
        seq, 2,
        "B's reads shipped nothing: a read is never a shared write"
    );
    a.wait_for_seq(NAMESPACE, seq, WAIT).unwrap();
    assert_eq!(found(&a, "lion"), ["A lion slept"]);
    let patch = MemoryPatch {
        content: Some("The zebra crossed the river".into()),
        ..MemoryPatch::default()
    };
    let seq = a
        .written(|e| e.update_memory(NAMESPACE, &zebra, patch.clone()))
        .unwrap()
        .position
        .unwrap()
        .seq;
    b.wait_for_seq(NAMESPACE, seq, WAIT).unwrap();
    assert_eq!(found(&b, "river"), ["The zebra crossed the river"]);
    let seq = a
        .written(|e| e.delete_memory(NAMESPACE, &lion))
        .unwrap()
        .position
        .unwrap()
        .seq;
    b.wait_for_seq(NAMESPACE, seq, WAIT).unwrap();
    assert!(found(&b, "lion").is_empty(), "the delete reached B");
    assert_eq!(
        b.get_memory(NAMESPACE, &lion).unwrap_err().code(),
        "MEMORY_NOT_FOUND"
    );
    assert_eq!(contents(&a), contents(&b));
}

#[test]
fn a_read_past_the_applied_seq_times_out_with_resource_busy() {
    let Some(url) = pg_support::fresh_database() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let a = node(&url, dir.path());
    let (_, seq) = store(&a, &NewMemory::text("only one write"));
    let err = a
        .wait_for_seq(NAMESPACE, seq + 5, Duration::from_millis(100))
        .unwrap_err();
    assert_eq!(err.code(), "RESOURCE_BUSY");
    let message = err.to_string();
    assert!(
        message.contains(&format!("min_seq {}", seq + 5)),
        "{message}"
    );
}

#[test]
fn concurrent_writers_on_two_nodes_keep_one_order() {
    let Some(url) = pg_support::fresh_database() else {
        return;
    };
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = node(&url, dir_a.path());
    let b = node(&url, dir_b.path());
    let seqs: Vec<i64> = std::thread::scope(|s| {
        let writers: Vec<_> = [("a", &a), ("b", &b)]
            .into_iter()
            .map(|(name, engine)| {
                s.spawn(move || {
                    (0..EACH)
                        .map(|i| store(engine, &NewMemory::text(format!("fact {name}{i}"))).1)
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        writers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    // Every write got its own seq, and together they leave no gap.
    let distinct: BTreeSet<i64> = seqs.iter().copied().collect();
    let all: BTreeSet<i64> = (1..=(2 * EACH) as i64).collect();
    assert_eq!(distinct, all);
    let head = 2 * EACH as i64;
    a.wait_for_seq(NAMESPACE, head, WAIT).unwrap();
    b.wait_for_seq(NAMESPACE, head, WAIT).unwrap();
    let on_a = contents(&a);
    assert_eq!(on_a.len(), 2 * EACH);
    assert_eq!(on_a, contents(&b));
    for engine in [&a, &b] {
        assert_eq!(found(engine, "fact").len(), 10);
    }
    // The same ops, in the same order, in both replicas' op logs.
    let ops = op_order(&a);
    assert_eq!(ops.len(), 2 * EACH);
    assert_eq!(ops, op_order(&b));
}

/// The records of `engine`'s op log, oldest first.
fn op_order(engine: &Engine) -> Vec<String> {
    engine
        .store()
        .reader()
        .unwrap()
        .prepare("SELECT record_id FROM oplog ORDER BY seq")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn a_restarted_node_replays_only_the_tail_and_a_new_one_builds_from_postgresql() {
    let Some(url) = pg_support::fresh_database() else {
        return;
    };
    let (dir_a, dir_b, dir_c) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let a = node(&url, dir_a.path());
    let b = node(&url, dir_b.path());
    store(&a, &NewMemory::text("first fact"));
    let (_, seq) = store(&a, &NewMemory::text("second fact"));
    b.wait_for_seq(NAMESPACE, seq, WAIT).unwrap();
    let held = oplog_len(&b);
    drop(b);

    // B is down while A goes on writing.
    store(&a, &NewMemory::text("third fact"));
    let (_, last) = store(&a, &with_vector("fourth fact", [0.0, 1.0, 0.0, 0.0]));
    let b = node(&url, dir_b.path());
    b.wait_for_seq(NAMESPACE, last, WAIT).unwrap();
    assert_eq!(
        oplog_len(&b),
        held + 2,
        "only the two new entries were applied"
    );
    assert_eq!(contents(&b), contents(&a));
    assert_eq!(found(&b, "fact").len(), 4);

    // A node with an empty folder copies the records, then follows.
    let c = node(&url, dir_c.path());
    c.wait_for_seq(NAMESPACE, last, WAIT).unwrap();
    assert_eq!(contents(&c), contents(&a));
    let (_, newest) = store(&a, &NewMemory::text("fifth fact"));
    c.wait_for_seq(NAMESPACE, newest, WAIT).unwrap();
    assert_eq!(found(&c, "fifth"), ["fifth fact"]);
    let query = SearchQuery::memories(NAMESPACE, 1);
    let nearest = c.search_vector(&query, &[0.0, 1.0, 0.0, 0.0]).unwrap();
    assert_eq!(
        c.memories_for(&nearest).unwrap()[0].0.content,
        "fourth fact"
    );
}

#[test]
fn a_write_postgresql_refuses_is_not_written_anywhere() {
    let Some(url) = pg_support::fresh_database() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let a = node(&url, dir.path());
    let (_, seq) = store(&a, &NewMemory::text("kept fact"));
    let mut pg = memcore::pg::connect(&url).unwrap();
    pg.batch_execute("ALTER TABLE memcore.log ADD CONSTRAINT refuse_all CHECK (false) NOT VALID")
        .unwrap();
    let err = a.store_memory(NewMemory::text("lost zebra")).unwrap_err();
    assert_eq!(err.code(), "STORAGE_ERROR");
    assert!(err.to_string().contains("Nothing was written"), "{err}");
    assert!(found(&a, "zebra").is_empty(), "the local write rolled back");
    assert_eq!(contents(&a).len(), 1);

    pg.batch_execute("ALTER TABLE memcore.log DROP CONSTRAINT refuse_all")
        .unwrap();
    let (_, next) = store(&a, &NewMemory::text("a zebra after all"));
    assert_eq!(next, seq + 1, "the refused write took no seq");
    assert_eq!(found(&a, "zebra"), ["a zebra after all"]);
}

#[test]
fn a_write_whose_namespace_stays_locked_gives_up_with_resource_busy() {
    let Some(url) = pg_support::fresh_database() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let joiner = if url.contains('?') { '&' } else { '?' };
    let impatient = format!("{url}{joiner}options=-c%20lock_timeout%3D200");
    let a = node(&impatient, dir.path());
    let (_, seq) = store(&a, &NewMemory::text("kept fact"));
    // A writer that hangs while holding the namespace's lock.
    let mut holder = memcore::pg::connect(&url).unwrap();
    let mut hung = holder.transaction().unwrap();
    memcore::pg::log::lock_namespace(&mut hung, NAMESPACE).unwrap();
    // The optimistic attempt does not queue for a held lock (it holds the
    // replica's writer lock); the lock-first retry does, up to lock_timeout.
    let err = a.store_memory(NewMemory::text("a zebra")).unwrap_err();
    assert_eq!(err.code(), "RESOURCE_BUSY");
    let err = a
        .written(|e| e.store_memory(NewMemory::text("a zebra")))
        .unwrap_err();
    assert_eq!(err.code(), "RESOURCE_BUSY");
    assert!(err.to_string().contains("lock_timeout"), "{err}");
    assert!(found(&a, "zebra").is_empty(), "the local write rolled back");
    drop(hung);
    let (_, next) = store(&a, &NewMemory::text("a zebra after all"));
    assert_eq!(next, seq + 1);
}

#[test]
fn a_node_refuses_writes_to_namespaces_it_does_not_serve() {
    let Some(url) = pg_support::fresh_database() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let only = Namespaces::Only(BTreeSet::from(["tenant-a".to_owned()]));
    let a = Engine::open_postgres(&url, dir.path(), only, &EngineOptions::default()).unwrap();
    let mut other = NewMemory::text("not mine");
    other.namespace = "tenant-b".into();
    let err = a.store_memory(other).unwrap_err();
    assert_eq!(err.code(), "INVALID_PARAMETER");
    assert!(err.to_string().contains("does not serve"), "{err}");
    let query = memcore::ListQuery {
        limit: 10,
        ..memcore::ListQuery::default()
    };
    assert!(a.list_memories("tenant-b", &query).unwrap().is_empty());
    let mut mine = NewMemory::text("mine");
    mine.namespace = "tenant-a".into();
    let written = a.written(|e| e.store_memory(mine.clone())).unwrap();
    assert_eq!(written.position.unwrap().seq, 1);
}
