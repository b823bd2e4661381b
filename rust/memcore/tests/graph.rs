//! The knowledge graph through the engine: save_memory's contract, versions,
//! traversal, mentions, PPR in recall, analytics and recovery.

use memcore::engine::{ObservationDraft, WriteContext};
use memcore::graph::Direction;
use memcore::knowledge::save::{EntityDraft, RelationDraft, SaveRequest};
use memcore::{Engine, EngineOptions, NewMemory, RecallOptions, SearchQuery, ValidAt};

fn open(dir: &std::path::Path) -> Engine {
    Engine::open(dir, &EngineOptions::default()).unwrap()
}

fn rel(target: &str, kind: &str) -> RelationDraft {
    RelationDraft {
        target: target.into(),
        relation_type: kind.into(),
        importance: None,
    }
}

fn entity(name: &str, kind: &str, obs: &[&str], relations: Vec<RelationDraft>) -> EntityDraft {
    EntityDraft {
        name: name.into(),
        entity_type: kind.into(),
        observations: obs.iter().map(|s| (*s).to_owned()).collect(),
        relations,
        ..EntityDraft::default()
    }
}

fn request(entities: Vec<EntityDraft>) -> SaveRequest {
    SaveRequest {
        namespace: "default".into(),
        thread_id: "portfolio-update-2026".into(),
        entities,
        require_links: true,
    }
}

fn seed_example() -> SaveRequest {
    request(vec![
        entity(
            "Andrii",
            "Person",
            &[
                "Works at Google",
                "Author of MCP Memory Server",
                "Uses Windows",
            ],
            vec![
                rel("Python Scripts", "created"),
                rel("Portfolio", "updates for"),
            ],
        ),
        entity(
            "Python Scripts",
            "CodeArtifact",
            &[
                "update_portfolio.py is main script",
                "Uses python-docx 1.2.0",
                "Uses lxml 6.0.2",
            ],
            vec![rel("Andrii", "created by"), rel("Portfolio", "modifies")],
        ),
        entity(
            "Portfolio",
            "document",
            &[
                "Final file: shevchenko-viktoria-yevgenivna-v4.docx",
                "Contains 2 main tables",
                "Total 21 records",
            ],
            vec![
                rel("Python Scripts", "modified by"),
                rel("Andrii", "updated by"),
            ],
        ),
    ])
}

#[test]
fn the_seed_request_saves_atomically_with_quality_one() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let outcome = engine.save_memory(&seed_example()).unwrap();
    assert_eq!(outcome.entities_created, 3);
    assert_eq!(outcome.relations_created, 6);
    assert_eq!(outcome.observations_created, 9);
    assert!((outcome.quality_score - 1.0).abs() < 1e-9);
    assert_eq!(
        outcome.warnings.len(),
        1,
        "lowercase 'document': {:?}",
        outcome.warnings
    );
    let portfolio = engine.get_entity("default", "portfolio").unwrap();
    assert_eq!(portfolio.entity.entity_type, "Document");
    assert_eq!(portfolio.observations.len(), 3);
    assert_eq!(portfolio.relations.len(), 4);
}

#[test]
fn any_problem_rejects_the_whole_request() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let mut bad = seed_example();
    bad.entities[2].observations.push("x".repeat(165));
    let err = engine.save_memory(&bad).unwrap_err();
    assert_eq!(err.code(), "VALIDATION_FAILED");
    assert!(
        err.to_string()
            .contains("Observation too long (165 chars). Max 150."),
        "{err}"
    );
    assert_eq!(engine.count_graph("default").unwrap(), (0, 0));

    let unknown = request(vec![entity(
        "Test",
        "Example",
        &["Some fact"],
        vec![rel("NonExistent", "x")],
    )]);
    let err = engine.save_memory(&unknown).unwrap_err();
    assert!(
        err.to_string()
            .contains("Target entity 'NonExistent' not found in request")
    );
    let lonely = request(vec![entity(
        "Isolated Entity",
        "Test",
        &["Some fact"],
        vec![],
    )]);
    let err = engine.save_memory(&lonely).unwrap_err();
    assert!(
        err.to_string()
            .contains("Entity 'Isolated Entity' must have at least 1 relation")
    );
    assert_eq!(engine.count_graph("default").unwrap(), (0, 0));
}

