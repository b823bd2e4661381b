//! The one error type of the core. Each variant maps to one public error code
//! (docs/configuration.md, "Errors"); the bindings translate variants, never strings.

use std::path::PathBuf;

/// Everything that can go wrong in the core.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A memory id that does not exist in the namespace asked about.
    #[error("Memory not found: {id}")]
    MemoryNotFound { id: String },

    /// Any other record (entity, observation, document, project…) that does not exist.
    #[error("{kind} not found: {id}")]
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
    Storage(#[from] rusqlite::Error),

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

    /// A write on a store opened read-only.
    #[error("The store at {path} is open read-only; open it without read_only to write")]
    ReadOnly { path: PathBuf },
}

impl Error {
    /// The stable public code of this error (docs/configuration.md, "Errors").
    pub fn code(&self) -> &'static str {
        match self {
            Error::MemoryNotFound { .. } => "MEMORY_NOT_FOUND",
            Error::NotFound { .. } => "NOT_FOUND",
            Error::InvalidParameter { .. } => "INVALID_PARAMETER",
            Error::ValidationFailed { .. } => "VALIDATION_FAILED",
            Error::Storage(_)
            | Error::Io { .. }
            | Error::Index(_)
            | Error::Damaged { .. }
            | Error::ReadOnly { .. } => "STORAGE_ERROR",
            #[cfg(feature = "postgres")]
            Error::Postgres(_) => "STORAGE_ERROR",
            Error::DimensionMismatch { .. } => "DIMENSION_MISMATCH",
            Error::ResourceBusy { .. } => "RESOURCE_BUSY",
            Error::PayloadTooLarge { .. } => "PAYLOAD_TOO_LARGE",
        }
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

/// The client's own text says only "db error" or "error connecting to
/// server"; the server's message or the I/O failure is its source.
#[cfg(feature = "postgres")]
fn postgres_message(error: &postgres::Error) -> String {
    match std::error::Error::source(error) {
        Some(cause) => format!("{error}: {cause}"),
        None => error.to_string(),
    }
}

/// Result alias used throughout the core.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_stable() {
        assert_eq!(
            Error::MemoryNotFound { id: "x".into() }.code(),
            "MEMORY_NOT_FOUND"
        );
        assert_eq!(Error::invalid("limit", "bad").code(), "INVALID_PARAMETER");
        assert_eq!(Error::Index("x".into()).code(), "STORAGE_ERROR");
    }
}
