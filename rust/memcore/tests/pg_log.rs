//! The PostgreSQL schema and operation log against a real server
//! (docs/scale-out.md): migrations, the per-namespace order, and a follower
//! that sees every committed entry exactly once and in order, with bounded
//! `min_seq` waits. Each test takes a fresh database of the throw-away
//! cluster in `pg_support`.

mod pg_support;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use memcore::pg::{self, FollowOptions, Follower, LogEntry, Namespaces, log};
use memcore::store::{Store, StoreOptions};
use memcore::temporal::now_micros;
use postgres::Client;

/// Generous: the machine is shared; a pass never depends on it.
const WAIT: Duration = Duration::from_secs(30);

/// A fresh database, or `None` (the test returns) when PostgreSQL is absent outside CI.
fn database() -> Option<String> {
    pg_support::fresh_database()
}

fn append_one(client: &mut Client, namespace: &str, body: &[u8]) -> i64 {
    let mut tx = client.transaction().unwrap();
    let seq = log::append(&mut tx, namespace, now_micros(), body).unwrap();
    tx.commit().unwrap();
    seq
}

/// A follower of every namespace that records what it applies.
fn recording_follower(
    url: &str,
    namespaces: Namespaces,
    positions: HashMap<String, i64>,
) -> (Follower, Arc<Mutex<Vec<LogEntry>>>) {
    let applied = Arc::new(Mutex::new(Vec::new()));
    let sink = applied.clone();
    let follower = Follower::start(
        url,
        namespaces,
        positions,
        Box::new(move |entry: &LogEntry| {
            sink.lock().unwrap().push(entry.clone());
            Ok(())
        }),
        FollowOptions::default(),
    )
    .unwrap();
    (follower, applied)
}

fn seqs_of(entries: &[LogEntry], namespace: &str) -> Vec<i64> {
    entries
        .iter()
        .filter(|e| e.namespace == namespace)
        .map(|e| e.seq)
        .collect()
}

/// Poll `done` until it holds or [`WAIT`] passes.
fn eventually(mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}

#[test]
fn connecting_creates_the_schema_once_and_records_its_version() {
    let Some(url) = database() else { return };
    let mut first = pg::connect(&url).unwrap();
    drop(pg::connect(&url).unwrap());
    let versions: Vec<i32> = first
        .query(
            "SELECT version FROM memcore.schema_version ORDER BY version",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(versions, (1..=pg::schema_version()).collect::<Vec<_>>());
    let tables: i64 = first
        .query_one(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'memcore'",
            &[],
        )
        .unwrap()
        .get(0);
    // schema_version, log_heads, log and the 19 record tables.
    assert_eq!(tables, 22);
}

#[test]
fn nodes_connecting_at_once_migrate_once() {
    let Some(url) = database() else { return };
    let nodes: Vec<_> = (0..4)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || pg::connect(&url).map(drop))
        })
        .collect();
    for node in nodes {
        node.join().unwrap().unwrap();
    }
    let mut client = pg::connect(&url).unwrap();
    let steps: i64 = client
        .query_one("SELECT count(*) FROM memcore.schema_version", &[])
        .unwrap()
        .get(0);
    assert_eq!(steps, i64::from(pg::schema_version()));
}

#[test]
fn a_database_migrated_by_a_newer_memcore_is_refused() {
    let Some(url) = database() else { return };
    let mut client = pg::connect(&url).unwrap();
    client
        .execute(
            "INSERT INTO memcore.schema_version (version) VALUES ($1)",
            &[&(pg::schema_version() + 1)],
        )
        .unwrap();
    let err = pg::connect(&url).map(drop).unwrap_err();
    assert_eq!(err.code(), "INVALID_PARAMETER");
    assert!(err.to_string().contains("Upgrade memcore"), "{err}");
}

#[test]
fn bad_urls_and_unreachable_servers_say_what_is_wrong() {
    let err = pg::connect("postgresql://postgres@127.0.0.1:notaport/x")
        .map(drop)
        .unwrap_err();
    assert_eq!(err.code(), "INVALID_PARAMETER");
    assert!(err.to_string().contains("postgresql://"), "{err}");

    // A port nobody listens on: refused at once, with the reason, not "db error".
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = pg::connect(&format!("postgresql://postgres@127.0.0.1:{closed}/x"))
        .map(drop)
        .unwrap_err();
    assert_eq!(err.code(), "STORAGE_ERROR");
    assert!(err.to_string().contains("refused"), "{err}");
}