#[test]
fn saving_an_existing_entity_extends_it() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    engine.save_memory(&seed_example()).unwrap();
    let more = request(vec![entity(
        "ANDRII",
        "Person",
        &["Works at Google", "Lives in Kyiv"],
        vec![
            rel("Portfolio", "updates for"),
            rel("Python Scripts", "maintains"),
        ],
    )]);
    let outcome = engine.save_memory(&more).unwrap();
    assert_eq!(outcome.entities_created, 0);
    assert_eq!(outcome.entities_updated, 1);
    assert_eq!(
        outcome.observations_created, 1,
        "duplicate observation skipped"
    );
    assert_eq!(outcome.relations_created, 1, "duplicate relation skipped");
    assert_eq!(engine.count_graph("default").unwrap(), (3, 7));
}

#[test]
fn observation_versions_form_a_chain() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    engine.save_memory(&seed_example()).unwrap();
    let ctx = WriteContext {
        namespace: "default".into(),
        ..WriteContext::default()
    };
    let view = engine.get_entity("default", "Python Scripts").unwrap();
    let old = view
        .observations
        .iter()
        .find(|o| o.content.contains("1.2.0"))
        .unwrap()
        .clone();
    let v2 = engine
        .add_observations(
            &ctx,
            "Python Scripts",
            &[ObservationDraft {
                content: "Uses python-docx 1.3.0".into(),
                supersedes: Some(old.id.clone()),
                ..ObservationDraft::default()
            }],
        )
        .unwrap();
    assert_eq!(v2[0].version, 2);
    let history = engine
        .observation_history("default", "Python Scripts", &v2[0].id)
        .unwrap();
    assert_eq!(
        history.iter().map(|o| o.version).collect::<Vec<_>>(),
        vec![1, 2]
    );
    assert_eq!(history[0].superseded_by.as_deref(), Some(v2[0].id.as_str()));
    let current = engine.get_entity("default", "Python Scripts").unwrap();
    assert!(current.observations.iter().all(|o| o.id != old.id));
}

#[test]
fn scores_out_of_range_are_refused_by_the_crud_writes_too() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    engine.save_memory(&seed_example()).unwrap();
    let before = engine.get_entity("default", "Andrii").unwrap();
    let mut too_heavy = rel("Portfolio", "maintains");
    too_heavy.importance = Some(-1.0);
    let ctx = WriteContext {
        namespace: "default".into(),
        ..WriteContext::default()
    };
    let err = engine
        .create_relations(&ctx, &[("Andrii".into(), too_heavy)])
        .unwrap_err();
    assert_eq!(
        err.error_code(),
        memcore::ErrorCode::InvalidParameter,
        "{err}"
    );
    for (confidence, importance) in [(Some(1.5), None), (None, Some(f64::INFINITY))] {
        let ctx = WriteContext {
            namespace: "default".into(),
            confidence,
            importance,
            ..WriteContext::default()
        };
        let draft = ObservationDraft {
            content: "Reviews pull requests on Mondays".into(),
            ..ObservationDraft::default()
        };
        let err = engine
            .add_observations(&ctx, "Andrii", &[draft])
            .unwrap_err();
        assert_eq!(
            err.error_code(),
            memcore::ErrorCode::InvalidParameter,
            "{err}"
        );
    }
    let after = engine.get_entity("default", "Andrii").unwrap();
    assert_eq!(after.observations.len(), before.observations.len());
    assert_eq!(after.relations.len(), before.relations.len());
}

#[test]
fn traversal_and_paths() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    engine.save_memory(&seed_example()).unwrap();
    let chain = request(vec![
        entity(
            "Google",
            "Company",
            &["Search company"],
            vec![rel("Andrii", "employs")],
        ),
        entity(
            "Mountain View",
            "Place",
            &["City in California"],
            vec![rel("Google", "hosts")],
        ),
    ]);
    engine.save_memory(&chain).unwrap();
    let out = engine
        .get_related(
            "default",
            "Mountain View",
            2,
            Direction::Out,
            None,
            ValidAt::Now,
            50,
        )
        .unwrap();
    let names: Vec<(&str, usize)> = out
        .iter()
        .map(|r| (r.entity.name.as_str(), r.depth))
        .collect();
    assert_eq!(names, vec![("Google", 1), ("Andrii", 2)]);
    assert!(
        engine
            .get_related(
                "default",
                "Mountain View",
                3,
                Direction::In,
                None,
                ValidAt::Now,
                50
            )
            .unwrap()
            .is_empty()
    );
    let path = engine
        .find_relation_path("default", "Mountain View", "Portfolio", 6)
        .unwrap();
    assert_eq!(path.len(), 3);
    assert_eq!(path[0].relation_type, "hosts");
    assert_eq!(
        engine
            .get_related(
                "default",
                "nobody",
                1,
                Direction::Both,
                None,
                ValidAt::Now,
                5
            )
            .unwrap_err()
            .code(),
        "NOT_FOUND"
    );
}

