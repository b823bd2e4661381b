//! Shipping a replica's changed rows to PostgreSQL's record tables
//! (docs/scale-out.md): after real engine writes of every kind, each captured
//! and written in one PostgreSQL transaction with its log entry, the record
//! tables in PostgreSQL hold exactly the replica's rows.

mod pg_support;

use std::collections::BTreeMap;

use memcore::knowledge::save::SaveRequest;
use memcore::pg::capture::{Capture, ShippedTable};
use memcore::pg::{self, log, records};
use memcore::temporal::now_micros;
use memcore::{Engine, EngineOptions, MemoryPatch, NewMemory};
use pg_support::drafts::{edit_turn, entity};
use postgres::Client;
use postgres::types::Type;
use rusqlite::types::Value;

/// A replica engine with the capture on its writer, and PostgreSQL.
struct Node {
    _dir: tempfile::TempDir,
    engine: Engine,
    capture: Capture,
    pg: Client,
}

impl Node {
    fn open(url: &str) -> Node {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(dir.path(), &EngineOptions::default()).unwrap();
        let capture = Capture::install(&engine.store().writer().unwrap()).unwrap();
        // What the open wrote before the capture existed (store metadata).
        capture
            .record_all(&engine.store().writer().unwrap())
            .unwrap();
        Node {
            _dir: dir,
            engine,
            capture,
            pg: pg::connect(url).unwrap(),
        }
    }

    /// Ship what the last write changed: its rows and a log entry, one transaction.
    fn ship(&mut self) -> usize {
        let images = self
            .capture
            .take(&self.engine.store().writer().unwrap())
            .unwrap()
            .images;
        let mut tx = self.pg.transaction().unwrap();
        records::write_images(&mut tx, self.capture.tables(), &images).unwrap();
        log::append(&mut tx, "default", now_micros(), b"").unwrap();
        tx.commit().unwrap();
        images.len()
    }
}

/// A table's rows as comparable text, keyed by natural key, read from SQLite.
fn sqlite_rows(node: &Node, table: &ShippedTable) -> BTreeMap<String, Vec<String>> {
    let columns = shipped_columns(table);
    let conn = node.engine.store().writer().unwrap();
    let mut stmt = conn
        .prepare(&format!(
            "SELECT {} FROM \"{}\"",
            columns.join(", "),
            table.name
        ))
        .unwrap();
    let key_at = key_positions(table, &columns);
    let mut rows = stmt.query([]).unwrap();
    let mut out = BTreeMap::new();
    while let Some(row) = rows.next().unwrap() {
        let values: Vec<String> = (0..columns.len())
            .map(|i| match row.get::<_, Value>(i).unwrap() {
                Value::Null => "null".to_owned(),
                Value::Integer(v) => v.to_string(),
                Value::Real(v) => format!("{v:?}"),
                Value::Text(v) => v,
                Value::Blob(v) => format!("{v:?}"),
            })
            .collect();
        let key = key_at
            .iter()
            .map(|&i| values[i].clone())
            .collect::<Vec<_>>();
        out.insert(key.join("\u{1f}"), values);
    }
    out
}

/// The same from PostgreSQL, REAL columns' whole numbers printed as SQLite
/// prints integers (SQLite keeps 1.0 in a REAL column as the integer 1).
fn pg_rows(
    pg: &mut Client,
    table: &ShippedTable,
    sqlite: &BTreeMap<String, Vec<String>>,
) -> BTreeMap<String, Vec<String>> {
    let columns = shipped_columns(table);
    let key_at = key_positions(table, &columns);
    let rows = pg
        .query(
            &format!(
                "SELECT {} FROM memcore.\"{}\"",
                columns.join(", "),
                table.name
            ),
            &[],
        )
        .unwrap();
    let mut out = BTreeMap::new();
    for row in rows {
        let values: Vec<String> = row
            .columns()
            .iter()
            .enumerate()
            .map(|(i, column)| match *column.type_() {
                Type::INT8 => row.get::<_, Option<i64>>(i).map(|v| v.to_string()),
                Type::FLOAT8 => row.get::<_, Option<f64>>(i).map(|v| format!("{v:?}")),
                Type::TEXT => row.get::<_, Option<String>>(i),
                Type::BYTEA => row.get::<_, Option<Vec<u8>>>(i).map(|v| format!("{v:?}")),
                ref other => panic!("unexpected PostgreSQL type {other}"),
            })
            .map(|v| v.unwrap_or_else(|| "null".to_owned()))
            .collect();
        let key = key_at
            .iter()
            .map(|&i| values[i].clone())
            .collect::<Vec<_>>();
        let key = key.join("\u{1f}");
        // Align REAL columns holding whole numbers with SQLite's integer form.
        let values = match sqlite.get(&key) {
            Some(expected) => values
                .into_iter()
                .zip(expected)
                .map(|(got, want)| {
                    if got.ends_with(".0") && got.trim_end_matches(".0") == want {
                        want.clone()
                    } else {
                        got
                    }
                })
                .collect(),
            None => values,
        };
        out.insert(key, values);
    }
    out
}

