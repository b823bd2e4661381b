//! Which database a node's replica belongs to (docs/scale-out.md, "A replica
//! knows its database").
//!
//! A replica is a copy of one database's records. Opened on another one (the
//! URL now names staging instead of production, or the database was dropped
//! and created again empty), it would serve the first one's memories as if
//! they were the second's, and every write would fail on positions that
//! mean nothing there. So a database's identity is three things, each of
//! which another database differs in:
//!
//! - PostgreSQL's system identifier (`pg_control_system()`), chosen when the
//!   cluster was created: another cluster, or a cluster made anew;
//! - the database's oid in its cluster: another database of the cluster,
//!   or one dropped and created again under the same name;
//! - an id memcore writes into the database's `memcore.meta` the first time a
//!   node meets it: the same name and oid made anew by a restore, or a
//!   store emptied and started over (its `meta` row goes with it).
//!
//! A replica records the identity it was built from; every open and every
//! reconnection of the node compares it with the database's. The default
//! replica folder is named by it ([`Identity::key`]), so two databases never
//! share one.

use std::sync::Arc;

use parking_lot::Mutex;
use postgres::GenericClient;

use crate::error::{Error, Result};

/// The `memcore.meta` key of the id memcore gives a database.
pub const DATABASE_ID: &str = "database_id";

/// What identifies a database, as a node reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// PostgreSQL's system identifier; `None` when the node's role may not
    /// read it (then the other two decide).
    pub system: Option<i64>,
    /// The database's oid in its cluster.
    pub oid: u32,
    /// The id memcore wrote into the database (`None`: it has none, e.g. no
    /// memcore schema at all).
    pub store: Option<String>,
    /// The database's name: for messages only (a rename keeps a database).
    pub name: String,
}

impl Identity {
    /// The identity of the database `client` is connected to, giving it
    /// memcore's id first if it has none (its schema must be current: see
    /// `super::connect`). Concurrent first nodes agree: one insert wins.
    pub fn claim(client: &mut impl GenericClient) -> Result<Identity> {
        client.execute(
            "INSERT INTO memcore.meta (key, value)
             VALUES ($1, md5(random()::text || clock_timestamp()::text || pg_backend_pid()::text))
             ON CONFLICT (key) DO NOTHING",
            &[&DATABASE_ID],
        )?;
        Identity::read(client)
    }

    /// The identity of the database `client` is connected to, as it is (no
    /// write: a database without memcore's schema or id has no store id).
    pub fn read(client: &mut impl GenericClient) -> Result<Identity> {
        let row = client.query_one(
            "SELECT d.oid, current_database()::text,
                    to_regclass('memcore.meta') IS NOT NULL
             FROM pg_database d WHERE d.datname = current_database()",
            &[],
        )?;
        let (oid, name, has_meta): (u32, String, bool) = (row.get(0), row.get(1), row.get(2));
        let store = if has_meta {
            client
                .query_opt(
                    "SELECT value FROM memcore.meta WHERE key = $1",
                    &[&DATABASE_ID],
                )?
                .map(|r| r.get::<_, String>(0))
        } else {
            None
        };
        Ok(Identity {
            system: system_identifier(client),
            oid,
            store,
            name,
        })
    }

    /// Whether `other` is the same database: the same oid and store id, and
    /// the same system identifier where both are known.
    pub fn same_database(&self, other: &Identity) -> bool {
        let systems_agree = match (self.system, other.system) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        systems_agree && self.oid == other.oid && self.store.is_some() && self.store == other.store
    }

    /// The name of this database's default replica folder: its identity,
    /// `<system identifier>-<oid>-<memcore id>` (`x` for a part unknown).
    pub fn key(&self) -> String {
        format!(
            "{}-{}-{}",
            self.system
                .map_or_else(|| "x".to_owned(), |s| format!("{:x}", s as u64)),
            self.oid,
            self.store.as_deref().unwrap_or("x"),
        )
    }
}

impl std::fmt::Display for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let system = self
            .system
            .map_or_else(|| "unknown".to_owned(), |s| (s as u64).to_string());
        write!(
            f,
            "database {:?} (system identifier {system}, oid {}, memcore id {})",
            self.name,
            self.oid,
            self.store.as_deref().unwrap_or("none")
        )
    }
}

/// The cluster's system identifier, if this role may read it.
fn system_identifier(client: &mut impl GenericClient) -> Option<i64> {
    // A failed statement would abort a surrounding transaction: probe the
    // privilege first.
    let allowed = client
        .query_one(
            "SELECT has_function_privilege('pg_control_system()', 'EXECUTE')",
            &[],
        )
        .ok()?
        .get::<_, bool>(0);
    if !allowed {
        return None;
    }
    client
        .query_one("SELECT system_identifier FROM pg_control_system()", &[])
        .ok()
        .map(|r| r.get(0))
}

