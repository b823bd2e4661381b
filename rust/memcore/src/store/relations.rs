//! SQL for relations between entities and for memory ↔ entity mentions.

use rusqlite::{Connection, Row, params};

use crate::error::Result;
use crate::knowledge::Relation;
use crate::store::table::{self, Table};

const COLUMNS: &str = "r.id, r.namespace, r.from_entity, r.to_entity, f.name, t.name, \
     r.relation_type, r.importance, r.thread_id, r.created_at, r.valid_from, r.valid_until";
const JOIN: &str = "FROM relations r JOIN entities f ON f.id = r.from_entity \
     JOIN entities t ON t.id = r.to_entity";

/// The `relations` table, read with both entities' names.
#[derive(Debug, Clone, Copy)]
pub struct Relations;

impl Table for Relations {
    type Record = Relation;
    const NAME: &'static str = "relations";
    const FROM: &'static str = JOIN;
    const COLUMNS: &'static str = COLUMNS;
    const ALIAS: &'static str = "r.";

    fn from_row(r: &Row<'_>) -> rusqlite::Result<Relation> {
        Ok(Relation {
            id: r.get(0)?,
            namespace: r.get(1)?,
            from_entity: r.get(2)?,
            to_entity: r.get(3)?,
            from_name: r.get(4)?,
            to_name: r.get(5)?,
            relation_type: r.get(6)?,
            importance: r.get(7)?,
            thread_id: r.get(8)?,
            created_at: r.get(9)?,
            valid_from: r.get(10)?,
            valid_until: r.get(11)?,
        })
    }
}

/// Insert a relation unless the same (from, to, type) exists; returns
/// whether it was inserted.
pub fn insert(conn: &Connection, rel: &Relation) -> Result<bool> {
    let n = conn
        .prepare_cached(
            "INSERT INTO relations(id, namespace, from_entity, to_entity, relation_type,
                 importance, thread_id, created_at, valid_from, valid_until)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
             ON CONFLICT(from_entity, to_entity, relation_type) DO NOTHING",
        )?
        .execute(params![
            rel.id,
            rel.namespace,
            rel.from_entity,
            rel.to_entity,
            rel.relation_type,
            rel.importance,
            rel.thread_id,
            rel.created_at,
            rel.valid_from,
            rel.valid_until,
        ])?;
    Ok(n > 0)
}

/// A relation by its triple.
pub fn by_triple(
    conn: &Connection,
    from: &str,
    to: &str,
    relation_type: &str,
) -> Result<Option<Relation>> {
    let sql = format!(
        "SELECT {COLUMNS} {JOIN}
             WHERE r.from_entity = ?1 AND r.to_entity = ?2 AND r.relation_type = ?3"
    );
    table::one::<Relations>(conn, &sql, params![from, to, relation_type])
}

/// Delete a relation by id; returns whether it existed.
pub fn delete(conn: &Connection, id: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached("DELETE FROM relations WHERE id = ?1")?
        .execute([id])?
        > 0)
}

/// Relations touching an entity (either end).
pub fn of_entity(conn: &Connection, entity_id: &str) -> Result<Vec<Relation>> {
    let sql = format!(
        "SELECT {COLUMNS} {JOIN} WHERE r.from_entity = ?1 OR r.to_entity = ?1
         ORDER BY r.created_at, r.id"
    );
    table::all::<Relations>(conn, &sql, [entity_id])
}

/// Every relation of a namespace (for the in-memory graph and exports).
pub fn all(conn: &Connection, namespace: Option<&str>) -> Result<Vec<Relation>> {
    let sql = format!(
        "SELECT {COLUMNS} {JOIN} WHERE ?1 IS NULL OR r.namespace = ?1 ORDER BY r.created_at, r.id"
    );
    table::all::<Relations>(conn, &sql, [namespace])
}

// -- mentions -----------------------------------------------------------------------

/// Link a memory to an entity (idempotent; an explicit link stays explicit).
pub fn add_mention(
    conn: &Connection,
    memory_id: &str,
    entity_id: &str,
    explicit: bool,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO mentions(memory_id, entity_id, explicit) VALUES (?1, ?2, ?3)
         ON CONFLICT(memory_id, entity_id) DO UPDATE SET explicit = max(explicit, excluded.explicit)",
    )?
    .execute(params![memory_id, entity_id, i64::from(explicit)])?;
    Ok(())
}

