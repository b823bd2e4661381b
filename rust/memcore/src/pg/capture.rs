//! Which rows a write changed on a node's SQLite replica, so they can be
//! shipped to PostgreSQL with the write's log entry (docs/scale-out.md,
//! "Collecting the changed rows").
//!
//! Temporary triggers, generated from the replica's schema, record the
//! natural key of every row inserted, updated or deleted, cascades included,
//! into a temporary table. They live on the writer connection only: the
//! database file's schema is untouched, and a connection without them (every
//! reader, or a store opened without PostgreSQL) pays nothing. Recording is
//! part of the write's transaction, so a rolled-back write leaves no trace.
//! [`Capture::take`] turns the records into the final image of each row, and
//! the op-log entries the write appended (the op log itself stays local: its
//! `seq`s are this node's doc keys, so ops are shipped, not rows).
//!
//! A row's natural key is its table's declared primary key, else its `id`
//! column (our rowid tables keep `id` unique): rowids differ between
//! replicas, so they never name a row across nodes. A table with neither
//! cannot be shipped, and [`Capture::install`] refuses it by name.

use std::collections::HashSet;
use std::fmt::Write as _;

use rusqlite::types::Value;
use rusqlite::{Connection, params_from_iter};

use crate::error::{Error, Result};
use crate::store::oplog::{self, Op};

/// The replica's table of positions (`super::replica`): node-local, never shipped.
pub const POSITIONS: &str = "pg_positions";
/// The database the replica is a copy of (one row; node-local, never
/// shipped): see [`super::identity`].
pub const IDENTITY: &str = "pg_identity";
/// Tables that stay on the node: its own op log, whose `seq`s are local doc
/// keys (a log entry carries the write's ops instead), its positions in the
/// PostgreSQL log, and the record of which database it copies.
const LOCAL_TABLES: &[&str] = &["oplog", POSITIONS, IDENTITY];
/// The temporary table the triggers fill.
const CHANGES: &str = "temp.memcore_changes";

/// A table as shipped: its columns and the ones that name a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShippedTable {
    pub name: String,
    pub columns: Vec<String>,
    pub key: Vec<String>,
}

/// The final state of one changed row.
#[derive(Debug, Clone, PartialEq)]
pub struct RowImage {
    pub table: String,
    /// The natural key's values, in [`ShippedTable::key`] order.
    pub key: Vec<Value>,
    /// Every column's value in [`ShippedTable::columns`] order; `None`: the
    /// row is gone.
    pub row: Option<Vec<Value>>,
}

/// What one write changed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Changes {
    /// The op-log entries it appended, oldest first.
    pub ops: Vec<Op>,
    /// The final image of each row it changed, in first-change order.
    pub images: Vec<RowImage>,
}

/// The change capture installed on one writer connection.
#[derive(Debug, Clone)]
pub struct Capture {
    tables: Vec<ShippedTable>,
    /// Key columns in the changes table (the widest natural key).
    key_width: usize,
}

impl Capture {
    /// Read the schema of `conn`'s main database and install the triggers on
    /// `conn` (again after a migration: installing replaces them).
    pub fn install(conn: &Connection) -> Result<Capture> {
        let tables = shipped_tables(conn)?;
        let key_width = tables.iter().map(|t| t.key.len()).max().unwrap_or(1);
        let key_columns = key_columns(key_width);
        let mut sql = format!(
            "DROP TABLE IF EXISTS {CHANGES};
             CREATE TEMP TABLE memcore_changes (
                 n INTEGER PRIMARY KEY, tbl TEXT NOT NULL, deleted INTEGER NOT NULL{key_columns});"
        );
        for table in &tables {
            sql.push_str(&triggers(table, key_width));
        }
        let _ = write!(
            sql,
            "DROP TRIGGER IF EXISTS temp.memcore_capture_ops;
             CREATE TEMP TRIGGER memcore_capture_ops AFTER INSERT ON main.oplog
             BEGIN INSERT INTO {CHANGES} (tbl, deleted, k1) VALUES ('oplog', 0, NEW.seq); END;"
        );
        conn.execute_batch(&sql)?;
        Ok(Capture { tables, key_width })
    }

