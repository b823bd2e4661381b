//! The interaction log through the engine: turns, versioned documents,
//! hypernode discovery, staleness, exactly-once recording, budgets.

use std::sync::Arc;

use memcore::conversation::{DocumentObservation, NewTurn, ProcedureRecord};
use memcore::engine::{ContextRequest, ContextScoring, MaintenanceOptions};
use memcore::{Engine, EngineOptions, NewMemory};

fn open(dir: &std::path::Path) -> Engine {
    Engine::open(dir, &EngineOptions::default()).unwrap()
}

fn doc(path: &str, hash: &str, written: bool) -> DocumentObservation {
    DocumentObservation {
        canonical: path.into(),
        content_hash: hash.into(),
        content: Some(format!("content {hash}")),
        size: Some(10),
        written,
    }
}

fn proc(tool: &str, docs: Vec<DocumentObservation>) -> ProcedureRecord {
    ProcedureRecord {
        tool: tool.into(),
        args: "{}".into(),
        at: None,
        documents: docs,
    }
}

fn turn(conversation: &str, key: &str, user: &str, procedures: Vec<ProcedureRecord>) -> NewTurn {
    NewTurn {
        namespace: "default".into(),
        conversation_id: conversation.into(),
        turn_key: key.into(),
        user_text: user.into(),
        agent_text: Some(format!("done: {user}")),
        procedures,
        ..NewTurn::default()
    }
}

fn request<'a>(
    query: &'a str,
    conversation: &'a str,
    documents: &'a [String],
) -> ContextRequest<'a> {
    ContextRequest {
        namespace: "default",
        query,
        vector: None,
        conversation_id: Some(conversation),
        documents,
        token_budget: 2000,
        limit: 10,
        scoring: ContextScoring::default(),
    }
}

#[test]
fn versions_follow_content_hashes_with_provenance() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let t1 = engine
        .record_turn(&turn(
            "c1",
            "t1",
            "fix the login bug",
            vec![
                proc("READ", vec![doc("src/auth.py", "h1", false)]),
                proc("edit", vec![doc("src/auth.py", "h2", true)]),
            ],
        ))
        .unwrap();
    assert!(t1.created);
    assert_eq!(t1.procedures[1].tool, "EDIT");
    assert_eq!(t1.procedures[0].versions[0].version, 1);
    assert_eq!(t1.procedures[1].versions[0].version, 2);
    assert_eq!(t1.procedures[1].versions[0].provenance, "agent");
    // Same hash again: the same version. A changed hash on read: external.
    let t2 = engine
        .record_turn(&turn(
            "c2",
            "t1",
            "check auth",
            vec![proc("READ", vec![doc("src/auth.py", "h2", false)])],
        ))
        .unwrap();
    assert_eq!(
        t2.procedures[0].versions[0].id,
        t1.procedures[1].versions[0].id
    );
    engine
        .record_turn(&turn(
            "c2",
            "t2",
            "look again",
            vec![proc("READ", vec![doc("src/auth.py", "h3", false)])],
        ))
        .unwrap();
    let history = engine.document_history("default", "src/auth.py").unwrap();
    let kinds: Vec<(i64, &str)> = history
        .versions
        .iter()
        .map(|(v, _)| (v.version, v.provenance.as_str()))
        .collect();
    assert_eq!(kinds, vec![(1, "external"), (2, "agent"), (3, "external")]);
    assert_eq!(history.familiarity, 2);
    assert_eq!(
        history.versions[1].1.len(),
        2,
        "v2 touched by the EDIT and a READ"
    );
}

#[test]
fn hypernode_lookup_finds_other_conversations_by_shared_file() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    engine
        .record_turn(&turn(
            "c1",
            "t1",
            "fix the login bug",
            vec![proc("EDIT", vec![doc("src/auth.py", "h1", true)])],
        ))
        .unwrap();
    engine
        .record_turn(&turn(
            "c2",
            "t1",
            "write release notes",
            vec![proc("EDIT", vec![doc("CHANGELOG.md", "x1", true)])],
        ))
        .unwrap();
    let docs = vec!["src/auth.py".to_owned()];
    // Entirely different wording: only the shared file connects them.
    let result = engine
        .retrieve_context(&request("why do sessions expire early", "c3", &docs))
        .unwrap();
    assert_eq!(result.items.len(), 1, "{result:?}");
    assert_eq!(result.items[0].turn.conversation_id, "c1");
    assert_eq!(result.items[0].shared_documents, docs);
    assert!(result.text.contains("shared document src/auth.py"));
    assert!(result.text.contains("EDIT src/auth.py (v1, by the agent)"));
    // The current conversation is never returned.
    let own = engine
        .retrieve_context(&request("fix the login bug", "c1", &docs))
        .unwrap();
    assert!(own.items.iter().all(|i| i.turn.conversation_id != "c1"));
}

