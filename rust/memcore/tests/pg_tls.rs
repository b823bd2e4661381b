//! TLS to PostgreSQL (`rust/memcore/src/pg/tls.rs`): against a throw-away
//! cluster that takes TCP connections over TLS only, with a certificate for
//! `localhost` signed by a CA of its own, each `sslmode` does what libpq's
//! does, and a refusal says how to fix it.

mod pg_support;

use std::path::Path;

use memcore::pg::{self, Namespaces};
use memcore::{Engine, EngineOptions, NewMemory, SearchQuery};

fn with(url: &str, params: &str) -> String {
    format!("{url}?{params}")
}

fn root(path: &Path) -> String {
    format!("sslrootcert={}", path.display())
}

/// Whether the session of `client` runs over TLS, as the server sees it.
fn encrypted(client: &mut postgres::Client) -> bool {
    client
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .unwrap()
        .get(0)
}

#[test]
fn require_and_prefer_encrypt_without_a_root() {
    let Some((url, _)) = pg_support::fresh_tls_database("127.0.0.1") else {
        return;
    };
    for params in ["sslmode=require", "sslmode=prefer", "application_name=x"] {
        let mut client = pg::connect(&with(&url, params)).unwrap();
        assert!(encrypted(&mut client), "{params}");
    }
    // No query string at all: prefer, the default.
    assert!(encrypted(&mut pg::connect(&url).unwrap()));
}

#[test]
fn verify_full_checks_the_ca_and_the_host() {
    let Some((url, tls)) = pg_support::fresh_tls_database("localhost") else {
        return;
    };
    let good = format!("sslmode=verify-full&{}", root(&tls.ca));
    let mut client = pg::connect(&with(&url, &good)).unwrap();
    assert!(encrypted(&mut client));

    let wrong = format!("sslmode=verify-full&{}", root(&tls.other_ca));
    let err = pg::connect(&with(&url, &wrong)).map(drop).unwrap_err();
    assert_eq!(err.code(), "STORAGE_ERROR");
    let message = err.to_string();
    assert!(
        message.contains("certificate was not accepted"),
        "{message}"
    );
    assert!(message.contains("sslrootcert"), "{message}");
    // require with a root checks the chain too, as libpq does.
    let wrong = format!("sslmode=require&{}", root(&tls.other_ca));
    let err = pg::connect(&with(&url, &wrong)).map(drop).unwrap_err();
    assert_eq!(err.code(), "STORAGE_ERROR", "{err}");
}

#[test]
fn verify_ca_checks_the_ca_but_not_the_host() {
    // The certificate names localhost, not 127.0.0.1.
    let Some((url, tls)) = pg_support::fresh_tls_database("127.0.0.1") else {
        return;
    };
    let ca = format!("sslmode=verify-ca&{}", root(&tls.ca));
    assert!(encrypted(&mut pg::connect(&with(&url, &ca)).unwrap()));
    let full = format!("sslmode=verify-full&{}", root(&tls.ca));
    let err = pg::connect(&with(&url, &full)).map(drop).unwrap_err();
    assert_eq!(err.code(), "STORAGE_ERROR");
    assert!(err.to_string().contains("name the URL's host"), "{err}");
    let other = format!("sslmode=verify-ca&{}", root(&tls.other_ca));
    let err = pg::connect(&with(&url, &other)).map(drop).unwrap_err();
    assert_eq!(err.code(), "STORAGE_ERROR", "{err}");
}

#[test]
fn disable_against_a_server_requiring_tls_fails_clearly() {
    let Some((url, _)) = pg_support::fresh_tls_database("127.0.0.1") else {
        return;
    };
    let err = pg::connect(&with(&url, "sslmode=disable"))
        .map(drop)
        .unwrap_err();
    assert_eq!(err.code(), "STORAGE_ERROR");
    let message = err.to_string();
    assert!(message.contains("sslmode=disable"), "{message}");
    assert!(message.contains("use sslmode=require"), "{message}");
}

#[test]
fn bad_tls_parameters_are_invalid_parameters() {
    let Some((url, tls)) = pg_support::fresh_tls_database("localhost") else {
        return;
    };
    for params in [
        "sslmode=verify-full".to_owned(),
        "sslmode=sometimes".to_owned(),
        "sslmode=verify-full&sslrootcert=/nonexistent/ca.pem".to_owned(),
        // A file with no certificate in it.
        format!(
            "sslmode=verify-full&sslrootcert={}",
            tls.ca.with_file_name("server.ext").display()
        ),
    ] {
        let err = pg::connect(&with(&url, &params)).map(drop).unwrap_err();
        assert_eq!(err.code(), "INVALID_PARAMETER", "{params}: {err}");
    }
}

#[test]
fn a_node_writes_and_follows_over_verified_tls() {
    let Some((url, tls)) = pg_support::fresh_tls_database("localhost") else {
        return;
    };
    let url = with(&url, &format!("sslmode=verify-full&{}", root(&tls.ca)));
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let open = |dir: &Path| {
        Engine::open_postgres(&url, dir, Namespaces::All, &EngineOptions::default()).unwrap()
    };
    let (a, b) = (open(dir_a.path()), open(dir_b.path()));
    let written = a
        .written(|e| e.store_memory(NewMemory::text("a zebra over TLS")))
        .unwrap();
    let seq = written.position.unwrap().seq;
    b.wait_for_seq("default", seq, std::time::Duration::from_secs(30))
        .unwrap();
    let hits = b
        .search_text(&SearchQuery::memories("default", 5), "zebra")
        .unwrap();
    assert_eq!(hits.len(), 1);
}