    /// Record every row the replica holds as changed, so the next
    /// [`Capture::take`] ships the whole store: how rows written before the
    /// capture was installed (a store made on SQLite) reach PostgreSQL.
    pub fn record_all(&self, conn: &Connection) -> Result<()> {
        let key_columns = key_columns(self.key_width);
        for table in &self.tables {
            let values = table
                .key
                .iter()
                .map(|k| format!(", \"{k}\""))
                .collect::<Vec<_>>()
                .concat();
            let padding = ", NULL".repeat(self.key_width - table.key.len());
            conn.execute(
                &format!(
                    "INSERT INTO {CHANGES} (tbl, deleted{key_columns})
                     SELECT '{name}', 0{values}{padding} FROM main.\"{name}\"",
                    name = table.name
                ),
                [],
            )?;
        }
        Ok(())
    }

    /// The tables shipped, in schema order.
    pub fn tables(&self) -> &[ShippedTable] {
        &self.tables
    }

    /// What was changed since the last call (the ops appended, the final
    /// image of every row), then forget it. Call it inside the write's
    /// transaction, so the changes are exactly that write's.
    pub fn take(&self, conn: &Connection) -> Result<Changes> {
        let seqs: Vec<i64> = conn
            .prepare(&format!(
                "SELECT k1 FROM {CHANGES} WHERE tbl = 'oplog' ORDER BY n"
            ))?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let ops = match (seqs.first(), seqs.last()) {
            (Some(&first), Some(&last)) => {
                let appended: HashSet<i64> = seqs.iter().copied().collect();
                oplog::since(conn, first - 1, (last - first + 1) as usize)?
                    .into_iter()
                    .filter(|op| appended.contains(&op.seq))
                    .collect()
            }
            _ => Vec::new(),
        };
        let images = self.take_images(conn)?;
        conn.execute(&format!("DELETE FROM {CHANGES}"), [])?;
        Ok(Changes { ops, images })
    }

    /// Forget what was recorded without reading it: for rows applied from
    /// the log, which PostgreSQL already holds.
    pub fn discard(&self, conn: &Connection) -> Result<()> {
        conn.prepare_cached(&format!("DELETE FROM {CHANGES}"))?
            .execute([])?;
        Ok(())
    }

    fn take_images(&self, conn: &Connection) -> Result<Vec<RowImage>> {
        let keys: Vec<String> = (1..=self.key_width).map(|i| format!("k{i}")).collect();
        let key_list = keys.join(", ");
        let c_keys = keys
            .iter()
            .map(|k| format!(", c.{k}"))
            .collect::<Vec<_>>()
            .concat();
        // Per row: the last record says whether it is gone; the first orders it.
        let sql = format!(
            "SELECT c.tbl, c.deleted{c_keys} FROM {CHANGES} c
             JOIN (SELECT max(n) AS last, min(n) AS first FROM {CHANGES}
                   WHERE tbl <> 'oplog' GROUP BY tbl, {key_list}) g ON c.n = g.last
             ORDER BY g.first"
        );
        let mut changed = Vec::new();
        {
            let mut stmt = conn.prepare(&sql)?;
            let mut rows = stmt.query([])?;
            while let Some(row) = rows.next()? {
                let table: String = row.get(0)?;
                let deleted: bool = row.get(1)?;
                let key = (0..self.key_width)
                    .map(|i| row.get::<_, Value>(2 + i))
                    .collect::<rusqlite::Result<Vec<_>>>()?;
                changed.push((table, deleted, key));
            }
        }
        let mut images = Vec::with_capacity(changed.len());
        for (table, deleted, mut key) in changed {
            let shipped = self.table(&table)?;
            key.truncate(shipped.key.len());
            let row = if deleted {
                None
            } else {
                current_row(conn, shipped, &key)?
            };
            images.push(RowImage { table, key, row });
        }
        Ok(images)
    }

    fn table(&self, name: &str) -> Result<&ShippedTable> {
        self.tables
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| Error::Index(format!("captured a change of unknown table {name}")))
    }
}

