//! Recording the interaction log: a turn (user text, agent text, procedures
//! and the document versions they touched) commits in one transaction, once
//! per caller-given turn id; and reading documents' version histories.

use std::sync::Arc;

use rusqlite::Connection;

use super::Engine;
use super::indexes::Change;
use crate::asking::turn_asking_percent;
use crate::catalog::DocLabels;
use crate::conversation::{
    DocVersion, DocumentObservation, NewTurn, Procedure, Turn, TurnOutcome, normalize_tool,
};
use crate::error::{Error, Result};
use crate::kind::Kind;
use crate::memory::validate_namespace;
use crate::store::conversations as conv;
use crate::store::oplog::{self, Action};
use crate::temporal::{Timestamp, now_micros};

/// A document's versions with the turns that touched each, and its signals.
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentHistory {
    pub canonical: String,
    pub versions: Vec<(DocVersion, Vec<(Turn, String)>)>,
    /// Versions per day between the first and the latest version.
    pub volatility: f64,
    /// Distinct conversations that touched the document.
    pub familiarity: i64,
}

/// What a read would see now: the latest stored version of a document.
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentState {
    pub latest: Option<DocVersion>,
    pub familiarity: i64,
}

/// Catalog labels of a turn's searchable user text (scoped by its conversation).
pub fn turn_labels(turn: &Turn, archived_at: Option<Timestamp>) -> DocLabels<'_> {
    DocLabels {
        kind: Kind::UserTurn,
        namespace: &turn.namespace,
        thread: turn.thread_id.as_deref(),
        scope: Some(&turn.conversation_id),
        tag: None,
        valid_from: turn.created_at,
        valid_end: archived_at,
        superseded: false,
        asks: turn_asking_percent(&turn.user_text, turn.agent_text.as_deref()),
    }
}

impl Engine {
    /// Record a turn. The same `(namespace, conversation_id, turn_key)` twice
    /// (also concurrently) stores it once; the second call returns the stored
    /// turn with `created == false`.
    pub fn record_turn(&self, turn: &NewTurn) -> Result<TurnOutcome> {
        turn.validate()?;
        let now = turn.at.unwrap_or_else(now_micros);
        self.store.write_then(
            |tx| {
                if let Some(existing) =
                    conv::turn_by_key(tx, &turn.namespace, &turn.conversation_id, &turn.turn_key)?
                {
                    let procedures = conv::procedures_of(tx, &existing.id)?;
                    return Ok((
                        TurnOutcome {
                            turn: existing,
                            created: false,
                            procedures,
                        },
                        None,
                    ));
                }
                conv::touch_conversation(tx, &turn.namespace, &turn.conversation_id, now)?;
                let record = Turn {
                    id: self.new_id("turn", now),
                    namespace: turn.namespace.clone(),
                    conversation_id: turn.conversation_id.clone(),
                    turn_key: turn.turn_key.clone(),
                    turn_index: conv::next_turn_index(tx, &turn.namespace, &turn.conversation_id)?,
                    user_text: turn.user_text.clone(),
                    agent_text: turn.agent_text.clone().filter(|t| !t.trim().is_empty()),
                    thread_id: turn.thread_id.clone(),
                    created_at: now,
                };
                let vector = self.checked_vector(tx, turn.embedding.clone())?;
                let key = oplog::append(
                    tx,
                    now,
                    Action::Upsert,
                    Kind::UserTurn,
                    &record.id,
                    &record.namespace,
                    None,
                )?;
                conv::insert_turn(tx, &record, key, vector.as_deref())?;
                let search_text = conv::turn_search_text(
                    tx,
                    &record.namespace,
                    &record.conversation_id,
                    record.turn_index,
                    record.created_at,
                    &record.user_text,
                )?;
                let mut procedures = Vec::with_capacity(turn.procedures.len());
                for (position, p) in turn.procedures.iter().enumerate() {
                    let mut procedure = Procedure {
                        id: self.new_id("proc", now),
                        turn_id: record.id.clone(),
                        position: position as i64,
                        tool: normalize_tool(&p.tool),
                        args: p.args.clone(),
                        created_at: p.at.unwrap_or(now),
                        versions: Vec::new(),
                    };
                    conv::insert_procedure(tx, &procedure)?;
                    for doc in &p.documents {
                        let version = self.observe(tx, &record, doc, now)?;
                        conv::link_procedure(tx, &procedure.id, &version.id)?;
                        conv::record_touch(tx, &version.document_id, &record)?;
                        procedure.versions.push(version);
                    }
                    procedures.push(procedure);
                }
                Ok((
                    TurnOutcome {
                        turn: record,
                        created: true,
                        procedures,
                    },
                    Some((key, vector, search_text)),
                ))
            },
            |(outcome, published)| {
                if let Some((key, vector, search_text)) = published {
                    if let Some(v) = &vector {
                        self.note_dim(v.len());
                    }
                    self.publish(
                        key,
                        &Change::Upsert {
                            key: key as u64,
                            prev: None,
                            labels: turn_labels(&outcome.turn, None),
                            text: &search_text,
                            vector: vector.map(Arc::from),
                        },
                    );
                }
                outcome
            },
        )
    }

