//! The append-only operation log.
//!
//! Every write appends one row in the same transaction as the write itself, so
//! the log and the tables can never disagree. Derived indexes remember the
//! highest `seq` they cover and replay the rest on open.

use rusqlite::{Connection, params};

use crate::error::Result;
use crate::kind::Kind;
use crate::temporal::Timestamp;

/// What a logged write did to the searchable document of its record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Action {
    /// New content (and vector) under a fresh key; `prev_key` is retired.
    Upsert = 1,
    /// The record is gone; `prev_key` is retired.
    Delete = 2,
    /// Only metadata or validity changed; the indexed content is unchanged.
    Meta = 3,
}

impl Action {
    fn from_code(code: i64) -> Action {
        match code {
            1 => Action::Upsert,
            2 => Action::Delete,
            _ => Action::Meta,
        }
    }
}

/// One logged write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    pub seq: i64,
    pub at: Timestamp,
    pub action: Action,
    pub kind: Kind,
    pub record_id: String,
    pub namespace: String,
    pub prev_key: Option<i64>,
}

/// Append one op and return its `seq` (for upserts, the new document key).
pub fn append(
    conn: &Connection,
    at: Timestamp,
    action: Action,
    kind: Kind,
    record_id: &str,
    namespace: &str,
    prev_key: Option<i64>,
) -> Result<i64> {
    conn.prepare_cached(
        "INSERT INTO oplog(at, action, kind, record_id, namespace, prev_key)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        at,
        action as i64,
        kind as i64,
        record_id,
        namespace,
        prev_key
    ])?;
    Ok(conn.last_insert_rowid())
}

/// Ops with `seq > after`, oldest first, at most `limit`.
pub fn since(conn: &Connection, after: i64, limit: usize) -> Result<Vec<Op>> {
    let mut stmt = conn.prepare_cached(
        "SELECT seq, at, action, kind, record_id, namespace, prev_key
         FROM oplog WHERE seq > ?1 ORDER BY seq LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![after, limit as i64], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, i64>(2)?,
            r.get::<_, i64>(3)?,
            r.get::<_, String>(4)?,
            r.get::<_, String>(5)?,
            r.get::<_, Option<i64>>(6)?,
        ))
    })?;
    let mut ops = Vec::new();
    for row in rows {
        let (seq, at, action, kind, record_id, namespace, prev_key) = row?;
        // Kinds written by a newer build are skipped, not fatal.
        let Some(kind) = Kind::from_code(kind) else {
            continue;
        };
        ops.push(Op {
            seq,
            at,
            action: Action::from_code(action),
            kind,
            record_id,
            namespace,
            prev_key,
        });
    }
    Ok(ops)
}

/// The highest `seq` ever written (0 for an empty log). Read from
/// `sqlite_sequence` so it stays right after old ops are pruned.
pub fn last_seq(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row(
        "SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'oplog'), 0)",
        [],
        |r| r.get(0),
    )?)
}
