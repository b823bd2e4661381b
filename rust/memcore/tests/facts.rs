//! The engine's fact API end to end on a real store: store, get, update,
//! delete, list, invalidate, supersede, `as_of` reads, namespaces, the op log
//! and reopening. Every failed write must leave the store and the log as they were.

use std::path::Path;
use std::thread;
use std::time::Duration;

use memcore::kind::Kind;
use memcore::store::oplog::{self, Action, Op};
use memcore::store::vectors::decode;
use memcore::{
    Engine, EngineOptions, Error, ListQuery, Memory, MemoryPatch, MemoryType, NewMemory, Source,
    Timestamp, ValidAt,
};

const MISSING: &str = "mem_01M00000000000000000000000";

fn open(dir: &Path) -> Engine {
    Engine::open(dir, &EngineOptions::default()).expect("open a writable engine")
}

fn open_read_only(dir: &Path) -> Engine {
    let options = EngineOptions {
        read_only: true,
        ..EngineOptions::default()
    };
    Engine::open(dir, &options).expect("open a read-only engine")
}

fn store(engine: &Engine, content: &str) -> Memory {
    engine
        .store_memory(NewMemory::text(content))
        .expect("store a memory")
}

fn in_namespace(namespace: &str, content: &str) -> NewMemory {
    NewMemory {
        namespace: namespace.to_owned(),
        ..NewMemory::text(content)
    }
}

fn list(engine: &Engine, namespace: &str, valid: ValidAt) -> Vec<Memory> {
    let query = ListQuery {
        limit: 1000,
        valid,
        ..ListQuery::default()
    };
    engine.list_memories(namespace, &query).expect("list")
}

fn ids(memories: &[Memory]) -> Vec<String> {
    memories.iter().map(|m| m.id.clone()).collect()
}

fn ops(engine: &Engine) -> Vec<Op> {
    oplog::since(&engine.store().reader().expect("reader"), 0, 100_000).expect("read the op log")
}

/// The vector stored beside a memory's row (little-endian f32), if any.
fn stored_vector(engine: &Engine, id: &str) -> Option<Vec<f32>> {
    let blob: Option<Vec<u8>> = engine
        .store()
        .reader()
        .expect("reader")
        .query_row("SELECT embedding FROM memories WHERE id = ?1", [id], |r| {
            r.get(0)
        })
        .expect("the memory's row");
    blob.map(|b| decode(&b))
}

fn last_seq(engine: &Engine) -> i64 {
    oplog::last_seq(&engine.store().reader().expect("reader")).expect("last seq")
}

/// Everything a failed write must not change: every record of the default
/// namespace and the op log's high-water mark.
fn snapshot(engine: &Engine) -> (Vec<Memory>, i64) {
    (list(engine, "default", ValidAt::Any), last_seq(engine))
}

fn field_of(error: &Error) -> &str {
    match error {
        Error::InvalidParameter { field, .. } => field,
        other => panic!("expected INVALID_PARAMETER, got {other:?}"),
    }
}

fn assert_not_found(result: Result<impl std::fmt::Debug, Error>, id: &str) {
    match result {
        Err(Error::MemoryNotFound { id: missing }) => assert_eq!(missing, id),
        other => panic!("expected MEMORY_NOT_FOUND for {id}, got {other:?}"),
    }
}

/// Let the microsecond clock move on, so before/after comparisons are strict.
fn tick() {
    thread::sleep(Duration::from_millis(2));
}

const YEAR_2020: Timestamp = 1_577_836_800_000_000;
const YEAR_2021: Timestamp = 1_609_459_200_000_000;
const YEAR_2022: Timestamp = 1_640_995_200_000_000;

// -- store and get -------------------------------------------------------------------

#[test]
fn store_applies_the_design_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let m = store(&engine, "User prefers TypeScript");
    assert!(m.id.starts_with("mem_") && m.id.len() == 30, "{}", m.id);
    assert_eq!(m.namespace, "default");
    assert_eq!(
        (m.memory_type, m.source),
        (MemoryType::Semantic, Source::Extracted)
    );
    assert!((m.confidence - 1.0).abs() < f64::EPSILON);
    assert!((m.importance - 0.5).abs() < f64::EPSILON);
    assert_eq!(m.metadata, "{}");
    assert_eq!(m.valid_from, m.created_at);
    assert_eq!((m.updated_at, m.accessed_at), (m.created_at, m.created_at));
    assert_eq!(
        (m.valid_until, m.invalidated_at, m.expires_at),
        (None, None, None)
    );
    assert_eq!(
        (m.supersedes.as_deref(), m.superseded_by.as_deref()),
        (None, None)
    );
}

