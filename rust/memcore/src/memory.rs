//! Memories (facts): the record, what a caller may set, and the rules on it.

use crate::error::{Error, Result};
use crate::temporal::Timestamp;

/// Largest accepted text, in UTF-8 bytes: a memory's content, a turn's user
/// or agent text, a code chunk. A memory is a fact, not a file; documents and
/// code have their own paths.
pub const MAX_TEXT_BYTES: usize = 100_000;
/// Largest accepted metadata JSON, in bytes.
pub const MAX_METADATA_BYTES: usize = 64_000;
/// Longest namespace, thread id or user id.
pub const MAX_TAG_CHARS: usize = 256;
/// The namespace used when none is given.
pub const DEFAULT_NAMESPACE: &str = "default";

/// What sort of memory a fact is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MemoryType {
    /// Something that happened (an event, a conversation moment).
    Episodic,
    /// A standing fact or preference.
    #[default]
    Semantic,
    /// How to do something.
    Procedural,
}

impl MemoryType {
    /// The public name.
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryType::Episodic => "episodic",
            MemoryType::Semantic => "semantic",
            MemoryType::Procedural => "procedural",
        }
    }

    /// Parse a public name.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "episodic" => Ok(MemoryType::Episodic),
            "semantic" => Ok(MemoryType::Semantic),
            "procedural" => Ok(MemoryType::Procedural),
            other => Err(Error::invalid(
                "memory_type",
                format!(
                    "Invalid memory_type '{other}'. Use one of: episodic, semantic, procedural."
                ),
            )),
        }
    }
}

/// Where a memory came from: the user asked for it, a program extracted it,
/// or memcore captured it from a user's message in `memory_after_turn`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Source {
    Explicit,
    #[default]
    Extracted,
    Conversation,
}

impl Source {
    /// The public name.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Explicit => "explicit",
            Source::Extracted => "extracted",
            Source::Conversation => "conversation",
        }
    }

    /// Parse a public name.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "explicit" => Ok(Source::Explicit),
            "extracted" => Ok(Source::Extracted),
            "conversation" => Ok(Source::Conversation),
            other => Err(Error::invalid(
                "source",
                format!("Invalid source '{other}'. Use one of: explicit, extracted, conversation."),
            )),
        }
    }
}

/// How long a fact holds (the lifecycle contract's retention tiers, in UTC):
/// `L1` is about today, `L2` about this week or a passing state, `Durable`
/// holds until something supersedes it. A tier's expiry is set as
/// `expires_at` when the fact is written (the caller knows its retention
/// days), so searches leave an expired fact out at read time like any other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tier {
    L1,
    L2,
    #[default]
    Durable,
}

impl Tier {
    /// The public name.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::L1 => "L1",
            Tier::L2 => "L2",
            Tier::Durable => "durable",
        }
    }

    /// Parse a public name.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "L1" => Ok(Tier::L1),
            "L2" => Ok(Tier::L2),
            "durable" => Ok(Tier::Durable),
            other => Err(Error::invalid(
                "tier",
                format!("Invalid tier '{other}'. Use one of: L1, L2, durable."),
            )),
        }
    }
}

/// A stored memory. The embedding is deliberately absent: it is never returned.
#[derive(Debug, Clone, PartialEq)]
pub struct Memory {
    pub id: String,
    pub namespace: String,
    pub content: String,
    pub memory_type: MemoryType,
    pub source: Source,
    pub confidence: f64,
    pub importance: f64,
    /// Arbitrary JSON, as text.
    pub metadata: String,
    pub thread_id: Option<String>,
    pub user_id: Option<String>,
    pub event_time: Option<Timestamp>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub accessed_at: Timestamp,
    pub valid_from: Timestamp,
    pub valid_until: Option<Timestamp>,
    pub invalidated_at: Option<Timestamp>,
    pub invalidation_reason: Option<String>,
    pub supersedes: Option<String>,
    pub superseded_by: Option<String>,
    pub expires_at: Option<Timestamp>,
    pub tier: Tier,
}