#[test]
fn staleness_after_an_external_change_lowers_the_score_and_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    engine
        .record_turn(&turn(
            "c1",
            "t1",
            "tune the cache settings",
            vec![proc("EDIT", vec![doc("cfg.toml", "a", true)])],
        ))
        .unwrap();
    engine
        .record_turn(&turn(
            "c2",
            "t1",
            "tune the cache settings",
            vec![proc("EDIT", vec![doc("other.toml", "b", true)])],
        ))
        .unwrap();
    let before = engine
        .retrieve_context(&request("cache settings", "c9", &[]))
        .unwrap();
    let score = |r: &memcore::engine::ContextResult, c: &str| {
        r.items
            .iter()
            .find(|i| i.turn.conversation_id == c)
            .unwrap()
            .score
    };
    // Equal but for recency decay over the microseconds between the two
    // recordings (~1e-10 on a quiet machine, more under load).
    assert!((score(&before, "c1") - score(&before, "c2")).abs() < 1e-6);
    // Someone else changed cfg.toml twice; the agent then read it.
    engine
        .record_turn(&turn(
            "c3",
            "t1",
            "read config",
            vec![proc("READ", vec![doc("cfg.toml", "z", false)])],
        ))
        .unwrap();
    let after = engine
        .retrieve_context(&request("cache settings", "c9", &[]))
        .unwrap();
    assert!(score(&after, "c1") < score(&after, "c2"));
    assert!(
        after
            .text
            .contains("cfg.toml is now v2 (1 newer version, 1 external)"),
        "{}",
        after.text
    );
}

#[test]
fn the_same_turn_recorded_concurrently_is_stored_once() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Arc::new(open(dir.path()));
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let e = engine.clone();
            std::thread::spawn(move || {
                e.record_turn(&turn("c1", "same", "hello there", vec![]))
                    .unwrap()
                    .created
            })
        })
        .collect();
    let created: usize = handles
        .into_iter()
        .map(|h| usize::from(h.join().unwrap()))
        .sum();
    assert_eq!(created, 1);
    assert_eq!(
        engine
            .conversation_turns("default", "c1", 10)
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn packing_never_exceeds_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    for i in 0..30 {
        let long = format!("deploy the service step {i} ") + &"with many details ".repeat(40);
        engine
            .record_turn(&turn(&format!("c{i}"), "t", &long, vec![]))
            .unwrap();
    }
    let mut kept = 0;
    for budget in [60, 200, 700, 5000] {
        let mut req = request("deploy the service", "none", &[]);
        req.token_budget = budget;
        let r = engine.retrieve_context(&req).unwrap();
        assert!(r.token_count <= budget, "{} > {budget}", r.token_count);
        assert!(memcore::engine::estimate_tokens(&r.text) <= budget);
        assert!(
            r.items.len() >= kept,
            "a larger budget keeps at least as much"
        );
        kept = r.items.len();
    }
    assert_eq!(kept, 10, "the limit, once the budget allows");
}

#[test]
fn maintenance_expires_archives_and_overview_summarises() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let now = memcore::temporal::now_micros();
    engine
        .store_memory(NewMemory {
            valid_from: Some(now - 10_000_000),
            expires_at: Some(now - 1),
            ..NewMemory::text("short-lived note")
        })
        .unwrap();
    engine
        .store_memory(NewMemory::text("durable fact about login"))
        .unwrap();
    let old = NewTurn {
        at: Some(now - 40 * 86_400_000_000),
        ..turn("old", "t", "ancient question about login", vec![])
    };
    engine.record_turn(&old).unwrap();
    let report = engine
        .run_maintenance(
            "default",
            &MaintenanceOptions {
                archive_after_days: Some(30.0),
                ..MaintenanceOptions::default()
            },
        )
        .unwrap();
    assert_eq!(report.memories_expired, 1);
    assert_eq!(report.conversations_archived, 1);
    let gone = engine
        .retrieve_context(&request("question about login", "x", &[]))
        .unwrap();
    assert!(gone.items.is_empty());
    let listing = engine.overview(Some("default"), 2, 50).unwrap();
    assert_eq!(listing[0].path, "/default");
    assert!(
        listing[0].summary.contains("2 memories"),
        "{}",
        listing[0].summary
    );
    let conversation = listing.iter().find(|e| e.kind == "conversation").unwrap();
    assert!(conversation.summary.contains("(archived)"));
    assert!(
        conversation
            .summary
            .contains("ancient question about login")
    );
}