#[test]
fn every_field_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let stored = engine
        .store_memory(NewMemory {
            namespace: "team".into(),
            memory_type: MemoryType::Episodic,
            source: Source::Explicit,
            confidence: 0.25,
            importance: 0.75,
            metadata: Some(r#"{"tags":["a","ü"],"nested":{"n":1}}"#.into()),
            thread_id: Some("conv-1".into()),
            user_id: Some("user-1".into()),
            event_time: Some(-14_182_940_000_000), // before the epoch
            valid_from: Some(YEAR_2020),
            expires_at: Some(4_102_444_800_000_000),
            ..NewMemory::text("Met Ana at the offsite 🚀")
        })
        .unwrap();
    let mut got = engine.get_memory("team", &stored.id).unwrap();
    assert!(got.accessed_at >= stored.accessed_at);
    got.accessed_at = stored.accessed_at;
    assert_eq!(got, stored);
    assert_eq!(got.valid_from, YEAR_2020);
    assert!(
        got.created_at > YEAR_2020,
        "transaction time is separate from valid time"
    );
    assert_eq!(
        list(&engine, "team", ValidAt::Any)[0].metadata,
        stored.metadata
    );
}

#[test]
fn get_records_the_access_time_and_find_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let m = store(&engine, "The wifi password is on the fridge");
    tick();
    let read = engine.get_memory("default", &m.id).unwrap();
    assert!(read.accessed_at > m.accessed_at);
    assert_eq!(read.updated_at, m.updated_at, "a read is not an update");
    let found = engine.find_memory("default", &m.id).unwrap();
    assert_eq!(found.accessed_at, read.accessed_at, "persisted");
    tick();
    engine.find_memory("default", &m.id).unwrap();
    assert_eq!(
        engine.find_memory("default", &m.id).unwrap().accessed_at,
        read.accessed_at
    );
}

// -- update ----------------------------------------------------------------------------

#[test]
fn new_content_gets_a_new_document_key() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let m = engine
        .store_memory(NewMemory {
            embedding: Some(vec![3.0, 4.0]),
            ..NewMemory::text("User prefers tabs")
        })
        .unwrap();
    let stored_op = ops(&engine).pop().unwrap();
    assert_eq!(
        (stored_op.action, stored_op.prev_key),
        (Action::Upsert, None)
    );
    tick();

    let updated = engine
        .update_memory(
            "default",
            &m.id,
            MemoryPatch {
                content: Some("User prefers spaces".into()),
                embedding: Some(vec![0.0, 2.0]),
                ..MemoryPatch::default()
            },
        )
        .unwrap();
    assert_eq!(updated.content, "User prefers spaces");
    assert_eq!(updated.created_at, m.created_at);
    assert!(updated.updated_at > m.updated_at);
    let rekeyed = ops(&engine).pop().unwrap();
    assert_eq!(rekeyed.action, Action::Upsert);
    assert_eq!(
        rekeyed.prev_key,
        Some(stored_op.seq),
        "the old version is retired"
    );
    assert_eq!(
        stored_vector(&engine, &m.id),
        Some(vec![0.0, 1.0]),
        "the new vector, normalised"
    );

    // Fields other than content, or the same content again: metadata-only ops.
    for patch in [
        MemoryPatch {
            importance: Some(0.9),
            ..MemoryPatch::default()
        },
        MemoryPatch {
            content: Some("User prefers spaces".into()),
            ..MemoryPatch::default()
        },
    ] {
        engine.update_memory("default", &m.id, patch).unwrap();
        let op = ops(&engine).pop().unwrap();
        assert_eq!((op.action, op.prev_key), (Action::Meta, None));
    }
    let after = engine.find_memory("default", &m.id).unwrap();
    assert_eq!(after.content, "User prefers spaces");
    assert!((after.importance - 0.9).abs() < f64::EPSILON);
}

