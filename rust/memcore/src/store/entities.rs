//! SQL for entities and their observations.

use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::error::Result;
use crate::knowledge::{Entity, Observation};
use crate::store::IndexRow;
use crate::store::vectors::{decode, encode};
use crate::temporal::Timestamp;

const ENTITY_COLUMNS: &str = "id, namespace, name, entity_type, description, importance, \
     confidence, thread_id, created_at, updated_at, valid_from, valid_until";

fn entity_from_row(r: &Row<'_>) -> rusqlite::Result<Entity> {
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
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {ENTITY_COLUMNS} FROM entities WHERE namespace = ?1 AND name_key = ?2"
        ))?
        .query_row(params![namespace, name_key], entity_from_row)
        .optional()?)
}

/// An entity by id.
pub fn by_id(conn: &Connection, id: &str) -> Result<Option<Entity>> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {ENTITY_COLUMNS} FROM entities WHERE id = ?1"
        ))?
        .query_row([id], entity_from_row)
        .optional()?)
}

/// Entities by document key (search hits).
pub fn by_doc_key(conn: &Connection, doc_key: u64) -> Result<Option<Entity>> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {ENTITY_COLUMNS} FROM entities WHERE doc_key = ?1"
        ))?
        .query_row([doc_key as i64], entity_from_row)
        .optional()?)
}

/// The current document key of an entity.
pub fn doc_key(conn: &Connection, id: &str) -> Result<Option<i64>> {
    Ok(conn
        .prepare_cached("SELECT doc_key FROM entities WHERE id = ?1")?
        .query_row([id], |r| r.get(0))
        .optional()?)
}

/// Every entity of every namespace with its document key, oldest first
/// (one scan, for rebuilding the graph on open).
pub fn graph_rows(conn: &Connection, mut each: impl FnMut(Entity, u64)) -> Result<()> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {ENTITY_COLUMNS}, doc_key FROM entities ORDER BY created_at, id"
    ))?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        each(entity_from_row(r)?, r.get::<_, i64>(12)? as u64);
    }
    Ok(())
}

/// Entities of a namespace, oldest first, paginated.
pub fn list(
    conn: &Connection,
    namespace: &str,
    limit: usize,
    offset: usize,
) -> Result<Vec<Entity>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {ENTITY_COLUMNS} FROM entities WHERE namespace = ?1
         ORDER BY created_at, id LIMIT ?2 OFFSET ?3"
    ))?;
    let rows = stmt.query_map(
        params![namespace, limit as i64, offset as i64],
        entity_from_row,
    )?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
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
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {ENTITY_COLUMNS} FROM entities
         WHERE namespace = ?1
           AND (?2 IS NULL OR lower(entity_type) = lower(?2))
           AND (?3 IS NULL OR importance >= ?3)
           AND (?4 IS NULL OR thread_id = ?4
                OR id IN (SELECT entity_id FROM observations WHERE thread_id = ?4))
         ORDER BY importance DESC, updated_at DESC LIMIT ?5"
    ))?;
    let rows = stmt.query_map(
        params![
            namespace,
            entity_type,
            min_importance,
            thread_id,
            limit as i64
        ],
        entity_from_row,
    )?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Number of entities in a namespace.
pub fn count(conn: &Connection, namespace: &str) -> Result<i64> {
    Ok(conn
        .prepare_cached("SELECT count(*) FROM entities WHERE namespace = ?1")?
        .query_row([namespace], |r| r.get(0))?)
}

/// Delete an entity; returns the document keys it and its observations held
/// (observations, relations and mentions go with it by cascade).
pub fn delete(conn: &Connection, id: &str) -> Result<Vec<(String, i64)>> {
    let mut keys: Vec<(String, i64)> = conn
        .prepare_cached("SELECT id, doc_key FROM observations WHERE entity_id = ?1")?
        .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    if let Some(k) = doc_key(conn, id)? {
        keys.push((id.to_owned(), k));
    }
    conn.prepare_cached("DELETE FROM entities WHERE id = ?1")?
        .execute([id])?;
    Ok(keys)
}

/// The indexed content of an entity: key, text, vector.
pub fn index_doc(conn: &Connection, id: &str) -> Result<Option<IndexRow>> {
    Ok(conn
        .prepare_cached(
            "SELECT doc_key, name, entity_type, description, embedding FROM entities WHERE id = ?1",
        )?
        .query_row([id], |r| {
            let name: String = r.get(1)?;
            let kind: String = r.get(2)?;
            let description: Option<String> = r.get(3)?;
            let blob: Option<Vec<u8>> = r.get(4)?;
            Ok((
                r.get::<_, i64>(0)? as u64,
                Entity::document_text(&name, &kind, description.as_deref()),
                blob.map(|b| decode(&b)),
            ))
        })
        .optional()?)
}

// -- observations -------------------------------------------------------------------

const OBS_COLUMNS: &str = "o.id, o.namespace, o.entity_id, e.name, o.content, o.version, \
     o.supersedes, o.superseded_by, o.thread_id, o.confidence, o.importance, o.created_at, \
     o.valid_from, o.valid_until";

