//! How each record kind appears to the indexes: its catalog labels, and its
//! indexed content when the op log is replayed. Later kinds add their arm here.

use rusqlite::Connection;

use crate::catalog::{Catalog, DocLabels};
use crate::error::Result;
use crate::kind::Kind;
use crate::memory::Memory;
use crate::store::memories;
use crate::temporal::effective_end;

/// The content an index holds for one document key.
#[derive(Debug, Clone)]
pub struct IndexDoc {
    pub key: u64,
    pub text: String,
    pub vector: Option<Vec<f32>>,
}

/// Catalog labels of a memory.
pub fn memory_labels(m: &Memory) -> DocLabels<'_> {
    DocLabels {
        kind: Kind::Memory,
        namespace: &m.namespace,
        thread: m.thread_id.as_deref(),
        scope: None,
        tag: None,
        valid_from: m.valid_from,
        valid_end: effective_end(m.valid_until, m.expires_at),
        superseded: m.superseded_by.is_some(),
    }
}

/// Fill `catalog` from every searchable table.
pub fn load_catalog(conn: &Connection, catalog: &mut Catalog) -> Result<()> {
    memories::catalog_rows(conn, |row| {
        catalog.insert(
            row.doc_key,
            &DocLabels {
                kind: Kind::Memory,
                namespace: &row.namespace,
                thread: row.thread_id.as_deref(),
                scope: None,
                tag: None,
                valid_from: row.valid_from,
                valid_end: effective_end(row.valid_until, row.expires_at),
                superseded: row.superseded,
            },
        );
    })
}

/// The current indexed content of a record, if it still exists.
pub fn load_index_doc(conn: &Connection, kind: Kind, record_id: &str) -> Result<Option<IndexDoc>> {
    match kind {
        Kind::Memory => Ok(memories::index_doc(conn, record_id)?
            .map(|(key, text, vector)| IndexDoc { key, text, vector })),
        // Kinds whose tables arrive in later schema versions.
        Kind::Observation | Kind::UserTurn | Kind::CodeChunk | Kind::Entity => Ok(None),
    }
}