#[test]
fn bad_updates_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let m = store(&engine, "original");
    let before = snapshot(&engine);
    let cases: Vec<(MemoryPatch, &str)> = vec![
        (MemoryPatch::default(), "patch"),
        (
            MemoryPatch {
                content: Some("  \n".into()),
                ..MemoryPatch::default()
            },
            "content",
        ),
        (
            MemoryPatch {
                confidence: Some(f64::NAN),
                ..MemoryPatch::default()
            },
            "confidence",
        ),
        (
            MemoryPatch {
                embedding: Some(vec![1.0, 0.0]),
                ..MemoryPatch::default()
            },
            "vector",
        ),
        (
            MemoryPatch {
                metadata: Some("{broken".into()),
                ..MemoryPatch::default()
            },
            "metadata",
        ),
    ];
    for (patch, field) in cases {
        let err = engine.update_memory("default", &m.id, patch).unwrap_err();
        assert_eq!(field_of(&err), field);
        assert_eq!(snapshot(&engine), before);
    }
}

// -- delete ----------------------------------------------------------------------------

#[test]
fn delete_is_hard_and_logs_the_retired_key() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let keep = store(&engine, "keep");
    let gone = store(&engine, "gone");
    let upsert = ops(&engine).pop().unwrap();
    engine.delete_memory("default", &gone.id).unwrap();
    let op = ops(&engine).pop().unwrap();
    assert_eq!((op.action, op.prev_key), (Action::Delete, Some(upsert.seq)));
    assert_eq!(op.record_id, gone.id);

    assert_not_found(engine.get_memory("default", &gone.id), &gone.id);
    assert_not_found(engine.delete_memory("default", &gone.id), &gone.id);
    assert_eq!(ids(&list(&engine, "default", ValidAt::Any)), [keep.id]);
    assert_eq!(
        list(&engine, "default", ValidAt::At(gone.created_at)).len(),
        1,
        "no history is kept of a deleted memory"
    );
    assert_eq!(engine.count_memories("default").unwrap(), 1);
}

// -- list ------------------------------------------------------------------------------

#[test]
fn list_is_newest_first_with_limit_offset_and_thread() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let made: Vec<String> = (0..12)
        .map(|i| {
            engine
                .store_memory(NewMemory {
                    thread_id: Some(format!("t{}", i % 3)),
                    ..NewMemory::text(format!("fact {i}"))
                })
                .unwrap()
                .id
        })
        .collect();
    let mut sorted = made.clone();
    sorted.sort();
    assert_eq!(sorted, made, "ids sort in creation order");
    let newest_first: Vec<String> = made.iter().rev().cloned().collect();

    let page = |limit: usize, offset: usize, thread: Option<&str>| {
        let query = ListQuery {
            limit,
            offset,
            thread_id: thread.map(str::to_owned),
            valid: ValidAt::Any,
        };
        ids(&engine.list_memories("default", &query).unwrap())
    };
    assert_eq!(page(5, 0, None), newest_first[..5]);
    assert_eq!(page(5, 5, None), newest_first[5..10]);
    assert_eq!(page(5, 10, None), newest_first[10..]);
    assert!(page(5, 12, None).is_empty());
    let t1: Vec<String> = [10, 7, 4, 1].iter().map(|&i| made[i].clone()).collect();
    assert_eq!(page(10, 0, Some("t1")), t1);

    for limit in [0, 1001] {
        let query = ListQuery {
            limit,
            ..ListQuery::default()
        };
        let err = engine.list_memories("default", &query).unwrap_err();
        assert_eq!(field_of(&err), "limit");
    }
}

// -- invalidate ------------------------------------------------------------------------

