//! The capture of the rows a write changed on a node's SQLite replica
//! (docs/scale-out.md, "Collecting the changed rows"), through the engine's
//! real write paths: every table but the op log is covered, each changed row
//! comes back once in its final state, cascades included, and a rolled-back
//! write leaves nothing.

use memcore::error::Error;
use memcore::knowledge::save::{EntityDraft, RelationDraft, SaveRequest};
use memcore::pg::capture::{Capture, RowImage};
use memcore::store::oplog::Action;
use memcore::{Engine, EngineOptions, MemoryPatch, NewMemory};
use rusqlite::types::Value;

fn open() -> (tempfile::TempDir, Engine, Capture) {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), &EngineOptions::default()).unwrap();
    let capture = Capture::install(&engine.store().writer().unwrap()).unwrap();
    (dir, engine, capture)
}

fn take(engine: &Engine, capture: &Capture) -> Vec<RowImage> {
    capture
        .take(&engine.store().writer().unwrap())
        .unwrap()
        .images
}

fn of<'a>(images: &'a [RowImage], table: &str) -> Vec<&'a RowImage> {
    images.iter().filter(|i| i.table == table).collect()
}

/// The value of `column` in an image's row.
fn value<'a>(capture: &Capture, image: &'a RowImage, column: &str) -> &'a Value {
    let table = capture
        .tables()
        .iter()
        .find(|t| t.name == image.table)
        .unwrap();
    let at = table.columns.iter().position(|c| c == column).unwrap();
    &image.row.as_ref().expect("a present row")[at]
}

fn text(s: &str) -> Value {
    Value::Text(s.to_owned())
}

#[test]
fn every_table_but_the_op_log_is_shipped_by_a_natural_key() {
    let (_dir, engine, capture) = open();
    let writer = engine.store().writer().unwrap();
    let all: Vec<String> = writer
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let shipped: Vec<&str> = capture.tables().iter().map(|t| t.name.as_str()).collect();
    let mut expected: Vec<&str> = all
        .iter()
        .map(String::as_str)
        .filter(|t| *t != "oplog")
        .collect();
    expected.sort_unstable();
    let mut sorted = shipped.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, expected);

    let key = |name: &str| {
        capture
            .tables()
            .iter()
            .find(|t| t.name == name)
            .unwrap()
            .key
            .clone()
    };
    assert_eq!(key("memories"), ["id"]);
    assert_eq!(key("mentions"), ["memory_id", "entity_id"]);
    assert_eq!(key("code_files"), ["namespace", "project_id", "path"]);
}

#[test]
fn a_table_without_a_natural_key_is_refused_by_name() {
    let (_dir, engine, _capture) = open();
    let writer = engine.store().writer().unwrap();
    writer.execute_batch("CREATE TABLE loose (a TEXT)").unwrap();
    let err = Capture::install(&writer).unwrap_err();
    assert_eq!(err.code(), "INVALID_PARAMETER");
    assert!(err.to_string().contains("Table loose"), "{err}");
}

#[test]
fn a_memory_write_ships_its_row_in_its_final_state_and_never_the_op_log() {
    let (_dir, engine, capture) = open();
    let stored = engine
        .store_memory(NewMemory::text("User lives in Seattle"))
        .unwrap();
    let changes = capture.take(&engine.store().writer().unwrap()).unwrap();
    let ops: Vec<_> = changes
        .ops
        .iter()
        .map(|op| (op.action, op.record_id.as_str()))
        .collect();
    assert_eq!(ops, [(Action::Upsert, stored.id.as_str())]);
    let images = changes.images;
    assert!(of(&images, "oplog").is_empty());
    let memories = of(&images, "memories");
    assert_eq!(memories.len(), 1);
    assert_eq!(memories[0].key, [text(&stored.id)]);
    assert_eq!(
        value(&capture, memories[0], "content"),
        &text("User lives in Seattle")
    );

    let patch = MemoryPatch {
        content: Some("User lives in Austin".into()),
        ..MemoryPatch::default()
    };
    engine.update_memory("default", &stored.id, patch).unwrap();
    let images = take(&engine, &capture);
    let memories = of(&images, "memories");
    assert_eq!(
        memories.len(),
        1,
        "one image per row, however often it changed"
    );
    assert_eq!(
        value(&capture, memories[0], "content"),
        &text("User lives in Austin")
    );

    engine.delete_memory("default", &stored.id).unwrap();
    let images = take(&engine, &capture);
    let memories = of(&images, "memories");
    assert_eq!(memories.len(), 1);
    assert_eq!(memories[0].row, None);
    assert!(
        take(&engine, &capture).is_empty(),
        "taken images are forgotten"
    );
}

