//! What a log entry holds (format [`super::FORMAT`] = 1): one write's ops and
//! the final images of the rows it changed, so any node can apply the write
//! to its own replica without running it again (docs/scale-out.md).
//!
//! Doc keys are node-local (a replica's own op-log `seq`s), so a `doc_key`
//! value is never shipped: it becomes "the key made by op *i* of this entry",
//! or "unchanged" when the write kept the row's searchable version.
//!
//! The layout is a small length-prefixed binary one, little-endian: vectors
//! (most of an entry's bytes) travel as they are stored, with no text
//! encoding. Every table's column names travel once per entry, so a node
//! reads an entry by name, not by position.

use rusqlite::types::Value;

use super::capture::{Changes, ShippedTable};
use crate::error::{Error, Result};
use crate::kind::Kind;
use crate::store::oplog::Action;

/// The column that holds a row's searchable version in this node's indexes.
pub const DOC_KEY: &str = "doc_key";

/// One op of the write, without its node-local seq and keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryOp {
    pub action: Action,
    pub kind: Kind,
    pub record_id: String,
    /// Whether the op retires the record's previous searchable version (the
    /// writer's `prev_key` was set); each replica names its own.
    pub retires_previous: bool,
}

/// A value in a shipped row.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Value(Value),
    /// A doc key: the one op number `.0` of the entry makes.
    KeyOfOp(u32),
    /// A doc key the write left as it was.
    KeyKept,
}

/// A table as the entry names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryTable {
    pub name: String,
    pub columns: Vec<String>,
    pub key: Vec<String>,
}

/// One changed row: its table (an index into [`Entry::tables`]), its natural
/// key, and every column's value (`None`: the row is gone).
#[derive(Debug, Clone, PartialEq)]
pub struct EntryRow {
    pub table: u16,
    pub key: Vec<Value>,
    pub row: Option<Vec<Cell>>,
}

/// One write, as shipped.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Entry {
    pub ops: Vec<EntryOp>,
    pub tables: Vec<EntryTable>,
    pub rows: Vec<EntryRow>,
}

impl Entry {
    /// The entry of a write whose `changes` were captured on a replica with
    /// the shipped `tables`.
    pub fn from_changes(changes: &Changes, tables: &[ShippedTable]) -> Result<Entry> {
        let ops = changes
            .ops
            .iter()
            .map(|op| EntryOp {
                action: op.action,
                kind: op.kind,
                record_id: op.record_id.clone(),
                retires_previous: op.prev_key.is_some(),
            })
            .collect();
        let mut entry = Entry {
            ops,
            ..Entry::default()
        };
        for image in &changes.images {
            let shipped = tables
                .iter()
                .find(|t| t.name == image.table)
                .ok_or_else(|| Error::Index(format!("no shipped table {}", image.table)))?;
            let table = entry.table_index(shipped)?;
            let row = image.row.as_ref().map(|values| {
                shipped
                    .columns
                    .iter()
                    .zip(values)
                    .map(|(column, value)| match (column.as_str(), value) {
                        (DOC_KEY, Value::Integer(key)) => changes
                            .ops
                            .iter()
                            .position(|op| op.seq == *key)
                            .map_or(Cell::KeyKept, |i| Cell::KeyOfOp(i as u32)),
                        _ => Cell::Value(value.clone()),
                    })
                    .collect()
            });
            entry.rows.push(EntryRow {
                table,
                key: image.key.clone(),
                row,
            });
        }
        Ok(entry)
    }

    fn table_index(&mut self, shipped: &ShippedTable) -> Result<u16> {
        if let Some(i) = self.tables.iter().position(|t| t.name == shipped.name) {
            return Ok(i as u16);
        }
        let index = u16::try_from(self.tables.len())
            .map_err(|_| Error::Index("more tables than an entry can name".into()))?;
        self.tables.push(EntryTable {
            name: shipped.name.clone(),
            columns: shipped.columns.clone(),
            key: shipped.key.clone(),
        });
        Ok(index)
    }

