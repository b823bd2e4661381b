//! The one error type of the core. Each variant maps to one public error code
//! (docs/configuration.md, "Errors"); the bindings translate variants, never strings.

use std::path::PathBuf;

/// Everything that can go wrong in the core.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A memory id that does not exist in the namespace asked about.
    #[error("Memory not found: {}", shown_key(.id))]
    MemoryNotFound { id: String },

    /// Any other record (entity, observation, document, project…) that does not exist.
    #[error("{kind} not found: {}", shown_key(.id))]
    NotFound { kind: &'static str, id: String },

    /// A caller-supplied value is out of range or malformed. `message` says what to fix.
    #[error("{message}")]
    InvalidParameter { field: String, message: String },

    /// A request that is well-formed but breaks a domain rule (several problems at once).
    #[error("{message}")]
    ValidationFailed {
        message: String,
        /// Machine-readable problems, one JSON object per problem.
        details: serde_json::Value,
    },

    /// The database (or an index file) could not be read or written.
    #[error("Storage error: {0}")]
    Storage(#[source] rusqlite::Error),

    /// A file-system operation on the data directory failed.
    #[error("I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A derived index (vector or text) failed; the store is untouched.
    #[error("Index error: {0}")]
    Index(String),

    /// The store holds vectors of another dimension or model than the one configured.
    #[error("{message}")]
    DimensionMismatch { message: String },

    /// Another process holds the data directory, or the same work is in flight.
    #[error("{message}")]
    ResourceBusy { message: String },

    /// A request exceeds a configured size or count limit.
    #[error("{message}")]
    PayloadTooLarge { message: String },

    /// The database itself (the truth, not a derived index) is damaged or
    /// lost data; `message` names the file and the fix.
    #[error("{message}")]
    Damaged { path: PathBuf, message: String },

    /// PostgreSQL, the shared truth of a scaled-out deployment
    /// (docs/scale-out.md), could not be reached or refused a statement.
    #[cfg(feature = "postgres")]
    #[error("PostgreSQL error: {}", postgres_message(.0))]
    Postgres(#[from] postgres::Error),

    /// PostgreSQL failed while a write was being shipped to it; the write's
    /// local transaction rolled back.
    #[cfg(feature = "postgres")]
    #[error(
        "PostgreSQL failed while {during}: {}. Nothing was written on this node; check that \
         the database server is up and reachable, then retry.",
        postgres_message(.source)
    )]
    Shipping {
        during: &'static str,
        #[source]
        source: postgres::Error,
    },

    /// A write on a store opened read-only.
    #[error("The store at {path} is open read-only; open it without read_only to write")]
    ReadOnly { path: PathBuf },
}

/// Defines [`ErrorCode`], its [`ErrorCode::ALL`] and [`ErrorCode::as_str`]
/// from one table, so a code cannot be declared without being listed.
macro_rules! error_codes {
    ($($(#[$doc:meta])* $variant:ident => $code:literal,)*) => {
        /// Every public error code of memcore (docs/configuration.md, "Errors").
        /// The core raises most of them; `Embedding` and `Unauthorized` come
        /// from the layers above it (the embedding service, the HTTP server's
        /// tokens) and are listed here too, so that the bindings make one
        /// exception class per entry from this one list.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorCode {
            $($(#[$doc])* $variant,)*
        }

        impl ErrorCode {
            /// Every code, in the order the docs list them.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// The code as callers see it (`error.code` in Python, `code` over MCP).
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $code,)*
                }
            }
        }
    };
}

error_codes! {
    /// A memory id that does not exist in the namespace asked about.
    MemoryNotFound => "MEMORY_NOT_FOUND",
    /// Any other record that does not exist.
    NotFound => "NOT_FOUND",
    /// A caller-supplied value is out of range or malformed.
    InvalidParameter => "INVALID_PARAMETER",
    /// A well-formed request that breaks a domain rule.
    ValidationFailed => "VALIDATION_FAILED",
    /// The database, an index file or the disk failed.
    Storage => "STORAGE_ERROR",
    /// The embedding model failed to load or to embed (raised above the core).
    Embedding => "EMBEDDING_ERROR",
    /// The store holds vectors of another dimension or model.
    DimensionMismatch => "DIMENSION_MISMATCH",
    /// Another process holds the store, or the same work is in flight.
    ResourceBusy => "RESOURCE_BUSY",
    /// A missing or unknown token, or a tool it may not call (raised above the core).
    Unauthorized => "UNAUTHORIZED",
    /// A request over a size or count limit.
    PayloadTooLarge => "PAYLOAD_TOO_LARGE",
}