/// The identity a node expects of every connection it opens, and what the
/// last connection found when it was another database: the node then
/// refuses reads and writes until a connection finds its database again.
#[derive(Debug)]
pub struct Expected {
    identity: Identity,
    replica: std::path::PathBuf,
    mismatch: Mutex<Option<String>>,
}

impl Expected {
    pub fn new(identity: Identity, replica: &std::path::Path) -> Arc<Expected> {
        Arc::new(Expected {
            identity,
            replica: replica.to_path_buf(),
            mismatch: Mutex::new(None),
        })
    }

    /// Check the database a new connection reached; the refusal when it is
    /// another one (recorded for [`Expected::check`]).
    pub fn verify(&self, client: &mut impl GenericClient) -> Result<()> {
        let found = Identity::read(client)?;
        if found.same_database(&self.identity) {
            *self.mismatch.lock() = None;
            return Ok(());
        }
        let error = mismatch(&self.replica, &self.identity, &found, "now reaches");
        *self.mismatch.lock() = Some(error.to_string());
        Err(error)
    }

    /// Record that the database no longer holds what this node applied
    /// (see `super::follow`), until a connection finds it whole again.
    pub fn behind(&self, message: String) {
        *self.mismatch.lock() = Some(message);
    }

    /// The replica folder of the node.
    pub fn replica(&self) -> &std::path::Path {
        &self.replica
    }

    /// The refusal of a database behind this node's replica.
    pub fn behind_message(&self, namespace: &str, applied: i64, head: i64) -> String {
        behind(&self.replica, &self.identity, namespace, applied, head).to_string()
    }

    /// Refuse while the last connection found another database.
    pub fn check(&self) -> Result<()> {
        match &*self.mismatch.lock() {
            Some(message) => Err(Error::Damaged {
                path: self.replica.clone(),
                message: message.clone(),
            }),
            None => Ok(()),
        }
    }
}

/// The refusal of a replica holding `namespace` up to `applied` on its
/// database, which holds it only up to `head`.
pub fn behind(
    replica: &std::path::Path,
    database: &Identity,
    namespace: &str,
    applied: i64,
    head: i64,
) -> Error {
    Error::Damaged {
        path: replica.to_path_buf(),
        message: format!(
            "The replica in {dir} holds namespace {namespace:?} up to write {applied}, but \
             its database, {database}, holds it only up to write {head}: the database lost \
             writes this replica saw (restored from an older backup, or a standby promoted \
             before it caught up). Nothing more was served from the replica. Give this \
             node another replica folder, run `memcore replica reset --data-dir {dir}`, or \
             open with replica_rebuild=True (--replica-rebuild), to rebuild it from the \
             database as it is now.",
            dir = replica.display(),
        ),
    }
}

/// The refusal of a replica of `recorded` opened on `found`.
pub fn mismatch(
    replica: &std::path::Path,
    recorded: &Identity,
    found: &Identity,
    verb: &str,
) -> Error {
    Error::Damaged {
        path: replica.to_path_buf(),
        message: format!(
            "The replica in {dir} is a copy of {recorded}, but the database URL {verb} \
             {found}. Nothing of it was served, so no memory of one database is passed off \
             as the other's. Give this node another replica folder (replica_dir, or \
             --data-dir for the server), run `memcore replica reset --data-dir {dir}` to \
             empty this one, or open with replica_rebuild=True (--replica-rebuild) to \
             rebuild it from this database.",
            dir = replica.display(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(system: Option<i64>, oid: u32, store: &str) -> Identity {
        Identity {
            system,
            oid,
            store: Some(store.to_owned()),
            name: "memcore".to_owned(),
        }
    }

    #[test]
    fn each_part_tells_databases_apart() {
        let a = identity(Some(7), 16_384, "abc");
        assert!(a.same_database(&a.clone()));
        assert!(!a.same_database(&identity(Some(8), 16_384, "abc")));
        assert!(!a.same_database(&identity(Some(7), 16_385, "abc")));
        assert!(!a.same_database(&identity(Some(7), 16_384, "abd")));
        // An unknown system identifier leaves the decision to the others.
        assert!(a.same_database(&identity(None, 16_384, "abc")));
        let mut bare = a.clone();
        bare.store = None;
        assert!(
            !bare.same_database(&bare.clone()),
            "no memcore id: never the same"
        );
    }

    #[test]
    fn the_key_names_every_part() {
        assert_eq!(identity(Some(255), 16_384, "abc").key(), "ff-16384-abc");
        assert_eq!(identity(None, 5, "abc").key(), "x-5-abc");
        assert_eq!(identity(Some(-1), 5, "abc").key(), "ffffffffffffffff-5-abc");
    }
}
