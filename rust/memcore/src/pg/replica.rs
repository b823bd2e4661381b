//! Applying a log entry to a node's SQLite replica (docs/scale-out.md,
//! "Putting the engine on PostgreSQL", (b)): in the caller's transaction,
//! the entry's ops go into the replica's own op log, with the replica's own
//! `seq`s as doc keys, then its rows are written. From there the engine's
//! existing paths (open-time replay, a follower of the op log) index them,
//! exactly as if the write had been made on this node.
//!
//! Rows are applied deletes first, then upserts, with foreign keys checked
//! at commit: images are final states, so no order among them is needed.
//! A connection with a [`super::capture::Capture`] installed records these
//! rows too; the caller discards them (they are already in PostgreSQL).
//!
//! The replica remembers, per namespace, the last log entry it applied
//! (`pg_positions`, written in the same transaction as the entry), so a
//! restarted node follows from there: each entry is applied exactly once.

use std::collections::HashMap;

use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, params_from_iter};

use super::entry::{Cell, DOC_KEY, Entry, EntryRow, EntryTable};
use super::identity::Identity;
use super::log::LogEntry;
use crate::error::{Error, Result};
use crate::kind::Kind;
use crate::store::checksum;
use crate::store::oplog::{self, Action};
use crate::temporal::Timestamp;

/// Its node-local tables, named where the change capture leaves them out.
pub use super::capture::{IDENTITY, POSITIONS};

/// Make the replica ready to follow (idempotent): its positions table and
/// the record of its database.
pub fn prepare(conn: &Connection) -> Result<()> {
    conn.execute_batch(&format!(
        "CREATE TABLE IF NOT EXISTS main.{POSITIONS} (
             namespace TEXT PRIMARY KEY,
             seq       INTEGER NOT NULL
         ) WITHOUT ROWID;
         CREATE TABLE IF NOT EXISTS main.{IDENTITY} (
             one         INTEGER PRIMARY KEY CHECK (one = 1),
             system      INTEGER,
             oid         INTEGER NOT NULL,
             store       TEXT NOT NULL,
             name        TEXT NOT NULL,
             recorded_at INTEGER NOT NULL
         )"
    ))?;
    Ok(())
}

/// The database this replica records being a copy of (`None`: a replica
/// made before replicas recorded it).
pub fn identity(conn: &Connection) -> Result<Option<Identity>> {
    Ok(conn
        .query_row(
            &format!("SELECT system, oid, store, name FROM main.{IDENTITY} WHERE one = 1"),
            [],
            |r| {
                Ok(Identity {
                    system: r.get(0)?,
                    oid: r.get(1)?,
                    store: Some(r.get(2)?),
                    name: r.get(3)?,
                })
            },
        )
        .optional()?)
}

/// Record that this replica is a copy of `identity` (which has memcore's id).
pub fn record_identity(conn: &Connection, identity: &Identity) -> Result<()> {
    conn.execute(
        &format!(
            "INSERT OR REPLACE INTO main.{IDENTITY} (one, system, oid, store, name, recorded_at)
             VALUES (1, ?1, ?2, ?3, ?4, ?5)"
        ),
        rusqlite::params![
            identity.system,
            identity.oid,
            identity.store,
            identity.name,
            crate::temporal::now_micros()
        ],
    )?;
    Ok(())
}

