//! Writing a write's row images (see [`super::capture`]) into PostgreSQL's
//! record tables, in the transaction that appends its log entry
//! (docs/scale-out.md, "The truth in PostgreSQL").
//!
//! Generic over tables: an image becomes an upsert on its natural key, or a
//! delete by it. Values keep their meaning across the two databases through
//! the PostgreSQL column's type (bigint, double precision, text, bytea), so a
//! value that does not fit its column fails loudly, naming it. `doc_key` is
//! left out: it names a searchable version in one node's own indexes; so is
//! `checksum`: it guards one node's SQLite file, and a replica computes it
//! as it applies a row (`super::replica::upsert`).

use std::collections::HashMap;

use postgres::types::{ToSql, Type};
use postgres::{GenericClient, Statement};
use rusqlite::types::Value;

use super::capture::{RowImage, ShippedTable};
use super::entry::DOC_KEY;
use super::schema::INHERITED_NAMESPACE;
use crate::error::{Error, Result};
use crate::store::checksum;

/// Columns that stay on the node: its doc keys, and the checksums that
/// guard its own file (each replica writes them as it applies a row).
const LOCAL_COLUMNS: &[&str] = &[DOC_KEY, checksum::COLUMN];

/// Write `images` (of tables described by `tables`) into the record tables
/// (a one-off: a node keeps a [`RecordWriter`] per connection instead).
pub fn write_images(
    tx: &mut impl GenericClient,
    tables: &[ShippedTable],
    images: &[RowImage],
) -> Result<()> {
    RecordWriter::default().write_images(tx, tables, images)
}

/// Writes row images on one connection, keeping the statements it prepared
/// (one per table and kind of change): after the first write, a row costs
/// one round trip, not two. Use it with the connection it first wrote on:
/// prepared statements belong to a connection.
#[derive(Default)]
pub struct RecordWriter {
    statements: HashMap<String, Statement>,
}

impl std::fmt::Debug for RecordWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordWriter")
            .field("statements", &self.statements.len())
            .finish()
    }
}

impl RecordWriter {
    /// `sql` prepared once on this writer's connection (the node's lock and
    /// log append, `super::ship`): a query given as text is parsed again at
    /// every call, one more round trip per write.
    pub fn prepared(&mut self, client: &mut impl GenericClient, sql: &str) -> Result<Statement> {
        prepared(client, &mut self.statements, sql)
    }

    /// Write `images` into the record tables: deletes first, then upserts.
    /// Images are final states, and PostgreSQL runs a cascade at once, so a
    /// delete after an upsert could take a row the write kept; the other way
    /// round it never can.
    pub fn write_images(
        &mut self,
        tx: &mut impl GenericClient,
        tables: &[ShippedTable],
        images: &[RowImage],
    ) -> Result<()> {
        let by_name: HashMap<&str, &ShippedTable> =
            tables.iter().map(|t| (t.name.as_str(), t)).collect();
        let deletes = images.iter().filter(|i| i.row.is_none());
        // Parents before children (tables are in schema order): a child
        // takes its namespace from its parent's row (`INHERITED_NAMESPACE`).
        let order = |image: &RowImage| tables.iter().position(|t| t.name == image.table);
        let mut upserts: Vec<&RowImage> = images.iter().filter(|i| i.row.is_some()).collect();
        upserts.sort_by_key(|image| order(image));
        for image in deletes.chain(upserts) {
            let table = by_name.get(image.table.as_str()).ok_or_else(|| {
                Error::invalid(
                    "table",
                    format!("No shipped table named {} for a row image", image.table),
                )
            })?;
            match &image.row {
                Some(row) => upsert(tx, &mut self.statements, table, row)?,
                None => delete(tx, &mut self.statements, table, &image.key)?,
            }
        }
        Ok(())
    }
}

type Statements = HashMap<String, Statement>;

