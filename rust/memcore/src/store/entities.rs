//! SQL for entities and their observations.

use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::error::Result;
use crate::kind::Kind;
use crate::knowledge::{Entity, Observation};
use crate::store::table::{self, CatalogRow, DocumentTable, Table};
use crate::store::vectors::encode;
use crate::temporal::Timestamp;

const ENTITY_COLUMNS: &str = "id, namespace, name, entity_type, description, importance, \
     confidence, thread_id, created_at, updated_at, valid_from, valid_until";

/// The `entities` table.
#[derive(Debug, Clone, Copy)]
pub struct Entities;

impl Table for Entities {
    type Record = Entity;
    const NAME: &'static str = "entities";
    const FROM: &'static str = "FROM entities";
    const COLUMNS: &'static str = ENTITY_COLUMNS;

    fn from_row(r: &Row<'_>) -> rusqlite::Result<Entity> {
        Ok(Entity {
            id: r.get(0)?,
            namespace: r.get(1)?,
            name: r.get(2)?,
            entity_type: r.get(3)?,
            description: r.get(4)?,
            importance: r.get(5)?,
            confidence: r.get(6)?,
            thread_id: r.get(7)?,
            created_at: r.get(8)?,
            updated_at: r.get(9)?,
            valid_from: r.get(10)?,
            valid_until: r.get(11)?,
        })
    }
}

impl DocumentTable for Entities {
    const KIND: Kind = Kind::Entity;
    const TEXT_COLUMNS: &'static str = "name, entity_type, description";
    const CATALOG_SCAN: &'static str =
        "SELECT doc_key, namespace, thread_id, valid_from, valid_until, id FROM entities";

    fn index_text(_: &Connection, r: &Row<'_>) -> Result<String> {
        let name: String = r.get(1)?;
        let kind: String = r.get(2)?;
        let description: Option<String> = r.get(3)?;
        Ok(Entity::document_text(&name, &kind, description.as_deref()))
    }

    /// An entity's document is scoped by the entity itself.
    fn catalog_row(r: &Row<'_>) -> rusqlite::Result<CatalogRow> {
        Ok(CatalogRow {
            thread_id: r.get(2)?,
            scope: Some(r.get(5)?),
            valid_from: r.get(3)?,
            valid_end: r.get(4)?,
            ..CatalogRow::starting(Self::KIND, r)?
        })
    }
}

/// Insert a new entity.
pub fn insert(
    conn: &Connection,
    e: &Entity,
    name_key: &str,
    doc_key: i64,
    embedding: Option<&[f32]>,
) -> Result<()> {
    conn.prepare_cached(&format!(
        "INSERT INTO entities({ENTITY_COLUMNS}, name_key, doc_key, embedding)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)"
    ))?
    .execute(params![
        e.id,
        e.namespace,
        e.name,
        e.entity_type,
        e.description,
        e.importance,
        e.confidence,
        e.thread_id,
        e.created_at,
        e.updated_at,
        e.valid_from,
        e.valid_until,
        name_key,
        doc_key,
        embedding.map(encode),
    ])?;
    Ok(())
}

/// Write back importance, confidence, description and updated_at.
pub fn update(conn: &Connection, e: &Entity) -> Result<()> {
    conn.prepare_cached(
        "UPDATE entities SET entity_type = ?2, description = ?3, importance = ?4,
             confidence = ?5, updated_at = ?6, valid_until = ?7 WHERE id = ?1",
    )?
    .execute(params![
        e.id,
        e.entity_type,
        e.description,
        e.importance,
        e.confidence,
        e.updated_at,
        e.valid_until
    ])?;
    Ok(())
}

/// Replace an entity's searchable document (new key, new vector).
pub fn set_document(
    conn: &Connection,
    id: &str,
    doc_key: i64,
    embedding: Option<&[f32]>,
) -> Result<()> {
    conn.prepare_cached("UPDATE entities SET doc_key = ?2, embedding = ?3 WHERE id = ?1")?
        .execute(params![id, doc_key, embedding.map(encode)])?;
    Ok(())
}