    /// The version a procedure saw: the latest one when the content hash is
    /// unchanged, else a new version (`agent` when this procedure wrote it).
    fn observe(
        &self,
        tx: &Connection,
        turn: &Turn,
        doc: &DocumentObservation,
        now: Timestamp,
    ) -> Result<DocVersion> {
        let document_id = if let Some(id) = conv::document_id(tx, &turn.namespace, &doc.canonical)?
        {
            id
        } else {
            let id = self.new_id("doc", now);
            conv::insert_document(tx, &id, &turn.namespace, &doc.canonical, now)?;
            id
        };
        let latest = conv::latest_version(tx, &document_id)?;
        if let Some(latest) = &latest
            && latest.content_hash == doc.content_hash
        {
            return Ok(latest.clone());
        }
        let version = DocVersion {
            id: self.new_id("ver", now),
            document_id,
            canonical: doc.canonical.clone(),
            version: latest.map_or(1, |l| l.version + 1),
            content_hash: doc.content_hash.clone(),
            size: doc.size,
            provenance: if doc.written { "agent" } else { "external" }.to_owned(),
            turn_id: Some(turn.id.clone()),
            created_at: now,
            has_content: doc.content.is_some(),
        };
        conv::insert_version(tx, &version, doc.content.as_deref())?;
        Ok(version)
    }

    /// A turn with its procedures, by the caller's ids.
    pub fn get_turn(
        &self,
        namespace: &str,
        conversation_id: &str,
        turn_key: &str,
    ) -> Result<(Turn, Vec<Procedure>)> {
        validate_namespace(namespace)?;
        let conn = self.store.reader()?;
        let turn =
            conv::turn_by_key(&conn, namespace, conversation_id, turn_key)?.ok_or_else(|| {
                Error::NotFound {
                    kind: "Turn",
                    id: format!("{conversation_id}/{turn_key}"),
                }
            })?;
        let procedures = conv::procedures_of(&conn, &turn.id)?;
        Ok((turn, procedures))
    }

    /// The turns of a conversation in order.
    pub fn conversation_turns(
        &self,
        namespace: &str,
        conversation_id: &str,
        limit: usize,
    ) -> Result<Vec<Turn>> {
        validate_namespace(namespace)?;
        super::memories::check_limit(limit)?;
        conv::turns_of(&*self.store.reader()?, namespace, conversation_id, limit)
    }

    /// The latest stored version of a document (None when never seen).
    pub fn document_state(&self, namespace: &str, canonical: &str) -> Result<DocumentState> {
        validate_namespace(namespace)?;
        let conn = self.store.reader()?;
        let Some(id) = conv::document_id(&conn, namespace, canonical)? else {
            return Ok(DocumentState {
                latest: None,
                familiarity: 0,
            });
        };
        Ok(DocumentState {
            latest: conv::latest_version(&conn, &id)?,
            familiarity: conv::familiarity(&conn, &id)?,
        })
    }

    /// A document's versions, oldest first, with the turns that touched each.
    pub fn document_history(&self, namespace: &str, canonical: &str) -> Result<DocumentHistory> {
        validate_namespace(namespace)?;
        let conn = self.store.reader()?;
        let id =
            conv::document_id(&conn, namespace, canonical)?.ok_or_else(|| Error::NotFound {
                kind: "Document",
                id: canonical.to_owned(),
            })?;
        let versions = conv::versions_of(&conn, &id)?;
        let volatility = volatility(&versions);
        let mut out = Vec::with_capacity(versions.len());
        for v in versions {
            let touches = conv::version_touches(&conn, &v.id)?;
            out.push((v, touches));
        }
        Ok(DocumentHistory {
            canonical: canonical.to_owned(),
            versions: out,
            volatility,
            familiarity: conv::familiarity(&conn, &id)?,
        })
    }

    /// The stored content of a document version, if it was kept.
    pub fn version_content(&self, version_id: &str) -> Result<Option<String>> {
        conv::version_content(&*self.store.reader()?, version_id)
    }
}

/// Versions per day over the span from the first to the latest version (a
/// single version, or versions within one day, count as one day).
pub fn volatility(versions: &[DocVersion]) -> f64 {
    let (Some(first), Some(last)) = (versions.first(), versions.last()) else {
        return 0.0;
    };
    let days = ((last.created_at - first.created_at) as f64 / 86_400e6).max(1.0);
    versions.len() as f64 / days
}
