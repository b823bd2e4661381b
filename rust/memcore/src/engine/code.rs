//! Code search in the engine: a file's chunks replace its previous chunks in
//! one transaction; projects carry an indexing status; search_code is recall
//! restricted to code chunks of a project and language.

use std::collections::HashMap;
use std::sync::Arc;

use super::Engine;
use super::code_weights::{code_recall, defined_names};
use super::hits::{Hit, Scores};
use super::indexes::Change;
use super::query::SearchQuery;
use super::search::RecallOptions;
use crate::catalog::DocLabels;
use crate::code::{CodeChunk, FileChunks, ProjectStatus, check_project_id, check_status};
use crate::error::{Error, Result};
use crate::kind::{Kind, KindSet};
use crate::memory::validate_namespace;
use crate::store::code::{self as rows, CodeChunks};
use crate::store::oplog::{self, Action};
use crate::store::table;
use crate::temporal::{ValidAt, now_micros};

/// search_code ranks first the chunks of a name the query gives when at
/// most this many carry it: a name defined in more places (`__init__` or
/// `get` in a large project) says little about which is meant, and ranks
/// like any other word.
const DEFINITIONS_RANKED: usize = 100;

/// What indexing one file did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FileOutcome {
    pub chunks_added: usize,
    pub chunks_removed: usize,
}

/// Catalog labels of a chunk: scoped by project, tagged by language.
pub fn chunk_labels(c: &CodeChunk) -> DocLabels<'_> {
    DocLabels {
        kind: Kind::CodeChunk,
        namespace: &c.namespace,
        thread: None,
        scope: Some(&c.project_id),
        tag: Some(&c.language),
        valid_from: c.indexed_at,
        valid_end: None,
        superseded: false,
        asks: 0,
    }
}

impl Engine {
    /// Replace a file's chunks with `file.chunks` (all or nothing).
    pub fn index_file(&self, file: &FileChunks) -> Result<FileOutcome> {
        file.validate()?;
        let now = now_micros();
        let ns = file.namespace.as_str();
        self.store.write_then(
            |tx| {
                let removed =
                    rows::delete_chunks_of_file(tx, ns, &file.project_id, &file.file_path)?;
                let mut retired = Vec::with_capacity(removed.len());
                for (id, key) in &removed {
                    let seq = oplog::append(
                        tx,
                        now,
                        Action::Delete,
                        Kind::CodeChunk,
                        id,
                        ns,
                        Some(*key),
                    )?;
                    retired.push((seq, *key));
                }
                let mut added = Vec::with_capacity(file.chunks.len());
                for draft in &file.chunks {
                    let chunk = CodeChunk {
                        id: self.new_id("chk", now),
                        namespace: ns.to_owned(),
                        project_id: file.project_id.clone(),
                        file_path: file.file_path.clone(),
                        language: file.language.clone(),
                        start_line: draft.start_line,
                        end_line: draft.end_line,
                        chunk_type: draft.chunk_type.clone(),
                        name: draft.name.clone(),
                        parent_scope: draft.parent_scope.clone(),
                        content: draft.content.clone(),
                        content_hash: draft.content_hash.clone(),
                        indexed_at: now,
                    };
                    let vector = self.checked_vector(tx, draft.embedding.clone())?;
                    let key = oplog::append(
                        tx,
                        now,
                        Action::Upsert,
                        Kind::CodeChunk,
                        &chunk.id,
                        ns,
                        None,
                    )?;
                    rows::insert_chunk(tx, &chunk, key, vector.as_deref())?;
                    added.push((chunk, key, vector));
                }
                rows::put_file(
                    tx,
                    ns,
                    &file.project_id,
                    &file.file_path,
                    &file.content_hash,
                    &file.language,
                    file.size,
                    file.chunks.len(),
                    now,
                )?;
                Ok((retired, added))
            },
            |(retired, added)| {
                let outcome = FileOutcome {
                    chunks_added: added.len(),
                    chunks_removed: retired.len(),
                };
                for (seq, key) in retired {
                    self.publish(seq, &Change::Retire { key: key as u64 });
                }
                for (chunk, key, vector) in added {
                    if let Some(v) = &vector {
                        self.note_dim(v.len());
                    }
                    self.publish(
                        key,
                        &Change::Upsert {
                            key: key as u64,
                            prev: None,
                            labels: chunk_labels(&chunk),
                            text: &chunk.content,
                            vector: vector.map(Arc::from),
                        },
                    );
                }
                outcome
            },
        )
    }

    /// Forget a file (deleted on disk): its chunks leave the indexes.
    pub fn remove_file(&self, namespace: &str, project_id: &str, file_path: &str) -> Result<usize> {
        validate_namespace(namespace)?;
        check_project_id(project_id)?;
        let now = now_micros();
        self.store.write_then(
            |tx| {
                let removed = rows::delete_chunks_of_file(tx, namespace, project_id, file_path)?;
                rows::delete_file(tx, namespace, project_id, file_path)?;
                let mut retired = Vec::with_capacity(removed.len());
                for (id, key) in removed {
                    let seq = oplog::append(
                        tx,
                        now,
                        Action::Delete,
                        Kind::CodeChunk,
                        &id,
                        namespace,
                        Some(key),
                    )?;
                    retired.push((seq, key));
                }
                Ok(retired)
            },
            |retired| {
                for (seq, key) in &retired {
                    self.publish(*seq, &Change::Retire { key: *key as u64 });
                }
                retired.len()
            },
        )
    }

