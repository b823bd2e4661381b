//! What every record table shares, written once. A table implements
//! [`Table`] (its columns and how a row becomes its record) and, when its rows
//! are search documents, [`DocumentTable`] (its index text and catalog facts);
//! the reads below then work on it: by document key, an export page, the
//! document key of an id, a count per namespace, the indexed content and the
//! catalog scan. A new table, or another backend, implements the two traits.

use rusqlite::{Connection, OptionalExtension, Params, Row, params};

use crate::catalog::DocLabels;
use crate::error::Result;
use crate::kind::Kind;
use crate::store::vectors::decode;
use crate::store::{IndexRow, checksum};
use crate::temporal::Timestamp;

/// A table whose rows map to one record type. A table whose rows carry a
/// checksum ([`crate::store::checksum`]) reads it last in [`Table::COLUMNS`]
/// and verifies it in [`Table::from_row`].
pub trait Table {
    /// The record a row becomes.
    type Record;
    /// The table's name.
    const NAME: &'static str;
    /// Where a record is read from: the table, with the joins its columns need.
    const FROM: &'static str;
    /// The columns a record is read from, in [`Table::from_row`] order.
    const COLUMNS: &'static str;
    /// The prefix of the table's own columns in [`Table::FROM`]: its alias
    /// (`o.`) when it joins, else none.
    const ALIAS: &'static str = "";

    /// The record of a row read with [`Table::COLUMNS`].
    fn from_row(r: &Row<'_>) -> rusqlite::Result<Self::Record>;
}

/// A table whose rows are search documents: each has a `doc_key`, an index
/// text and an optional `embedding`, and is labelled in the catalog.
pub trait DocumentTable: Table {
    /// The kind of document a row is.
    const KIND: Kind;
    /// The columns the index text is made of (read after `doc_key`): by
    /// default the record's `content`.
    const TEXT_COLUMNS: &'static str = "content";
    /// The full scan of every row's catalog facts, in [`DocumentTable::catalog_row`] order.
    const CATALOG_SCAN: &'static str;
    /// The id column in [`DocumentTable::CATALOG_SCAN`] (qualified where it joins).
    const CATALOG_ID: &'static str = "id";

    /// The index text from [`DocumentTable::TEXT_COLUMNS`] (at positions 1
    /// on). One definition for writing, rebuilding and restoring, so a rebuilt
    /// index equals the one built live. `conn` is for text that reads other
    /// rows (a turn's neighbours). By default the one text column itself.
    fn index_text(conn: &Connection, r: &Row<'_>) -> Result<String> {
        let _ = conn;
        Ok(r.get(1)?)
    }

    /// The catalog facts of a row read by [`DocumentTable::CATALOG_SCAN`].
    fn catalog_row(r: &Row<'_>) -> rusqlite::Result<CatalogRow>;
}

/// What the catalog needs about one document.
#[derive(Debug, Clone)]
pub struct CatalogRow {
    pub kind: Kind,
    pub doc_key: u64,
    /// The record's id, where a reader needs it (a memory's mention links).
    pub id: Option<String>,
    pub namespace: String,
    pub thread_id: Option<String>,
    /// Kind-specific scope: an entity's own id, an observation's entity, a
    /// turn's conversation, a code chunk's project.
    pub scope: Option<String>,
    /// Kind-specific tag: a code chunk's language, a memory's type.
    pub tag: Option<String>,
    pub valid_from: Timestamp,
    /// When the document stops being valid (a memory's earlier of
    /// `valid_until` and `expires_at`; an archived conversation's turns).
    pub valid_end: Option<Timestamp>,
    pub superseded: bool,
    /// Percent of the text's sentences that ask ([`crate::asking`]).
    pub asks: u8,
}

impl CatalogRow {
    /// A row of `kind` whose scan starts with `doc_key, namespace`; every
    /// other fact is empty until the table's mapping sets it.
    pub fn starting(kind: Kind, r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(CatalogRow {
            kind,
            doc_key: key_at(r, 0)?,
            id: None,
            namespace: r.get(1)?,
            thread_id: None,
            scope: None,
            tag: None,
            valid_from: 0,
            valid_end: None,
            superseded: false,
            asks: 0,
        })
    }

