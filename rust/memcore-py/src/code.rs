//! Code-search operations on `Engine`: storing a file's chunks, project
//! status, removal, and search_code.

use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use memcore::RecallOptions;
use memcore::code::{ChunkDraft, FileChunks, ProjectStatus};
use memcore::engine::code_recall;

use crate::arrays::{owned_rows, owned_vector};
use crate::engine::PyEngine;
use crate::errors::{BindError, BindResult, InvalidParameterError, run};
use crate::records::code::{CodeHit, SNIPPET_MAX_CHARS};
use crate::search::checked_weights;
use crate::writes::run_write;

/// A chunk of a file as the Python chunker produces it.
#[derive(FromPyObject)]
struct ChunkArg {
    #[pyo3(item)]
    start_line: i64,
    #[pyo3(item)]
    end_line: i64,
    #[pyo3(item)]
    chunk_type: String,
    #[pyo3(item, default)]
    name: Option<String>,
    #[pyo3(item, default)]
    parent_scope: Option<String>,
    #[pyo3(item)]
    content: String,
    #[pyo3(item)]
    content_hash: String,
}

fn project_dict<'py>(py: Python<'py>, p: &ProjectStatus) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("namespace", &p.namespace)?;
    d.set_item("project_id", &p.project_id)?;
    d.set_item("root", &p.root)?;
    d.set_item("status", &p.status)?;
    d.set_item("total_files", p.total_files)?;
    d.set_item("indexed_files", p.indexed_files)?;
    d.set_item("total_chunks", p.total_chunks)?;
    d.set_item("started_at", p.started_at)?;
    d.set_item("completed_at", p.completed_at)?;
    d.set_item("error", &p.error)?;
    d.set_item("updated_at", p.updated_at)?;
    Ok(d)
}