/// An entity by name (case-insensitive) in a namespace.
pub fn by_name(conn: &Connection, namespace: &str, name_key: &str) -> Result<Option<Entity>> {
    let sql =
        format!("SELECT {ENTITY_COLUMNS} FROM entities WHERE namespace = ?1 AND name_key = ?2");
    table::one::<Entities>(conn, &sql, params![namespace, name_key])
}

/// An entity by id.
pub fn by_id(conn: &Connection, id: &str) -> Result<Option<Entity>> {
    let sql = format!("SELECT {ENTITY_COLUMNS} FROM entities WHERE id = ?1");
    table::one::<Entities>(conn, &sql, [id])
}

/// Every entity of every namespace with its document key, oldest first
/// (one scan, for rebuilding the graph on open).
pub fn graph_rows(conn: &Connection, mut each: impl FnMut(Entity, u64)) -> Result<()> {
    let sql = format!("SELECT {ENTITY_COLUMNS}, doc_key FROM entities ORDER BY created_at, id");
    table::scan(conn, &sql, |r| {
        each(Entities::from_row(r)?, table::key_at(r, 12)?);
        Ok(())
    })
}

/// Entities of a namespace, oldest first, paginated.
pub fn list(
    conn: &Connection,
    namespace: &str,
    limit: usize,
    offset: usize,
) -> Result<Vec<Entity>> {
    let sql = format!(
        "SELECT {ENTITY_COLUMNS} FROM entities WHERE namespace = ?1
         ORDER BY created_at, id LIMIT ?2 OFFSET ?3"
    );
    table::all::<Entities>(conn, &sql, params![namespace, limit as i64, offset as i64])
}

/// Entities of a namespace matching optional filters, most important first.
pub fn query(
    conn: &Connection,
    namespace: &str,
    entity_type: Option<&str>,
    min_importance: Option<f64>,
    thread_id: Option<&str>,
    limit: usize,
) -> Result<Vec<Entity>> {
    let sql = format!(
        "SELECT {ENTITY_COLUMNS} FROM entities
         WHERE namespace = ?1
           AND (?2 IS NULL OR lower(entity_type) = lower(?2))
           AND (?3 IS NULL OR importance >= ?3)
           AND (?4 IS NULL OR thread_id = ?4
                OR id IN (SELECT entity_id FROM observations WHERE thread_id = ?4))
         ORDER BY importance DESC, updated_at DESC LIMIT ?5"
    );
    table::all::<Entities>(
        conn,
        &sql,
        params![
            namespace,
            entity_type,
            min_importance,
            thread_id,
            limit as i64
        ],
    )
}

/// Delete an entity; returns the document keys it and its observations held
/// (observations, relations and mentions go with it by cascade).
pub fn delete(conn: &Connection, id: &str) -> Result<Vec<(String, i64)>> {
    let mut keys: Vec<(String, i64)> = conn
        .prepare_cached("SELECT id, doc_key FROM observations WHERE entity_id = ?1")?
        .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    if let Some(k) = table::doc_key::<Entities>(conn, id)? {
        keys.push((id.to_owned(), k));
    }
    conn.prepare_cached("DELETE FROM entities WHERE id = ?1")?
        .execute([id])?;
    Ok(keys)
}

// -- observations -------------------------------------------------------------------

const OBS_COLUMNS: &str = "o.id, o.namespace, o.entity_id, e.name, o.content, o.version, \
     o.supersedes, o.superseded_by, o.thread_id, o.confidence, o.importance, o.created_at, \
     o.valid_from, o.valid_until";

/// The `observations` table, read with its entity's name.
#[derive(Debug, Clone, Copy)]
pub struct Observations;

impl Table for Observations {
    type Record = Observation;
    const NAME: &'static str = "observations";
    const FROM: &'static str = "FROM observations o JOIN entities e ON e.id = o.entity_id";
    const COLUMNS: &'static str = OBS_COLUMNS;
    const ALIAS: &'static str = "o.";

