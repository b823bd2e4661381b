//! The core of the automatic path (docs/guide.md, "The automatic path"): retention
//! tiers on memories, `memory_after_turn`'s claims, memories waiting for their
//! vector, and the maintenance steps that keep a long-lived store small
//! (summaries, the idempotency history, the operation log).

use memcore::conversation::NewTurn;
use memcore::engine::{MaintenanceOptions, TurnClaim};
use memcore::temporal::now_micros;
use memcore::{Engine, EngineOptions, MemoryPatch, NewMemory, SearchQuery, Tier};

const MINUTE: i64 = 60_000_000;

fn open(dir: &std::path::Path) -> Engine {
    Engine::open(dir, &EngineOptions::default()).unwrap()
}

fn unit(seed: u32) -> Vec<f32> {
    // Deterministic, well spread 16-d unit vectors.
    let raw: Vec<f32> = (0..16u32)
        .map(|i| ((seed.wrapping_mul(2_654_435_761) ^ (i * 40_503)) % 1000) as f32 - 500.0)
        .collect();
    let norm = raw.iter().map(|x| x * x).sum::<f32>().sqrt();
    raw.into_iter().map(|x| x / norm).collect()
}

/// A word of letters only, different for each `i` (the analyser splits digits off).
fn tag(i: u32) -> String {
    let letter = |n: u32| char::from(b'a' + (n % 26) as u8);
    format!("zq{}{}", letter(i / 26), letter(i))
}

fn turn(conversation: &str, key: &str, user: &str) -> NewTurn {
    NewTurn {
        namespace: "default".into(),
        conversation_id: conversation.into(),
        turn_key: key.into(),
        user_text: user.into(),
        agent_text: Some(format!("Answer about {user}")),
        procedures: vec![],
        thread_id: None,
        embedding: None,
        at: None,
    }
}

fn memory_ids(engine: &Engine, hits: &[memcore::engine::Hit]) -> Vec<String> {
    engine
        .memories_for(hits)
        .unwrap()
        .into_iter()
        .map(|(m, _)| m.id)
        .collect()
}

fn text_ids(engine: &Engine, query: &str) -> Vec<String> {
    let hits = engine
        .search_text(&SearchQuery::memories("default", 50), query)
        .unwrap();
    memory_ids(engine, &hits)
}

fn vector_ids(engine: &Engine, vector: &[f32]) -> Vec<String> {
    let hits = engine
        .search_vector(&SearchQuery::memories("default", 10), vector)
        .unwrap();
    memory_ids(engine, &hits)
}

#[test]
fn a_tier_is_stored_read_back_and_changed() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let m = engine
        .store_memory(NewMemory {
            tier: Tier::L1,
            ..NewMemory::text("User works from home today")
        })
        .unwrap();
    assert_eq!(engine.find_memory("default", &m.id).unwrap().tier, Tier::L1);
    let durable = engine
        .store_memory(NewMemory::text("User lives in Austin"))
        .unwrap();
    assert_eq!(durable.tier, Tier::Durable);
    let changed = engine
        .update_memory(
            "default",
            &m.id,
            MemoryPatch {
                tier: Some(Tier::L2),
                ..MemoryPatch::default()
            },
        )
        .unwrap();
    assert_eq!(changed.tier, Tier::L2);
    drop(engine);
    assert_eq!(
        open(dir.path()).find_memory("default", &m.id).unwrap().tier,
        Tier::L2
    );
}

#[test]
fn a_turn_is_claimed_once_and_its_result_kept() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let now = now_micros();
    let claim = |at| {
        engine
            .claim_turn("default", "s1", "t1", at, MINUTE)
            .unwrap()
    };
    assert_eq!(claim(now), TurnClaim::Claimed);
    assert_eq!(
        claim(now + 1),
        TurnClaim::Busy(now),
        "in flight: retry later"
    );
    engine
        .finish_turn("default", "s1", "t1", "{\"ok\":true}", now + 2)
        .unwrap();
    assert_eq!(
        claim(now + 3),
        TurnClaim::Done(Some("{\"ok\":true}".into()))
    );

    // A failed attempt gives its claim back; an abandoned one is taken over.
    assert_eq!(
        engine
            .claim_turn("default", "s1", "t2", now, MINUTE)
            .unwrap(),
        TurnClaim::Claimed
    );
    engine.release_turn("default", "s1", "t2").unwrap();
    assert_eq!(
        engine
            .claim_turn("default", "s1", "t2", now, MINUTE)
            .unwrap(),
        TurnClaim::Claimed
    );
    assert_eq!(
        engine
            .claim_turn("default", "s1", "t2", now + 2 * MINUTE, MINUTE)
            .unwrap(),
        TurnClaim::Claimed,
        "a claim older than the stale limit is taken over"
    );

    // A turn recorded without a claim (record_turn, an older memcore) is done.
    engine.record_turn(&turn("s1", "t3", "hello")).unwrap();
    assert_eq!(
        engine
            .claim_turn("default", "s1", "t3", now, MINUTE)
            .unwrap(),
        TurnClaim::Done(None)
    );
    // Claims are per namespace.
    assert_eq!(
        engine.claim_turn("other", "s1", "t1", now, MINUTE).unwrap(),
        TurnClaim::Claimed
    );
}