    /// The entry's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Encoder::default();
        out.count(self.ops.len());
        for op in &self.ops {
            out.byte(op.action as u8);
            out.byte(op.kind as u8);
            out.byte(u8::from(op.retires_previous));
            out.text(&op.record_id);
        }
        out.count(self.tables.len());
        for table in &self.tables {
            out.text(&table.name);
            out.count(table.columns.len());
            for column in &table.columns {
                out.text(column);
            }
            out.count(table.key.len());
            for column in &table.key {
                out.text(column);
            }
        }
        out.count(self.rows.len());
        for row in &self.rows {
            out.bytes.extend_from_slice(&row.table.to_le_bytes());
            out.count(row.key.len());
            for value in &row.key {
                out.value(value);
            }
            match &row.row {
                None => out.byte(0),
                Some(cells) => {
                    out.byte(1);
                    out.count(cells.len());
                    for cell in cells {
                        out.cell(cell);
                    }
                }
            }
        }
        out.bytes
    }

    /// Read an entry's bytes; damaged or truncated bytes are a `STORAGE_ERROR`.
    pub fn decode(bytes: &[u8]) -> Result<Entry> {
        let mut input = Decoder { bytes, at: 0 };
        let mut entry = Entry::default();
        for _ in 0..input.count()? {
            let action = match input.byte()? {
                1 => Action::Upsert,
                2 => Action::Delete,
                3 => Action::Meta,
                other => return Err(input.damaged(&format!("unknown action {other}"))),
            };
            let code = input.byte()?;
            let kind = Kind::from_code(i64::from(code))
                .ok_or_else(|| input.damaged(&format!("unknown kind {code}")))?;
            let retires_previous = input.byte()? != 0;
            let record_id = input.text()?;
            entry.ops.push(EntryOp {
                action,
                kind,
                record_id,
                retires_previous,
            });
        }
        for _ in 0..input.count()? {
            let name = input.text()?;
            let columns = (0..input.count()?)
                .map(|_| input.text())
                .collect::<Result<_>>()?;
            let key = (0..input.count()?)
                .map(|_| input.text())
                .collect::<Result<_>>()?;
            entry.tables.push(EntryTable { name, columns, key });
        }
        for _ in 0..input.count()? {
            let table = u16::from_le_bytes(input.array()?);
            if usize::from(table) >= entry.tables.len() {
                return Err(input.damaged("a row of an unnamed table"));
            }
            let key = (0..input.count()?)
                .map(|_| input.value())
                .collect::<Result<_>>()?;
            let row = match input.byte()? {
                0 => None,
                _ => Some(
                    (0..input.count()?)
                        .map(|_| input.cell())
                        .collect::<Result<_>>()?,
                ),
            };
            entry.rows.push(EntryRow { table, key, row });
        }
        if input.at != bytes.len() {
            return Err(input.damaged("bytes after the last row"));
        }
        Ok(entry)
    }
}

/// Value tags of the layout.
const NULL: u8 = 0;
const INTEGER: u8 = 1;
const REAL: u8 = 2;
const TEXT: u8 = 3;
const BLOB: u8 = 4;
const KEY_OF_OP: u8 = 5;
const KEY_KEPT: u8 = 6;

#[derive(Default)]
struct Encoder {
    bytes: Vec<u8>,
}

impl Encoder {
    fn byte(&mut self, b: u8) {
        self.bytes.push(b);
    }

    fn count(&mut self, n: usize) {
        self.bytes.extend_from_slice(&(n as u32).to_le_bytes());
    }

    fn text(&mut self, s: &str) {
        self.count(s.len());
        self.bytes.extend_from_slice(s.as_bytes());
    }

    fn value(&mut self, value: &Value) {
        match value {
            Value::Null => self.byte(NULL),
            Value::Integer(i) => {
                self.byte(INTEGER);
                self.bytes.extend_from_slice(&i.to_le_bytes());
            }
            Value::Real(f) => {
                self.byte(REAL);
                self.bytes.extend_from_slice(&f.to_le_bytes());
            }
            Value::Text(s) => {
                self.byte(TEXT);
                self.text(s);
            }
            Value::Blob(b) => {
                self.byte(BLOB);
                self.count(b.len());
                self.bytes.extend_from_slice(b);
            }
        }
    }

    fn cell(&mut self, cell: &Cell) {
        match cell {
            Cell::Value(v) => self.value(v),
            Cell::KeyOfOp(i) => {
                self.byte(KEY_OF_OP);
                self.bytes.extend_from_slice(&i.to_le_bytes());
            }
            Cell::KeyKept => self.byte(KEY_KEPT),
        }
    }
}

struct Decoder<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Decoder<'_> {
    fn damaged(&self, what: &str) -> Error {
        Error::Damaged {
            path: "memcore.log".into(),
            message: format!(
                "A PostgreSQL log entry cannot be read ({what}, at byte {}); it was damaged \
                 or written by an incompatible memcore.",
                self.at
            ),
        }
    }

    fn take(&mut self, n: usize) -> Result<&[u8]> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| self.damaged("it ends early"))?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn byte(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }

    fn count(&mut self) -> Result<usize> {
        Ok(u32::from_le_bytes(self.array()?) as usize)
    }

    fn text(&mut self) -> Result<String> {
        let n = self.count()?;
        let bytes = self.take(n)?.to_vec();
        String::from_utf8(bytes).map_err(|_| self.damaged("text that is not UTF-8"))
    }

    fn value(&mut self) -> Result<Value> {
        let tag = self.byte()?;
        self.tagged(tag)
    }

    fn tagged(&mut self, tag: u8) -> Result<Value> {
        Ok(match tag {
            NULL => Value::Null,
            INTEGER => Value::Integer(i64::from_le_bytes(self.array()?)),
            REAL => Value::Real(f64::from_le_bytes(self.array()?)),
            TEXT => Value::Text(self.text()?),
            BLOB => {
                let n = self.count()?;
                Value::Blob(self.take(n)?.to_vec())
            }
            other => return Err(self.damaged(&format!("unknown value tag {other}"))),
        })
    }

    fn cell(&mut self) -> Result<Cell> {
        Ok(match self.byte()? {
            KEY_OF_OP => Cell::KeyOfOp(u32::from_le_bytes(self.array()?)),
            KEY_KEPT => Cell::KeyKept,
            tag => Cell::Value(self.tagged(tag)?),
        })
    }
}