impl Error {
    /// The public code of this error.
    pub fn error_code(&self) -> ErrorCode {
        match self {
            Error::MemoryNotFound { .. } => ErrorCode::MemoryNotFound,
            Error::NotFound { .. } => ErrorCode::NotFound,
            Error::InvalidParameter { .. } => ErrorCode::InvalidParameter,
            Error::ValidationFailed { .. } => ErrorCode::ValidationFailed,
            Error::Storage(_)
            | Error::Io { .. }
            | Error::Index(_)
            | Error::Damaged { .. }
            | Error::ReadOnly { .. } => ErrorCode::Storage,
            #[cfg(feature = "postgres")]
            Error::Postgres(_) | Error::Shipping { .. } => ErrorCode::Storage,
            Error::DimensionMismatch { .. } => ErrorCode::DimensionMismatch,
            Error::ResourceBusy { .. } => ErrorCode::ResourceBusy,
            Error::PayloadTooLarge { .. } => ErrorCode::PayloadTooLarge,
        }
    }

    /// The stable public code of this error, as a string (docs/configuration.md, "Errors").
    pub fn code(&self) -> &'static str {
        self.error_code().as_str()
    }

    /// Shorthand for an [`Error::InvalidParameter`] naming the field.
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::InvalidParameter {
            field: field.into(),
            message: message.into(),
        }
    }

    /// Shorthand for an I/O error on a path.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// A record that does not match its checksum is damage, whichever read found
/// it ([`crate::store::checksum`]); every other SQLite error is a storage error.
impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        match crate::store::checksum::mismatch_of(&e) {
            Some(m) => crate::store::checksum::damaged(m, None),
            None => Error::Storage(e),
        }
    }
}

/// The client's own text says only "db error" or "error connecting to
/// server"; the server's message or the I/O failure is its source.
#[cfg(feature = "postgres")]
fn postgres_message(error: &postgres::Error) -> String {
    match std::error::Error::source(error) {
        Some(cause) => format!("{error}: {cause}"),
        None => error.to_string(),
    }
}

/// Longest key (an id, a name) a message repeats whole, in characters.
const SHOWN_KEY_CHARS: usize = 200;

/// `key` as a message repeats it: whole, or its start and its length when it is
/// longer than any key memcore makes or accepts (a megabyte of id was repeated
/// back, into the reply and the log).
pub fn shown_key(key: &str) -> std::borrow::Cow<'_, str> {
    if key.char_indices().nth(SHOWN_KEY_CHARS).is_none() {
        return key.into();
    }
    let end = key
        .char_indices()
        .nth(SHOWN_KEY_CHARS / 2)
        .map_or(key.len(), |(i, _)| i);
    format!("{}… ({} characters)", &key[..end], key.chars().count()).into()
}

/// Result alias used throughout the core.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_key_is_not_repeated_whole() {
        let id = "m".repeat(1_000_000);
        let message = Error::MemoryNotFound { id }.to_string();
        assert!(message.starts_with("Memory not found: mmm"));
        assert!(
            message.ends_with("… (1000000 characters)"),
            "{}",
            &message[..200]
        );
        assert!(message.len() < 200, "{}", message.len());
        let short = Error::NotFound {
            kind: "Entity",
            id: "Alice".into(),
        };
        assert_eq!(short.to_string(), "Entity not found: Alice");
    }

    #[test]
    fn codes_are_stable() {
        assert_eq!(
            Error::MemoryNotFound { id: "x".into() }.code(),
            "MEMORY_NOT_FOUND"
        );
        assert_eq!(Error::invalid("limit", "bad").code(), "INVALID_PARAMETER");
        assert_eq!(Error::Index("x".into()).code(), "STORAGE_ERROR");
    }

    #[test]
    fn every_variant_has_a_listed_code() {
        // One value of each variant: a new variant fails to compile in
        // `error_code` until it has a code, and this test until that code is
        // in the public list the bindings build their classes from.
        let path = PathBuf::from("memcore.db");
        let variants = [
            Error::MemoryNotFound { id: "m".into() },
            Error::NotFound {
                kind: "Entity",
                id: "e".into(),
            },
            Error::invalid("limit", "bad"),
            Error::ValidationFailed {
                message: "bad".into(),
                details: serde_json::Value::Null,
            },
            Error::Storage(rusqlite::Error::InvalidQuery),
            Error::io(&path, std::io::Error::other("disk")),
            Error::Index("x".into()),
            Error::DimensionMismatch {
                message: "dim".into(),
            },
            Error::ResourceBusy {
                message: "busy".into(),
            },
            Error::PayloadTooLarge {
                message: "big".into(),
            },
            Error::Damaged {
                path: path.clone(),
                message: "damaged".into(),
            },
            Error::ReadOnly { path },
        ];
        for error in &variants {
            assert!(ErrorCode::ALL.contains(&error.error_code()), "{error:?}");
            assert_eq!(error.code(), error.error_code().as_str());
        }
    }

    #[test]
    fn listed_codes_are_distinct() {
        let names: std::collections::HashSet<&str> =
            ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(names.len(), ErrorCode::ALL.len());
    }
}