/// The last entry applied per namespace: where a restarted follower starts.
pub fn positions(conn: &Connection) -> Result<HashMap<String, i64>> {
    let mut stmt = conn.prepare(&format!("SELECT namespace, seq FROM main.{POSITIONS}"))?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Apply a logged entry inside the caller's transaction, with the new
/// position. False (nothing done) when the replica already holds it, as
/// after a restart from an older position or for the node's own write;
/// an entry past the next one is damage, never skipped over.
pub fn apply_logged(conn: &Connection, logged: &LogEntry) -> Result<bool> {
    let position = position(conn, &logged.namespace)?;
    if logged.seq <= position {
        return Ok(false);
    }
    if logged.seq != position + 1 {
        return Err(Error::Damaged {
            path: "memcore.log".into(),
            message: format!(
                "This replica holds namespace {:?} up to seq {position} and was handed seq \
                 {}: an entry in between is missing. Rebuild the replica.",
                logged.namespace, logged.seq
            ),
        });
    }
    if logged.format != super::log::FORMAT {
        return Err(Error::Damaged {
            path: "memcore.log".into(),
            message: format!(
                "Log entry {} of namespace {:?} has format {}, which this memcore does not \
                 read: upgrade it.",
                logged.seq, logged.namespace, logged.format
            ),
        });
    }
    let entry = Entry::decode(&logged.entry)?;
    apply(conn, &logged.namespace, logged.at, &entry)?;
    record_position(conn, &logged.namespace, logged.seq)?;
    Ok(true)
}

/// The last entry of `namespace` the replica holds (0: none).
pub fn position(conn: &Connection, namespace: &str) -> Result<i64> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT seq FROM main.{POSITIONS} WHERE namespace = ?1"
        ))?
        .query_row([namespace], |r| r.get(0))
        .optional()?
        .unwrap_or(0))
}

/// Record that the replica holds `namespace` up to `seq`, in the caller's
/// transaction (the one that applied or made that entry).
pub fn record_position(conn: &Connection, namespace: &str, seq: i64) -> Result<()> {
    conn.prepare_cached(&format!(
        "INSERT INTO main.{POSITIONS} (namespace, seq) VALUES (?1, ?2)
         ON CONFLICT (namespace) DO UPDATE SET seq = excluded.seq"
    ))?
    .execute(rusqlite::params![namespace, seq])?;
    Ok(())
}

/// Apply `entry`, a write of `namespace` made at `at`, inside the caller's
/// transaction on the replica; returns the local seq of each of its ops.
pub fn apply(conn: &Connection, namespace: &str, at: Timestamp, entry: &Entry) -> Result<Vec<i64>> {
    conn.execute_batch("PRAGMA defer_foreign_keys = ON")?;
    let seqs = append_ops(conn, namespace, at, entry)?;
    for row in entry.rows.iter().filter(|r| r.row.is_none()) {
        delete(conn, table_of(entry, row)?, &row.key)?;
    }
    for row in &entry.rows {
        if let Some(cells) = &row.row {
            upsert(conn, table_of(entry, row)?, &row.key, cells, &seqs)?;
        }
    }
    Ok(seqs)
}

/// The entry's ops in the local op log. A record's previous version is the
/// replica's own: its doc key before this entry, or the one an earlier op of
/// the entry made.
fn append_ops(
    conn: &Connection,
    namespace: &str,
    at: Timestamp,
    entry: &Entry,
) -> Result<Vec<i64>> {
    let mut keys: HashMap<(Kind, &str), Option<i64>> = HashMap::new();
    let mut seqs = Vec::with_capacity(entry.ops.len());
    for op in &entry.ops {
        let record = (op.kind, op.record_id.as_str());
        let current = match keys.get(&record) {
            Some(key) => *key,
            None => doc_key_of(conn, op.kind, &op.record_id)?,
        };
        let prev = if op.retires_previous { current } else { None };
        let seq = oplog::append(conn, at, op.action, op.kind, &op.record_id, namespace, prev)?;
        let after = match op.action {
            Action::Upsert => Some(seq),
            Action::Delete => None,
            Action::Meta => current,
        };
        keys.insert(record, after);
        seqs.push(seq);
    }
    Ok(seqs)
}

/// The table holding records of `kind`.
pub(super) fn table_for(kind: Kind) -> &'static str {
    match kind {
        Kind::Memory => "memories",
        Kind::Observation => "observations",
        Kind::UserTurn => "turns",
        Kind::CodeChunk => "code_chunks",
        Kind::Entity => "entities",
    }
}

fn doc_key_of(conn: &Connection, kind: Kind, id: &str) -> Result<Option<i64>> {
    let sql = format!("SELECT doc_key FROM main.{} WHERE id = ?1", table_for(kind));
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([id], |r| r.get(0))
        .optional()?)
}