#[test]
fn invalidate_closes_validity_and_keeps_history() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let m = store(&engine, "Alice is on the platform team");
    let other = store(&engine, "Bob is on the search team");
    tick();
    let out = engine
        .invalidate("default", &m.id, Some("moved teams".into()))
        .unwrap();
    let until = out.valid_until.expect("closed");
    assert_eq!(out.invalidated_at, Some(until));
    assert_eq!(out.invalidation_reason.as_deref(), Some("moved teams"));
    assert!(until > m.created_at);

    assert_eq!(
        ids(&list(&engine, "default", ValidAt::Now)),
        [other.id.as_str()]
    );
    assert_eq!(list(&engine, "default", ValidAt::Any).len(), 2);
    assert!(ids(&list(&engine, "default", ValidAt::At(until - 1))).contains(&m.id));
    assert!(!ids(&list(&engine, "default", ValidAt::At(until))).contains(&m.id));

    let before = snapshot(&engine);
    let err = engine.invalidate("default", &m.id, None).unwrap_err();
    assert_eq!(field_of(&err), "id");
    assert!(err.to_string().contains("already invalid"), "{err}");
    assert_eq!(snapshot(&engine), before);
    assert_not_found(engine.invalidate("default", MISSING, None), MISSING);
    assert_eq!(snapshot(&engine), before);
}

// -- supersede -------------------------------------------------------------------------

#[test]
fn supersede_links_both_ways_and_closes_at_the_new_valid_from() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let at = |valid_from, content: &str| {
        engine
            .store_memory(NewMemory {
                valid_from: Some(valid_from),
                ..NewMemory::text(content)
            })
            .unwrap()
    };
    let old = at(YEAR_2020, "CEO is Ana");
    let new = at(YEAR_2021, "CEO is Ben");
    let seq = last_seq(&engine);

    let (o, n) = engine
        .supersede_memory("default", &old.id, &new.id)
        .unwrap();
    assert_eq!(o.superseded_by.as_deref(), Some(new.id.as_str()));
    assert_eq!(n.supersedes.as_deref(), Some(old.id.as_str()));
    assert_eq!(o.valid_until, Some(YEAR_2021));
    assert!(o.invalidated_at.is_some());
    assert_eq!(n.valid_until, None);
    assert_eq!(engine.find_memory("default", &old.id).unwrap(), o);
    assert_eq!(engine.find_memory("default", &new.id).unwrap(), n);
    let logged: Vec<(Action, String)> = ops(&engine)
        .into_iter()
        .filter(|op| op.seq > seq)
        .map(|op| (op.action, op.record_id))
        .collect();
    assert_eq!(
        logged,
        [
            (Action::Meta, old.id.clone()),
            (Action::Meta, new.id.clone())
        ]
    );

    let at_time = |t| ids(&list(&engine, "default", ValidAt::At(t)));
    assert!(at_time(YEAR_2020 - 1).is_empty());
    assert_eq!(at_time(YEAR_2020), [old.id.as_str()]);
    assert_eq!(at_time(YEAR_2021 - 1), [old.id.as_str()]);
    assert_eq!(at_time(YEAR_2021), [new.id.as_str()]);
    assert_eq!(at_time(YEAR_2022), [new.id.as_str()]);
    assert_eq!(
        ids(&list(&engine, "default", ValidAt::Now)),
        [new.id.as_str()]
    );
}

#[test]
fn bad_supersessions_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let a = store(&engine, "a").id;
    let b = store(&engine, "b").id;
    let c = store(&engine, "c").id;
    engine.supersede_memory("default", &a, &b).unwrap();
    let before = snapshot(&engine);

    let refused = [
        (c.as_str(), c.as_str(), "new_memory_id"), // itself
        (a.as_str(), c.as_str(), "old_memory_id"), // already superseded
        (c.as_str(), a.as_str(), "new_memory_id"), // the new one is superseded
        (b.as_str(), a.as_str(), "new_memory_id"), // would be a cycle
    ];
    for (old, new, field) in refused {
        let err = engine.supersede_memory("default", old, new).unwrap_err();
        assert_eq!(field_of(&err), field, "{old} -> {new}");
        assert_eq!(snapshot(&engine), before);
    }
    assert_not_found(engine.supersede_memory("default", &c, MISSING), MISSING);
    assert_not_found(engine.supersede_memory("default", MISSING, &c), MISSING);
    assert_eq!(snapshot(&engine), before);
}

// -- namespaces ------------------------------------------------------------------------

