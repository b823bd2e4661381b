//! SQL for projects, indexed files and code chunks.

use std::collections::HashMap;

use rusqlite::{Connection, Row, params};

use crate::code::{CodeChunk, ProjectStatus};
use crate::error::Result;
use crate::kind::Kind;
use crate::store::checksum::{self, Covered, Sum};
use crate::store::table::{self, CatalogRow, DocumentTable, Table};
use crate::store::vectors::encode;
use crate::temporal::Timestamp;

/// A chunk's record columns, in [`CodeChunks::from_row`] order.
macro_rules! chunk_columns {
    () => {
        "id, namespace, project_id, file_path, language, start_line, end_line, chunk_type, \
         name, parent_scope, content, content_hash, indexed_at"
    };
}

/// The columns a chunk is read from: the record's, its document key, then
/// its checksum.
const CHUNK_COLUMNS: &str = concat!(chunk_columns!(), ", doc_key, checksum");

/// What a chunk's checksum covers: every column of the record and its
/// document key (chunks are never updated; [`crate::store::checksum`]).
pub const CHUNKS_COVERED: Covered = Covered {
    table: "code_chunks",
    columns: concat!(chunk_columns!(), ", doc_key"),
    count: 14,
    skipped: &[],
};

/// The checksum of a chunk as stored under `doc_key`.
pub fn chunk_checksum(c: &CodeChunk, doc_key: i64) -> i64 {
    Sum::new()
        .text(&c.id)
        .text(&c.namespace)
        .text(&c.project_id)
        .text(&c.file_path)
        .text(&c.language)
        .int(c.start_line)
        .int(c.end_line)
        .text(&c.chunk_type)
        .opt_text(c.name.as_deref())
        .opt_text(c.parent_scope.as_deref())
        .text(&c.content)
        .text(&c.content_hash)
        .int(c.indexed_at)
        .int(doc_key)
        .finish()
}

/// The `code_chunks` table.
#[derive(Debug, Clone, Copy)]
pub struct CodeChunks;

impl Table for CodeChunks {
    type Record = CodeChunk;
    const NAME: &'static str = "code_chunks";
    const FROM: &'static str = "FROM code_chunks";
    const COLUMNS: &'static str = CHUNK_COLUMNS;

    fn from_row(r: &Row<'_>) -> rusqlite::Result<CodeChunk> {
        checksum::verify(r, &CHUNKS_COVERED)?;
        Ok(CodeChunk {
            id: r.get(0)?,
            namespace: r.get(1)?,
            project_id: r.get(2)?,
            file_path: r.get(3)?,
            language: r.get(4)?,
            start_line: r.get(5)?,
            end_line: r.get(6)?,
            chunk_type: r.get(7)?,
            name: r.get(8)?,
            parent_scope: r.get(9)?,
            content: r.get(10)?,
            content_hash: r.get(11)?,
            indexed_at: r.get(12)?,
        })
    }
}

impl DocumentTable for CodeChunks {
    const KIND: Kind = Kind::CodeChunk;
    const CATALOG_SCAN: &'static str =
        "SELECT doc_key, namespace, project_id, language, indexed_at FROM code_chunks";

    /// A chunk is scoped by its project and tagged with its language.
    fn catalog_row(r: &Row<'_>) -> rusqlite::Result<CatalogRow> {
        Ok(CatalogRow {
            scope: Some(r.get(2)?),
            tag: Some(r.get(3)?),
            valid_from: r.get(4)?,
            ..CatalogRow::starting(Self::KIND, r)?
        })
    }
}

const PROJECT_COLUMNS: &str = "namespace, id, root, status, total_files, indexed_files, \
     total_chunks, started_at, completed_at, error, updated_at";

/// The `projects` table: one status row per indexed project.
#[derive(Debug, Clone, Copy)]
pub struct Projects;

impl Table for Projects {
    type Record = ProjectStatus;
    const NAME: &'static str = "projects";
    const FROM: &'static str = "FROM projects";
    const COLUMNS: &'static str = PROJECT_COLUMNS;

    fn from_row(r: &Row<'_>) -> rusqlite::Result<ProjectStatus> {
        Ok(ProjectStatus {
            namespace: r.get(0)?,
            project_id: r.get(1)?,
            root: r.get(2)?,
            status: r.get(3)?,
            total_files: r.get(4)?,
            indexed_files: r.get(5)?,
            total_chunks: r.get(6)?,
            started_at: r.get(7)?,
            completed_at: r.get(8)?,
            error: r.get(9)?,
            updated_at: r.get(10)?,
        })
    }
}

/// Insert or replace a project's status row.
pub fn put_project(conn: &Connection, p: &ProjectStatus) -> Result<()> {
    conn.prepare_cached(&format!(
        "INSERT INTO projects({PROJECT_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
         ON CONFLICT(namespace, id) DO UPDATE SET root = excluded.root, status = excluded.status,
             total_files = excluded.total_files, indexed_files = excluded.indexed_files,
             total_chunks = excluded.total_chunks, started_at = excluded.started_at,
             completed_at = excluded.completed_at, error = excluded.error,
             updated_at = excluded.updated_at"
    ))?
    .execute(params![
        p.namespace,
        p.project_id,
        p.root,
        p.status,
        p.total_files,
        p.indexed_files,
        p.total_chunks,
        p.started_at,
        p.completed_at,
        p.error,
        p.updated_at
    ])?;
    Ok(())
}

