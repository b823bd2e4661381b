//! SQL for the `memories` table. No rules live here: the engine validates,
//! this module reads and writes rows.

use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::asking::asking_percent;
use crate::error::Result;
use crate::kind::Kind;
use crate::memory::{Memory, MemoryType, Source, Tier};
use crate::store::checksum::{self, Covered, Sum};
use crate::store::table::{self, CatalogRow, DocumentTable, Table};
use crate::store::vectors::encode;
use crate::temporal::{Timestamp, ValidAt, effective_end};

/// The record's columns, in [`Memories::from_row`] order.
macro_rules! record_columns {
    () => {
        "id, namespace, content, memory_type, source, confidence, importance, metadata, \
         thread_id, user_id, event_time, created_at, updated_at, accessed_at, valid_from, \
         valid_until, invalidated_at, invalidation_reason, supersedes, superseded_by, \
         expires_at, tier"
    };
}

/// The columns a memory is read from: the record's, its document key, then
/// its checksum.
const COLUMNS: &str = concat!(record_columns!(), ", doc_key, checksum");

/// Position of `accessed_at`, which a read updates and the checksum skips.
const ACCESSED_AT: usize = 13;

/// What a memory's checksum covers: every column of the record but
/// `accessed_at`, and its document key (which a search hit is mapped back
/// to the record by; [`crate::store::checksum`]).
pub const COVERED: Covered = Covered {
    table: "memories",
    columns: concat!(record_columns!(), ", doc_key"),
    count: 23,
    skipped: &[ACCESSED_AT],
};

/// The checksum of a memory as stored under `doc_key`: every field in
/// [`COLUMNS`] order but `accessed_at`.
pub fn checksum(m: &Memory, doc_key: i64) -> i64 {
    Sum::new()
        .text(&m.id)
        .text(&m.namespace)
        .text(&m.content)
        .text(m.memory_type.as_str())
        .text(m.source.as_str())
        .real(m.confidence)
        .real(m.importance)
        .text(&m.metadata)
        .opt_text(m.thread_id.as_deref())
        .opt_text(m.user_id.as_deref())
        .opt_int(m.event_time)
        .int(m.created_at)
        .int(m.updated_at)
        .int(m.valid_from)
        .opt_int(m.valid_until)
        .opt_int(m.invalidated_at)
        .opt_text(m.invalidation_reason.as_deref())
        .opt_text(m.supersedes.as_deref())
        .opt_text(m.superseded_by.as_deref())
        .opt_int(m.expires_at)
        .text(m.tier.as_str())
        .int(doc_key)
        .finish()
}

/// Which memories a listing returns, newest first.
#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    pub limit: usize,
    pub offset: usize,
    pub thread_id: Option<String>,
    pub valid: ValidAt,
}

/// The `memories` table.
#[derive(Debug, Clone, Copy)]
pub struct Memories;

impl Table for Memories {
    type Record = Memory;
    const NAME: &'static str = "memories";
    const FROM: &'static str = "FROM memories";
    const COLUMNS: &'static str = COLUMNS;

    fn from_row(r: &Row<'_>) -> rusqlite::Result<Memory> {
        checksum::verify(r, &COVERED)?;
        let memory_type: String = r.get(3)?;
        let source: String = r.get(4)?;
        let tier: String = r.get(21)?;
        Ok(Memory {
            id: r.get(0)?,
            namespace: r.get(1)?,
            content: r.get(2)?,
            // Values were validated on the way in; fall back rather than fail a read.
            memory_type: MemoryType::parse(&memory_type).unwrap_or_default(),
            source: Source::parse(&source).unwrap_or_default(),
            confidence: r.get(5)?,
            importance: r.get(6)?,
            metadata: r.get(7)?,
            thread_id: r.get(8)?,
            user_id: r.get(9)?,
            event_time: r.get(10)?,
            created_at: r.get(11)?,
            updated_at: r.get(12)?,
            accessed_at: r.get(13)?,
            valid_from: r.get(14)?,
            valid_until: r.get(15)?,
            invalidated_at: r.get(16)?,
            invalidation_reason: r.get(17)?,
            supersedes: r.get(18)?,
            superseded_by: r.get(19)?,
            expires_at: r.get(20)?,
            tier: Tier::parse(&tier).unwrap_or_default(),
        })
    }
}

impl DocumentTable for Memories {
    const KIND: Kind = Kind::Memory;
    const CATALOG_SCAN: &'static str = "SELECT doc_key, namespace, thread_id, valid_from, \
         valid_until, expires_at, superseded_by IS NOT NULL, id, memory_type, content FROM memories";

    /// A memory is tagged with its type (the thread prior reads episodes).
    fn catalog_row(r: &Row<'_>) -> rusqlite::Result<CatalogRow> {
        Ok(CatalogRow {
            thread_id: r.get(2)?,
            tag: Some(r.get(8)?),
            valid_from: r.get(3)?,
            valid_end: effective_end(r.get(4)?, r.get(5)?),
            superseded: r.get(6)?,
            id: Some(r.get(7)?),
            asks: r.get_ref(9)?.as_str().map_or(0, asking_percent),
            ..CatalogRow::starting(Self::KIND, r)?
        })
    }
}