/// Every table of the main database but the local ones, with its natural key.
pub fn shipped_tables(conn: &Connection) -> Result<Vec<ShippedTable>> {
    let names: Vec<String> = conn
        .prepare(
            "SELECT name FROM sqlite_master
             WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut tables = Vec::new();
    for name in names
        .into_iter()
        .filter(|n| !LOCAL_TABLES.contains(&n.as_str()))
    {
        // (column, position in the primary key: 0 = not part of it)
        let columns: Vec<(String, i64)> = conn
            .prepare("SELECT name, pk FROM pragma_table_info(?1) ORDER BY cid")?
            .query_map([&name], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let mut primary: Vec<&(String, i64)> = columns.iter().filter(|c| c.1 > 0).collect();
        primary.sort_by_key(|c| c.1);
        let key: Vec<String> = if primary.is_empty() {
            if !has_unique_id(conn, &name)? {
                return Err(Error::invalid(
                    "schema",
                    format!(
                        "Table {name} has neither a primary key nor a unique id column, so \
                         its rows cannot be named across nodes; give it one."
                    ),
                ));
            }
            vec!["id".to_owned()]
        } else {
            primary.iter().map(|c| c.0.clone()).collect()
        };
        tables.push(ShippedTable {
            name,
            columns: columns.into_iter().map(|c| c.0).collect(),
            key,
        });
    }
    Ok(tables)
}

/// Whether `table` has an `id` column that a unique index covers alone.
fn has_unique_id(conn: &Connection, table: &str) -> Result<bool> {
    let unique: Vec<String> = conn
        .prepare("SELECT name FROM pragma_index_list(?1) WHERE \"unique\"")?
        .query_map([table], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for index in unique {
        let columns: Vec<String> = conn
            .prepare("SELECT name FROM pragma_index_info(?1)")?
            .query_map([&index], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        if columns == ["id"] {
            return Ok(true);
        }
    }
    Ok(false)
}

/// `, k1, k2, …` up to `width`: the key columns of the changes table.
fn key_columns(width: usize) -> String {
    (1..=width)
        .map(|i| format!(", k{i}"))
        .collect::<Vec<_>>()
        .concat()
}

/// The three triggers of one table. An update that changes the key records
/// the old key as deleted, then the new one.
fn triggers(table: &ShippedTable, key_width: usize) -> String {
    let name = &table.name;
    let key_columns = key_columns(key_width);
    let padding = ", NULL".repeat(key_width - table.key.len());
    let record = |row: &str, deleted: u8, only_if: &str| {
        let values = table
            .key
            .iter()
            .map(|k| format!(", {row}.\"{k}\""))
            .collect::<Vec<_>>()
            .concat();
        format!(
            "INSERT INTO {CHANGES} (tbl, deleted{key_columns}) \
             SELECT '{name}', {deleted}{values}{padding}{only_if};"
        )
    };
    let key_moved = table
        .key
        .iter()
        .map(|k| format!("OLD.\"{k}\" IS NOT NEW.\"{k}\""))
        .collect::<Vec<_>>()
        .join(" OR ");
    format!(
        "DROP TRIGGER IF EXISTS temp.\"memcore_capture_{name}_insert\";
         CREATE TEMP TRIGGER \"memcore_capture_{name}_insert\" AFTER INSERT ON main.\"{name}\"
         BEGIN {insert} END;
         DROP TRIGGER IF EXISTS temp.\"memcore_capture_{name}_update\";
         CREATE TEMP TRIGGER \"memcore_capture_{name}_update\" AFTER UPDATE ON main.\"{name}\"
         BEGIN {moved} {update} END;
         DROP TRIGGER IF EXISTS temp.\"memcore_capture_{name}_delete\";
         CREATE TEMP TRIGGER \"memcore_capture_{name}_delete\" AFTER DELETE ON main.\"{name}\"
         BEGIN {delete} END;\n",
        insert = record("NEW", 0, ""),
        moved = record("OLD", 1, &format!(" WHERE {key_moved}")),
        update = record("NEW", 0, ""),
        delete = record("OLD", 1, ""),
    )
}

/// The row of `table` under `key` as it is now; `None` if it is gone.
fn current_row(
    conn: &Connection,
    table: &ShippedTable,
    key: &[Value],
) -> Result<Option<Vec<Value>>> {
    let columns: Vec<String> = table.columns.iter().map(|c| format!("\"{c}\"")).collect();
    let condition: Vec<String> = table
        .key
        .iter()
        .enumerate()
        .map(|(i, k)| format!("\"{k}\" = ?{}", i + 1))
        .collect();
    let sql = format!(
        "SELECT {} FROM main.\"{}\" WHERE {}",
        columns.join(", "),
        table.name,
        condition.join(" AND ")
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query(params_from_iter(key))?;
    let Some(row) = rows.next()? else {
        return Ok(None);
    };
    let values = (0..table.columns.len())
        .map(|i| row.get::<_, Value>(i))
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(Some(values))
}
