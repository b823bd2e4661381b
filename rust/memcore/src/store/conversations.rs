//! SQL for the interaction log: conversations, turns, documents, versions
//! and procedures.

use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::asking::turn_asking_percent;
use crate::conversation::{DocVersion, Procedure, Turn};
use crate::error::Result;
use crate::kind::Kind;
use crate::store::checksum::{self, Covered, Sum};
use crate::store::table::{self, CatalogRow, DocumentTable, Table};
use crate::store::vectors::encode;
use crate::temporal::{Timestamp, date_label};

/// A turn's record columns, in [`Turns::from_row`] order.
macro_rules! turn_columns {
    () => {
        "id, namespace, conversation_id, turn_key, turn_index, user_text, agent_text, \
         thread_id, created_at"
    };
}

/// The columns a turn is read from: the record's, its document key, then its
/// checksum.
const TURN_COLUMNS: &str = concat!(turn_columns!(), ", doc_key, checksum");

/// What a turn's checksum covers: every column of the record and its
/// document key (turns are never updated; [`crate::store::checksum`]).
pub const TURNS_COVERED: Covered = Covered {
    table: "turns",
    columns: concat!(turn_columns!(), ", doc_key"),
    count: 10,
    skipped: &[],
};

/// The checksum of a turn as stored under `doc_key`.
pub fn turn_checksum(t: &Turn, doc_key: i64) -> i64 {
    Sum::new()
        .text(&t.id)
        .text(&t.namespace)
        .text(&t.conversation_id)
        .text(&t.turn_key)
        .int(t.turn_index)
        .text(&t.user_text)
        .opt_text(t.agent_text.as_deref())
        .opt_text(t.thread_id.as_deref())
        .int(t.created_at)
        .int(doc_key)
        .finish()
}

/// The `turns` table.
#[derive(Debug, Clone, Copy)]
pub struct Turns;

impl Table for Turns {
    type Record = Turn;
    const NAME: &'static str = "turns";
    const FROM: &'static str = "FROM turns";
    const COLUMNS: &'static str = TURN_COLUMNS;

    fn from_row(r: &Row<'_>) -> rusqlite::Result<Turn> {
        checksum::verify(r, &TURNS_COVERED)?;
        Ok(Turn {
            id: r.get(0)?,
            namespace: r.get(1)?,
            conversation_id: r.get(2)?,
            turn_key: r.get(3)?,
            turn_index: r.get(4)?,
            user_text: r.get(5)?,
            agent_text: r.get(6)?,
            thread_id: r.get(7)?,
            created_at: r.get(8)?,
        })
    }
}

impl DocumentTable for Turns {
    const KIND: Kind = Kind::UserTurn;
    const TEXT_COLUMNS: &'static str =
        "user_text, namespace, conversation_id, turn_index, created_at";
    const CATALOG_SCAN: &'static str = "SELECT t.doc_key, t.namespace, t.thread_id, t.conversation_id, t.created_at, c.archived_at,
         t.user_text, t.agent_text
         FROM turns t JOIN conversations c ON c.namespace = t.namespace AND c.id = t.conversation_id";
    const CATALOG_ID: &'static str = "t.id";

    /// A turn is found by [`turn_search_text`].
    fn index_text(conn: &Connection, r: &Row<'_>) -> Result<String> {
        let user_text: String = r.get(1)?;
        let namespace: String = r.get(2)?;
        let conversation: String = r.get(3)?;
        turn_search_text(
            conn,
            &namespace,
            &conversation,
            r.get(4)?,
            r.get(5)?,
            &user_text,
        )
    }

    /// A turn is scoped by its conversation and ends when that is archived.
    fn catalog_row(r: &Row<'_>) -> rusqlite::Result<CatalogRow> {
        Ok(CatalogRow {
            thread_id: r.get(2)?,
            scope: Some(r.get(3)?),
            valid_from: r.get(4)?,
            valid_end: r.get(5)?,
            asks: turn_asking_percent(
                r.get_ref(6)?.as_str().unwrap_or_default(),
                r.get_ref(7)?.as_str_or_null().ok().flatten(),
            ),
            ..CatalogRow::starting(Self::KIND, r)?
        })
    }
}

