//! The tantivy writer and the journal of everything sent to it since the
//! last successful commit.
//!
//! A failed commit (a full disk, say) can leave tantivy's writer without the
//! documents it was given: an indexing worker that failed is not restarted,
//! and the next commit succeeds without them. So a failure drops the writer
//! (discarding whatever it half did) and the next commit starts a fresh one
//! and replays the journal into it: the committed index only ever moves
//! forward to a state holding every change up to the seq it records.

use std::sync::Arc;

use tantivy::schema::Field;
use tantivy::tokenizer::{PreTokenizedString, Token};
use tantivy::{Index, IndexWriter, TantivyDocument, Term};

use super::{ScopedTerms, tantivy_err};
use crate::error::Result;

/// Writer heap: enough for large batches, small next to the vectors.
const WRITER_HEAP_BYTES: usize = 32 * 1024 * 1024;

/// One change sent to the writer.
#[derive(Debug)]
enum TextOp {
    Add { key: u64, terms: ScopedTerms },
    Delete { key: u64 },
    DeleteAll,
}

/// The writer (None after a failure, until the next commit recreates it)
/// and the changes not yet committed.
pub(super) struct Writing {
    index: Index,
    key: Field,
    body: Field,
    writer: Option<IndexWriter>,
    journal: Vec<TextOp>,
}

fn new_writer(index: &Index) -> Result<IndexWriter> {
    // Created at background priority, so tantivy's indexing and merge
    // threads inherit it (see `crate::priority`).
    crate::priority::spawn_background(|| index.writer_with_num_threads(1, WRITER_HEAP_BYTES))
        .map_err(|e| tantivy_err("writer", &e))
}

impl Writing {
    pub(super) fn open(index: &Index, key: Field, body: Field) -> Result<Self> {
        Ok(Writing {
            writer: Some(new_writer(index)?),
            index: index.clone(),
            key,
            body,
            journal: Vec::new(),
        })
    }

    /// Documents and deletions waiting for a commit.
    pub(super) fn uncommitted(&self) -> usize {
        self.journal.len()
    }

    pub(super) fn add(&mut self, key: u64, terms: &ScopedTerms) -> Result<()> {
        self.send(TextOp::Add {
            key,
            terms: Arc::clone(terms),
        })
    }

    pub(super) fn delete(&mut self, key: u64) -> Result<()> {
        self.send(TextOp::Delete { key })
    }

    pub(super) fn delete_all(&mut self) -> Result<()> {
        // Everything before is moot: a replay starts from the deletion.
        self.journal.clear();
        self.send(TextOp::DeleteAll)
    }

    /// Journal `op`, then hand it to the writer (if there is one: after a
    /// failure the next commit replays the journal into a new writer).
    fn send(&mut self, op: TextOp) -> Result<()> {
        let sent = match self.writer.as_mut() {
            Some(writer) => apply(writer, self.key, self.body, &op),
            None => Ok(()),
        };
        if sent.is_err() {
            self.writer = None;
        }
        self.journal.push(op);
        sent
    }

    /// Commit everything journaled with `payload`; on failure the writer is
    /// dropped and the journal kept for the next attempt.
    pub(super) fn commit(&mut self, payload: &str) -> Result<()> {
        let outcome = self.try_commit(payload);
        match outcome {
            Ok(()) => self.journal.clear(),
            Err(_) => self.writer = None,
        }
        outcome
    }

    fn try_commit(&mut self, payload: &str) -> Result<()> {
        if self.writer.is_none() {
            let mut fresh = new_writer(&self.index)?;
            for op in &self.journal {
                apply(&mut fresh, self.key, self.body, op)?;
            }
            self.writer = Some(fresh);
        }
        let Some(writer) = self.writer.as_mut() else {
            return Ok(());
        };
        let mut prepared = writer
            .prepare_commit()
            .map_err(|e| tantivy_err("commit", &e))?;
        prepared.set_payload(payload);
        prepared.commit().map_err(|e| tantivy_err("commit", &e))?;
        Ok(())
    }

    /// Drop the writer (after a panic inside it): the next commit replays
    /// the journal into a fresh one.
    pub(super) fn discard_writer(&mut self) {
        self.writer = None;
    }

    /// Merge `segments` into one and wait (a no-op while there is no writer).
    pub(super) fn merge(&mut self, segments: &[tantivy::index::SegmentId]) -> Result<()> {
        if let Some(writer) = self.writer.as_mut() {
            writer
                .merge(segments)
                .wait()
                .map_err(|e| tantivy_err("merge", &e))?;
        }
        Ok(())
    }
}

fn apply(writer: &mut IndexWriter, key_field: Field, body: Field, op: &TextOp) -> Result<()> {
    match op {
        TextOp::Add { key, terms } => {
            writer
                .add_document(document(key_field, body, *key, terms))
                .map_err(|e| tantivy_err("add", &e))?;
        }
        TextOp::Delete { key } => {
            writer.delete_term(Term::from_field_u64(key_field, *key));
        }
        TextOp::DeleteAll => {
            writer
                .delete_all_documents()
                .map_err(|e| tantivy_err("clear", &e))?;
        }
    }
    Ok(())
}

/// The index document of `key`: the key and its pre-analysed terms.
fn document(key_field: Field, body: Field, key: u64, terms: &[String]) -> TantivyDocument {
    let tokens = terms
        .iter()
        .enumerate()
        .map(|(position, text)| Token {
            position,
            text: text.clone(),
            ..Token::default()
        })
        .collect();
    let mut doc = TantivyDocument::default();
    doc.add_u64(key_field, key);
    doc.add_pre_tokenized_text(
        body,
        PreTokenizedString {
            text: String::new(),
            tokens,
        },
    );
    doc
}