    /// The labels the catalog files the document under.
    pub fn labels(&self) -> DocLabels<'_> {
        DocLabels {
            kind: self.kind,
            namespace: &self.namespace,
            thread: self.thread_id.as_deref(),
            scope: self.scope.as_deref(),
            tag: self.tag.as_deref(),
            valid_from: self.valid_from,
            valid_end: self.valid_end,
            superseded: self.superseded,
            asks: self.asks,
        }
    }
}

/// One record's catalog facts by its id, if it exists (a follower applying
/// one logged write).
pub fn catalog_row_of<T: DocumentTable>(conn: &Connection, id: &str) -> Result<Option<CatalogRow>> {
    Ok(conn
        .prepare_cached(&format!("{} WHERE {} = ?1", T::CATALOG_SCAN, T::CATALOG_ID))?
        .query_row([id], T::catalog_row)
        .optional()?)
}

/// The one record `sql` selects, if any.
pub fn one<T: Table>(
    conn: &Connection,
    sql: &str,
    params: impl Params,
) -> Result<Option<T::Record>> {
    conn.prepare_cached(sql)?
        .query_row(params, T::from_row)
        .optional()
        .map_err(checksum::read_error(conn))
}

/// Every record `sql` selects, in its order.
pub fn all<T: Table>(conn: &Connection, sql: &str, params: impl Params) -> Result<Vec<T::Record>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(params, T::from_row)?;
    rows.collect::<rusqlite::Result<_>>()
        .map_err(checksum::read_error(conn))
}

/// The record with document key `key` (a search hit), if it still exists.
pub fn by_doc_key<T: DocumentTable>(conn: &Connection, key: u64) -> Result<Option<T::Record>> {
    one::<T>(conn, &by_doc_key_sql::<T>(), [key as i64])
}

/// The records of document keys (search hits), in key order. Keys with no
/// row (deleted since the search) are simply absent.
pub fn by_doc_keys<T: DocumentTable>(
    conn: &Connection,
    keys: &[u64],
) -> Result<Vec<(u64, T::Record)>> {
    // One read transaction for every lookup: each statement outside one
    // opens and closes its own (a lock of the WAL and a read of its index
    // header), which was half the time of fetching a search's ten hits.
    let snapshot = if conn.is_autocommit() && keys.len() > 1 {
        Some(conn.unchecked_transaction()?)
    } else {
        None
    };
    let mut stmt = conn.prepare_cached(&by_doc_key_sql::<T>())?;
    let mut out = Vec::with_capacity(keys.len());
    for &key in keys {
        let record = stmt
            .query_row([key as i64], T::from_row)
            .optional()
            .map_err(checksum::read_error(conn))?;
        out.extend(record.map(|r| (key, r)));
    }
    drop(stmt);
    drop(snapshot);
    Ok(out)
}

fn by_doc_key_sql<T: Table>() -> String {
    format!(
        "SELECT {} {} WHERE {}doc_key = ?1",
        T::COLUMNS,
        T::FROM,
        T::ALIAS
    )
}

/// Records ordered by id after `after` (an export cursor), of one namespace
/// or, when None, of every one.
pub fn page<T: Table>(
    conn: &Connection,
    namespace: Option<&str>,
    after: &str,
    limit: usize,
) -> Result<Vec<T::Record>> {
    let a = T::ALIAS;
    let sql = format!(
        "SELECT {} {} WHERE (?1 IS NULL OR {a}namespace = ?1) AND {a}id > ?2
         ORDER BY {a}id LIMIT ?3",
        T::COLUMNS,
        T::FROM
    );
    all::<T>(conn, &sql, params![namespace, after, limit as i64])
}

/// The current document key of a record.
pub fn doc_key<T: DocumentTable>(conn: &Connection, id: &str) -> Result<Option<i64>> {
    let sql = format!("SELECT doc_key FROM {} WHERE id = ?1", T::NAME);
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([id], |r| r.get(0))
        .optional()?)
}

/// Number of records in a namespace.
pub fn count<T: Table>(conn: &Connection, namespace: &str) -> Result<i64> {
    let sql = format!("SELECT count(*) FROM {} WHERE namespace = ?1", T::NAME);
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([namespace], |r| r.get(0))?)
}

