//! The interaction log's records: turns of conversations, the procedures
//! (tool calls) of a turn, and the document versions they touched.

use crate::error::{Error, Result};
use crate::memory::{MAX_TEXT_BYTES, validate_tag};
use crate::temporal::Timestamp;

/// Largest procedure-argument JSON accepted, in bytes.
pub const MAX_ARGS_BYTES: usize = 64_000;
/// Longest canonical document id (path or URL).
pub const MAX_CANONICAL_CHARS: usize = 4096;
/// Tools whose documents are written by the agent (provenance `agent`).
pub const WRITING_TOOLS: &[&str] = &[
    "EDIT",
    "WRITE",
    "CREATE",
    "MULTIEDIT",
    "MULTI_EDIT",
    "PATCH",
    "APPLY_PATCH",
    "DELETE",
    "MOVE",
    "RENAME",
    "STR_REPLACE",
    "INSERT",
    "NOTEBOOKEDIT",
];

/// A document as a procedure saw it.
#[derive(Debug, Clone, Default)]
pub struct DocumentObservation {
    /// Canonical id: path relative to the project root (local mode), absolute
    /// path (global mode) or normalised URL.
    pub canonical: String,
    pub content_hash: String,
    /// The content, when small enough to keep.
    pub content: Option<String>,
    pub size: Option<i64>,
    /// Whether this procedure wrote the document (else it only read it).
    pub written: bool,
}

/// A tool call of a turn.
#[derive(Debug, Clone, Default)]
pub struct ProcedureRecord {
    /// Tool name, upper-cased: READ, EDIT, BASH, WEB_SEARCH, …
    pub tool: String,
    /// Arguments as JSON text.
    pub args: String,
    pub at: Option<Timestamp>,
    pub documents: Vec<DocumentObservation>,
}

/// A turn to record.
#[derive(Debug, Clone, Default)]
pub struct NewTurn {
    pub namespace: String,
    pub conversation_id: String,
    /// The caller's turn id: recording the same one twice stores it once.
    pub turn_key: String,
    pub user_text: String,
    pub agent_text: Option<String>,
    pub thread_id: Option<String>,
    pub procedures: Vec<ProcedureRecord>,
    /// Embedding of `user_text`.
    pub embedding: Option<Vec<f32>>,
    pub at: Option<Timestamp>,
}

/// A recorded turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub id: String,
    pub namespace: String,
    pub conversation_id: String,
    pub turn_key: String,
    pub turn_index: i64,
    pub user_text: String,
    pub agent_text: Option<String>,
    pub thread_id: Option<String>,
    pub created_at: Timestamp,
}

/// A version of a document.
#[derive(Debug, Clone, PartialEq)]
pub struct DocVersion {
    pub id: String,
    pub document_id: String,
    pub canonical: String,
    pub version: i64,
    pub content_hash: String,
    pub size: Option<i64>,
    /// "agent" or "external".
    pub provenance: String,
    pub turn_id: Option<String>,
    pub created_at: Timestamp,
    pub has_content: bool,
}

/// A recorded procedure with the versions it touched.
#[derive(Debug, Clone, PartialEq)]
pub struct Procedure {
    pub id: String,
    pub turn_id: String,
    pub position: i64,
    pub tool: String,
    pub args: String,
    pub created_at: Timestamp,
    pub versions: Vec<DocVersion>,
}

/// What `record_turn` did.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnOutcome {
    pub turn: Turn,
    /// False when the turn id was already recorded (nothing was written).
    pub created: bool,
    pub procedures: Vec<Procedure>,
}

/// A tool name as stored: trimmed, upper-case, spaces and dashes as `_`.
pub fn normalize_tool(tool: &str) -> String {
    tool.trim()
        .chars()
        .map(|c| match c {
            ' ' | '-' => '_',
            c => c.to_ascii_uppercase(),
        })
        .collect()
}