#[pymethods]
impl PyEngine {
    /// Replace a file's chunks (all or nothing). `vectors` has one row per chunk.
    ///
    /// Returns:
    ///     `{"chunks_added", "chunks_removed"}`.
    #[pyo3(signature = (namespace, project_id, file_path, language, content_hash, chunks, *,
        size = None, vectors = None))]
    #[allow(clippy::too_many_arguments)]
    fn index_file<'py>(
        &self,
        py: Python<'py>,
        namespace: String,
        project_id: String,
        file_path: String,
        language: String,
        content_hash: String,
        chunks: Vec<Bound<'py, PyAny>>,
        size: Option<i64>,
        vectors: Option<PyReadonlyArray2<'py, f32>>,
    ) -> BindResult<Bound<'py, PyDict>> {
        let engine = self.engine()?;
        let mut rows = owned_rows(vectors).map(Vec::into_iter);
        if let Some(r) = &rows
            && r.len() != chunks.len()
        {
            return Err(BindError::Core(memcore::Error::invalid(
                "vectors",
                format!("{} vectors for {} chunks.", r.len(), chunks.len()),
            )));
        }
        let drafts = chunks
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let c: ChunkArg = item.extract().map_err(|e: PyErr| {
                    InvalidParameterError::new_err(format!("chunks[{i}] is malformed: {e}"))
                })?;
                Ok(ChunkDraft {
                    start_line: c.start_line,
                    end_line: c.end_line,
                    chunk_type: c.chunk_type,
                    name: c.name,
                    parent_scope: c.parent_scope,
                    content: c.content,
                    content_hash: c.content_hash,
                    embedding: rows.as_mut().and_then(Iterator::next),
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        let file = FileChunks {
            namespace,
            project_id,
            file_path,
            language,
            content_hash,
            size,
            chunks: drafts,
        };
        let outcome = run_write(py, &engine, (), |()| engine.index_file(&file))?;
        let d = PyDict::new(py);
        d.set_item("chunks_added", outcome.chunks_added)?;
        d.set_item("chunks_removed", outcome.chunks_removed)?;
        Ok(d)
    }

    /// Forget a file deleted on disk; returns the chunks removed.
    fn remove_file(
        &self,
        py: Python<'_>,
        namespace: &str,
        project_id: &str,
        file_path: &str,
    ) -> BindResult<usize> {
        let engine = self.engine()?;
        run_write(py, &engine, (), |()| {
            engine.remove_file(namespace, project_id, file_path)
        })
    }

    /// Remove every chunk of a project and its status; returns chunks removed.
    fn delete_project(
        &self,
        py: Python<'_>,
        namespace: &str,
        project_id: &str,
    ) -> BindResult<usize> {
        let engine = self.engine()?;
        run_write(py, &engine, (), |()| {
            engine.delete_project(namespace, project_id)
        })
    }

    /// Record a project's indexing status.
    #[pyo3(signature = (namespace, project_id, root, status, *, total_files = 0, indexed_files = 0,
        started_at = None, completed_at = None, error = None))]
    #[allow(clippy::too_many_arguments)]
    fn put_project_status(
        &self,
        py: Python<'_>,
        namespace: String,
        project_id: String,
        root: String,
        status: String,
        total_files: i64,
        indexed_files: i64,
        started_at: Option<i64>,
        completed_at: Option<i64>,
        error: Option<String>,
    ) -> BindResult<()> {
        let engine = self.engine()?;
        let row = ProjectStatus {
            namespace,
            project_id,
            root,
            status,
            total_files,
            indexed_files,
            total_chunks: 0,
            started_at,
            completed_at,
            error,
            updated_at: 0,
        };
        run_write(py, &engine, (), |()| engine.put_project_status(&row))
    }

    /// A project's status.
    fn project_status<'py>(
        &self,
        py: Python<'py>,
        namespace: &str,
        project_id: &str,
    ) -> BindResult<Bound<'py, PyDict>> {
        let engine = self.engine()?;
        let status = run(py, &engine, || engine.project_status(namespace, project_id))?;
        Ok(project_dict(py, &status)?)
    }

    /// Every project of a namespace.
    fn list_projects<'py>(
        &self,
        py: Python<'py>,
        namespace: &str,
    ) -> BindResult<Vec<Bound<'py, PyDict>>> {
        let engine = self.engine()?;
        let all = run(py, &engine, || engine.list_projects(namespace))?;
        Ok(all
            .iter()
            .map(|p| project_dict(py, p))
            .collect::<PyResult<_>>()?)
    }

    /// Indexed files of a project: `{path: content_hash}`.
    fn indexed_files(
        &self,
        py: Python<'_>,
        namespace: &str,
        project_id: &str,
    ) -> BindResult<std::collections::HashMap<String, String>> {
        let engine = self.engine()?;
        run(py, &engine, || engine.indexed_files(namespace, project_id))
    }

    /// Hybrid search over code chunks, best first, as `CodeHit`s; the chunks
    /// that define a name the query gives come first.
    /// `weights` = (vector, bm25, ppr) replaces code's own z-score weights.
    #[pyo3(signature = (namespace, text, vector = None, *, project_id = None, language = None,
        limit = 10, weights = None))]
    #[allow(clippy::too_many_arguments)]
    fn search_code<'py>(
        &self,
        py: Python<'py>,
        namespace: &str,
        text: &str,
        vector: Option<PyReadonlyArray1<'py, f32>>,
        project_id: Option<&str>,
        language: Option<&str>,
        limit: usize,
        weights: Option<(f32, f32, f32)>,
    ) -> BindResult<Vec<CodeHit>> {
        let engine = self.engine()?;
        let options = match weights {
            None => code_recall(text),
            Some(w) => RecallOptions {
                weights: checked_weights(w)?,
                ..code_recall(text)
            },
        };
        let q = owned_vector(vector);
        let found = run(py, &engine, || {
            engine.search_code_with(
                namespace,
                text,
                q.as_deref(),
                project_id,
                language,
                limit,
                &options,
            )
        })?;
        Ok(found
            .into_iter()
            .map(|hit| CodeHit::from_core(py, hit))
            .collect::<PyResult<_>>()?)
    }
}

/// The code of a stored chunk: its last `line_count` lines, cut after the
/// line that crosses `max_chars` characters with `… (N more lines)` (what a
/// `CodeHit`'s snippet is).
#[pyfunction]
#[pyo3(signature = (content, line_count, max_chars = SNIPPET_MAX_CHARS))]
pub fn snippet_of(content: &str, line_count: i64, max_chars: usize) -> String {
    crate::records::code::snippet_of(content, usize::try_from(line_count).unwrap_or(0), max_chars)
}