/// A project's status row.
pub fn project(conn: &Connection, namespace: &str, id: &str) -> Result<Option<ProjectStatus>> {
    let sql = format!("SELECT {PROJECT_COLUMNS} FROM projects WHERE namespace = ?1 AND id = ?2");
    table::one::<Projects>(conn, &sql, params![namespace, id])
}

/// Every project of a namespace, by id.
pub fn projects(conn: &Connection, namespace: &str) -> Result<Vec<ProjectStatus>> {
    let sql = format!("SELECT {PROJECT_COLUMNS} FROM projects WHERE namespace = ?1 ORDER BY id");
    table::all::<Projects>(conn, &sql, [namespace])
}

/// Chunk count of a project.
pub fn chunk_count(conn: &Connection, namespace: &str, project: &str) -> Result<i64> {
    Ok(conn
        .prepare_cached(
            "SELECT count(*) FROM code_chunks WHERE namespace = ?1 AND project_id = ?2",
        )?
        .query_row(params![namespace, project], |r| r.get(0))?)
}

/// Keys of at most `limit` chunks of `namespace` named `name`, of one
/// project and language when given (the definitions of that name).
pub fn keys_of_chunks_named(
    conn: &Connection,
    namespace: &str,
    name: &str,
    project: Option<&str>,
    language: Option<&str>,
    limit: usize,
) -> Result<Vec<u64>> {
    let mut stmt = conn.prepare_cached(
        "SELECT doc_key FROM code_chunks
         WHERE namespace = ?1 AND name = ?2 AND (?3 IS NULL OR project_id = ?3)
           AND (?4 IS NULL OR language = ?4)
         LIMIT ?5",
    )?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let keys = stmt.query_map(params![namespace, name, project, language, limit], |r| {
        r.get::<_, i64>(0)
    })?;
    Ok(keys
        .map(|k| k.map(|k| k as u64))
        .collect::<rusqlite::Result<_>>()?)
}

/// Indexed files of a project with their content hashes.
pub fn file_hashes(
    conn: &Connection,
    namespace: &str,
    project: &str,
) -> Result<HashMap<String, String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT path, content_hash FROM code_files WHERE namespace = ?1 AND project_id = ?2",
    )?;
    let rows = stmt.query_map(params![namespace, project], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Record a file as indexed.
#[allow(clippy::too_many_arguments)]
pub fn put_file(
    conn: &Connection,
    namespace: &str,
    project: &str,
    path: &str,
    hash: &str,
    language: &str,
    size: Option<i64>,
    chunks: usize,
    at: Timestamp,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO code_files(namespace, project_id, path, content_hash, language, size,
             chunk_count, indexed_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT(namespace, project_id, path) DO UPDATE SET content_hash = excluded.content_hash,
             language = excluded.language, size = excluded.size,
             chunk_count = excluded.chunk_count, indexed_at = excluded.indexed_at",
    )?
    .execute(params![namespace, project, path, hash, language, size, chunks as i64, at])?;
    Ok(())
}

/// Forget a file; returns whether it was indexed.
pub fn delete_file(conn: &Connection, namespace: &str, project: &str, path: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "DELETE FROM code_files WHERE namespace = ?1 AND project_id = ?2 AND path = ?3",
        )?
        .execute(params![namespace, project, path])?
        > 0)
}

/// Delete a file's chunks; returns their (id, doc key).
pub fn delete_chunks_of_file(
    conn: &Connection,
    namespace: &str,
    project: &str,
    path: &str,
) -> Result<Vec<(String, i64)>> {
    let mut stmt = conn.prepare_cached(
        "DELETE FROM code_chunks WHERE namespace = ?1 AND project_id = ?2 AND file_path = ?3
         RETURNING id, doc_key",
    )?;
    let rows = stmt.query_map(params![namespace, project, path], |r| {
        Ok((r.get(0)?, r.get(1)?))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Insert a chunk.
pub fn insert_chunk(
    conn: &Connection,
    c: &CodeChunk,
    doc_key: i64,
    embedding: Option<&[f32]>,
) -> Result<()> {
    conn.prepare_cached(&format!(
        "INSERT INTO code_chunks({CHUNK_COLUMNS}, embedding)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)"
    ))?
    .execute(params![
        c.id,
        c.namespace,
        c.project_id,
        c.file_path,
        c.language,
        c.start_line,
        c.end_line,
        c.chunk_type,
        c.name,
        c.parent_scope,
        c.content,
        c.content_hash,
        c.indexed_at,
        doc_key,
        chunk_checksum(c, doc_key),
        embedding.map(encode),
    ])?;
    Ok(())
}

/// Paths of a project's indexed files.
pub fn file_paths(conn: &Connection, namespace: &str, project: &str) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT path FROM code_files WHERE namespace = ?1 AND project_id = ?2 ORDER BY path",
    )?;
    let rows = stmt.query_map(params![namespace, project], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Delete a project's status row.
pub fn delete_project(conn: &Connection, namespace: &str, project: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached("DELETE FROM projects WHERE namespace = ?1 AND id = ?2")?
        .execute(params![namespace, project])?
        > 0)
}
