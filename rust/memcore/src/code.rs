//! Code search records: projects, their files and the chunks cut from them
//! (chunking itself happens in Python with tree-sitter; the core stores,
//! indexes and searches the chunks).

use crate::error::{Error, Result};
use crate::memory::{MAX_TEXT_BYTES, validate_tag};
use crate::temporal::Timestamp;

/// Project states.
pub const STATUSES: &[&str] = &["idle", "indexing", "watching", "error"];

/// A chunk to store: a function, class, block or line window of a file.
#[derive(Debug, Clone, Default)]
pub struct ChunkDraft {
    pub start_line: i64,
    pub end_line: i64,
    pub chunk_type: String,
    pub name: Option<String>,
    pub parent_scope: Option<String>,
    /// What is indexed and shown: the chunk with its file/scope header.
    pub content: String,
    pub content_hash: String,
    pub embedding: Option<Vec<f32>>,
}

/// A stored chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeChunk {
    pub id: String,
    pub namespace: String,
    pub project_id: String,
    pub file_path: String,
    pub language: String,
    pub start_line: i64,
    pub end_line: i64,
    pub chunk_type: String,
    pub name: Option<String>,
    pub parent_scope: Option<String>,
    pub content: String,
    pub content_hash: String,
    pub indexed_at: Timestamp,
}

/// A file's chunks to store, replacing whatever the file had.
#[derive(Debug, Clone, Default)]
pub struct FileChunks {
    pub namespace: String,
    pub project_id: String,
    /// Path relative to the project root, POSIX separators.
    pub file_path: String,
    pub language: String,
    pub content_hash: String,
    pub size: Option<i64>,
    pub chunks: Vec<ChunkDraft>,
}

/// A project's indexing status.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProjectStatus {
    pub namespace: String,
    pub project_id: String,
    pub root: String,
    pub status: String,
    pub total_files: i64,
    pub indexed_files: i64,
    pub total_chunks: i64,
    pub started_at: Option<Timestamp>,
    pub completed_at: Option<Timestamp>,
    pub error: Option<String>,
    pub updated_at: Timestamp,
}

impl FileChunks {
    /// Check every rule; nothing is written when this fails.
    pub fn validate(&self) -> Result<()> {
        crate::memory::validate_namespace(&self.namespace)?;
        check_project_id(&self.project_id)?;
        if self.file_path.trim().is_empty()
            || self.file_path.starts_with('/')
            || self.file_path.contains("..")
        {
            return Err(Error::invalid(
                "file_path",
                format!(
                    "'{}' is not a path relative to the project root.",
                    self.file_path
                ),
            ));
        }
        for (i, c) in self.chunks.iter().enumerate() {
            if c.start_line < 1 || c.end_line < c.start_line {
                return Err(Error::invalid(
                    format!("chunks[{i}]"),
                    format!(
                        "line range {}-{} is not valid (1-based, inclusive).",
                        c.start_line, c.end_line
                    ),
                ));
            }
            if c.content.trim().is_empty() {
                return Err(Error::invalid(
                    format!("chunks[{i}]"),
                    "a chunk has no content.",
                ));
            }
            if c.content.len() > MAX_TEXT_BYTES {
                return Err(Error::PayloadTooLarge {
                    message: format!("chunks[{i}] is over {MAX_TEXT_BYTES} bytes; split it."),
                });
            }
        }
        Ok(())
    }
}

/// Project ids: short printable names.
pub fn check_project_id(id: &str) -> Result<()> {
    if id.trim().is_empty() {
        return Err(Error::invalid("project_id", "project_id is empty."));
    }
    validate_tag("project_id", Some(id))
}

/// Project states are one of [`STATUSES`].
pub fn check_status(status: &str) -> Result<()> {
    if STATUSES.contains(&status) {
        Ok(())
    } else {
        Err(Error::invalid(
            "status",
            format!("Unknown status '{status}'. Use idle, indexing, watching or error."),
        ))
    }
}