/// Create the conversation or touch its `updated_at`.
pub fn touch_conversation(
    conn: &Connection,
    namespace: &str,
    id: &str,
    at: Timestamp,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO conversations(namespace, id, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)
         ON CONFLICT(namespace, id) DO UPDATE SET updated_at = max(updated_at, excluded.updated_at)",
    )?
    .execute(params![namespace, id, at])?;
    Ok(())
}

/// A turn by its caller-given key.
pub fn turn_by_key(
    conn: &Connection,
    namespace: &str,
    conversation: &str,
    key: &str,
) -> Result<Option<Turn>> {
    let sql = format!(
        "SELECT {TURN_COLUMNS} FROM turns
             WHERE namespace = ?1 AND conversation_id = ?2 AND turn_key = ?3"
    );
    table::one::<Turns>(conn, &sql, params![namespace, conversation, key])
}

/// A turn by internal id.
pub fn turn(conn: &Connection, id: &str) -> Result<Option<Turn>> {
    table::one::<Turns>(
        conn,
        &format!("SELECT {TURN_COLUMNS} FROM turns WHERE id = ?1"),
        [id],
    )
}

/// The next turn index of a conversation.
pub fn next_turn_index(conn: &Connection, namespace: &str, conversation: &str) -> Result<i64> {
    Ok(conn
        .prepare_cached(
            "SELECT COALESCE(MAX(turn_index) + 1, 0) FROM turns
             WHERE namespace = ?1 AND conversation_id = ?2",
        )?
        .query_row(params![namespace, conversation], |r| r.get(0))?)
}

/// Insert a turn.
pub fn insert_turn(
    conn: &Connection,
    t: &Turn,
    doc_key: i64,
    embedding: Option<&[f32]>,
) -> Result<()> {
    conn.prepare_cached(&format!(
        "INSERT INTO turns({TURN_COLUMNS}, embedding)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
    ))?
    .execute(params![
        t.id,
        t.namespace,
        t.conversation_id,
        t.turn_key,
        t.turn_index,
        t.user_text,
        t.agent_text,
        t.thread_id,
        t.created_at,
        doc_key,
        turn_checksum(t, doc_key),
        embedding.map(encode),
    ])?;
    Ok(())
}

/// Turns of a conversation in order.
pub fn turns_of(
    conn: &Connection,
    namespace: &str,
    conversation: &str,
    limit: usize,
) -> Result<Vec<Turn>> {
    let sql = format!(
        "SELECT {TURN_COLUMNS} FROM turns WHERE namespace = ?1 AND conversation_id = ?2
         ORDER BY turn_index LIMIT ?3"
    );
    table::all::<Turns>(conn, &sql, params![namespace, conversation, limit as i64])
}

/// Earlier turns of the same conversation that a turn's search text includes.
/// Measured on the LoCoMo conversations (`benches/results/quality.md`): a turn
/// is often an answer ("Yes, last Saturday!") whose subject is in the one or
/// two before it; leave-one-conversation-out picked two on both folds.
pub const TURN_CONTEXT: i64 = 2;

/// How many times a turn's own text counts in its search text, against once
/// for each neighbour: the neighbours say what an answer is about, but the
/// turn's own words say what it holds. Counted once, a neighbour's words
/// weighed as much as the turn's own, and a question about one turn matched
/// the two after it as well as the turn itself. Leave-one-conversation-out on
/// LoCoMo picked three on both folds, with turns' own fusion weights
/// ([`crate::fusion::Weights::TURNS`]); retrieve_context R@1 rose 3.5
/// points (`benches/results/quality-experiments.md`, section 11).
pub const TURN_OWN_WEIGHT: usize = 3;