/// What a caller gives to store a memory. Unset fields take the defaults of
/// docs/guide.md, "The records".
#[derive(Debug, Clone)]
pub struct NewMemory {
    pub namespace: String,
    pub content: String,
    pub memory_type: MemoryType,
    pub source: Source,
    pub confidence: f64,
    pub importance: f64,
    pub metadata: Option<String>,
    pub thread_id: Option<String>,
    pub user_id: Option<String>,
    pub event_time: Option<Timestamp>,
    /// Defaults to the creation time.
    pub valid_from: Option<Timestamp>,
    pub expires_at: Option<Timestamp>,
    pub tier: Tier,
    pub embedding: Option<Vec<f32>>,
    /// Entities this memory is about, by name (created when unknown), in
    /// addition to the known names found in its text.
    pub entities: Vec<String>,
}

impl Default for NewMemory {
    fn default() -> Self {
        NewMemory {
            namespace: DEFAULT_NAMESPACE.to_owned(),
            content: String::new(),
            memory_type: MemoryType::default(),
            source: Source::default(),
            confidence: 1.0,
            importance: 0.5,
            metadata: None,
            thread_id: None,
            user_id: None,
            event_time: None,
            valid_from: None,
            expires_at: None,
            tier: Tier::default(),
            embedding: None,
            entities: Vec::new(),
        }
    }
}

impl NewMemory {
    /// A memory with `content` and every other field at its default.
    pub fn text(content: impl Into<String>) -> Self {
        NewMemory {
            content: content.into(),
            ..NewMemory::default()
        }
    }

    /// Check every rule; nothing is written when this fails.
    pub fn validate(&self) -> Result<()> {
        validate_namespace(&self.namespace)?;
        validate_content(&self.content)?;
        validate_unit("confidence", self.confidence)?;
        validate_unit("importance", self.importance)?;
        if let Some(m) = &self.metadata {
            validate_metadata(m)?;
        }
        validate_tag("thread_id", self.thread_id.as_deref())?;
        validate_tag("user_id", self.user_id.as_deref())?;
        for name in &self.entities {
            if let Some(problem) = crate::knowledge::rules::name_problem(name) {
                return Err(Error::invalid("entities", problem));
            }
        }
        Ok(())
    }
}

/// A partial update: `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct MemoryPatch {
    pub content: Option<String>,
    pub memory_type: Option<MemoryType>,
    pub source: Option<Source>,
    pub confidence: Option<f64>,
    pub importance: Option<f64>,
    pub metadata: Option<String>,
    pub thread_id: Option<String>,
    pub user_id: Option<String>,
    pub event_time: Option<Timestamp>,
    pub expires_at: Option<Timestamp>,
    pub tier: Option<Tier>,
    /// The new content's embedding; required with `content` when the store
    /// keeps vectors, ignored otherwise.
    pub embedding: Option<Vec<f32>>,
}

impl MemoryPatch {
    /// Check every rule; nothing is written when this fails.
    pub fn validate(&self) -> Result<()> {
        if let Some(c) = &self.content {
            validate_content(c)?;
        }
        if let Some(v) = self.confidence {
            validate_unit("confidence", v)?;
        }
        if let Some(v) = self.importance {
            validate_unit("importance", v)?;
        }
        if let Some(m) = &self.metadata {
            validate_metadata(m)?;
        }
        validate_tag("thread_id", self.thread_id.as_deref())?;
        validate_tag("user_id", self.user_id.as_deref())?;
        if self.embedding.is_some() && self.content.is_none() {
            return Err(Error::invalid(
                "vector",
                "A new vector was given without new content; pass both or neither.",
            ));
        }
        Ok(())
    }

    /// Whether the patch changes nothing.
    pub fn is_empty(&self) -> bool {
        self.content.is_none()
            && self.memory_type.is_none()
            && self.source.is_none()
            && self.confidence.is_none()
            && self.importance.is_none()
            && self.metadata.is_none()
            && self.thread_id.is_none()
            && self.user_id.is_none()
            && self.event_time.is_none()
            && self.expires_at.is_none()
            && self.tier.is_none()
    }
}

/// Content must say something and fit the size limit.
pub fn validate_content(content: &str) -> Result<()> {
    if content.trim().is_empty() {
        return Err(Error::invalid(
            "content",
            "content is empty. Pass the fact to remember as a clear, standalone statement.",
        ));
    }
    if content.len() > MAX_TEXT_BYTES {
        return Err(Error::PayloadTooLarge {
            message: format!(
                "content is {} bytes; the limit is {MAX_TEXT_BYTES}. Store a shorter fact, \
                 or split it into several memories.",
                content.len()
            ),
        });
    }
    Ok(())
}