#[test]
fn nothing_crosses_a_namespace() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let alice = engine
        .store_memory(in_namespace("alice", "Alice's"))
        .unwrap();
    let bob = engine.store_memory(in_namespace("bob", "Bob's")).unwrap();
    let seq = last_seq(&engine);

    assert_not_found(engine.get_memory("bob", &alice.id), &alice.id);
    assert_not_found(engine.find_memory("default", &alice.id), &alice.id);
    let patch = MemoryPatch {
        content: Some("hijacked".into()),
        ..MemoryPatch::default()
    };
    assert_not_found(engine.update_memory("bob", &alice.id, patch), &alice.id);
    assert_not_found(engine.delete_memory("bob", &alice.id), &alice.id);
    assert_not_found(engine.invalidate("bob", &alice.id, None), &alice.id);
    assert_not_found(
        engine.supersede_memory("alice", &alice.id, &bob.id),
        &bob.id,
    );
    assert_not_found(
        engine.supersede_memory("bob", &alice.id, &bob.id),
        &alice.id,
    );
    assert_eq!(last_seq(&engine), seq, "no refused call was logged");

    for valid in [ValidAt::Any, ValidAt::Now, ValidAt::At(alice.created_at)] {
        assert_eq!(ids(&list(&engine, "alice", valid)), [alice.id.as_str()]);
        assert!(list(&engine, "default", valid).is_empty());
    }
    assert_eq!(ids(&list(&engine, "bob", ValidAt::Any)), [bob.id.as_str()]);
    assert_eq!(engine.count_memories("alice").unwrap(), 1);
    assert_eq!(engine.count_memories("default").unwrap(), 0);
    let mut got = engine.get_memory("alice", &alice.id).unwrap();
    got.accessed_at = alice.accessed_at;
    assert_eq!(got, alice);
}

// -- the op log ------------------------------------------------------------------------

#[test]
fn every_write_appends_one_op_with_a_rising_seq() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let a = store(&engine, "a");
    let b = engine.store_memory(in_namespace("other", "b")).unwrap();
    let c = store(&engine, "c");
    engine.get_memory("default", &a.id).unwrap(); // a read, not logged
    engine
        .update_memory(
            "default",
            &a.id,
            MemoryPatch {
                content: Some("a2".into()),
                ..MemoryPatch::default()
            },
        )
        .unwrap();
    engine.invalidate("default", &c.id, None).unwrap();
    engine
        .supersede_memory("default", &a.id, &a.id)
        .unwrap_err(); // refused, not logged
    engine.delete_memory("other", &b.id).unwrap();
    engine
        .store_memory(NewMemory {
            confidence: 2.0,
            ..NewMemory::text("refused")
        })
        .unwrap_err();

    let log = ops(&engine);
    let summary: Vec<(Action, &str, &str)> = log
        .iter()
        .map(|op| (op.action, op.record_id.as_str(), op.namespace.as_str()))
        .collect();
    assert_eq!(
        summary,
        [
            (Action::Upsert, a.id.as_str(), "default"),
            (Action::Upsert, b.id.as_str(), "other"),
            (Action::Upsert, c.id.as_str(), "default"),
            (Action::Upsert, a.id.as_str(), "default"),
            (Action::Meta, c.id.as_str(), "default"),
            (Action::Delete, b.id.as_str(), "other"),
        ]
    );
    assert!(log.iter().all(|op| op.kind == Kind::Memory));
    assert!(log.windows(2).all(|w| w[0].seq < w[1].seq), "seq rises");
    assert!(
        log.windows(2).all(|w| w[0].at <= w[1].at),
        "time does not go back"
    );
    assert_eq!(last_seq(&engine), log.last().unwrap().seq);

    // Paging from a watermark returns exactly what follows it.
    let reader = engine.store().reader().unwrap();
    let tail = oplog::since(&reader, log[2].seq, 2).unwrap();
    assert_eq!(tail, log[3..5]);
    assert!(oplog::since(&reader, log[5].seq, 10).unwrap().is_empty());
}

// -- validation --------------------------------------------------------------------------

