//! Nodes serving a subset of namespaces (docs/scale-out.md, "Tenants spread
//! over nodes"): a node started with a namespace range builds its replica
//! from PostgreSQL with only its namespaces' rows, follows only their log
//! entries and refuses the others; a node serving everything still gets
//! everything. And the schema step that gave the child tables their
//! namespace, migrated from the version before it.

mod pg_support;

use std::time::Duration;

use memcore::knowledge::save::SaveRequest;
use memcore::pg::capture::shipped_tables;
use memcore::pg::{self, NamespaceRange, Namespaces};
use memcore::{Engine, EngineOptions, NewMemory, SearchQuery};
use pg_support::drafts::{edit_turn, entity};
use postgres::Client;

/// Bucket 37 of 100: in 0-49.
const MINE: &str = "tenant-a";
/// Bucket 90 of 100: outside 0-49.
const OTHER: &str = "tenant-b";
const WAIT: Duration = Duration::from_secs(30);

fn open(url: &str, dir: &std::path::Path, namespaces: Namespaces) -> Engine {
    Engine::open_postgres(url, dir, namespaces, &EngineOptions::default()).unwrap()
}

fn low_half() -> Namespaces {
    Namespaces::Range(NamespaceRange::parse("0-49/100").unwrap())
}

/// A write of every kind into `namespace`, through `node`; the last seq.
fn fill(node: &Engine, namespace: &str) -> i64 {
    let mut memory = NewMemory::text(format!("{namespace} keeps a zebra"));
    memory.namespace = namespace.into();
    memory.embedding = Some(vec![1.0, 0.0, 0.0, 0.0]);
    node.written(|e| e.store_memory(memory.clone())).unwrap();
    let save = SaveRequest {
        namespace: namespace.into(),
        thread_id: "t1".into(),
        entities: vec![entity("Ada", "Grace"), entity("Grace", "Ada")],
        require_links: true,
    };
    node.written(|e| e.save_memory(&save)).unwrap();
    let turn = edit_turn(namespace);
    let written = node.written(|e| e.record_turn(&turn)).unwrap();
    written.position.expect("shipped").seq
}

/// Rows of `table` in PostgreSQL: of `namespace`, or all of them.
fn pg_count(pg: &mut Client, table: &str, namespace: Option<&str>) -> i64 {
    let has_namespace: bool = pg
        .query_one(
            "SELECT count(*) > 0 FROM information_schema.columns
             WHERE table_schema = 'memcore' AND table_name = $1 AND column_name = 'namespace'",
            &[&table],
        )
        .unwrap()
        .get(0);
    match namespace.filter(|_| has_namespace) {
        Some(ns) => pg.query_one(
            &format!("SELECT count(*) FROM memcore.\"{table}\" WHERE namespace = $1"),
            &[&ns],
        ),
        None => pg.query_one(&format!("SELECT count(*) FROM memcore.\"{table}\""), &[]),
    }
    .unwrap()
    .get(0)
}

fn replica_count(node: &Engine, table: &str) -> i64 {
    node.store()
        .reader()
        .unwrap()
        .query_row(&format!("SELECT count(*) FROM \"{table}\""), [], |r| {
            r.get(0)
        })
        .unwrap()
}

/// The contents of the memories `node` finds for "zebra" in `namespace`.
fn zebras(node: &Engine, namespace: &str) -> Vec<String> {
    let hits = node
        .search_text(&SearchQuery::memories(namespace, 10), "zebra")
        .unwrap();
    node.memories_for(&hits)
        .unwrap()
        .into_iter()
        .map(|(m, _)| m.content)
        .collect()
}