    /// Remove every chunk, file record and the status of a project.
    pub fn delete_project(&self, namespace: &str, project_id: &str) -> Result<usize> {
        validate_namespace(namespace)?;
        check_project_id(project_id)?;
        let paths = rows::file_paths(&*self.store.reader()?, namespace, project_id)?;
        let known = rows::project(&*self.store.reader()?, namespace, project_id)?.is_some();
        if !known && paths.is_empty() {
            return Err(Error::NotFound {
                kind: "Project",
                id: project_id.to_owned(),
            });
        }
        let mut removed = 0;
        for path in paths {
            removed += self.remove_file(namespace, project_id, &path)?;
        }
        self.store
            .write(|tx| rows::delete_project(tx, namespace, project_id))?;
        Ok(removed)
    }

    /// Record a project's status (the Python indexer reports progress here).
    ///
    /// The status that ends a pass (`idle`, `watching`) is written once the
    /// namespace's code chunks have their hubness values for the chunks now
    /// indexed (one neighbour search per chunk, when any changed), so the
    /// first search after `index_project` returns ranks with them. Best
    /// effort: a failure there is in the index health, and ranking goes on
    /// without those values.
    pub fn put_project_status(&self, status: &ProjectStatus) -> Result<()> {
        validate_namespace(&status.namespace)?;
        check_project_id(&status.project_id)?;
        check_status(&status.status)?;
        if matches!(status.status.as_str(), "idle" | "watching") {
            let _ = self.catch_up_code_hubness(&status.namespace);
        }
        let mut row = status.clone();
        row.updated_at = now_micros();
        self.store.write(|tx| {
            row.total_chunks = rows::chunk_count(tx, &row.namespace, &row.project_id)?;
            rows::put_project(tx, &row)
        })
    }

    /// A project's status (chunk count always current).
    pub fn project_status(&self, namespace: &str, project_id: &str) -> Result<ProjectStatus> {
        validate_namespace(namespace)?;
        let conn = self.store.reader()?;
        let mut status =
            rows::project(&conn, namespace, project_id)?.ok_or_else(|| Error::NotFound {
                kind: "Project",
                id: project_id.to_owned(),
            })?;
        status.total_chunks = rows::chunk_count(&conn, namespace, project_id)?;
        Ok(status)
    }

    /// Every project of a namespace.
    pub fn list_projects(&self, namespace: &str) -> Result<Vec<ProjectStatus>> {
        validate_namespace(namespace)?;
        let conn = self.store.reader()?;
        let mut all = rows::projects(&conn, namespace)?;
        for p in &mut all {
            p.total_chunks = rows::chunk_count(&conn, namespace, &p.project_id)?;
        }
        Ok(all)
    }

    /// Indexed files of a project with their content hashes (for incremental runs).
    pub fn indexed_files(
        &self,
        namespace: &str,
        project_id: &str,
    ) -> Result<HashMap<String, String>> {
        validate_namespace(namespace)?;
        rows::file_hashes(&*self.store.reader()?, namespace, project_id)
    }

    /// Hybrid search over code chunks (optionally one project, one language),
    /// fused as [`code_recall`] says, the chunks that define a name the
    /// query gives ([`defined_names`]) first.
    pub fn search_code(
        &self,
        namespace: &str,
        text: &str,
        vector: Option<&[f32]>,
        project_id: Option<&str>,
        language: Option<&str>,
        limit: usize,
    ) -> Result<Vec<(CodeChunk, Scores)>> {
        self.search_code_with(
            namespace,
            text,
            vector,
            project_id,
            language,
            limit,
            &code_recall(text),
        )
    }

    /// [`Engine::search_code`] with other fusion options (the quality harness
    /// sweeps the weights through it).
    #[allow(clippy::too_many_arguments)]
    pub fn search_code_with(
        &self,
        namespace: &str,
        text: &str,
        vector: Option<&[f32]>,
        project_id: Option<&str>,
        language: Option<&str>,
        limit: usize,
        options: &RecallOptions,
    ) -> Result<Vec<(CodeChunk, Scores)>> {
        let query = SearchQuery {
            namespace,
            kinds: KindSet::only(Kind::CodeChunk),
            thread_id: None,
            scope: project_id,
            tag: language,
            exclude_scope: None,
            valid: ValidAt::Any,
            limit,
        };
        let defined = self.definitions(&query, text)?;
        let hits = self.recall_first(&query, text, vector, options, &defined)?;
        self.chunks_for(&hits)
    }

    /// The chunks that define the names `text` gives ([`defined_names`]),
    /// in `query`'s namespace, project and language: each name's when at
    /// most [`DEFINITIONS_RANKED`] chunks carry it.
    fn definitions(&self, query: &SearchQuery<'_>, text: &str) -> Result<Vec<u64>> {
        let names = defined_names(text);
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let conn = self.store.reader()?;
        let mut keys = Vec::new();
        for name in &names {
            let found = rows::keys_of_chunks_named(
                &conn,
                query.namespace,
                name,
                query.scope,
                query.tag,
                DEFINITIONS_RANKED + 1,
            )?;
            if found.len() <= DEFINITIONS_RANKED {
                keys.extend(found);
            }
        }
        Ok(keys)
    }

    /// The chunks behind hits, in hit order (other kinds skipped).
    pub fn chunks_for(&self, hits: &[Hit]) -> Result<Vec<(CodeChunk, Scores)>> {
        let conn = self.store.reader()?;
        let mut out = Vec::with_capacity(hits.len());
        for hit in hits.iter().filter(|h| h.kind == Kind::CodeChunk) {
            if let Some(chunk) = table::by_doc_key::<CodeChunks>(&conn, hit.key)? {
                out.push((chunk, hit.scores));
            }
        }
        Ok(out)
    }
}
