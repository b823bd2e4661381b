//! A node's replica knows its database (docs/scale-out.md, "A replica knows
//! its database"): opened on another database (dropped and created again,
//! another cluster, one that lost writes the replica holds) it is refused
//! with `STORAGE_ERROR` naming both and the fixes, or rebuilt when asked;
//! a running node that reconnects to another database stops serving; two
//! nodes never share one replica folder.

mod pg_support;

use std::path::Path;
use std::time::{Duration, Instant};

use memcore::pg::Namespaces;
use memcore::{Engine, EngineOptions, Error, NewMemory, SearchQuery};

const NAMESPACE: &str = "default";

fn node(url: &str, dir: &Path) -> memcore::Result<Engine> {
    Engine::open_postgres(url, dir, Namespaces::All, &EngineOptions::default())
}

fn rebuilding(url: &str, dir: &Path) -> memcore::Result<Engine> {
    let options = EngineOptions {
        replica_rebuild: true,
        ..EngineOptions::default()
    };
    Engine::open_postgres(url, dir, Namespaces::All, &options)
}

fn store(engine: &Engine, text: &str) {
    engine
        .written(|e| e.store_memory(NewMemory::text(text)))
        .unwrap();
}

fn found(engine: &Engine, word: &str) -> usize {
    let query = SearchQuery::memories(NAMESPACE, 10);
    engine.search_text(&query, word).unwrap().len()
}

/// The message of a refusal of the replica in `dir`.
fn refused(result: memcore::Result<Engine>, dir: &Path) -> String {
    match result {
        Err(e @ Error::Damaged { .. }) => {
            assert_eq!(e.code(), "STORAGE_ERROR");
            let Error::Damaged { path, message } = e else {
                unreachable!()
            };
            assert_eq!(path, dir);
            for fix in [
                "memcore replica reset",
                "replica_rebuild=True",
                "another replica",
            ] {
                assert!(message.contains(fix), "{message}");
            }
            message
        }
        Err(other) => panic!("expected the replica refused, got {other:?}"),
        Ok(_) => panic!("expected the replica refused, it opened"),
    }
}

fn name_of(url: &str) -> &str {
    url.rsplit('/').next().unwrap()
}

#[test]
fn a_replica_of_a_database_dropped_and_created_again_is_refused_then_rebuilt() {
    let Some(url) = pg_support::fresh_database() else {
        return;
    };
    let cluster = pg_support::cluster().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let a = node(&url, dir.path()).unwrap();
    store(&a, "the zebra of database A");
    drop(a);
    let name = name_of(&url);
    pg_support::admin(
        cluster,
        &format!("DROP DATABASE {name}; CREATE DATABASE {name}"),
    );

    // Same URL, same folder, another database: A's memories are not served.
    let message = refused(node(&url, dir.path()), dir.path());
    assert!(message.contains("oid"), "{message}");
    // The rebuild asked for: the replica is B's, empty, and writes work.
    let b = rebuilding(&url, dir.path()).unwrap();
    assert_eq!(found(&b, "zebra"), 0);
    store(&b, "the okapi of database B");
    assert_eq!(found(&b, "okapi"), 1);
    drop(b);
    // From now on it is B's replica: it opens without the option.
    let b = node(&url, dir.path()).unwrap();
    assert_eq!((found(&b, "zebra"), found(&b, "okapi")), (0, 1));
}

#[test]
fn a_replica_of_another_cluster_is_refused() {
    let (Some(url), Some(other)) = (pg_support::fresh_database(), pg_support::other_cluster())
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let a = node(&url, dir.path()).unwrap();
    store(&a, "the zebra of cluster one");
    drop(a);
    // A database of the same name on a cluster on another port.
    let name = name_of(&url);
    pg_support::admin(other, &format!("CREATE DATABASE {name}"));
    let message = refused(node(&other.url(name), dir.path()), dir.path());
    assert!(message.contains("system identifier"), "{message}");
    // The keys of the two databases' default folders differ.
    let keys = (
        memcore::engine::database_key(&url).unwrap(),
        memcore::engine::database_key(&other.url(name)).unwrap(),
    );
    assert_ne!(keys.0, keys.1);
    assert_eq!(keys.0, memcore::engine::database_key(&url).unwrap());
}