#[test]
fn maintenance_keeps_the_newest_claims_of_each_session() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let now = now_micros();
    for session in ["a", "b"] {
        for i in 0..5 {
            let id = format!("t{i}");
            engine
                .claim_turn("default", session, &id, now, MINUTE)
                .unwrap();
            engine
                .finish_turn("default", session, &id, "{}", now + i)
                .unwrap();
        }
    }
    let report = engine
        .run_maintenance(
            "default",
            &MaintenanceOptions {
                max_processed_turns: Some(2),
                ..MaintenanceOptions::default()
            },
        )
        .unwrap();
    assert_eq!(report.turn_claims_pruned, 6);
    for session in ["a", "b"] {
        // The two newest are still answered from their claim...
        assert_eq!(
            engine
                .claim_turn("default", session, "t4", now, MINUTE)
                .unwrap(),
            TurnClaim::Done(Some("{}".into()))
        );
        // ...an older one is a new claim (its turn was never recorded here).
        assert_eq!(
            engine
                .claim_turn("default", session, "t0", now, MINUTE)
                .unwrap(),
            TurnClaim::Claimed
        );
    }
}

#[test]
fn a_memory_stored_without_its_vector_gets_it_later() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let with = engine
        .store_memory(NewMemory {
            embedding: Some(unit(1)),
            ..NewMemory::text("User drinks green tea")
        })
        .unwrap();
    let pending = engine
        .store_memory(NewMemory::text("User plays the cello on Sundays"))
        .unwrap();
    let waiting = engine.pending_vectors(None, 10).unwrap();
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0].id, pending.id);
    assert_eq!(engine.count_pending_vectors().unwrap(), 1);
    // Keywords find it at once; by its vector it is not found yet.
    assert_eq!(text_ids(&engine, "cello"), vec![pending.id.clone()]);
    let by_vector = |e: &Engine| vector_ids(e, &unit(2));
    assert!(!by_vector(&engine).contains(&pending.id));

    // Content changed since the vector was made: nothing attached.
    assert!(
        !engine
            .attach_vector("default", &pending.id, "another text", unit(2))
            .unwrap()
    );
    assert!(
        engine
            .attach_vector("default", &pending.id, &pending.content, unit(2))
            .unwrap()
    );
    assert!(
        !engine
            .attach_vector("default", &pending.id, &pending.content, unit(3))
            .unwrap(),
        "a vector is attached once"
    );
    assert!(
        !engine
            .attach_vector("default", &with.id, &with.content, unit(4))
            .unwrap()
    );
    assert_eq!(by_vector(&engine)[0], pending.id);
    assert_eq!(text_ids(&engine, "cello"), vec![pending.id.clone()]);
    assert_eq!(engine.count_pending_vectors().unwrap(), 0);
    let kept = engine.find_memory("default", &pending.id).unwrap();
    assert_eq!(
        kept.created_at, pending.created_at,
        "attaching is not an edit"
    );

    // Rebuilt from nothing, the indexes hold the vector too.
    drop(engine);
    std::fs::remove_dir_all(dir.path().join(memcore::engine::INDEX_DIR)).unwrap();
    let reopened = open(dir.path());
    assert_eq!(by_vector(&reopened)[0], pending.id);
}

