//! PostgreSQL as the shared truth of a scaled-out deployment
//! (docs/scale-out.md): the schema and its migrations, the operation log with
//! its per-namespace order, a follower that tails the log exactly, and the
//! capture of the rows a write changed on a node's SQLite replica.
//!
//! Built only with the `postgres` feature; the embedded SQLite store never
//! links a PostgreSQL client. Calls block (the sync `postgres` client): the
//! bindings already run core work with the GIL released.

pub mod bootstrap;
pub mod capture;
pub mod entry;
mod follow;
pub mod identity;
pub mod log;
pub mod placement;
pub mod records;
pub mod replica;
mod schema;
pub mod ship;
pub mod tls;

pub use follow::{Apply, FollowOptions, Follower, Namespaces};
pub use log::{CHANNEL, FORMAT, LogEntry};
pub use placement::NamespaceRange;
pub use schema::{INHERITED_NAMESPACE, latest_version as schema_version, migrate, migrate_to};
pub use tls::Endpoint;

use std::time::Duration;

use postgres::Client;

use crate::error::Result;

/// How long a connection attempt may take before it fails.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Idle time before TCP keepalives probe a connection, so a node notices a
/// vanished server in seconds rather than hours.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(10);

/// Parse a `postgresql://…` URL (or a libpq `key=value` string) into how to
/// connect, TLS included (`sslmode`, `sslrootcert`: [`tls`]); a malformed
/// one is an `INVALID_PARAMETER`.
pub fn config(url: &str, application_name: &str) -> Result<Endpoint> {
    let mut endpoint = Endpoint::parse(url)?;
    endpoint
        .config
        .application_name(application_name)
        .connect_timeout(CONNECT_TIMEOUT)
        .keepalives_idle(KEEPALIVE_IDLE);
    Ok(endpoint)
}

/// Connect to `url` and bring the schema up to date (every connection a node
/// opens for writing goes through here, so no node runs on an old schema).
pub fn connect(url: &str) -> Result<Client> {
    let mut client = config(url, "memcore")?.connect()?;
    migrate(&mut client)?;
    Ok(client)
}