#[test]
fn a_database_that_lost_writes_the_replica_holds_is_refused() {
    let Some(url) = pg_support::fresh_database() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let a = node(&url, dir.path()).unwrap();
    for i in 0..3 {
        store(&a, &format!("memory {i}"));
    }
    drop(a);
    // As a restore of an older backup would leave it: the last write gone.
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client
        .batch_execute(
            "DELETE FROM memcore.log WHERE seq = 3;
             UPDATE memcore.log_heads SET seq = 2;",
        )
        .unwrap();
    let message = refused(node(&url, dir.path()), dir.path());
    assert!(message.contains("up to write 3"), "{message}");
    assert!(message.contains("only up to write 2"), "{message}");
    let rebuilt = rebuilding(&url, dir.path()).unwrap();
    assert_eq!(
        rebuilt.count_memories(NAMESPACE).unwrap(),
        3,
        "rows of PostgreSQL"
    );
}

#[test]
fn two_nodes_never_share_a_replica_folder() {
    let Some(url) = pg_support::fresh_database() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let _first = node(&url, dir.path()).unwrap();
    match node(&url, dir.path()) {
        Err(e @ Error::ResourceBusy { .. }) => {
            assert!(e.to_string().contains("its own replica_dir"), "{e}");
        }
        other => panic!("expected RESOURCE_BUSY, got {other:?}"),
    }
}

#[test]
fn a_running_node_that_reconnects_to_another_database_stops_serving() {
    let Some(url) = pg_support::fresh_database() else {
        return;
    };
    let cluster = pg_support::cluster().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let a = node(&url, dir.path()).unwrap();
    store(&a, "the zebra of database A");
    a.check_served(NAMESPACE).unwrap();
    let name = name_of(&url);
    pg_support::admin(
        cluster,
        &format!("DROP DATABASE {name} WITH (FORCE); CREATE DATABASE {name}"),
    );
    // The follower reconnects within its backoff and finds another database.
    let deadline = Instant::now() + Duration::from_secs(30);
    let refusal = loop {
        match a.check_served(NAMESPACE) {
            Err(e) => break e,
            Ok(()) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            Ok(()) => panic!("the node kept serving its replica of the dropped database"),
        }
    };
    assert_eq!(refusal.code(), "STORAGE_ERROR");
    assert!(refusal.to_string().contains("now reaches"), "{refusal}");
    // Writes are refused too, nothing written anywhere.
    let write = a.written(|e| e.store_memory(NewMemory::text("after the swap")));
    assert!(write.is_err(), "a write reached the new database");
    drop(a);
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let tables: i64 = client
        .query_one(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'memcore'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(tables, 0, "the node wrote nothing into the new database");
}

#[test]
fn a_replica_made_before_replicas_recorded_their_database_is_adopted_only_by_its_own() {
    let (Some(url), Some(other_url)) = (pg_support::fresh_database(), pg_support::fresh_database())
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let copy = tempfile::tempdir().unwrap();
    let a = node(&url, dir.path()).unwrap();
    store(&a, "the zebra of database A");
    drop(a);
    let forget = "DELETE FROM pg_identity";
    rusqlite::Connection::open(dir.path().join("memcore.db"))
        .unwrap()
        .execute_batch(forget)
        .unwrap();
    std::fs::copy(
        dir.path().join("memcore.db"),
        copy.path().join("memcore.db"),
    )
    .unwrap();
    // Its own database: adopted (the creation time it copied matches).
    let a = node(&url, dir.path()).unwrap();
    assert_eq!(found(&a, "zebra"), 1);
    drop(a);
    // Another database: refused like any other database's copy.
    let message = refused(node(&other_url, copy.path()), copy.path());
    assert!(message.contains("not recorded"), "{message}");
}

#[test]
fn reset_empties_a_replica_but_never_a_sqlite_store() {
    let Some(url) = pg_support::fresh_database() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let a = node(&url, dir.path()).unwrap();
    store(&a, "the zebra");
    match memcore::engine::reset_replica(dir.path()) {
        Err(Error::ResourceBusy { .. }) => {}
        other => panic!("a replica in use was reset: {other:?}"),
    }
    drop(a);
    let reset = memcore::engine::reset_replica(dir.path()).unwrap();
    assert!(reset.removed.contains(&dir.path().join("memcore.db")));
    assert!(!dir.path().join("index").exists());
    let a = node(&url, dir.path()).unwrap();
    assert_eq!(found(&a, "zebra"), 1, "built again from PostgreSQL");
    drop(a);

    let sqlite = tempfile::tempdir().unwrap();
    let store_only = Engine::open(sqlite.path(), &EngineOptions::default()).unwrap();
    store_only
        .store_memory(NewMemory::text("precious"))
        .unwrap();
    drop(store_only);
    let refused = memcore::engine::reset_replica(sqlite.path()).unwrap_err();
    assert_eq!(refused.code(), "INVALID_PARAMETER");
    assert!(sqlite.path().join("memcore.db").exists());
}