#[test]
fn turns_stay_searchable_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let engine = open(dir.path());
        engine
            .record_turn(&turn(
                "c1",
                "t1",
                "rotate the signing keys",
                vec![proc("EDIT", vec![doc("keys.rs", "k1", true)])],
            ))
            .unwrap();
    }
    let engine = open(dir.path());
    let docs = vec!["keys.rs".to_owned()];
    let by_text = engine
        .retrieve_context(&request("signing keys", "c2", &[]))
        .unwrap();
    assert_eq!(by_text.items.len(), 1);
    let by_file = engine
        .retrieve_context(&request("unrelated words", "c2", &docs))
        .unwrap();
    assert_eq!(by_file.items.len(), 1);
}

fn asked(conversation: &str, key: &str, user: &str, agent: Option<&str>) -> NewTurn {
    NewTurn {
        agent_text: agent.map(str::to_owned),
        ..turn(conversation, key, user, vec![])
    }
}

/// `n` turns of small talk about the garden in `conversation`.
fn small_talk(engine: &Engine, conversation: &str, n: usize) {
    for i in 0..n {
        let filler = format!("filler turn {i} about the garden");
        engine
            .record_turn(&asked(conversation, &format!("f{i}"), &filler, None))
            .unwrap();
    }
}

fn context_order(engine: &Engine, query: &str) -> Vec<String> {
    let result = engine
        .retrieve_context(&request(query, "now", &[]))
        .unwrap();
    result.items.into_iter().map(|i| i.turn.turn_key).collect()
}

#[test]
fn a_turn_that_only_asks_ranks_below_the_answer_unless_it_holds_a_reply() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let question = "When did you go camping with the kids?";
    engine
        .record_turn(&asked("chat", "q", question, None))
        .unwrap();
    let answer = "We went camping at the lake with the kids in June.";
    engine
        .record_turn(&asked("chat", "a", answer, None))
        .unwrap();
    small_talk(&engine, "chat", 8);
    let query = "when did Melanie go camping with the kids";
    let order = context_order(&engine, query);
    let at = |key: &str| order.iter().position(|k| k == key);
    assert_eq!(order[0], "a");
    assert!(at("q").is_some(), "the question still surfaces: {order:?}");
    // The same question recorded with the agent's reply is worth showing.
    engine
        .record_turn(&asked("help", "r", question, Some("In June, at the lake.")))
        .unwrap();
    assert_eq!(context_order(&engine, query)[..2], ["r", "a"]);
}

#[test]
fn the_turn_after_a_question_without_a_reply_is_found_through_it() {
    use memcore::{Kind, KindSet, RecallOptions, SearchQuery};
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let lines = [
        "When did you go camping with the kids?",
        "Last weekend, at the lake!",
        "Sounds lovely.",
        "It was.",
    ];
    for (i, line) in lines.iter().enumerate() {
        engine
            .record_turn(&asked("chat", &format!("t{i}"), line, None))
            .unwrap();
    }
    small_talk(&engine, "other", 10);
    let query = SearchQuery {
        kinds: KindSet::only(Kind::UserTurn),
        ..SearchQuery::memories("default", 5)
    };
    let text = "when did Melanie go camping with the kids";
    let recall = |options: &RecallOptions| engine.recall(&query, text, None, options).unwrap();
    let off = RecallOptions {
        question_penalty: 0.0,
        ..RecallOptions::default()
    };
    let (plain, lifted) = (recall(&off), recall(&RecallOptions::default()));
    // Without the rule the question comes first; with it, its reply does,
    // at a score the reply's own words never gave it.
    let (question, reply) = (plain[0].key, lifted[0].key);
    assert_ne!(question, reply);
    let fused = |hits: &[memcore::Hit]| hits.iter().find(|h| h.key == reply).unwrap().scores.fused;
    assert!(fused(&lifted) > fused(&plain));
    assert_eq!(context_order(&engine, text)[0], "t1");
}