fn upsert(
    tx: &mut impl GenericClient,
    statements: &mut Statements,
    table: &ShippedTable,
    row: &[Value],
) -> Result<()> {
    let shipped: Vec<(&String, &Value)> = table
        .columns
        .iter()
        .zip(row)
        .filter(|(c, _)| !LOCAL_COLUMNS.contains(&c.as_str()))
        .collect();
    let mut columns: Vec<String> = shipped.iter().map(|(c, _)| quoted(c)).collect();
    let mut placeholders: Vec<String> = (1..=shipped.len()).map(|i| format!("${i}")).collect();
    if let Some(parent) = inherited_namespace(table, &shipped) {
        columns.push(quoted("namespace"));
        placeholders.push(parent);
    }
    let key: Vec<String> = table.key.iter().map(|k| quoted(k)).collect();
    let updates: Vec<String> = shipped
        .iter()
        .filter(|(c, _)| !table.key.contains(c))
        .map(|(c, _)| format!("{0} = EXCLUDED.{0}", quoted(c)))
        .collect();
    let on_conflict = if updates.is_empty() {
        "DO NOTHING".to_owned()
    } else {
        format!("DO UPDATE SET {}", updates.join(", "))
    };
    let sql = format!(
        "INSERT INTO memcore.{} ({}) VALUES ({}) ON CONFLICT ({}) {on_conflict}",
        quoted(&table.name),
        columns.join(", "),
        placeholders.join(", "),
        key.join(", "),
    );
    let values: Vec<(&str, &Value)> = shipped.iter().map(|(c, v)| (c.as_str(), *v)).collect();
    execute(tx, statements, &table.name, &sql, &values)
}

/// For a table whose namespace PostgreSQL alone holds, the expression that
/// reads it from the parent row (the parent's key is among the parameters).
fn inherited_namespace(table: &ShippedTable, shipped: &[(&String, &Value)]) -> Option<String> {
    let (_, key, parent) = INHERITED_NAMESPACE
        .iter()
        .find(|(name, _, _)| *name == table.name)?;
    if table.columns.iter().any(|c| c == "namespace") {
        return None;
    }
    let at = shipped.iter().position(|(c, _)| c.as_str() == *key)? + 1;
    Some(format!(
        "(SELECT namespace FROM memcore.{} WHERE id = ${at})",
        quoted(parent)
    ))
}

fn delete(
    tx: &mut impl GenericClient,
    statements: &mut Statements,
    table: &ShippedTable,
    key: &[Value],
) -> Result<()> {
    let condition: Vec<String> = table
        .key
        .iter()
        .enumerate()
        .map(|(i, k)| format!("{} = ${}", quoted(k), i + 1))
        .collect();
    let sql = format!(
        "DELETE FROM memcore.{} WHERE {}",
        quoted(&table.name),
        condition.join(" AND ")
    );
    let values: Vec<(&str, &Value)> = table.key.iter().map(String::as_str).zip(key).collect();
    execute(tx, statements, &table.name, &sql, &values)
}

/// Run `sql`, prepared once per connection, so the parameters take the
/// types of their columns.
/// `sql` from `statements`, prepared on `client` the first time.
fn prepared(
    client: &mut impl GenericClient,
    statements: &mut Statements,
    sql: &str,
) -> Result<Statement> {
    if let Some(statement) = statements.get(sql) {
        return Ok(statement.clone());
    }
    let statement = client.prepare(sql)?;
    statements.insert(sql.to_owned(), statement.clone());
    Ok(statement)
}

fn execute(
    tx: &mut impl GenericClient,
    statements: &mut Statements,
    table: &str,
    sql: &str,
    values: &[(&str, &Value)],
) -> Result<()> {
    let statement = prepared(tx, statements, sql)?;
    let params = values
        .iter()
        .zip(statement.params())
        .map(|((column, value), ty)| param(table, column, value, ty))
        .collect::<Result<Vec<_>>>()?;
    let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| &**p as _).collect();
    tx.execute(&statement, &refs)?;
    Ok(())
}

/// `value` as a parameter of PostgreSQL type `ty`.
fn param(table: &str, column: &str, value: &Value, ty: &Type) -> Result<Box<dyn ToSql + Sync>> {
    let mismatch = || {
        Error::invalid(
            "row",
            format!("{table}.{column}: SQLite value {value:?} does not fit PostgreSQL type {ty}"),
        )
    };
    Ok(match (value, ty) {
        (Value::Null, &Type::INT8) => Box::new(None::<i64>),
        (Value::Null, &Type::FLOAT8) => Box::new(None::<f64>),
        (Value::Null, &Type::TEXT) => Box::new(None::<String>),
        (Value::Null, &Type::BYTEA) => Box::new(None::<Vec<u8>>),
        (Value::Integer(i), &Type::INT8) => Box::new(*i),
        // SQLite stores a REAL column's whole numbers as integers.
        (Value::Integer(i), &Type::FLOAT8) => Box::new(*i as f64),
        (Value::Real(f), &Type::FLOAT8) => Box::new(*f),
        (Value::Text(s), &Type::TEXT) => Box::new(s.clone()),
        (Value::Blob(b), &Type::BYTEA) => Box::new(b.clone()),
        _ => return Err(mismatch()),
    })
}

fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}