#[test]
fn the_record_tables_mirror_the_sqlite_store() {
    let Some(url) = database() else { return };
    let mut client = pg::connect(&url).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    let sqlite = store.reader().unwrap();

    // (table, column, type, not null) of the SQLite store, less what stays
    // node-local: the op log (PostgreSQL has its own) and doc keys.
    let mut expected = BTreeSet::new();
    let tables: Vec<String> = sqlite
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .filter(|t: &String| t != "oplog")
        .collect();
    for table in tables {
        let mut stmt = sqlite
            .prepare(&format!(
                "SELECT name, type, \"notnull\" FROM pragma_table_info('{table}')"
            ))
            .unwrap();
        let columns = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, bool>(2)?,
                ))
            })
            .unwrap();
        for column in columns {
            let (name, declared, not_null) = column.unwrap();
            // Node-local: doc keys and the checksums guarding its file.
            if name == "doc_key" || name == "checksum" {
                continue;
            }
            let pg_type = match declared.as_str() {
                "INTEGER" => "bigint",
                "REAL" => "double precision",
                "TEXT" => "text",
                "BLOB" => "bytea",
                other => panic!("{table}.{name}: no PostgreSQL type for SQLite's {other}"),
            };
            expected.insert((table.clone(), name, pg_type.to_owned(), not_null));
        }
    }
    // The child tables' namespace, which a replica knows from the parent.
    for (table, _, _) in pg::INHERITED_NAMESPACE {
        expected.insert(((*table).to_owned(), "namespace".into(), "text".into(), true));
    }
    let actual: BTreeSet<(String, String, String, bool)> = client
        .query(
            "SELECT table_name::text, column_name::text, data_type::text, is_nullable = 'NO'
             FROM information_schema.columns
             WHERE table_schema = 'memcore'
               AND table_name NOT IN ('log', 'log_heads', 'schema_version')",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect();
    assert_eq!(
        actual.symmetric_difference(&expected).collect::<Vec<_>>(),
        Vec::<&(String, String, String, bool)>::new(),
        "columns only in one of the two schemas: a SQLite migration needs its \
         PostgreSQL twin in rust/memcore/src/pg/schema.rs"
    );
}

#[test]
fn each_namespace_counts_from_one_and_a_rollback_leaves_no_gap() {
    let Some(url) = database() else { return };
    let mut client = pg::connect(&url).unwrap();
    assert_eq!(append_one(&mut client, "a", b"a1"), 1);
    assert_eq!(append_one(&mut client, "b", b"b1"), 1);
    assert_eq!(append_one(&mut client, "a", b"a2"), 2);

    let mut tx = client.transaction().unwrap();
    assert_eq!(
        log::append(&mut tx, "a", now_micros(), b"rolled back").unwrap(),
        3
    );
    tx.rollback().unwrap();
    assert_eq!(append_one(&mut client, "a", b"a3"), 3);

    let entries = log::read_after(&mut client, "a", 0, 100).unwrap();
    let bodies: Vec<&[u8]> = entries.iter().map(|e| e.entry.as_slice()).collect();
    assert_eq!(bodies, [b"a1".as_slice(), b"a2", b"a3"]);
    assert!(entries.iter().all(|e| e.format == pg::FORMAT));
    assert_eq!(log::read_after(&mut client, "a", 1, 1).unwrap()[0].seq, 2);
    let heads: BTreeMap<String, i64> = log::heads(&mut client, None).unwrap().into_iter().collect();
    assert_eq!(heads, BTreeMap::from([("a".into(), 3), ("b".into(), 1)]));
}

#[test]
fn a_missing_entry_is_reported_not_skipped() {
    let Some(url) = database() else { return };
    let mut client = pg::connect(&url).unwrap();
    for body in [b"1", b"2", b"3"] {
        append_one(&mut client, "ns", body);
    }
    client
        .execute("DELETE FROM memcore.log WHERE seq = 2", &[])
        .unwrap();
    let err = log::read_after(&mut client, "ns", 0, 10).unwrap_err();
    assert_eq!(err.code(), "STORAGE_ERROR");
    assert!(err.to_string().contains("jumps from seq 1 to 3"), "{err}");
}

