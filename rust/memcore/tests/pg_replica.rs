//! Two nodes through PostgreSQL (docs/scale-out.md, design (b)): node A's
//! writes are captured on its replica and shipped (record rows + a log entry,
//! one PostgreSQL transaction); node B follows the log and applies each entry
//! to its own replica. B then holds A's records with doc keys of its own, and
//! an engine opened on B's replica finds what A wrote.

mod pg_support;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use memcore::knowledge::save::{EntityDraft, RelationDraft, SaveRequest};
use memcore::pg::capture::{Capture, ShippedTable};
use memcore::pg::entry::Entry;
use memcore::pg::{self, FollowOptions, Follower, LogEntry, Namespaces, log, records, replica};
use memcore::store::{Store, StoreOptions};
use memcore::temporal::now_micros;
use memcore::{Engine, EngineOptions, MemoryPatch, NewMemory, SearchQuery};
use postgres::Client;
use rusqlite::Connection;
use rusqlite::types::Value;

const NAMESPACE: &str = "default";
const WAIT: Duration = Duration::from_secs(30);

/// The writing node: an engine whose writer connection captures changes.
struct Writer {
    engine: Engine,
    capture: Capture,
    pg: Client,
    records: records::RecordWriter,
}

impl Writer {
    /// Ship the last write: its rows and its entry in one transaction; its seq.
    fn ship(&mut self) -> i64 {
        let changes = self
            .capture
            .take(&self.engine.store().writer().unwrap())
            .unwrap();
        let entry = Entry::from_changes(&changes, self.capture.tables()).unwrap();
        let mut tx = self.pg.transaction().unwrap();
        self.records
            .write_images(&mut tx, self.capture.tables(), &changes.images)
            .unwrap();
        let seq = log::append(&mut tx, NAMESPACE, now_micros(), &entry.encode()).unwrap();
        tx.commit().unwrap();
        seq
    }
}

/// Node B: a follower applying entries to the replica in `dir`, from the
/// positions the replica recorded.
fn follow_into(url: &str, dir: &Path) -> Follower {
    let store = Store::open(dir, StoreOptions::default()).unwrap();
    let positions = {
        let writer = store.writer().unwrap();
        replica::prepare(&writer).unwrap();
        replica::positions(&writer).unwrap()
    };
    Follower::start(
        url,
        Namespaces::All,
        positions,
        Box::new(move |logged: &LogEntry| {
            store.write(|tx| replica::apply_logged(tx, logged))?;
            Ok(())
        }),
        FollowOptions::default(),
    )
    .unwrap()
}

fn oplog_len(conn: &Connection) -> i64 {
    conn.query_row("SELECT count(*) FROM oplog", [], |r| r.get(0))
        .unwrap()
}

/// A table's rows less the node-local doc keys, by natural key.
fn rows(conn: &Connection, table: &ShippedTable) -> BTreeMap<String, Vec<Value>> {
    let columns: Vec<String> = table
        .columns
        .iter()
        .filter(|c| *c != "doc_key")
        .map(|c| format!("\"{c}\""))
        .collect();
    let key_at: Vec<usize> = table
        .key
        .iter()
        .map(|k| {
            columns
                .iter()
                .position(|c| *c == format!("\"{k}\""))
                .unwrap()
        })
        .collect();
    let mut stmt = conn
        .prepare(&format!(
            "SELECT {} FROM \"{}\"",
            columns.join(", "),
            table.name
        ))
        .unwrap();
    let mut found = stmt.query([]).unwrap();
    let mut out = BTreeMap::new();
    while let Some(row) = found.next().unwrap() {
        let values: Vec<Value> = (0..columns.len()).map(|i| row.get(i).unwrap()).collect();
        let key: Vec<String> = key_at.iter().map(|&i| format!("{:?}", values[i])).collect();
        out.insert(key.join("|"), values);
    }
    out
}

fn entity(name: &str, target: &str) -> EntityDraft {
    EntityDraft {
        name: name.into(),
        entity_type: "Person".into(),
        observations: vec![format!("{name} writes Rust daily")],
        relations: vec![RelationDraft {
            target: target.into(),
            relation_type: "knows".into(),
            importance: None,
        }],
        ..EntityDraft::default()
    }
}