#[test]
fn a_range_node_copies_and_follows_only_its_namespaces() {
    let Some(url) = pg_support::fresh_database() else {
        return;
    };
    assert_eq!(pg::placement::bucket(MINE, 100), 37);
    assert_eq!(pg::placement::bucket(OTHER, 100), 90);
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let writer = open(&url, dirs[0].path(), Namespaces::All);
    fill(&writer, MINE);
    fill(&writer, OTHER);

    let subset = open(&url, dirs[1].path(), low_half());
    let full = open(&url, dirs[2].path(), Namespaces::All);
    let mut pg = pg::connect(&url).unwrap();
    let tables = shipped_tables(&subset.store().reader().unwrap()).unwrap();
    let mut compared = 0;
    // `meta` (store-wide settings, no namespace) is the node's own open's.
    for table in tables.iter().filter(|t| t.name != "meta") {
        let name = table.name.as_str();
        let mine = pg_count(&mut pg, name, Some(MINE));
        let all = pg_count(&mut pg, name, None);
        assert_eq!(
            replica_count(&subset, name),
            mine,
            "subset node, table {name}"
        );
        assert_eq!(replica_count(&full, name), all, "full node, table {name}");
        if mine > 0 {
            assert!(all > mine, "{name}: the other namespace has rows too");
            compared += 1;
        }
    }
    // memories, entities, observations, relations, conversations, turns,
    // documents, doc_versions, procedures, procedure_documents, ...
    assert!(compared >= 10, "only {compared} tables held rows");

    assert_eq!(zebras(&subset, MINE), vec![format!("{MINE} keeps a zebra")]);
    assert!(zebras(&subset, OTHER).is_empty());
    assert_eq!(zebras(&full, OTHER), vec![format!("{OTHER} keeps a zebra")]);

    // After the cut: the subset node follows its namespace only.
    let mut later = NewMemory::text("a later zebra");
    later.namespace = OTHER.into();
    let other_seq = writer
        .written(|e| e.store_memory(later.clone()))
        .unwrap()
        .position
        .unwrap()
        .seq;
    later.namespace = MINE.into();
    let mine_seq = writer
        .written(|e| e.store_memory(later.clone()))
        .unwrap()
        .position
        .unwrap()
        .seq;
    subset.wait_for_seq(MINE, mine_seq, WAIT).unwrap();
    full.wait_for_seq(OTHER, other_seq, WAIT).unwrap();
    assert_eq!(zebras(&subset, MINE).len(), 2);
    assert!(zebras(&subset, OTHER).is_empty());
    assert_eq!(zebras(&full, OTHER).len(), 2);
    assert_eq!(
        replica_count(&subset, "memories"),
        pg_count(&mut pg, "memories", Some(MINE))
    );
    let err = subset.wait_for_seq(OTHER, 1, WAIT).unwrap_err();
    assert_eq!(err.code(), "INVALID_PARAMETER");
    assert!(err.to_string().contains("does not serve"), "{err}");

    // Writes to another range's namespace are refused, as on a --namespaces node.
    let mut theirs = NewMemory::text("not mine");
    theirs.namespace = OTHER.into();
    let err = subset.store_memory(theirs).unwrap_err();
    assert_eq!(err.code(), "INVALID_PARAMETER");
    assert!(err.to_string().contains("does not serve"), "{err}");
}

#[test]
fn a_list_node_copies_only_its_namespaces_too() {
    let Some(url) = pg_support::fresh_database() else {
        return;
    };
    let dirs: Vec<_> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let writer = open(&url, dirs[0].path(), Namespaces::All);
    fill(&writer, MINE);
    fill(&writer, OTHER);
    let only = Namespaces::Only([OTHER.to_owned()].into());
    let node = open(&url, dirs[1].path(), only);
    let mut pg = pg::connect(&url).unwrap();
    for table in [
        "memories",
        "mentions",
        "turns",
        "procedures",
        "doc_versions",
    ] {
        assert_eq!(
            replica_count(&node, table),
            pg_count(&mut pg, table, Some(OTHER)),
            "{table}"
        );
    }
    assert!(zebras(&node, MINE).is_empty());
    assert_eq!(zebras(&node, OTHER).len(), 1);
}