#[test]
fn a_locked_namespace_holds_other_writers_until_commit() {
    let Some(url) = database() else { return };
    let mut holder = pg::connect(&url).unwrap();
    let mut observer = pg::connect(&url).unwrap();
    append_one(&mut holder, "ns", b"first");

    let mut tx = holder.transaction().unwrap();
    assert_eq!(log::lock_namespace(&mut tx, "ns").unwrap(), 1);
    let other_url = url.clone();
    let other = std::thread::spawn(move || {
        let mut client = pg::connect(&other_url).unwrap();
        append_one(&mut client, "ns", b"other")
    });
    // The other writer is parked on the head row, not merely slow.
    assert!(eventually(|| {
        let waiting: i64 = observer
            .query_one(
                "SELECT count(*) FROM pg_stat_activity
                 WHERE datname = current_database() AND wait_event_type = 'Lock'",
                &[],
            )
            .unwrap()
            .get(0);
        waiting == 1
    }));
    // The head read under the lock is still the head when the holder appends.
    assert_eq!(
        log::append(&mut tx, "ns", now_micros(), b"holder").unwrap(),
        2
    );
    tx.commit().unwrap();
    assert_eq!(other.join().unwrap(), 3);
}

#[test]
fn concurrent_writers_are_followed_exactly_once_and_in_order() {
    let Some(url) = database() else { return };
    drop(pg::connect(&url).unwrap());
    let namespaces = ["alpha", "beta", "gamma"];
    let (follower, applied) = recording_follower(&url, Namespaces::All, HashMap::new());

    // Four writers on their own connections, interleaving over three
    // namespaces; every fifth transaction rolls back after taking its seq.
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let url = url.clone();
            std::thread::spawn(move || {
                let mut client = pg::connect(&url).unwrap();
                let mut committed = Vec::new();
                for i in 0..60 {
                    let namespace = namespaces[(w + i) % namespaces.len()];
                    let body = format!("w{w}-{i}").into_bytes();
                    let mut tx = client.transaction().unwrap();
                    let seq = log::append(&mut tx, namespace, now_micros(), &body).unwrap();
                    if i % 5 == 4 {
                        tx.rollback().unwrap();
                    } else {
                        tx.commit().unwrap();
                        committed.push((namespace.to_owned(), seq, body));
                    }
                }
                committed
            })
        })
        .collect();
    let mut committed: BTreeMap<String, BTreeMap<i64, Vec<u8>>> = BTreeMap::new();
    for writer in writers {
        for (namespace, seq, body) in writer.join().unwrap() {
            let previous = committed.entry(namespace).or_default().insert(seq, body);
            assert!(previous.is_none(), "two commits were given one seq");
        }
    }
    for (namespace, entries) in &committed {
        let head = *entries.keys().last().unwrap();
        follower.wait_for(namespace, head, WAIT).unwrap();
    }

    let applied = applied.lock().unwrap();
    assert_eq!(
        applied.len(),
        4 * 48,
        "each committed entry applied exactly once"
    );
    for (namespace, entries) in &committed {
        // No gaps: the committed seqs are 1..=n, applied in that order.
        let expected: Vec<i64> = (1..=entries.len() as i64).collect();
        assert_eq!(entries.keys().copied().collect::<Vec<_>>(), expected);
        assert_eq!(seqs_of(&applied, namespace), expected);
        for entry in applied.iter().filter(|e| &e.namespace == namespace) {
            assert_eq!(&entry.entry, &entries[&entry.seq]);
        }
    }
}

