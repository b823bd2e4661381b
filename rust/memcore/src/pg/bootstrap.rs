//! A new node with no snapshot builds its replica from PostgreSQL
//! (docs/scale-out.md, "Restarts are cheap"): one read-only `REPEATABLE READ`
//! transaction reads the log heads and every record row, a consistent cut,
//! and writes them into an empty replica with doc keys of its own (an upsert
//! op per searchable record in the replica's op log, as a restore does). The
//! engine then indexes them as after a deleted index folder, and the node
//! follows each namespace from the heads it read.
//!
//! A node serving a subset of namespaces copies only theirs: every record
//! table has a namespace column in PostgreSQL (the child tables since
//! schema version 2), so the subset is one `WHERE namespace` per table. The
//! served namespaces are those with a log head (every namespace a node ever
//! wrote), filtered by the node's [`Namespaces`].

use std::collections::HashMap;

use postgres::types::Type;
use postgres::{Client, IsolationLevel, Row};
use rusqlite::Connection;
use rusqlite::types::Value;

use super::capture::shipped_tables;
use super::entry::{Cell, DOC_KEY, EntryTable};
use super::schema::INHERITED_NAMESPACE;
use super::{Namespaces, replica};
use crate::error::{Error, Result};
use crate::kind::Kind;
use crate::store::checksum;
use crate::store::oplog::{self, Action};
use crate::temporal::now_micros;

/// Rows fetched from PostgreSQL per round trip.
const BATCH: i32 = 1000;

/// Copy every record from PostgreSQL into the empty replica `conn` (inside
/// the caller's transaction) and record the heads as its positions, which
/// are returned: where its follower starts.
pub fn bootstrap(pg: &mut Client, conn: &Connection) -> Result<HashMap<String, i64>> {
    bootstrap_namespaces(pg, conn, &Namespaces::All)
}

/// [`bootstrap`] for a node serving `namespaces`: only their records and
/// their heads are copied.
pub fn bootstrap_namespaces(
    pg: &mut Client,
    conn: &Connection,
    namespaces: &Namespaces,
) -> Result<HashMap<String, i64>> {
    replica::prepare(conn)?;
    let used: i64 = conn.query_row(
        &format!(
            "SELECT (SELECT count(*) FROM oplog) + (SELECT count(*) FROM {})",
            replica::POSITIONS
        ),
        [],
        |r| r.get(0),
    )?;
    if used > 0 {
        return Err(Error::invalid(
            "replica",
            "A replica is built from PostgreSQL only when new; this one already holds \
             writes. Follow from its positions, or start from an empty folder.",
        ));
    }
    conn.execute_batch("PRAGMA defer_foreign_keys = ON")?;
    let mut tx = pg
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()?;
    let heads = namespaces.heads(&mut tx)?;
    let served: Vec<String> = heads.iter().map(|(ns, _)| ns.clone()).collect();
    for table in shipped_tables(conn)? {
        let kind = Kind::ALL
            .into_iter()
            .find(|k| replica::table_for(*k) == table.name);
        // PostgreSQL has neither the node's doc keys nor its checksums (the
        // replica computes those as it writes each row).
        let shipped: Vec<&String> = table
            .columns
            .iter()
            .filter(|c| *c != DOC_KEY && *c != checksum::COLUMN)
            .collect();
        let namespaced = table.columns.iter().any(|c| c == "namespace")
            || INHERITED_NAMESPACE.iter().any(|(t, _, _)| *t == table.name);
        let subset = namespaced && *namespaces != Namespaces::All;
        let select = format!(
            "SELECT {} FROM memcore.\"{}\"{}",
            shipped
                .iter()
                .map(|c| format!("\"{c}\""))
                .collect::<Vec<_>>()
                .join(", "),
            table.name,
            if subset {
                " WHERE namespace = ANY($1)"
            } else {
                ""
            }
        );
        let entry_table = EntryTable {
            name: table.name.clone(),
            columns: table
                .columns
                .iter()
                .filter(|c| *c != checksum::COLUMN)
                .cloned()
                .collect(),
            key: table.key.clone(),
        };
        let portal = if subset {
            tx.bind(select.as_str(), &[&served])?
        } else {
            tx.bind(select.as_str(), &[])?
        };
        loop {
            let rows = tx.query_portal(&portal, BATCH)?;
            for row in &rows {
                let values = values_of(&table.name, row)?;
                let by_name: HashMap<&str, &Value> =
                    shipped.iter().map(|c| c.as_str()).zip(&values).collect();
                // A searchable record gets its version key from an op of its own.
                let seqs = match kind {
                    Some(kind) => vec![new_version(conn, kind, &by_name)?],
                    None => Vec::new(),
                };
                let cells: Vec<Cell> = entry_table
                    .columns
                    .iter()
                    .map(|c| match by_name.get(c.as_str()) {
                        Some(v) => Cell::Value((*v).clone()),
                        None => Cell::KeyOfOp(0),
                    })
                    .collect();
                let key: Vec<Value> = table
                    .key
                    .iter()
                    .map(|k| {
                        by_name
                            .get(k.as_str())
                            .map_or(Value::Null, |v| (*v).clone())
                    })
                    .collect();
                replica::upsert(conn, &entry_table, &key, &cells, &seqs)?;
            }
            if rows.len() < BATCH as usize {
                break;
            }
        }
    }
    tx.commit()?;
    let mut record = conn.prepare(&format!(
        "INSERT INTO main.{} (namespace, seq) VALUES (?1, ?2)",
        replica::POSITIONS
    ))?;
    for (namespace, seq) in &heads {
        record.execute(rusqlite::params![namespace, seq])?;
    }
    Ok(heads.into_iter().collect())
}

/// The op giving a copied record its searchable version in this replica.
fn new_version(conn: &Connection, kind: Kind, row: &HashMap<&str, &Value>) -> Result<i64> {
    let text = |column: &str| match row.get(column) {
        Some(Value::Text(s)) => Ok(s.as_str()),
        _ => Err(Error::invalid(
            "row",
            format!("a {} record without a text {column}", kind.as_str()),
        )),
    };
    oplog::append(
        conn,
        now_micros(),
        Action::Upsert,
        kind,
        text("id")?,
        text("namespace")?,
        None,
    )
}

/// A PostgreSQL row as SQLite values, by column type.
fn values_of(table: &str, row: &Row) -> Result<Vec<Value>> {
    row.columns()
        .iter()
        .enumerate()
        .map(|(i, column)| {
            Ok(match *column.type_() {
                Type::INT8 => row
                    .get::<_, Option<i64>>(i)
                    .map_or(Value::Null, Value::Integer),
                Type::FLOAT8 => row
                    .get::<_, Option<f64>>(i)
                    .map_or(Value::Null, Value::Real),
                Type::TEXT => row
                    .get::<_, Option<String>>(i)
                    .map_or(Value::Null, Value::Text),
                Type::BYTEA => row
                    .get::<_, Option<Vec<u8>>>(i)
                    .map_or(Value::Null, Value::Blob),
                ref other => {
                    return Err(Error::invalid(
                        "schema",
                        format!(
                            "{table}.{}: no SQLite value for PostgreSQL type {other}",
                            column.name()
                        ),
                    ));
                }
            })
        })
        .collect()
}
