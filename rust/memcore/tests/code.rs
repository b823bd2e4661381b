//! Code chunks through the engine: replace per file, project isolation,
//! identifier-aware BM25, removal and project status.

use memcore::code::{ChunkDraft, FileChunks, ProjectStatus};
use memcore::engine::code_recall;
use memcore::{
    Engine, EngineOptions, Kind, KindSet, NewMemory, RecallOptions, SearchQuery, Weights,
};

fn chunk(start: i64, name: &str, content: &str) -> ChunkDraft {
    ChunkDraft {
        start_line: start,
        end_line: start + 3,
        chunk_type: "function".into(),
        name: Some(name.into()),
        parent_scope: Some("module auth.py".into()),
        content: content.into(),
        content_hash: format!("h-{name}"),
        embedding: None,
    }
}

fn file(project: &str, path: &str, chunks: Vec<ChunkDraft>) -> FileChunks {
    FileChunks {
        namespace: "default".into(),
        project_id: project.into(),
        file_path: path.into(),
        language: "python".into(),
        content_hash: format!("file-{}", chunks.len()),
        size: Some(100),
        chunks,
    }
}

#[test]
fn chunks_replace_per_file_and_search_by_identifier_parts() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), &EngineOptions::default()).unwrap();
    let out = engine
        .index_file(&file(
            "p1",
            "src/auth.py",
            vec![
                chunk(
                    1,
                    "getUserName",
                    "def getUserName(request):\n    return request.user.name",
                ),
                chunk(5, "logout", "def logout(session):\n    session.clear()"),
            ],
        ))
        .unwrap();
    assert_eq!((out.chunks_added, out.chunks_removed), (2, 0));
    engine
        .index_file(&file(
            "p2",
            "src/other.py",
            vec![chunk(1, "getUserName", "def getUserName(): pass")],
        ))
        .unwrap();
    let hits = engine
        .search_code("default", "user name", None, Some("p1"), None, 5)
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].0.name.as_deref(), Some("getUserName"));
    assert_eq!(hits[0].0.file_path, "src/auth.py");
    let everywhere = engine
        .search_code("default", "user name", None, None, Some("python"), 5)
        .unwrap();
    assert_eq!(everywhere.len(), 2);
    assert!(
        engine
            .search_code("default", "user name", None, None, Some("rust"), 5)
            .unwrap()
            .is_empty()
    );

    let out = engine
        .index_file(&file(
            "p1",
            "src/auth.py",
            vec![chunk(1, "login", "def login(user): pass")],
        ))
        .unwrap();
    assert_eq!((out.chunks_added, out.chunks_removed), (1, 2));
    assert!(
        engine
            .search_code("default", "logout session", None, Some("p1"), None, 5)
            .unwrap()
            .is_empty()
    );
    assert_eq!(engine.indexed_files("default", "p1").unwrap().len(), 1);

    assert_eq!(
        engine.remove_file("default", "p1", "src/auth.py").unwrap(),
        1
    );
    assert!(
        engine
            .search_code("default", "login", None, Some("p1"), None, 5)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn projects_report_status_and_delete_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), &EngineOptions::default()).unwrap();
    engine
        .put_project_status(&ProjectStatus {
            namespace: "default".into(),
            project_id: "p1".into(),
            root: "/tmp/p1".into(),
            status: "indexing".into(),
            total_files: 2,
            ..ProjectStatus::default()
        })
        .unwrap();
    engine
        .index_file(&file("p1", "a.py", vec![chunk(1, "a", "def a(): pass")]))
        .unwrap();
    engine
        .index_file(&file("p1", "b.py", vec![chunk(1, "b", "def b(): pass")]))
        .unwrap();
    let status = engine.project_status("default", "p1").unwrap();
    assert_eq!(
        (status.status.as_str(), status.total_chunks),
        ("indexing", 2)
    );
    assert_eq!(engine.list_projects("default").unwrap().len(), 1);
    assert_eq!(engine.delete_project("default", "p1").unwrap(), 2);
    assert_eq!(
        engine.project_status("default", "p1").unwrap_err().code(),
        "NOT_FOUND"
    );
    assert!(
        engine
            .search_code("default", "def", None, None, None, 5)
            .unwrap()
            .is_empty()
    );
    let bad = ProjectStatus {
        namespace: "default".into(),
        project_id: "p1".into(),
        status: "sleeping".into(),
        ..ProjectStatus::default()
    };
    assert_eq!(
        engine.put_project_status(&bad).unwrap_err().code(),
        "INVALID_PARAMETER"
    );
}