#[test]
fn memories_mention_entities_and_ppr_ranks_graph_neighbours() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    engine
        .save_memory(&request(vec![
            entity(
                "Alice",
                "Person",
                &["Leads the data team"],
                vec![rel("Project Falcon", "works on")],
            ),
            entity(
                "Project Falcon",
                "Project",
                &["Internal analytics rewrite"],
                vec![rel("Alice", "led by")],
            ),
        ]))
        .unwrap();
    let linked = engine
        .store_memory(NewMemory::text(
            "The Project Falcon deadline moved to Friday",
        ))
        .unwrap();
    let lexical = engine
        .store_memory(NewMemory::text(
            "Tell me about everything, tell me about the weather",
        ))
        .unwrap();
    let q = SearchQuery::memories("default", 5);
    let hits = engine
        .recall(&q, "tell me about Alice", None, &RecallOptions::default())
        .unwrap();
    let found = engine.memories_for(&hits).unwrap();
    let order: Vec<&str> = found.iter().map(|(m, _)| m.id.as_str()).collect();
    assert_eq!(
        order.first().copied(),
        Some(linked.id.as_str()),
        "{found:?}"
    );
    assert!(order.contains(&lexical.id.as_str()));
    assert!(found[0].1.ppr.unwrap() > 0.0);
    assert!(found[0].1.bm25.is_some());
}

#[test]
fn new_entities_link_existing_memories_and_deletes_cascade() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let m = engine
        .store_memory(NewMemory::text("Bob prefers tea over coffee"))
        .unwrap();
    engine
        .save_memory(&request(vec![
            entity(
                "Bob",
                "Person",
                &["Works remotely"],
                vec![rel("Carol", "knows")],
            ),
            entity(
                "Carol",
                "Person",
                &["Lives in Lisbon"],
                vec![rel("Bob", "knows")],
            ),
        ]))
        .unwrap();
    let q = SearchQuery::memories("default", 5);
    let hits = engine
        .recall(&q, "who does Carol know", None, &RecallOptions::default())
        .unwrap();
    let found = engine.memories_for(&hits).unwrap();
    assert_eq!(
        found.first().map(|(x, _)| x.id.clone()),
        Some(m.id.clone()),
        "linked through Bob"
    );
    assert_eq!(
        engine.delete_entities("default", &["bob".into()]).unwrap(),
        vec!["Bob"]
    );
    assert_eq!(engine.count_graph("default").unwrap(), (1, 0));
    let analytics = engine.analytics("default", None, 10).unwrap();
    assert_eq!(analytics.orphaned.len(), 1);
    assert_eq!(analytics.orphaned[0].1, "no_relations");
}

#[test]
fn graph_survives_reopen_and_exports_arrays() {
    let dir = tempfile::tempdir().unwrap();
    {
        let engine = open(dir.path());
        engine.save_memory(&seed_example()).unwrap();
        engine
            .store_memory(NewMemory::text("Andrii updated the Portfolio again"))
            .unwrap();
    }
    let engine = open(dir.path());
    let arrays = engine.graph_arrays("default").unwrap();
    assert_eq!(arrays.names.len(), 3);
    assert_eq!(arrays.sources.len(), 6);
    let ppr = engine
        .personalized_pagerank("default", &[("Andrii".into(), 1.0)], 0.5, 10)
        .unwrap();
    assert_eq!(ppr[0].0, "Andrii");
    let total: f32 = ppr.iter().map(|p| p.1).sum();
    assert!((total - 1.0).abs() < 1e-3);
    let analytics = engine
        .analytics("default", Some("portfolio-update-2026"), 10)
        .unwrap();
    assert_eq!(analytics.most_connected[0].relation_count, 4);
    assert_eq!(analytics.recent_changes.len(), 3);
}