/// The indexed content of a record: its current key, index text and vector.
pub fn index_doc<T: DocumentTable>(conn: &Connection, id: &str) -> Result<Option<IndexRow>> {
    let sql = format!(
        "SELECT doc_key, {}, embedding FROM {} WHERE id = ?1",
        T::TEXT_COLUMNS,
        T::NAME
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query([id])?;
    let Some(r) = rows.next()? else {
        return Ok(None);
    };
    let embedding = r.as_ref().column_count() - 1;
    let blob: Option<Vec<u8>> = r.get(embedding)?;
    Ok(Some((
        r.get::<_, i64>(0)? as u64,
        T::index_text(conn, r)?,
        blob.map(|b| decode(&b)),
    )))
}

/// Every row's catalog facts, for rebuilding the catalog on open.
pub fn catalog_rows<T: DocumentTable>(
    conn: &Connection,
    mut each: impl FnMut(CatalogRow),
) -> Result<()> {
    scan(conn, T::CATALOG_SCAN, |r| {
        each(T::catalog_row(r)?);
        Ok(())
    })
}

/// Run a full scan, handing each row to `each`. Not cached: a scan runs once
/// per open, and its statement would only hold a slot in the cache.
pub fn scan(
    conn: &Connection,
    sql: &str,
    mut each: impl FnMut(&Row<'_>) -> rusqlite::Result<()>,
) -> Result<()> {
    let mut stmt = conn.prepare(sql)?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        each(r)?;
    }
    Ok(())
}

/// A document key read from a row.
pub fn key_at(r: &Row<'_>, i: usize) -> rusqlite::Result<u64> {
    Ok(r.get::<_, i64>(i)? as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::Turn;
    use crate::engine::{Engine, EngineOptions};
    use crate::memory::NewMemory;
    use crate::store::conversations::{self, Turns, turn_search_text};
    use crate::store::memories::Memories;
    use crate::store::{Store, StoreOptions};

    /// Three turns of one conversation in namespace "ns" (doc keys 11..=13,
    /// each with a two-dimensional vector) and one of another namespace.
    fn store_with_turns() -> (tempfile::TempDir, Store, Vec<Turn>) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        let turn = |i: i64, namespace: &str, text: &str| Turn {
            id: format!("turn_{i}"),
            namespace: namespace.into(),
            conversation_id: "c1".into(),
            turn_key: format!("k{i}"),
            turn_index: i,
            user_text: text.into(),
            agent_text: None,
            thread_id: None,
            created_at: 1_700_000_000_000_000 + i,
        };
        let turns = vec![
            turn(0, "ns", "first"),
            turn(1, "ns", "second"),
            turn(2, "ns", "third"),
            turn(3, "other", "elsewhere"),
        ];
        store
            .write(|tx| {
                for t in &turns {
                    conversations::touch_conversation(tx, &t.namespace, "c1", t.created_at)?;
                    let vector = [t.turn_index as f32, 1.0];
                    conversations::insert_turn(tx, t, 11 + t.turn_index, Some(&vector))?;
                }
                Ok(())
            })
            .unwrap();
        (dir, store, turns)
    }

    #[test]
    fn index_doc_reads_the_text_definition_and_the_vector() {
        let (_dir, store, turns) = store_with_turns();
        let conn = store.reader().unwrap();
        let (key, text, vector) = index_doc::<Turns>(&conn, "turn_2").unwrap().unwrap();
        let third = &turns[2];
        let expected = turn_search_text(&conn, "ns", "c1", 2, third.created_at, "third").unwrap();
        assert_eq!((key, text.as_str()), (13, expected.as_str()));
        assert!(
            text.ends_with("\nfirst\nsecond\nthird\nthird\nthird"),
            "{text}"
        );
        assert_eq!(vector, Some(vec![2.0, 1.0]));
        assert!(index_doc::<Turns>(&conn, "missing").unwrap().is_none());
    }

    #[test]
    fn by_doc_keys_keeps_the_order_and_skips_missing_keys() {
        let (_dir, store, turns) = store_with_turns();
        let conn = store.reader().unwrap();
        let found = by_doc_keys::<Turns>(&conn, &[13, 99, 11]).unwrap();
        assert_eq!(found, vec![(13, turns[2].clone()), (11, turns[0].clone())]);
        assert_eq!(doc_key::<Turns>(&conn, "turn_1").unwrap(), Some(12));
        assert_eq!(count::<Turns>(&conn, "ns").unwrap(), 3);
    }

    #[test]
    fn pages_follow_the_id_cursor_within_a_namespace() {
        let (_dir, store, turns) = store_with_turns();
        let conn = store.reader().unwrap();
        let first = page::<Turns>(&conn, Some("ns"), "", 2).unwrap();
        assert_eq!(first, turns[..2].to_vec());
        let rest = page::<Turns>(&conn, Some("ns"), &first[1].id, 2).unwrap();
        assert_eq!(rest, vec![turns[2].clone()]);
        assert_eq!(page::<Turns>(&conn, None, "", 10).unwrap().len(), 4);
    }

    #[test]
    fn catalog_rows_carry_each_kinds_scope_and_end() {
        let (_dir, store, _) = store_with_turns();
        let mut rows = Vec::new();
        catalog_rows::<Turns>(&store.reader().unwrap(), |row| rows.push(row)).unwrap();
        assert_eq!(rows.len(), 4);
        let labels = rows[0].labels();
        assert_eq!(labels.kind, Kind::UserTurn);
        assert_eq!(
            labels.scope,
            Some("c1"),
            "a turn is scoped by its conversation"
        );

        // A memory's catalog end is the earlier of valid_until and expires_at.
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(dir.path(), &EngineOptions::default()).unwrap();
        let memory = engine
            .store_memory(NewMemory {
                expires_at: Some(4_000_000_000_000_000),
                ..NewMemory::text("expires")
            })
            .unwrap();
        let mut rows = Vec::new();
        catalog_rows::<Memories>(&engine.store().reader().unwrap(), |row| rows.push(row)).unwrap();
        let [row] = rows.as_slice() else {
            panic!("one memory: {rows:?}")
        };
        assert_eq!(row.id.as_deref(), Some(memory.id.as_str()));
        assert_eq!(row.labels().valid_end, Some(4_000_000_000_000_000));
        assert_eq!(row.labels().kind, Kind::Memory);
    }
}