#[test]
fn mixed_recall_keeps_memories_visible_beside_code() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), &EngineOptions::default()).unwrap();
    // Code is long and term-rich: raw BM25 would put every chunk first.
    for i in 0..10 {
        let body =
            "def parse_config(path):\n".to_owned() + &"    config parse value\n".repeat(5 + i);
        engine
            .index_file(&file(
                "p",
                &format!("m{i}.py"),
                vec![chunk(1, "parse_config", &body)],
            ))
            .unwrap();
    }
    let best = engine
        .store_memory(NewMemory::text("The config parser must parse TOML config"))
        .unwrap();
    engine
        .store_memory(NewMemory::text("Unrelated note that mentions config once"))
        .unwrap();
    engine
        .store_memory(NewMemory::text("Another unrelated note about lunch"))
        .unwrap();
    let q = SearchQuery {
        kinds: KindSet::of(&[Kind::Memory, Kind::CodeChunk]),
        limit: 3,
        ..SearchQuery::memories("default", 3)
    };
    // Each kind is z-scored on its own, so the best memory competes with
    // the best chunks instead of drowning below ten of them.
    let hits = engine
        .recall(&q, "config parse", None, &RecallOptions::default())
        .unwrap();
    let memories = engine.memories_for(&hits).unwrap();
    assert_eq!(
        memories.first().map(|(x, _)| x.id.clone()),
        Some(best.id),
        "{hits:?}"
    );
}

#[test]
fn chunks_stay_searchable_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let engine = Engine::open(dir.path(), &EngineOptions::default()).unwrap();
        engine
            .index_file(&file(
                "p",
                "a.py",
                vec![chunk(1, "parseHeader", "def parseHeader(): pass")],
            ))
            .unwrap();
    }
    let engine = Engine::open(dir.path(), &EngineOptions::default()).unwrap();
    let hits = engine
        .search_code(
            "default",
            "parse header",
            None,
            Some("p"),
            Some("python"),
            5,
        )
        .unwrap();
    assert_eq!(hits.len(), 1);
}

/// A unit vector at cosine `c` from the query direction (1, 0, 0, 0).
fn at_cosine(c: f32) -> Vec<f32> {
    vec![c, (1.0 - c * c).sqrt(), 0.0, 0.0]
}

/// A chunk whose vector is at cosine `c` from [`QUERY`].
fn chunk_at(start: i64, name: &str, content: &str, c: f32) -> ChunkDraft {
    ChunkDraft {
        embedding: Some(at_cosine(c)),
        ..chunk(start, name, content)
    }
}

/// A store holding logs.py: rotate_logs (matches "rotate"/"logs") at cosine
/// `rotate` from the query direction, prune_archive at 0.9, render_page at 0.1.
fn logs_store(rotate: f32) -> (Engine, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), &EngineOptions::default()).unwrap();
    let with_vector =
        |start, name: &str, c| chunk_at(start, name, &format!("def {name}(): pass"), c);
    let chunks = vec![
        with_vector(1, "rotate_logs", rotate),
        with_vector(5, "prune_archive", 0.9),
        with_vector(9, "render_page", 0.1),
    ];
    engine.index_file(&file("p", "logs.py", chunks)).unwrap();
    (engine, dir)
}

/// The query direction of [`logs_store`].
const QUERY: [f32; 4] = [1.0, 0.0, 0.0, 0.0];

#[test]
fn search_code_fuses_with_code_weights() {
    // A matches the query's words and is fairly close to it; B is the
    // closest but shares no word; C is neither. With the generic weights
    // (BM25 : vector = 0.15 : 0.40) A's word match wins; code's own weights
    // lean on the vector (BM25 : vector well below 0.28), so B ranks first.
    let (engine, _dir) = logs_store(0.7);
    let names = |options: &RecallOptions| -> Vec<String> {
        engine
            .search_code_with("default", "rotate", Some(&QUERY), None, None, 3, options)
            .unwrap()
            .into_iter()
            .map(|(c, _)| c.name.unwrap())
            .collect()
    };
    let generic = RecallOptions {
        weights: Weights {
            vector: 0.40,
            bm25: 0.15,
            ppr: 0.45,
        },
        ..code_recall("rotate")
    };
    assert_eq!(names(&generic)[0], "rotate_logs");
    assert_eq!(names(&code_recall("rotate"))[0], "prune_archive");
    let default: Vec<String> = engine
        .search_code("default", "rotate", Some(&QUERY), None, None, 3)
        .unwrap()
        .into_iter()
        .map(|(c, _)| c.name.unwrap())
        .collect();
    assert_eq!(default, names(&code_recall("rotate")));
}