/// What a turn is found by (BM25): the day it happened, the user texts of the
/// [`TURN_CONTEXT`] turns before it in its conversation, and its own user text
/// ([`TURN_OWN_WEIGHT`] times). A hit is still the turn itself with its own
/// text; only the key is wider.
/// One definition for recording, rebuilding and restoring, so a rebuilt index
/// equals the one built live.
pub fn turn_search_text(
    conn: &Connection,
    namespace: &str,
    conversation: &str,
    turn_index: i64,
    created_at: Timestamp,
    user_text: &str,
) -> Result<String> {
    let mut text = date_label(created_at);
    let mut stmt = conn.prepare_cached(
        "SELECT user_text FROM turns
         WHERE namespace = ?1 AND conversation_id = ?2 AND turn_index >= ?3 AND turn_index < ?4
         ORDER BY turn_index",
    )?;
    let mut rows = stmt.query(params![
        namespace,
        conversation,
        turn_index - TURN_CONTEXT,
        turn_index
    ])?;
    while let Some(r) = rows.next()? {
        text.push('\n');
        text.push_str(&r.get::<_, String>(0)?);
    }
    for _ in 0..TURN_OWN_WEIGHT {
        text.push('\n');
        text.push_str(user_text);
    }
    Ok(text)
}

/// What a turn's vector embeds: its day and its own text (the neighbours
/// widen only the BM25 key: measured, they blurred the vector).
pub fn turn_vector_text(created_at: Timestamp, user_text: &str) -> String {
    format!("{}\n{user_text}", date_label(created_at))
}

// -- documents and versions ---------------------------------------------------------

/// The id of a document (hypernode), if known.
pub fn document_id(conn: &Connection, namespace: &str, canonical: &str) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT id FROM documents WHERE namespace = ?1 AND canonical = ?2")?
        .query_row(params![namespace, canonical], |r| r.get(0))
        .optional()?)
}

/// Insert a document (hypernode).
pub fn insert_document(
    conn: &Connection,
    id: &str,
    namespace: &str,
    canonical: &str,
    at: Timestamp,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO documents(id, namespace, canonical, created_at) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![id, namespace, canonical, at])?;
    Ok(())
}

const VERSION_COLUMNS: &str = "v.id, v.document_id, d.canonical, v.version, v.content_hash, v.size, \
     v.provenance, v.turn_id, v.created_at, v.content IS NOT NULL";

/// The `doc_versions` table, read with its document's canonical id.
#[derive(Debug, Clone, Copy)]
pub struct DocVersions;

impl Table for DocVersions {
    type Record = DocVersion;
    const NAME: &'static str = "doc_versions";
    const FROM: &'static str = "FROM doc_versions v JOIN documents d ON d.id = v.document_id";
    const COLUMNS: &'static str = VERSION_COLUMNS;
    const ALIAS: &'static str = "v.";

    fn from_row(r: &Row<'_>) -> rusqlite::Result<DocVersion> {
        Ok(DocVersion {
            id: r.get(0)?,
            document_id: r.get(1)?,
            canonical: r.get(2)?,
            version: r.get(3)?,
            content_hash: r.get(4)?,
            size: r.get(5)?,
            provenance: r.get(6)?,
            turn_id: r.get(7)?,
            created_at: r.get(8)?,
            has_content: r.get(9)?,
        })
    }
}

/// The latest version of a document.
pub fn latest_version(conn: &Connection, document_id: &str) -> Result<Option<DocVersion>> {
    let sql = format!(
        "SELECT {VERSION_COLUMNS} FROM doc_versions v JOIN documents d ON d.id = v.document_id
             WHERE v.document_id = ?1 ORDER BY v.version DESC LIMIT 1"
    );
    table::one::<DocVersions>(conn, &sql, [document_id])
}

/// Insert a version.
#[allow(clippy::too_many_arguments)]
pub fn insert_version(conn: &Connection, v: &DocVersion, content: Option<&str>) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO doc_versions(id, document_id, version, content_hash, content, size,
             provenance, turn_id, created_at, externals)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9,
                 (?7 = 'external') + COALESCE((SELECT externals FROM doc_versions
                     WHERE document_id = ?2 AND version < ?3
                     ORDER BY version DESC LIMIT 1), 0))",
    )?
    .execute(params![
        v.id,
        v.document_id,
        v.version,
        v.content_hash,
        content,
        v.size,
        v.provenance,
        v.turn_id,
        v.created_at
    ])?;
    Ok(())
}