fn table_of<'e>(entry: &'e Entry, row: &EntryRow) -> Result<&'e EntryTable> {
    entry
        .tables
        .get(usize::from(row.table))
        .ok_or_else(|| Error::Damaged {
            path: "memcore.log".into(),
            message: "A log entry names a table it does not describe.".into(),
        })
}

fn delete(conn: &Connection, table: &EntryTable, key: &[Value]) -> Result<()> {
    let sql = format!(
        "DELETE FROM main.{} WHERE {}",
        quoted(&table.name),
        key_condition(table)
    );
    conn.prepare_cached(&sql)?.execute(params_from_iter(key))?;
    Ok(())
}

/// Insert or update one row by its natural key; doc keys resolve to `seqs`.
pub(super) fn upsert(
    conn: &Connection,
    table: &EntryTable,
    key: &[Value],
    cells: &[Cell],
    seqs: &[i64],
) -> Result<()> {
    let mut columns = Vec::with_capacity(cells.len());
    let mut values = Vec::with_capacity(cells.len());
    for (column, cell) in table.columns.iter().zip(cells) {
        let value = match cell {
            Cell::Value(v) => v.clone(),
            Cell::KeyOfOp(i) => {
                Value::Integer(*seqs.get(*i as usize).ok_or_else(|| Error::Damaged {
                    path: "memcore.log".into(),
                    message: format!("A log entry's {column} names op {i}, which it lacks."),
                })?)
            }
            // The row keeps this replica's own searchable version.
            Cell::KeyKept => {
                current_value(conn, table, column, key)?.ok_or_else(|| Error::Damaged {
                    path: "memcore.log".into(),
                    message: format!(
                        "A log entry keeps the {DOC_KEY} of a {} row this replica does not \
                         have: the replica is behind the log or diverged; rebuild it.",
                        table.name
                    ),
                })?
            }
        };
        columns.push(quoted(column));
        values.push(value);
    }
    let updates: Vec<String> = columns
        .iter()
        .filter(|c| !table.key.iter().any(|k| quoted(k) == **c))
        .map(|c| format!("{c} = excluded.{c}"))
        .collect();
    let on_conflict = if updates.is_empty() {
        "DO NOTHING".to_owned()
    } else {
        format!("DO UPDATE SET {}", updates.join(", "))
    };
    let placeholders: Vec<String> = (1..=columns.len()).map(|i| format!("?{i}")).collect();
    let key_columns: Vec<String> = table.key.iter().map(|k| quoted(k)).collect();
    let sql = format!(
        "INSERT INTO main.{} ({}) VALUES ({}) ON CONFLICT ({}) {on_conflict}",
        quoted(&table.name),
        columns.join(", "),
        placeholders.join(", "),
        key_columns.join(", "),
    );
    conn.prepare_cached(&sql)?
        .execute(params_from_iter(values))?;
    // The row's checksum as this replica computes it from what it wrote
    // (PostgreSQL keeps none; an entry's own, or its absence from an older
    // writer's entry, does not matter).
    if let [id] = key
        && table.key.len() == 1
        && table.key[0] == "id"
    {
        checksum::refresh(conn, &table.name, id)?;
    }
    Ok(())
}

/// `column` of the row under `key` as the replica has it; `None`: no such row.
fn current_value(
    conn: &Connection,
    table: &EntryTable,
    column: &str,
    key: &[Value],
) -> Result<Option<Value>> {
    let sql = format!(
        "SELECT {} FROM main.{} WHERE {}",
        quoted(column),
        quoted(&table.name),
        key_condition(table)
    );
    Ok(conn
        .prepare_cached(&sql)?
        .query_row(params_from_iter(key), |r| r.get(0))
        .optional()?)
}

fn key_condition(table: &EntryTable) -> String {
    table
        .key
        .iter()
        .enumerate()
        .map(|(i, k)| format!("{} = ?{}", quoted(k), i + 1))
        .collect::<Vec<_>>()
        .join(" AND ")
}

fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}