#[test]
fn invalid_memories_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    store(&engine, "existing");
    let before = snapshot(&engine);
    let cases: Vec<(NewMemory, &str)> = vec![
        (NewMemory::text(""), "content"),
        (NewMemory::text(" \t\n"), "content"),
        (in_namespace("", "x"), "namespace"),
        (
            NewMemory {
                confidence: -0.01,
                ..NewMemory::text("x")
            },
            "confidence",
        ),
        (
            NewMemory {
                importance: f64::INFINITY,
                ..NewMemory::text("x")
            },
            "importance",
        ),
        (
            NewMemory {
                metadata: Some("not json".into()),
                ..NewMemory::text("x")
            },
            "metadata",
        ),
        (
            NewMemory {
                thread_id: Some("a\u{7}b".into()),
                ..NewMemory::text("x")
            },
            "thread_id",
        ),
        (
            NewMemory {
                valid_from: Some(YEAR_2021),
                expires_at: Some(YEAR_2020),
                ..NewMemory::text("x")
            },
            "expires_at",
        ),
        (
            NewMemory {
                embedding: Some(vec![0.0; 4]),
                ..NewMemory::text("x")
            },
            "vector",
        ),
        (
            NewMemory {
                embedding: Some(vec![f32::NAN; 4]),
                ..NewMemory::text("x")
            },
            "vector",
        ),
        (
            NewMemory {
                embedding: Some(Vec::new()),
                ..NewMemory::text("x")
            },
            "vector",
        ),
    ];
    for (new, field) in cases {
        let err = engine.store_memory(new).unwrap_err();
        assert_eq!(field_of(&err), field);
        assert_eq!(err.code(), "INVALID_PARAMETER");
        assert_eq!(snapshot(&engine), before);
    }
    let too_big = engine
        .store_memory(NewMemory::text("x".repeat(100_001)))
        .unwrap_err();
    assert_eq!(too_big.code(), "PAYLOAD_TOO_LARGE");
    assert_eq!(snapshot(&engine), before);
    assert_eq!(
        MemoryType::parse("fact").unwrap_err().code(),
        "INVALID_PARAMETER"
    );
    assert_eq!(
        Source::parse("user").unwrap_err().code(),
        "INVALID_PARAMETER"
    );
    // None of the rejected vectors fixed the store's dimension.
    assert_eq!(engine.embedding_identity().unwrap(), None);
}

#[test]
fn the_first_vector_fixes_the_dimension() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let with = |v: Vec<f32>| {
        engine.store_memory(NewMemory {
            embedding: Some(v),
            ..NewMemory::text("with a vector")
        })
    };
    let m = with(vec![0.0, 0.0, 5.0]).unwrap();
    assert_eq!(stored_vector(&engine, &m.id), Some(vec![0.0, 0.0, 1.0]));
    let identity = engine.embedding_identity().unwrap().unwrap();
    assert_eq!((identity.model, identity.dim), (None, 3));
    let before = snapshot(&engine);
    let err = with(vec![1.0, 0.0]).unwrap_err();
    assert_eq!(field_of(&err), "vector");
    assert!(err.to_string().contains("3-dimensional"), "{err}");
    assert_eq!(snapshot(&engine), before);
    with(vec![1.0, 1.0, 1.0]).unwrap();
}

// -- reopening, the lock, read-only ---------------------------------------------------------

#[test]
fn reopening_finds_everything_and_the_log_keeps_counting() {
    let dir = tempfile::tempdir().unwrap();
    let (before, seq) = {
        let engine = open(dir.path());
        let a = store(&engine, "a");
        let b = store(&engine, "b");
        engine
            .invalidate("default", &a.id, Some("why".into()))
            .unwrap();
        engine.supersede_memory("default", &a.id, &b.id).unwrap();
        engine.store_memory(in_namespace("other", "c")).unwrap();
        snapshot(&engine)
    };
    let engine = open(dir.path());
    assert_eq!(snapshot(&engine), (before, seq));
    assert_eq!(engine.count_memories("other").unwrap(), 1);
    store(&engine, "after reopening");
    assert_eq!(last_seq(&engine), seq + 1);
}