/// Every version of a document, oldest first.
pub fn versions_of(conn: &Connection, document_id: &str) -> Result<Vec<DocVersion>> {
    let sql = format!(
        "SELECT {VERSION_COLUMNS} FROM doc_versions v JOIN documents d ON d.id = v.document_id
         WHERE v.document_id = ?1 ORDER BY v.version"
    );
    table::all::<DocVersions>(conn, &sql, [document_id])
}

/// The stored content of a version, if kept.
pub fn version_content(conn: &Connection, version_id: &str) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT content FROM doc_versions WHERE id = ?1")?
        .query_row([version_id], |r| r.get(0))
        .optional()?
        .flatten())
}

// -- procedures -----------------------------------------------------------------------

/// Insert a procedure.
pub fn insert_procedure(conn: &Connection, p: &Procedure) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO procedures(id, turn_id, position, tool, args, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        p.id,
        p.turn_id,
        p.position,
        p.tool,
        p.args,
        p.created_at
    ])?;
    Ok(())
}

/// Link a procedure to a version it touched.
pub fn link_procedure(conn: &Connection, procedure_id: &str, version_id: &str) -> Result<()> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO procedure_documents(procedure_id, version_id) VALUES (?1, ?2)",
    )?
    .execute(params![procedure_id, version_id])?;
    Ok(())
}

/// Record that a turn touched a document (for hypernode lookup and familiarity).
pub fn record_touch(conn: &Connection, document_id: &str, turn: &Turn) -> Result<()> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO document_touches(document_id, turn_id, conversation_id, at)
         VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![
        document_id,
        turn.id,
        turn.conversation_id,
        turn.created_at
    ])?;
    let first_touch = conn
        .prepare_cached(
            "INSERT OR IGNORE INTO document_conversations(document_id, conversation_id)
             VALUES (?1, ?2)",
        )?
        .execute(params![document_id, turn.conversation_id])?;
    if first_touch > 0 {
        conn.prepare_cached(
            "UPDATE documents SET conversations = conversations + 1 WHERE id = ?1",
        )?
        .execute([document_id])?;
    }
    Ok(())
}