#[test]
fn a_graph_write_and_the_rows_its_deletes_cascade_to_are_shipped() {
    let (_dir, engine, capture) = open();
    let entity = |name: &str, target: &str| EntityDraft {
        name: name.into(),
        entity_type: "Person".into(),
        observations: vec![format!("{name} writes Rust daily")],
        relations: vec![RelationDraft {
            target: target.into(),
            relation_type: "knows".into(),
            importance: None,
        }],
        ..EntityDraft::default()
    };
    engine
        .save_memory(&SaveRequest {
            namespace: "default".into(),
            thread_id: "t1".into(),
            entities: vec![entity("Ada", "Grace"), entity("Grace", "Ada")],
            require_links: true,
        })
        .unwrap();
    let images = take(&engine, &capture);
    assert_eq!(of(&images, "entities").len(), 2);
    assert_eq!(of(&images, "observations").len(), 2);
    assert_eq!(of(&images, "relations").len(), 2);
    assert!(images.iter().all(|i| i.row.is_some()));

    engine
        .delete_entities("default", &["Ada".to_owned()])
        .unwrap();
    let images = take(&engine, &capture);
    let gone = |table: &str| {
        of(&images, table)
            .iter()
            .filter(|i| i.row.is_none())
            .count()
    };
    assert_eq!(gone("entities"), 1);
    // Ada's observation and both relations (from and to her) go with her,
    // whether the engine deletes them or the foreign keys cascade.
    assert_eq!(gone("observations"), 1);
    assert_eq!(gone("relations"), 2);

    // Rows removed by the foreign keys alone, with no statement naming them.
    engine
        .store()
        .write(|tx| {
            tx.execute("DELETE FROM entities WHERE name = 'Grace'", [])?;
            Ok(())
        })
        .unwrap();
    let images = take(&engine, &capture);
    let gone = |table: &str| {
        of(&images, table)
            .iter()
            .filter(|i| i.row.is_none())
            .count()
    };
    assert_eq!((gone("entities"), gone("observations")), (1, 1));
}

#[test]
fn a_rolled_back_write_ships_nothing_and_a_moved_key_ships_both_keys() {
    let (_dir, engine, capture) = open();
    let failed: memcore::Result<()> = engine.store().write(|tx| {
        tx.execute("INSERT INTO meta (key, value) VALUES ('probe', '1')", [])?;
        Err(Error::invalid("probe", "roll back"))
    });
    assert!(failed.is_err());
    assert!(take(&engine, &capture).is_empty());

    engine
        .store()
        .write(|tx| {
            tx.execute("INSERT INTO meta (key, value) VALUES ('before', '1')", [])?;
            Ok(())
        })
        .unwrap();
    take(&engine, &capture);
    engine
        .store()
        .write(|tx| {
            tx.execute("UPDATE meta SET key = 'after' WHERE key = 'before'", [])?;
            Ok(())
        })
        .unwrap();
    let images = take(&engine, &capture);
    assert_eq!(images.len(), 2);
    assert_eq!(
        (&images[0].key, &images[0].row),
        (&vec![text("before")], &None)
    );
    assert_eq!(images[1].key, [text("after")]);
    assert_eq!(value(&capture, &images[1], "value"), &text("1"));
}