#[test]
fn one_writer_per_directory_and_read_only_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let writer = open(dir.path());
    let m = store(&writer, "committed");

    let busy = Engine::open(dir.path(), &EngineOptions::default()).unwrap_err();
    assert_eq!(busy.code(), "RESOURCE_BUSY");
    assert!(
        busy.to_string()
            .contains(&format!("pid {}", std::process::id())),
        "{busy}"
    );

    let reader = open_read_only(dir.path());
    assert!(reader.is_read_only());
    assert_eq!(
        ids(&list(&reader, "default", ValidAt::Any)),
        [m.id.as_str()]
    );
    let read = reader.get_memory("default", &m.id).unwrap();
    assert_eq!(
        read.accessed_at, m.accessed_at,
        "a read-only get does not write"
    );
    let later = store(&writer, "committed later");
    assert_eq!(list(&reader, "default", ValidAt::Any).len(), 2);

    let refused = [
        reader.store_memory(NewMemory::text("x")).map(drop),
        reader.delete_memory("default", &later.id),
        reader.invalidate("default", &later.id, None).map(drop),
        reader
            .supersede_memory("default", &m.id, &later.id)
            .map(drop),
    ];
    for result in refused {
        let err = result.unwrap_err();
        assert!(matches!(err, Error::ReadOnly { .. }), "{err:?}");
        assert_eq!(err.code(), "STORAGE_ERROR");
    }
    assert_eq!(list(&writer, "default", ValidAt::Now).len(), 2);

    drop(writer);
    let again = open(dir.path());
    assert_eq!(again.count_memories("default").unwrap(), 2);
}

#[test]
fn read_only_open_of_a_missing_store_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothing-here");
    let options = EngineOptions {
        read_only: true,
        ..EngineOptions::default()
    };
    let err = Engine::open(&missing, &options).unwrap_err();
    assert_eq!(err.code(), "NOT_FOUND");
    assert!(!missing.exists());
}

// -- threads ---------------------------------------------------------------------------

#[test]
fn threads_share_one_engine() {
    const THREADS: usize = 4;
    const PER_THREAD: usize = 100;
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let made: Vec<Vec<String>> = thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let engine = &engine;
                scope.spawn(move || {
                    (0..PER_THREAD)
                        .map(|i| {
                            let m = engine
                                .store_memory(NewMemory {
                                    thread_id: Some(format!("t{t}")),
                                    ..NewMemory::text(format!("t{t} fact {i}"))
                                })
                                .unwrap();
                            assert_eq!(
                                engine.get_memory("default", &m.id).unwrap().content,
                                m.content
                            );
                            m.id
                        })
                        .collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut all: Vec<String> = made.into_iter().flatten().collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), THREADS * PER_THREAD, "ids never collide");
    let mut listed = ids(&list(&engine, "default", ValidAt::Any));
    listed.sort();
    assert_eq!(listed, all);
    let log = ops(&engine);
    assert_eq!(log.len(), THREADS * PER_THREAD);
    assert!(log.windows(2).all(|w| w[0].seq < w[1].seq));
}

#[test]
fn store_with_similar_returns_the_close_valid_memories_but_not_itself() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let with_vector = |content: &str, v: Vec<f32>| NewMemory {
        embedding: Some(v),
        ..NewMemory::text(content)
    };
    let near = engine
        .store_memory(with_vector("User lives in Seattle", vec![1.0, 0.1]))
        .unwrap();
    engine
        .store_memory(with_vector("User likes tea", vec![0.0, 1.0]))
        .unwrap();
    let query = memcore::engine::SimilarQuery {
        threshold: 0.8,
        limit: 5,
    };
    let (stored, similar) = engine
        .store_memory_with_similar(
            with_vector("User moved to Austin", vec![1.0, 0.0]),
            Some(query),
        )
        .unwrap();
    assert_eq!(
        similar
            .iter()
            .map(|(m, _)| m.id.as_str())
            .collect::<Vec<_>>(),
        [near.id.as_str()]
    );
    assert!(similar[0].1 > 0.99, "the cosine comes with the memory");
    assert_eq!(
        engine.get_memory("default", &stored.id).unwrap().content,
        stored.content
    );
    // No query, or no vector: the store alone.
    let (_, none) = engine
        .store_memory_with_similar(with_vector("User moved again", vec![1.0, 0.0]), None)
        .unwrap();
    let (_, text_only) = engine
        .store_memory_with_similar(NewMemory::text("User moved twice"), Some(query))
        .unwrap();
    assert!(none.is_empty() && text_only.is_empty());
}