#[test]
fn min_seq_waits_until_applied_and_is_bounded() {
    let Some(url) = database() else { return };
    let mut writer = pg::connect(&url).unwrap();
    let (follower, _applied) = recording_follower(&url, Namespaces::All, HashMap::new());

    let err = follower
        .wait_for("ns", 1, Duration::from_millis(100))
        .unwrap_err();
    assert_eq!(err.code(), "RESOURCE_BUSY");
    assert!(err.to_string().contains("min_seq 1"), "{err}");

    // A write elsewhere, then a read here that passes its seq: it waits for it.
    let seq = append_one(&mut writer, "ns", b"x");
    assert!(follower.wait_for("ns", seq, WAIT).unwrap() >= seq);
    assert_eq!(follower.applied("ns"), seq);
    assert_eq!(follower.wait_for("ns", 0, Duration::ZERO).unwrap(), seq);
}

#[test]
fn a_namespace_subset_node_never_reads_other_tenants() {
    let Some(url) = database() else { return };
    let mut writer = pg::connect(&url).unwrap();
    // Sorted before the served one, so a follower reading everything would
    // reach it first.
    append_one(&mut writer, "aaa-other", b"before start");
    let only = Namespaces::Only(BTreeSet::from(["zzz-mine".to_owned()]));
    let (follower, applied) = recording_follower(&url, only, HashMap::new());
    append_one(&mut writer, "aaa-other", b"after start");
    let mine = append_one(&mut writer, "zzz-mine", b"mine");

    follower.wait_for("zzz-mine", mine, WAIT).unwrap();
    let err = follower.wait_for("aaa-other", 1, WAIT).unwrap_err();
    assert_eq!(err.code(), "INVALID_PARAMETER");
    assert!(
        applied
            .lock()
            .unwrap()
            .iter()
            .all(|e| e.namespace == "zzz-mine")
    );
    assert_eq!(
        follower.positions().keys().collect::<Vec<_>>(),
        ["zzz-mine"]
    );
}

#[test]
fn a_restarted_follower_replays_only_the_tail() {
    let Some(url) = database() else { return };
    let mut writer = pg::connect(&url).unwrap();
    for i in 0..5 {
        append_one(&mut writer, "ns", format!("{i}").as_bytes());
    }
    // As a node restarted from a snapshot taken at seq 3.
    let from = HashMap::from([("ns".to_owned(), 3)]);
    let (follower, applied) = recording_follower(&url, Namespaces::All, from);
    follower.wait_for("ns", 5, WAIT).unwrap();
    assert_eq!(seqs_of(&applied.lock().unwrap(), "ns"), [4, 5]);
}

#[test]
fn a_follower_reconnects_and_misses_nothing_written_meanwhile() {
    let Some(url) = database() else { return };
    let mut writer = pg::connect(&url).unwrap();
    let (follower, applied) = recording_follower(&url, Namespaces::All, HashMap::new());
    let first = append_one(&mut writer, "ns", b"1");
    follower.wait_for("ns", first, WAIT).unwrap();

    let killed: i64 = writer
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
             WHERE datname = current_database() AND application_name = 'memcore-follow'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(killed, 1);
    // Notifications sent while the follower is away are lost; the entries are not.
    append_one(&mut writer, "ns", b"2");
    let last = append_one(&mut writer, "ns", b"3");
    follower.wait_for("ns", last, WAIT).unwrap();
    assert_eq!(seqs_of(&applied.lock().unwrap(), "ns"), [1, 2, 3]);
}

#[test]
fn a_failed_apply_is_retried_never_skipped() {
    let Some(url) = database() else { return };
    let mut writer = pg::connect(&url).unwrap();
    let calls = Arc::new(Mutex::new(Vec::new()));
    let seen = calls.clone();
    let follower = Follower::start(
        &url,
        Namespaces::All,
        HashMap::new(),
        Box::new(move |entry: &LogEntry| {
            let mut seen = seen.lock().unwrap();
            let first_try = !seen.contains(&entry.seq);
            seen.push(entry.seq);
            if entry.seq == 2 && first_try {
                return Err(memcore::Error::Index("a replica that failed once".into()));
            }
            Ok(())
        }),
        FollowOptions::default(),
    )
    .unwrap();
    for body in [b"1", b"2", b"3"] {
        append_one(&mut writer, "ns", body);
    }
    follower.wait_for("ns", 3, WAIT).unwrap();
    // 2 failed once and came again; nothing after it was applied before it.
    assert_eq!(*calls.lock().unwrap(), [1, 2, 2, 3]);
}