fn observation_from_row(r: &Row<'_>) -> rusqlite::Result<Observation> {
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
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {OBS_COLUMNS} FROM observations o JOIN entities e ON e.id = o.entity_id
             WHERE o.id = ?1"
        ))?
        .query_row([id], observation_from_row)
        .optional()?)
}

/// Observations by document key (search hits).
pub fn observation_by_doc_key(conn: &Connection, doc_key: u64) -> Result<Option<Observation>> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {OBS_COLUMNS} FROM observations o JOIN entities e ON e.id = o.entity_id
             WHERE o.doc_key = ?1"
        ))?
        .query_row([doc_key as i64], observation_from_row)
        .optional()?)
}

/// An entity's observations, oldest first; `current_only` skips closed ones.
pub fn observations_of(
    conn: &Connection,
    entity_id: &str,
    current_only: bool,
) -> Result<Vec<Observation>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {OBS_COLUMNS} FROM observations o JOIN entities e ON e.id = o.entity_id
         WHERE o.entity_id = ?1 AND (?2 = 0 OR o.valid_until IS NULL)
         ORDER BY o.created_at, o.id"
    ))?;
    let rows = stmt.query_map(
        params![entity_id, i64::from(current_only)],
        observation_from_row,
    )?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The document key of an observation.
pub fn observation_doc_key(conn: &Connection, id: &str) -> Result<Option<i64>> {
    Ok(conn
        .prepare_cached("SELECT doc_key FROM observations WHERE id = ?1")?
        .query_row([id], |r| r.get(0))
        .optional()?)
}

/// Delete an observation; returns its document key.
pub fn delete_observation(conn: &Connection, id: &str) -> Result<Option<i64>> {
    Ok(conn
        .prepare_cached("DELETE FROM observations WHERE id = ?1 RETURNING doc_key")?
        .query_row([id], |r| r.get(0))
        .optional()?)
}

/// The indexed content of an observation: key, text, vector.
pub fn observation_index_doc(conn: &Connection, id: &str) -> Result<Option<IndexRow>> {
    Ok(conn
        .prepare_cached("SELECT doc_key, content, embedding FROM observations WHERE id = ?1")?
        .query_row([id], |r| {
            let blob: Option<Vec<u8>> = r.get(2)?;
            Ok((
                r.get::<_, i64>(0)? as u64,
                r.get(1)?,
                blob.map(|b| decode(&b)),
            ))
        })
        .optional()?)
}

/// Catalog facts of every entity: (doc key, namespace, thread, valid_from, valid_until, id).
pub type EntityCatalogRow = (
    u64,
    String,
    Option<String>,
    Timestamp,
    Option<Timestamp>,
    String,
);

/// Every entity's catalog facts.
pub fn entity_catalog_rows(
    conn: &Connection,
    mut each: impl FnMut(EntityCatalogRow),
) -> Result<()> {
    let mut stmt = conn.prepare(
        "SELECT doc_key, namespace, thread_id, valid_from, valid_until, id FROM entities",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        each((
            r.get::<_, i64>(0)? as u64,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
        ));
    }
    Ok(())
}

/// Catalog facts of every observation: (doc key, namespace, thread,
/// valid_from, valid_until, superseded, entity id).
pub type ObservationCatalogRow = (
    u64,
    String,
    Option<String>,
    Timestamp,
    Option<Timestamp>,
    bool,
    String,
);

/// Every observation's catalog facts.
pub fn observation_catalog_rows(
    conn: &Connection,
    mut each: impl FnMut(ObservationCatalogRow),
) -> Result<()> {
    let mut stmt = conn.prepare(
        "SELECT doc_key, namespace, thread_id, valid_from, valid_until,
                superseded_by IS NOT NULL, entity_id FROM observations",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        each((
            r.get::<_, i64>(0)? as u64,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
            r.get(6)?,
        ));
    }
    Ok(())
}

/// Entities ordered by id after `after` (an export cursor).
pub fn page(
    conn: &Connection,
    namespace: Option<&str>,
    after: &str,
    limit: usize,
) -> Result<Vec<Entity>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {ENTITY_COLUMNS} FROM entities WHERE (?1 IS NULL OR namespace = ?1) AND id > ?2
         ORDER BY id LIMIT ?3"
    ))?;
    let rows = stmt.query_map(params![namespace, after, limit as i64], entity_from_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Observations (every version) ordered by id after `after`.
pub fn observation_page(
    conn: &Connection,
    namespace: Option<&str>,
    after: &str,
    limit: usize,
) -> Result<Vec<Observation>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {OBS_COLUMNS} FROM observations o JOIN entities e ON e.id = o.entity_id
         WHERE (?1 IS NULL OR o.namespace = ?1) AND o.id > ?2 ORDER BY o.id LIMIT ?3"
    ))?;
    let rows = stmt.query_map(
        params![namespace, after, limit as i64],
        observation_from_row,
    )?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