/// Scores in 0..=1 (confidence, importance, weights).
pub fn validate_unit(field: &str, value: f64) -> Result<()> {
    if value.is_finite() && (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(Error::invalid(
            field,
            format!("{field} must be between 0 and 1, got {value}."),
        ))
    }
}

/// Metadata must be valid JSON within the size limit.
pub fn validate_metadata(metadata: &str) -> Result<()> {
    if metadata.len() > MAX_METADATA_BYTES {
        return Err(Error::PayloadTooLarge {
            message: format!(
                "metadata is {} bytes; the limit is {MAX_METADATA_BYTES}.",
                metadata.len()
            ),
        });
    }
    serde_json::from_str::<serde_json::Value>(metadata).map_err(|e| {
        Error::invalid(
            "metadata",
            format!("metadata is not valid JSON ({e}). Pass a JSON object."),
        )
    })?;
    Ok(())
}

/// Namespaces: non-empty, short, printable.
pub fn validate_namespace(namespace: &str) -> Result<()> {
    if namespace.trim().is_empty() {
        return Err(Error::invalid(
            "namespace",
            "namespace is empty. Pass a name such as \"default\" or a user or project id.",
        ));
    }
    validate_tag("namespace", Some(namespace))
}

/// Optional short tags (thread id, user id): bounded and free of control characters.
pub fn validate_tag(field: &str, value: Option<&str>) -> Result<()> {
    let Some(v) = value else { return Ok(()) };
    if v.chars().count() > MAX_TAG_CHARS {
        return Err(Error::invalid(
            field,
            format!("{field} is longer than {MAX_TAG_CHARS} characters."),
        ));
    }
    if v.chars().any(char::is_control) {
        return Err(Error::invalid(
            field,
            format!("{field} contains control characters; use plain text."),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_design() {
        let m = NewMemory::text("User prefers TypeScript");
        assert_eq!(m.namespace, "default");
        assert!((m.confidence - 1.0).abs() < f64::EPSILON);
        assert!((m.importance - 0.5).abs() < f64::EPSILON);
        assert_eq!(m.memory_type, MemoryType::Semantic);
        m.validate().unwrap();
    }

    #[test]
    fn bad_values_are_refused_with_the_field() {
        let cases: Vec<(NewMemory, &str)> = vec![
            (NewMemory::text("  "), "content"),
            (
                NewMemory {
                    confidence: 1.5,
                    ..NewMemory::text("x")
                },
                "confidence",
            ),
            (
                NewMemory {
                    importance: f64::NAN,
                    ..NewMemory::text("x")
                },
                "importance",
            ),
            (
                NewMemory {
                    metadata: Some("{not json".into()),
                    ..NewMemory::text("x")
                },
                "metadata",
            ),
            (
                NewMemory {
                    namespace: String::new(),
                    ..NewMemory::text("x")
                },
                "namespace",
            ),
        ];
        for (m, field) in cases {
            match m.validate().unwrap_err() {
                Error::InvalidParameter { field: f, .. } => assert_eq!(f, field),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn oversize_content_is_payload_too_large() {
        let m = NewMemory::text("x".repeat(MAX_TEXT_BYTES + 1));
        assert_eq!(m.validate().unwrap_err().code(), "PAYLOAD_TOO_LARGE");
    }

    #[test]
    fn type_and_source_names() {
        assert_eq!(MemoryType::parse("episodic").unwrap(), MemoryType::Episodic);
        assert_eq!(
            MemoryType::parse("fact").unwrap_err().code(),
            "INVALID_PARAMETER"
        );
        assert_eq!(Source::parse("explicit").unwrap().as_str(), "explicit");
        assert_eq!(Source::parse("conversation").unwrap(), Source::Conversation);
        for tier in [Tier::L1, Tier::L2, Tier::Durable] {
            assert_eq!(Tier::parse(tier.as_str()).unwrap(), tier);
        }
        assert_eq!(Tier::parse("l1").unwrap_err().code(), "INVALID_PARAMETER");
    }
}