/// Drop a memory's links found by name (explicit ones stay), e.g. when its
/// content changes and names are matched again.
pub fn clear_found_mentions(conn: &Connection, memory_id: &str) -> Result<()> {
    conn.prepare_cached("DELETE FROM mentions WHERE memory_id = ?1 AND explicit = 0")?
        .execute([memory_id])?;
    Ok(())
}

/// Entity ids a memory is linked to.
pub fn entities_of_memory(conn: &Connection, memory_id: &str) -> Result<Vec<String>> {
    let mut stmt = conn
        .prepare_cached("SELECT entity_id FROM mentions WHERE memory_id = ?1 ORDER BY entity_id")?;
    let rows = stmt.query_map([memory_id], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Every mention as (memory doc key, entity id), for the in-memory graph.
pub fn all_mentions(conn: &Connection, mut each: impl FnMut(&str, &str)) -> Result<()> {
    // No join: the caller maps memory ids to document keys from the scan it
    // made anyway. Joining cost a random row read of `memories` per mention.
    table::scan(conn, "SELECT memory_id, entity_id FROM mentions", |r| {
        each(text_at(r, 0)?, text_at(r, 1)?);
        Ok(())
    })
}

/// The entities one memory mentions.
pub fn mentions_of(conn: &Connection, memory_id: &str) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached("SELECT entity_id FROM mentions WHERE memory_id = ?1")?;
    let rows = stmt.query_map([memory_id], |r| r.get(0))?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// What the graph needs of every relation (no entity names, so no join):
/// (id, from, to, type, importance, valid_from, valid_until), oldest first.
pub fn graph_rows(conn: &Connection, mut each: impl FnMut(GraphRelationRow<'_>)) -> Result<()> {
    let sql =
        "SELECT id, from_entity, to_entity, relation_type, importance, valid_from, valid_until
         FROM relations ORDER BY created_at, id";
    table::scan(conn, sql, |r| {
        each(GraphRelationRow {
            id: text_at(r, 0)?,
            from: text_at(r, 1)?,
            to: text_at(r, 2)?,
            relation_type: text_at(r, 3)?,
            importance: r.get(4)?,
            valid_from: r.get(5)?,
            valid_until: r.get(6)?,
        });
        Ok(())
    })
}

/// A text column borrowed from the row (no allocation per value).
fn text_at<'r>(r: &'r Row<'_>, i: usize) -> rusqlite::Result<&'r str> {
    r.get_ref(i)?.as_str().map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
    })
}

/// A relation as [`graph_rows`] reads it.
#[derive(Debug, Clone, Copy)]
pub struct GraphRelationRow<'a> {
    pub id: &'a str,
    pub from: &'a str,
    pub to: &'a str,
    pub relation_type: &'a str,
    pub importance: f64,
    pub valid_from: i64,
    pub valid_until: Option<i64>,
}

/// (memory id, entity id, explicit) of every mention in a namespace.
pub fn mentions_in(conn: &Connection, namespace: &str) -> Result<Vec<(String, String, bool)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT x.memory_id, x.entity_id, x.explicit FROM mentions x
         JOIN memories m ON m.id = x.memory_id WHERE m.namespace = ?1
         ORDER BY x.memory_id, x.entity_id",
    )?;
    let rows = stmt.query_map([namespace], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Mentions ordered by (memory, entity) after the cursor `memory_id\tentity_id`.
pub fn mention_page(
    conn: &Connection,
    namespace: Option<&str>,
    after: &str,
    limit: usize,
) -> Result<Vec<(String, String, bool)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT x.memory_id, x.entity_id, x.explicit FROM mentions x
         JOIN memories m ON m.id = x.memory_id
         WHERE (?1 IS NULL OR m.namespace = ?1) AND x.memory_id || char(9) || x.entity_id > ?2
         ORDER BY x.memory_id, x.entity_id LIMIT ?3",
    )?;
    let rows = stmt.query_map(params![namespace, after, limit as i64], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
