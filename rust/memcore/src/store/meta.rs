//! Store-level metadata: key/value text (schema facts, embedding model, dimension).

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::Result;

/// Metadata key: the embedding model id the stored vectors were made with.
pub const EMBEDDING_MODEL: &str = "embedding_model";
/// Metadata key: the dimension of stored vectors.
pub const EMBEDDING_DIM: &str = "embedding_dim";
/// Metadata key: when the store was created (microseconds).
pub const CREATED_AT: &str = "created_at";

/// Read one value.
pub fn get(conn: &Connection, key: &str) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT value FROM meta WHERE key = ?1")?
        .query_row([key], |r| r.get(0))
        .optional()?)
}

/// Insert or replace one value.
pub fn set(conn: &Connection, key: &str, value: &str) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO meta(key, value) VALUES (?1, ?2)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    )?
    .execute(params![key, value])?;
    Ok(())
}

/// Every key/value pair, sorted by key.
pub fn all(conn: &Connection) -> Result<Vec<(String, String)>> {
    let mut stmt = conn.prepare_cached("SELECT key, value FROM meta ORDER BY key")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}