impl NewTurn {
    /// Check every rule; nothing is written when this fails.
    pub fn validate(&self) -> Result<()> {
        crate::memory::validate_namespace(&self.namespace)?;
        required_tag("conversation_id", &self.conversation_id)?;
        required_tag("turn_id", &self.turn_key)?;
        validate_tag("thread_id", self.thread_id.as_deref())?;
        if self.user_text.trim().is_empty() {
            return Err(Error::invalid(
                "user_text",
                "user_text is empty; record the user's message of this turn.",
            ));
        }
        for (field, text) in [
            ("user_text", Some(&self.user_text)),
            ("agent_text", self.agent_text.as_ref()),
        ] {
            if text.is_some_and(|t| t.len() > MAX_TEXT_BYTES) {
                return Err(Error::PayloadTooLarge {
                    message: format!("{field} is over {MAX_TEXT_BYTES} bytes."),
                });
            }
        }
        for (i, p) in self.procedures.iter().enumerate() {
            validate_procedure(i, p)?;
        }
        Ok(())
    }
}

fn required_tag(field: &str, value: &str) -> Result<()> {
    if value.trim().is_empty() {
        return Err(Error::invalid(field, format!("{field} is empty.")));
    }
    validate_tag(field, Some(value))
}

fn validate_procedure(i: usize, p: &ProcedureRecord) -> Result<()> {
    let field = format!("procedures[{i}]");
    let tool = normalize_tool(&p.tool);
    if tool.is_empty()
        || tool.len() > 64
        || !tool.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(Error::invalid(
            format!("{field}.tool"),
            format!(
                "Tool name '{}' is not usable: 1-64 letters, digits, spaces, '-' or '_' (e.g. \
                 READ, EDIT, WEB_SEARCH).",
                p.tool
            ),
        ));
    }
    if p.args.len() > MAX_ARGS_BYTES {
        return Err(Error::PayloadTooLarge {
            message: format!("{field}.args is over {MAX_ARGS_BYTES} bytes."),
        });
    }
    serde_json::from_str::<serde_json::Value>(&p.args).map_err(|e| {
        Error::invalid(
            format!("{field}.args"),
            format!("args is not valid JSON ({e})."),
        )
    })?;
    for d in &p.documents {
        if d.canonical.trim().is_empty() || d.canonical.chars().count() > MAX_CANONICAL_CHARS {
            return Err(Error::invalid(
                format!("{field}.documents"),
                format!("A document id must be 1-{MAX_CANONICAL_CHARS} characters."),
            ));
        }
        if d.content_hash.trim().is_empty() {
            return Err(Error::invalid(
                format!("{field}.documents"),
                format!("Document '{}' has no content hash.", d.canonical),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn() -> NewTurn {
        NewTurn {
            namespace: "default".into(),
            conversation_id: "c1".into(),
            turn_key: "t1".into(),
            user_text: "fix the login bug".into(),
            ..NewTurn::default()
        }
    }

    #[test]
    fn tools_are_normalised() {
        assert_eq!(normalize_tool(" web-search "), "WEB_SEARCH");
        assert_eq!(normalize_tool("Edit"), "EDIT");
    }

    #[test]
    fn bad_turns_are_refused() {
        turn().validate().unwrap();
        let empty = NewTurn {
            user_text: " ".into(),
            ..turn()
        };
        assert_eq!(empty.validate().unwrap_err().code(), "INVALID_PARAMETER");
        let bad_args = NewTurn {
            procedures: vec![ProcedureRecord {
                tool: "BASH".into(),
                args: "{oops".into(),
                ..ProcedureRecord::default()
            }],
            ..turn()
        };
        assert!(
            bad_args
                .validate()
                .unwrap_err()
                .to_string()
                .contains("not valid JSON")
        );
        let bad_tool = NewTurn {
            procedures: vec![ProcedureRecord {
                tool: "rm -rf /".into(),
                args: "{}".into(),
                ..ProcedureRecord::default()
            }],
            ..turn()
        };
        assert_eq!(bad_tool.validate().unwrap_err().code(), "INVALID_PARAMETER");
    }
}