#[test]
fn the_log_is_compacted_and_indexes_still_rebuild_from_it() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    // A read-only follower, which may apply the writes below before or after
    // their log entries are compacted: either way it ends up with the tables.
    let follower = Engine::open(
        dir.path(),
        &EngineOptions {
            read_only: true,
            ..EngineOptions::default()
        },
    )
    .unwrap();
    let mut ids = Vec::new();
    for i in 0..60u32 {
        let m = engine
            .store_memory(NewMemory {
                embedding: Some(unit(i)),
                ..NewMemory::text(format!("fact number {i} about {}", tag(i)))
            })
            .unwrap();
        ids.push(m.id);
    }
    for (i, id) in ids.iter().enumerate().take(20) {
        engine
            .update_memory(
                "default",
                id,
                MemoryPatch {
                    content: Some(format!(
                        "revised fact {i} about subject {}",
                        tag(100 + i as u32)
                    )),
                    embedding: Some(unit(1000 + i as u32)),
                    ..MemoryPatch::default()
                },
            )
            .unwrap();
    }
    for id in &ids[20..30] {
        engine.delete_memory("default", id).unwrap();
    }
    for id in &ids[30..35] {
        engine.invalidate("default", id, None).unwrap();
    }
    engine
        .record_turn(&turn("c", "1", &format!("a question about {}", tag(45))))
        .unwrap();

    // Entries younger than the age limit stay.
    let young = engine
        .run_maintenance(
            "default",
            &MaintenanceOptions {
                log_min_age_hours: Some(24.0),
                ..MaintenanceOptions::default()
            },
        )
        .unwrap();
    assert_eq!(young.log_entries_compacted, 0);
    let report = engine
        .run_maintenance(
            "default",
            &MaintenanceOptions {
                log_min_age_hours: Some(0.0),
                now: Some(now_micros() + 1),
                ..MaintenanceOptions::default()
            },
        )
        .unwrap();
    // 60 stores + 20 updates + 10 deletes + 5 invalidations + 1 turn; what stays is
    // the current version of the 50 memories and the turn.
    assert_eq!(report.log_entries_compacted, 96 - 51, "{report:?}");
    let again = engine
        .run_maintenance(
            "default",
            &MaintenanceOptions {
                log_min_age_hours: Some(0.0),
                now: Some(now_micros() + 1),
                ..MaintenanceOptions::default()
            },
        )
        .unwrap();
    assert_eq!(again.log_entries_compacted, 0, "idempotent");

    let check = |e: &Engine| {
        assert_eq!(text_ids(e, "revised").len(), 20);
        let found = text_ids(e, &tag(25));
        assert!(
            found.is_empty(),
            "deleted stays deleted: {found:?} {:?}",
            &ids[20..30]
        );
        assert!(text_ids(e, &tag(32)).is_empty(), "invalid stays invalid");
        assert_eq!(text_ids(e, &tag(50)).len(), 1);
        assert!(text_ids(e, &tag(3)).is_empty(), "the old content is gone");
        assert_eq!(vector_ids(e, &unit(1003))[0], ids[3]);
    };
    std::thread::sleep(std::time::Duration::from_millis(800));
    check(&follower);
    drop(follower);
    drop(engine);
    // Indexes rebuilt from the compacted log hold every current record.
    std::fs::remove_dir_all(dir.path().join(memcore::engine::INDEX_DIR)).unwrap();
    let reopened = open(dir.path());
    check(&reopened);
    // New writes still get fresh seqs.
    let next = reopened
        .store_memory(NewMemory::text("a fact after compaction"))
        .unwrap();
    assert_eq!(text_ids(&reopened, "compaction"), vec![next.id]);
}

#[test]
fn maintenance_summarises_conversations_at_most_every_interval() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    for (i, text) in [
        "The billing export fails for invoices over ten thousand euros.",
        "Thanks!",
        "The billing export should stream invoices instead of loading them all.",
    ]
    .iter()
    .enumerate()
    {
        engine
            .record_turn(&turn("billing", &i.to_string(), text))
            .unwrap();
    }
    let run = |now: i64| {
        engine
            .run_maintenance(
                "default",
                &MaintenanceOptions {
                    summary_refresh_minutes: Some(60.0),
                    now: Some(now),
                    ..MaintenanceOptions::default()
                },
            )
            .unwrap()
            .summaries_refreshed
    };
    let now = now_micros();
    assert_eq!(run(now), 1);
    let entry = engine
        .overview(Some("default"), 2, 50)
        .unwrap()
        .into_iter()
        .find(|e| e.path == "/default/conversations/billing")
        .unwrap();
    assert!(entry.summary.contains("summary: "), "{}", entry.summary);
    assert!(
        entry.summary.contains("billing export"),
        "{}",
        entry.summary
    );
    assert!(!entry.summary.contains("Thanks"), "{}", entry.summary);
    assert_eq!(run(now + MINUTE), 0, "nothing new");
    engine
        .record_turn(&turn("billing", "3", "Streaming fixed the billing export."))
        .unwrap();
    assert_eq!(
        run(now + 2 * MINUTE),
        0,
        "new turns, but refreshed a minute ago"
    );
    assert_eq!(run(now + 61 * MINUTE), 1);
}

#[test]
fn a_reset_forgets_claims_and_summaries_too() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let now = now_micros();
    engine.claim_turn("default", "s", "t", now, MINUTE).unwrap();
    engine.finish_turn("default", "s", "t", "{}", now).unwrap();
    engine
        .record_turn(&turn("s", "t", "hello there friend"))
        .unwrap();
    engine
        .run_maintenance(
            "default",
            &MaintenanceOptions {
                summary_refresh_minutes: Some(0.0),
                ..MaintenanceOptions::default()
            },
        )
        .unwrap();
    engine.reset_all().unwrap();
    let rows = |table: &str| -> i64 {
        engine
            .store()
            .reader()
            .unwrap()
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(rows("turn_claims"), 0);
    assert_eq!(rows("conversation_summaries"), 0);
    assert_eq!(
        engine.claim_turn("default", "s", "t", now, MINUTE).unwrap(),
        TurnClaim::Claimed
    );
}