    fn from_row(r: &Row<'_>) -> rusqlite::Result<Observation> {
        Ok(Observation {
            id: r.get(0)?,
            namespace: r.get(1)?,
            entity_id: r.get(2)?,
            entity_name: r.get(3)?,
            content: r.get(4)?,
            version: r.get(5)?,
            supersedes: r.get(6)?,
            superseded_by: r.get(7)?,
            thread_id: r.get(8)?,
            confidence: r.get(9)?,
            importance: r.get(10)?,
            created_at: r.get(11)?,
            valid_from: r.get(12)?,
            valid_until: r.get(13)?,
        })
    }
}

impl DocumentTable for Observations {
    const KIND: Kind = Kind::Observation;
    const CATALOG_SCAN: &'static str =
        "SELECT doc_key, namespace, thread_id, valid_from, valid_until,
                superseded_by IS NOT NULL, entity_id FROM observations";

    /// An observation is scoped by its entity.
    fn catalog_row(r: &Row<'_>) -> rusqlite::Result<CatalogRow> {
        Ok(CatalogRow {
            thread_id: r.get(2)?,
            scope: Some(r.get(6)?),
            valid_from: r.get(3)?,
            valid_end: r.get(4)?,
            superseded: r.get(5)?,
            ..CatalogRow::starting(Self::KIND, r)?
        })
    }
}

/// Insert an observation.
pub fn insert_observation(
    conn: &Connection,
    o: &Observation,
    doc_key: i64,
    embedding: Option<&[f32]>,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO observations(id, namespace, entity_id, content, version, supersedes,
             superseded_by, thread_id, confidence, importance, created_at, valid_from,
             valid_until, doc_key, embedding)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
    )?
    .execute(params![
        o.id,
        o.namespace,
        o.entity_id,
        o.content,
        o.version,
        o.supersedes,
        o.superseded_by,
        o.thread_id,
        o.confidence,
        o.importance,
        o.created_at,
        o.valid_from,
        o.valid_until,
        doc_key,
        embedding.map(encode),
    ])?;
    Ok(())
}

/// Close an observation: superseded by a newer version, or retracted.
pub fn close_observation(
    conn: &Connection,
    id: &str,
    superseded_by: Option<&str>,
    at: Timestamp,
) -> Result<()> {
    conn.prepare_cached(
        "UPDATE observations SET superseded_by = COALESCE(?2, superseded_by),
             valid_until = COALESCE(valid_until, ?3) WHERE id = ?1",
    )?
    .execute(params![id, superseded_by, at])?;
    Ok(())
}

/// One observation with its entity's name.
pub fn observation(conn: &Connection, id: &str) -> Result<Option<Observation>> {
    let sql = format!(
        "SELECT {OBS_COLUMNS} FROM observations o JOIN entities e ON e.id = o.entity_id
             WHERE o.id = ?1"
    );
    table::one::<Observations>(conn, &sql, [id])
}

/// An entity's observations, oldest first; `current_only` skips closed ones.
pub fn observations_of(
    conn: &Connection,
    entity_id: &str,
    current_only: bool,
) -> Result<Vec<Observation>> {
    let sql = format!(
        "SELECT {OBS_COLUMNS} FROM observations o JOIN entities e ON e.id = o.entity_id
         WHERE o.entity_id = ?1 AND (?2 = 0 OR o.valid_until IS NULL)
         ORDER BY o.created_at, o.id"
    );
    table::all::<Observations>(conn, &sql, params![entity_id, i64::from(current_only)])
}

/// Delete an observation; returns its document key.
pub fn delete_observation(conn: &Connection, id: &str) -> Result<Option<i64>> {
    Ok(conn
        .prepare_cached("DELETE FROM observations WHERE id = ?1 RETURNING doc_key")?
        .query_row([id], |r| r.get(0))
        .optional()?)
}