#[test]
fn a_write_on_one_node_is_applied_and_searchable_on_another() {
    let Some(url) = pg_support::fresh_database() else {
        return;
    };
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let engine = Engine::open(dir_a.path(), &EngineOptions::default()).unwrap();
    let capture = Capture::install(&engine.store().writer().unwrap()).unwrap();
    let mut a = Writer {
        engine,
        capture,
        pg: pg::connect(&url).unwrap(),
        records: records::RecordWriter::default(),
    };
    let follower = follow_into(&url, dir_b.path());

    let mut seattle = NewMemory::text("User lives in Seattle");
    seattle.embedding = Some(vec![1.0, 0.0, 0.0, 0.0]);
    let seattle = a.engine.store_memory(seattle).unwrap();
    a.ship();
    let mut austin = NewMemory::text("User moved to Austin");
    austin.embedding = Some(vec![0.0, 1.0, 0.0, 0.0]);
    let austin = a.engine.store_memory(austin).unwrap();
    a.ship();
    a.engine
        .supersede_memory(NAMESPACE, &seattle.id, &austin.id)
        .unwrap();
    a.ship();
    // A content change: a new searchable version on each node, under its own key.
    let patch = MemoryPatch {
        content: Some("User moved to Austin, Texas".into()),
        embedding: Some(vec![0.0, 0.9, 0.1, 0.0]),
        ..MemoryPatch::default()
    };
    a.engine
        .update_memory(NAMESPACE, &austin.id, patch)
        .unwrap();
    a.ship();
    a.engine
        .save_memory(&SaveRequest {
            namespace: NAMESPACE.into(),
            thread_id: "t1".into(),
            entities: vec![entity("Ada", "Grace"), entity("Grace", "Ada")],
            require_links: true,
        })
        .unwrap();
    a.ship();
    let mut zebra = NewMemory::text("The zebra crossed the road");
    zebra.embedding = Some(vec![0.0, 0.0, 1.0, 0.0]);
    let zebra = a.engine.store_memory(zebra).unwrap();
    a.ship();
    a.engine.delete_memory(NAMESPACE, &zebra.id).unwrap();
    let last = a.ship();

    if let Err(e) = follower.wait_for(NAMESPACE, last, WAIT) {
        panic!(
            "{e}; the follower's last error: {:?}",
            follower.last_error()
        );
    }
    drop(follower);

    // B holds A's records (doc keys aside; B's store metadata of its own aside).
    let b_store = Store::open(dir_b.path(), StoreOptions::default()).unwrap();
    {
        let a_conn = a.engine.store().reader().unwrap();
        let b_conn = b_store.reader().unwrap();
        for table in a.capture.tables().iter().filter(|t| t.name != "meta") {
            assert_eq!(
                rows(&b_conn, table),
                rows(&a_conn, table),
                "table {}",
                table.name
            );
        }
        // Each doc key is B's own: the seq of the record's latest upsert in B's log.
        let mismatched: i64 = b_conn
            .query_row(
                "SELECT count(*) FROM memories m
                 WHERE m.doc_key IS NOT (SELECT max(seq) FROM oplog o
                                         WHERE o.record_id = m.id AND o.action = 1)",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(mismatched, 0);
    }
    drop(b_store);

    // An engine opened on B's replica indexes what it applied, as after any write.
    let b = Engine::open(dir_b.path(), &EngineOptions::default()).unwrap();
    let query = SearchQuery::memories(NAMESPACE, 5);
    let contents = |hits: Vec<memcore::Hit>| -> Vec<String> {
        b.memories_for(&hits)
            .unwrap()
            .into_iter()
            .map(|(m, _)| m.content)
            .collect()
    };
    let texts = |word: &str| contents(b.search_text(&query, word).unwrap());
    assert_eq!(texts("Texas"), ["User moved to Austin, Texas"]);
    assert!(texts("zebra").is_empty(), "the delete was applied");
    let nearest = contents(b.search_vector(&query, &[0.0, 0.9, 0.1, 0.0]).unwrap());
    assert_eq!(
        nearest.first().map(String::as_str),
        Some("User moved to Austin, Texas")
    );
    let old = b.get_memory(NAMESPACE, &seattle.id).unwrap();
    assert_eq!(old.superseded_by.as_deref(), Some(austin.id.as_str()));
}

#[test]
fn a_restarted_node_applies_only_the_tail_and_each_entry_once() {
    let Some(url) = pg_support::fresh_database() else {
        return;
    };
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let engine = Engine::open(dir_a.path(), &EngineOptions::default()).unwrap();
    let capture = Capture::install(&engine.store().writer().unwrap()).unwrap();
    let mut a = Writer {
        engine,
        capture,
        pg: pg::connect(&url).unwrap(),
        records: records::RecordWriter::default(),
    };
    let write = |a: &mut Writer, text: &str| {
        a.engine.store_memory(NewMemory::text(text)).unwrap();
        a.ship()
    };
    write(&mut a, "first fact");
    let second = write(&mut a, "second fact");
    let follower = follow_into(&url, dir_b.path());
    follower.wait_for(NAMESPACE, second, WAIT).unwrap();
    drop(follower);

    // B is down while A goes on writing.
    write(&mut a, "third fact");
    let last = write(&mut a, "fourth fact");
    let follower = follow_into(&url, dir_b.path());
    assert_eq!(
        follower.applied(NAMESPACE),
        second,
        "restarted at its recorded position"
    );
    follower.wait_for(NAMESPACE, last, WAIT).unwrap();
    drop(follower);

    let b = Store::open(dir_b.path(), StoreOptions::default()).unwrap();
    let b_writer = b.writer().unwrap();
    let a_reader = a.engine.store().reader().unwrap();
    assert_eq!(
        oplog_len(&b_writer),
        oplog_len(&a_reader),
        "no op applied twice"
    );
    let memories = a
        .capture
        .tables()
        .iter()
        .find(|t| t.name == "memories")
        .unwrap();
    assert_eq!(rows(&b_writer, memories), rows(&a_reader, memories));
    assert_eq!(replica::positions(&b_writer).unwrap()[NAMESPACE], last);

    // Entries already held are skipped; one past the next is refused.
    let mut pg = pg::connect(&url).unwrap();
    let logged = log::read_after(&mut pg, NAMESPACE, 0, 10).unwrap();
    assert!(!replica::apply_logged(&b_writer, &logged[1]).unwrap());
    assert_eq!(oplog_len(&b_writer), oplog_len(&a_reader));
    let mut ahead = logged[0].clone();
    ahead.seq = last + 2;
    let err = replica::apply_logged(&b_writer, &ahead).unwrap_err();
    assert_eq!(err.code(), "STORAGE_ERROR");
    assert!(err.to_string().contains("missing"), "{err}");
}

#[test]
fn a_new_node_builds_its_replica_from_postgresql_then_follows_the_tail() {
    let Some(url) = pg_support::fresh_database() else {
        return;
    };
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let engine = Engine::open(dir_a.path(), &EngineOptions::default()).unwrap();
    let capture = Capture::install(&engine.store().writer().unwrap()).unwrap();
    // A store made on SQLite: what it held before the capture ships first.
    capture
        .record_all(&engine.store().writer().unwrap())
        .unwrap();
    let mut a = Writer {
        engine,
        capture,
        pg: pg::connect(&url).unwrap(),
        records: records::RecordWriter::default(),
    };
    a.ship();
    let mut fact = NewMemory::text("User lives in Austin");
    fact.embedding = Some(vec![0.0, 1.0, 0.0, 0.0]);
    a.engine.store_memory(fact).unwrap();
    a.ship();
    a.engine
        .save_memory(&SaveRequest {
            namespace: NAMESPACE.into(),
            thread_id: "t1".into(),
            entities: vec![entity("Ada", "Grace"), entity("Grace", "Ada")],
            require_links: true,
        })
        .unwrap();
    let head = a.ship();

    let positions = {
        let b = Store::open(dir_b.path(), StoreOptions::default()).unwrap();
        let mut pg = pg::connect(&url).unwrap();
        let positions = b.write(|tx| pg::bootstrap::bootstrap(&mut pg, tx)).unwrap();
        let b_reader = b.reader().unwrap();
        let a_reader = a.engine.store().reader().unwrap();
        for table in a.capture.tables() {
            assert_eq!(
                rows(&b_reader, table),
                rows(&a_reader, table),
                "table {}",
                table.name
            );
        }
        // Only a new replica is built this way.
        let again = b.write(|tx| pg::bootstrap::bootstrap(&mut pg, tx));
        assert_eq!(again.unwrap_err().code(), "INVALID_PARAMETER");
        positions
    };
    assert_eq!(positions[NAMESPACE], head);

    // Writes after the cut arrive through the log, from the heads it read.
    a.engine
        .store_memory(NewMemory::text("User adopted a zebra"))
        .unwrap();
    let last = a.ship();
    let follower = follow_into(&url, dir_b.path());
    follower.wait_for(NAMESPACE, last, WAIT).unwrap();
    drop(follower);

    let b = Engine::open(dir_b.path(), &EngineOptions::default()).unwrap();
    let query = SearchQuery::memories(NAMESPACE, 5);
    for word in ["Austin", "zebra"] {
        let hits = b.search_text(&query, word).unwrap();
        assert_eq!(b.memories_for(&hits).unwrap().len(), 1, "{word}");
    }
    let nearest = b.search_vector(&query, &[0.0, 1.0, 0.0, 0.0]).unwrap();
    let (found, _) = &b.memories_for(&nearest).unwrap()[0];
    assert_eq!(found.content, "User lives in Austin");
}