#[test]
fn child_rows_written_now_carry_their_parents_namespace() {
    let Some(url) = pg_support::fresh_database() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let writer = open(&url, dir.path(), Namespaces::All);
    fill(&writer, MINE);
    fill(&writer, OTHER);
    let mut pg = pg::connect(&url).unwrap();
    for (table, key, parent) in pg::INHERITED_NAMESPACE {
        let wrong: i64 = pg
            .query_one(
                &format!(
                    "SELECT count(*) FROM memcore.{table} c JOIN memcore.{parent} p
                     ON p.id = c.{key} WHERE c.namespace IS DISTINCT FROM p.namespace"
                ),
                &[],
            )
            .unwrap()
            .get(0);
        assert_eq!(wrong, 0, "{table}");
    }
}

#[test]
fn version_2_gives_existing_child_rows_their_parents_namespace() {
    let Some(url) = pg_support::fresh_database() else {
        return;
    };
    let mut pg = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    assert_eq!(pg::migrate_to(&mut pg, 1).unwrap(), 1);
    // Rows as a version-1 memcore left them: children without a namespace.
    pg.batch_execute(
        "INSERT INTO memcore.memories (id, namespace, content, memory_type, source,
             confidence, importance, metadata, created_at, updated_at, accessed_at, valid_from)
         VALUES ('m1', 'tenant-a', 'x', 'fact', 'user', 1, 0.5, '{}', 1, 1, 1, 1),
                ('m2', 'tenant-b', 'y', 'fact', 'user', 1, 0.5, '{}', 1, 1, 1, 1);
         INSERT INTO memcore.entities (id, namespace, name, name_key, entity_type,
             importance, confidence, created_at, updated_at, valid_from)
         VALUES ('e1', 'tenant-a', 'Ada', 'ada', 'Person', 0.5, 1, 1, 1, 1),
                ('e2', 'tenant-b', 'Ada', 'ada', 'Person', 0.5, 1, 1, 1, 1);
         INSERT INTO memcore.mentions (memory_id, entity_id, explicit)
         VALUES ('m1', 'e1', 1), ('m2', 'e2', 1);
         INSERT INTO memcore.turns (id, namespace, conversation_id, turn_key, turn_index,
             user_text, created_at)
         VALUES ('t1', 'tenant-a', 'c1', 'k1', 0, 'hi', 1),
                ('t2', 'tenant-b', 'c1', 'k1', 0, 'hi', 1);
         INSERT INTO memcore.documents (id, namespace, canonical, created_at)
         VALUES ('d1', 'tenant-a', 'a.py', 1), ('d2', 'tenant-b', 'a.py', 1);
         INSERT INTO memcore.doc_versions (id, document_id, version, content_hash,
             provenance, created_at)
         VALUES ('v1', 'd1', 1, 'h', 'read', 1), ('v2', 'd2', 1, 'h', 'read', 1);
         INSERT INTO memcore.procedures (id, turn_id, position, tool, args, created_at)
         VALUES ('p1', 't1', 0, 'EDIT', '{}', 1), ('p2', 't2', 0, 'EDIT', '{}', 1);
         INSERT INTO memcore.procedure_documents (procedure_id, version_id)
         VALUES ('p1', 'v1'), ('p2', 'v2');
         INSERT INTO memcore.document_touches (document_id, turn_id, conversation_id, at)
         VALUES ('d1', 't1', 'c1', 1), ('d2', 't2', 'c1', 1);
         INSERT INTO memcore.document_conversations (document_id, conversation_id)
         VALUES ('d1', 'c1'), ('d2', 'c1');",
    )
    .unwrap();

    assert_eq!(pg::migrate(&mut pg).unwrap(), pg::schema_version());
    for (table, _, _) in pg::INHERITED_NAMESPACE {
        let namespaces: Vec<String> = pg
            .query(
                &format!("SELECT namespace FROM memcore.{table} ORDER BY namespace"),
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        assert_eq!(namespaces, ["tenant-a", "tenant-b"], "{table}");
    }
    // The column is required from now on: a writer that forgot it fails.
    let err = pg
        .execute(
            "INSERT INTO memcore.document_conversations (document_id, conversation_id)
             VALUES ('d1', 'c2')",
            &[],
        )
        .unwrap_err();
    let message = err.as_db_error().map(|e| e.message().to_owned());
    assert!(message.is_some_and(|m| m.contains("namespace")), "{err:?}");
}