fn shipped_columns(table: &ShippedTable) -> Vec<String> {
    table
        .columns
        .iter()
        .filter(|c| *c != "doc_key" && *c != "checksum")
        .map(|c| format!("\"{c}\""))
        .collect()
}

fn key_positions(table: &ShippedTable, columns: &[String]) -> Vec<usize> {
    table
        .key
        .iter()
        .map(|k| {
            columns
                .iter()
                .position(|c| *c == format!("\"{k}\""))
                .unwrap()
        })
        .collect()
}

fn assert_same_records(node: &mut Node) {
    for table in node.capture.tables().to_vec() {
        let expected = sqlite_rows(node, &table);
        let actual = pg_rows(&mut node.pg, &table, &expected);
        assert_eq!(actual, expected, "table {}", table.name);
    }
}

#[test]
fn after_every_kind_of_write_postgresql_holds_the_replicas_records() {
    let Some(url) = pg_support::fresh_database() else {
        return;
    };
    let mut node = Node::open(&url);
    assert!(node.ship() > 0, "the open's own rows (meta) ship too");
    assert_same_records(&mut node);

    let mut seattle = NewMemory::text("User lives in Seattle");
    seattle.embedding = Some(vec![1.0, 0.0, 0.0, 0.0]);
    seattle.metadata = Some(r#"{"source": "chat"}"#.into());
    let seattle = node.engine.store_memory(seattle).unwrap();
    node.ship();
    let mut austin = NewMemory::text("User moved to Austin");
    austin.embedding = Some(vec![0.0, 1.0, 0.0, 0.0]);
    let austin = node.engine.store_memory(austin).unwrap();
    node.ship();
    node.engine
        .supersede_memory("default", &seattle.id, &austin.id)
        .unwrap();
    node.ship();
    let patch = MemoryPatch {
        importance: Some(0.9),
        ..MemoryPatch::default()
    };
    node.engine
        .update_memory("default", &austin.id, patch)
        .unwrap();
    node.ship();
    assert_same_records(&mut node);

    node.engine
        .save_memory(&SaveRequest {
            namespace: "default".into(),
            thread_id: "t1".into(),
            entities: vec![
                entity("Ada", "Grace"),
                entity("Grace", "Ada"),
                entity("Linus", "Ada"),
            ],
            require_links: true,
        })
        .unwrap();
    node.ship();
    node.engine.record_turn(&edit_turn("default")).unwrap();
    node.ship();
    assert_same_records(&mut node);

    // Deletes, and the rows the foreign keys take with them on both sides.
    node.engine
        .delete_entities("default", &["Ada".to_owned()])
        .unwrap();
    node.ship();
    node.engine.delete_memory("default", &seattle.id).unwrap();
    node.ship();
    assert_same_records(&mut node);

    // Not a comparison of empty tables.
    let mut count = |table: &str| -> i64 {
        node.pg
            .query_one(&format!("SELECT count(*) FROM memcore.{table}"), &[])
            .unwrap()
            .get(0)
    };
    assert_eq!(count("memories"), 1, "Austin remains");
    assert_eq!(count("entities"), 2, "Grace and Linus remain");
    assert_eq!(count("observations"), 2);
    assert_eq!(count("relations"), 0, "every relation touched Ada");
    assert_eq!(count("turns"), 1);
    assert_eq!(count("procedures"), 1);
    assert_eq!(count("doc_versions"), 1);
    assert_eq!(count("procedure_documents"), 1);
    assert!(count("meta") >= 2);
}

#[test]
fn a_value_that_does_not_fit_its_column_is_refused_by_name() {
    let Some(url) = pg_support::fresh_database() else {
        return;
    };
    let mut node = Node::open(&url);
    node.ship();
    node.engine
        .store()
        .write(|tx| {
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ('weird', x'00ff')",
                [],
            )?;
            Ok(())
        })
        .unwrap();
    let images = node
        .capture
        .take(&node.engine.store().writer().unwrap())
        .unwrap()
        .images;
    let mut tx = node.pg.transaction().unwrap();
    let err = records::write_images(&mut tx, node.capture.tables(), &images).unwrap_err();
    assert_eq!(err.code(), "INVALID_PARAMETER");
    assert!(err.to_string().contains("meta.value"), "{err}");
}