#[test]
fn a_query_naming_an_identifier_ranks_by_its_words() {
    // rotate_logs holds the query's words and is nearly as close as
    // prune_archive: a description ranks by the vector alone, the same
    // words written as an identifier rank by the word match.
    let (engine, _dir) = logs_store(0.88);
    let first = |text: &str, vector: Option<&[f32]>| {
        let found = engine
            .search_code("default", text, vector, None, None, 3)
            .unwrap();
        found[0].0.name.clone().unwrap()
    };
    assert_eq!(first("rotate logs", Some(&QUERY)), "prune_archive");
    // (`logs_rotate` names no chunk, so no definition is ranked first.)
    assert_eq!(first("logs_rotate", Some(&QUERY)), "rotate_logs");
    // Without a query vector BM25 ranks a description too (not the order
    // the chunks were stored in).
    assert_eq!(first("prune archive", None), "prune_archive");
}

#[test]
fn a_chunk_defining_the_name_a_query_gives_ranks_first() {
    // main uses parse_args three times and sits next to the query vector;
    // the definition says the name once and is far from it. Both signals
    // prefer main, yet a query naming parse_args wants its definition.
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), &EngineOptions::default()).unwrap();
    let uses = "def main():\n    args = parse_args(sys.argv)\n    \
                # parse_args reads the flags; parse_args exits on --help";
    let app = vec![
        chunk_at(
            1,
            "parse_args",
            "def parse_args(argv):\n    return argv",
            0.1,
        ),
        chunk_at(5, "main", uses, 0.9),
    ];
    engine.index_file(&file("p", "app.py", app)).unwrap();
    let elsewhere = vec![chunk_at(1, "parse_args", "def parse_args(): pass", 0.2)];
    engine.index_file(&file("q", "cli.py", elsewhere)).unwrap();
    let found = |text: &str, project: Option<&str>, language: Option<&str>| -> Vec<String> {
        engine
            .search_code("default", text, Some(&QUERY), project, language, 5)
            .unwrap()
            .into_iter()
            .map(|(c, _)| format!("{}:{}", c.project_id, c.name.unwrap()))
            .collect()
    };
    assert_eq!(
        found("parse_args", Some("p"), None),
        ["p:parse_args", "p:main"]
    );
    assert_eq!(
        found("parse args", Some("p"), None),
        ["p:main", "p:parse_args"]
    );
    assert_eq!(
        found("where is parse_args() called", Some("p"), None)[0],
        "p:parse_args"
    );
    // Every project's definition comes first, best fused first; none
    // outside the filters.
    assert_eq!(
        found("parse_args", None, None),
        ["q:parse_args", "p:parse_args", "p:main"]
    );
    assert!(found("parse_args", None, Some("rust")).is_empty());
    let top = engine
        .search_code("default", "parse_args", None, Some("p"), None, 1)
        .unwrap();
    assert_eq!(top[0].0.name.as_deref(), Some("parse_args"));
    assert!(
        top[0].1.bm25.is_some(),
        "the definition is scored like any hit"
    );
}

#[test]
fn a_name_defined_in_too_many_places_ranks_like_any_word() {
    // 101 chunks define `handle`, far from the query; `dispatch` says the
    // word three times and sits next to it. A name that common points at no
    // definition in particular: the query ranks as usual.
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), &EngineOptions::default()).unwrap();
    let mut chunks: Vec<ChunkDraft> = (0..101)
        .map(|i| chunk_at(i * 4 + 1, "handle", "def handle(self): pass", 0.1))
        .collect();
    chunks.push(chunk_at(500, "dispatch", "handle handle handle", 0.9));
    engine
        .index_file(&file("p", "handlers.py", chunks))
        .unwrap();
    let first = |text: &str| {
        let hits = engine
            .search_code("default", text, Some(&QUERY), None, None, 3)
            .unwrap();
        hits[0].0.name.clone().unwrap()
    };
    assert_eq!(first("handle"), "dispatch");
}