/// Insert a new row.
pub fn insert(
    conn: &Connection,
    m: &Memory,
    doc_key: i64,
    embedding: Option<&[f32]>,
) -> Result<()> {
    conn.prepare_cached(&format!(
        "INSERT INTO memories({COLUMNS}, embedding)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                 ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25)"
    ))?
    .execute(params![
        m.id,
        m.namespace,
        m.content,
        m.memory_type.as_str(),
        m.source.as_str(),
        m.confidence,
        m.importance,
        m.metadata,
        m.thread_id,
        m.user_id,
        m.event_time,
        m.created_at,
        m.updated_at,
        m.accessed_at,
        m.valid_from,
        m.valid_until,
        m.invalidated_at,
        m.invalidation_reason,
        m.supersedes,
        m.superseded_by,
        m.expires_at,
        m.tier.as_str(),
        doc_key,
        checksum(m, doc_key),
        embedding.map(encode),
    ])?;
    Ok(())
}

/// Write every mutable field of `m` back to its row (content and vector
/// excepted), with the checksum of the whole record `m` is: its content must
/// be the row's (callers read `m` from the row, verified, and change it).
pub fn update_fields(conn: &Connection, m: &Memory) -> Result<()> {
    let Some(doc_key) = table::doc_key::<Memories>(conn, &m.id)? else {
        return Ok(());
    };
    conn.prepare_cached(
        "UPDATE memories SET memory_type = ?2, source = ?3, confidence = ?4, importance = ?5,
             metadata = ?6, thread_id = ?7, user_id = ?8, event_time = ?9, updated_at = ?10,
             accessed_at = ?11, valid_from = ?12, valid_until = ?13, invalidated_at = ?14,
             invalidation_reason = ?15, supersedes = ?16, superseded_by = ?17, expires_at = ?18,
             tier = ?19, checksum = ?20
         WHERE id = ?1",
    )?
    .execute(params![
        m.id,
        m.memory_type.as_str(),
        m.source.as_str(),
        m.confidence,
        m.importance,
        m.metadata,
        m.thread_id,
        m.user_id,
        m.event_time,
        m.updated_at,
        m.accessed_at,
        m.valid_from,
        m.valid_until,
        m.invalidated_at,
        m.invalidation_reason,
        m.supersedes,
        m.superseded_by,
        m.expires_at,
        m.tier.as_str(),
        checksum(m, doc_key),
    ])?;
    Ok(())
}

/// Replace the content with `m.content` (the rest of `m` must be the row's),
/// its document key and its vector, with the checksum of `m`.
pub fn update_content(
    conn: &Connection,
    m: &Memory,
    doc_key: i64,
    embedding: Option<&[f32]>,
) -> Result<()> {
    conn.prepare_cached(
        "UPDATE memories SET content = ?2, doc_key = ?3, embedding = ?4, checksum = ?5
         WHERE id = ?1",
    )?
    .execute(params![
        m.id,
        m.content,
        doc_key,
        embedding.map(encode),
        checksum(m, doc_key)
    ])?;
    Ok(())
}

/// One memory by id, only if it is in `namespace`.
pub fn get(conn: &Connection, namespace: &str, id: &str) -> Result<Option<Memory>> {
    let sql = format!("SELECT {COLUMNS} FROM memories WHERE id = ?1 AND namespace = ?2");
    table::one::<Memories>(conn, &sql, params![id, namespace])
}

/// Delete a row; returns the document key it held.
pub fn delete(conn: &Connection, namespace: &str, id: &str) -> Result<Option<i64>> {
    Ok(conn
        .prepare_cached("DELETE FROM memories WHERE id = ?1 AND namespace = ?2 RETURNING doc_key")?
        .query_row(params![id, namespace], |r| r.get(0))
        .optional()?)
}

/// Record that a memory was read (`accessed_at` is outside the checksum).
pub fn touch(conn: &Connection, id: &str, at: Timestamp) -> Result<()> {
    conn.prepare_cached("UPDATE memories SET accessed_at = ?2 WHERE id = ?1")?
        .execute(params![id, at])?;
    Ok(())
}

/// Memories of a namespace, newest first (by creation, then id).
pub fn list(
    conn: &Connection,
    namespace: &str,
    q: &ListQuery,
    now: Timestamp,
) -> Result<Vec<Memory>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM memories
         WHERE namespace = ?1
           AND (?2 IS NULL OR thread_id = ?2)
           AND (?3 IS NULL OR (valid_from <= ?3
                               AND (valid_until IS NULL OR valid_until > ?3)
                               AND (expires_at IS NULL OR expires_at > ?3)))
         ORDER BY created_at DESC, id DESC
         LIMIT ?4 OFFSET ?5"
    );
    table::all::<Memories>(
        conn,
        &sql,
        params![
            namespace,
            q.thread_id,
            q.valid.instant(now),
            q.limit as i64,
            q.offset as i64
        ],
    )
}

/// The episode saved right after the episode `doc_key` in its thread
/// (by creation time, then id, which is monotonic within a process), if
/// both are episodes of a thread.
pub fn next_episode(conn: &Connection, doc_key: u64) -> Result<Option<u64>> {
    Ok(conn
        .prepare_cached(
            "SELECT n.doc_key FROM memories q JOIN memories n
               ON n.namespace = q.namespace AND n.thread_id = q.thread_id
             WHERE q.doc_key = ?1 AND q.memory_type = 'episodic'
               AND n.memory_type = 'episodic'
               AND (n.created_at > q.created_at OR (n.created_at = q.created_at AND n.id > q.id))
             ORDER BY n.created_at, n.id LIMIT 1",
        )?
        .query_row([doc_key as i64], |r| r.get::<_, i64>(0))
        .optional()?
        .map(|k| k as u64))
}

/// One memory's catalog facts, if it exists (a read-only follower applying
/// one logged write).
pub fn catalog_row(conn: &Connection, id: &str) -> Result<Option<CatalogRow>> {
    table::catalog_row_of::<Memories>(conn, id)
}