/// The procedures of a turn, in order, with the versions they touched.
pub fn procedures_of(conn: &Connection, turn_id: &str) -> Result<Vec<Procedure>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, turn_id, position, tool, args, created_at FROM procedures
         WHERE turn_id = ?1 ORDER BY position",
    )?;
    let mut procedures: Vec<Procedure> = stmt
        .query_map([turn_id], |r| {
            Ok(Procedure {
                id: r.get(0)?,
                turn_id: r.get(1)?,
                position: r.get(2)?,
                tool: r.get(3)?,
                args: r.get(4)?,
                created_at: r.get(5)?,
                versions: Vec::new(),
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut versions = conn.prepare_cached(&format!(
        "SELECT {VERSION_COLUMNS} FROM procedure_documents pd
         JOIN doc_versions v ON v.id = pd.version_id JOIN documents d ON d.id = v.document_id
         WHERE pd.procedure_id = ?1 ORDER BY d.canonical"
    ))?;
    for p in &mut procedures {
        p.versions = versions
            .query_map([&p.id], DocVersions::from_row)?
            .collect::<rusqlite::Result<_>>()?;
    }
    Ok(procedures)
}

/// Turns of other, unarchived conversations that touched these documents,
/// newest first per document: (turn id, canonical).
pub fn turns_touching(
    conn: &Connection,
    namespace: &str,
    canonicals: &[String],
    exclude_conversation: Option<&str>,
    limit: usize,
) -> Result<Vec<(String, String)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT x.turn_id FROM document_touches x
         JOIN conversations c ON c.namespace = ?1 AND c.id = x.conversation_id
         WHERE x.document_id = ?2 AND c.archived_at IS NULL
           AND (?3 IS NULL OR x.conversation_id != ?3)
         ORDER BY x.at DESC LIMIT ?4",
    )?;
    let mut out = Vec::new();
    for canonical in canonicals {
        let Some(id) = document_id(conn, namespace, canonical)? else {
            continue;
        };
        let rows = stmt.query_map(
            params![namespace, id, exclude_conversation, limit as i64],
            |r| r.get::<_, String>(0),
        )?;
        for row in rows {
            out.push((row?, canonical.clone()));
        }
    }
    Ok(out)
}

/// Distinct conversations that touched a document (a counter kept by
/// [`record_touch`]).
pub fn familiarity(conn: &Connection, document_id: &str) -> Result<i64> {
    Ok(conn
        .prepare_cached("SELECT conversations FROM documents WHERE id = ?1")?
        .query_row([document_id], |r| r.get(0))
        .optional()?
        .unwrap_or(0))
}

/// The latest version number of a document with its first and latest
/// version times. Versions are numbered from 1 without gaps (they are only
/// ever deleted with their document), so the latest number is also the count,
/// and two index seeks answer it, where an aggregate visited every version of
/// a popular file on every retrieval.
pub fn version_summary(
    conn: &Connection,
    document_id: &str,
) -> Result<(i64, Timestamp, Timestamp)> {
    let edge = |order: &str| -> Result<Option<(i64, Timestamp)>> {
        Ok(conn
            .prepare_cached(&format!(
                "SELECT version, created_at FROM doc_versions WHERE document_id = ?1
                 ORDER BY version {order} LIMIT 1"
            ))?
            .query_row([document_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?)
    };
    let Some((latest, last)) = edge("DESC")? else {
        return Ok((0, 0, 0));
    };
    let first = edge("ASC")?.map_or(last, |(_, at)| at);
    Ok((latest, first, last))
}

/// External versions of a document newer than `version` (from the running
/// counts: two index seeks, however long the version chain).
pub fn external_since(conn: &Connection, document_id: &str, version: i64) -> Result<i64> {
    Ok(conn
        .prepare_cached(
            "SELECT COALESCE((SELECT externals FROM doc_versions WHERE document_id = ?1
                              ORDER BY version DESC LIMIT 1), 0)
                  - COALESCE((SELECT externals FROM doc_versions
                              WHERE document_id = ?1 AND version = ?2), 0)",
        )?
        .query_row(params![document_id, version], |r| r.get(0))?)
}

/// The turns (with their procedure's tool) that touched a version.
pub fn version_touches(conn: &Connection, version_id: &str) -> Result<Vec<(Turn, String)>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {}, p.tool FROM procedure_documents pd
         JOIN procedures p ON p.id = pd.procedure_id
         JOIN turns t ON t.id = p.turn_id
         WHERE pd.version_id = ?1 ORDER BY t.created_at, p.position",
        TURN_COLUMNS
            .split(", ")
            .map(|c| format!("t.{c}"))
            .collect::<Vec<_>>()
            .join(", ")
    ))?;
    let rows = stmt.query_map([version_id], |r| Ok((Turns::from_row(r)?, r.get(11)?)))?;
    rows.collect::<rusqlite::Result<_>>()
        .map_err(checksum::read_error(conn))
}

/// Mark retrieval hits on conversations (for archiving decisions).
pub fn mark_hits(
    conn: &Connection,
    namespace: &str,
    conversations: &[String],
    at: Timestamp,
) -> Result<()> {
    let mut stmt = conn.prepare_cached(
        "UPDATE conversations SET last_hit_at = ?3 WHERE namespace = ?1 AND id = ?2",
    )?;
    for c in conversations {
        stmt.execute(params![namespace, c, at])?;
    }
    Ok(())
}

/// The turn right after turn `doc_key` in its conversation, if any.
pub fn next_turn(conn: &Connection, doc_key: u64) -> Result<Option<u64>> {
    Ok(conn
        .prepare_cached(
            "SELECT n.doc_key FROM turns q JOIN turns n
               ON n.namespace = q.namespace AND n.conversation_id = q.conversation_id
                  AND n.turn_index = q.turn_index + 1
             WHERE q.doc_key = ?1",
        )?
        .query_row([doc_key as i64], |r| r.get::<_, i64>(0))
        .optional()?
        .map(|k| k as u64))
}
