//! What the derived indexes went through since open: damaged files set
//! aside and rebuilt, failures not yet recovered from (a full disk), panics
//! caught. `index_status` reports it, so an operator sees why search is slow
//! or why the indexes are being rebuilt, instead of a silent miss.

use std::path::Path;

use parking_lot::Mutex;

/// File inside the index folder that asks the next writable open to rebuild
/// every index from the store (written after a panic, when the in-memory
/// state can no longer be trusted to match the files).
pub const REBUILD_MARKER: &str = "REBUILD";

/// Warnings kept (the oldest are dropped): enough to explain the state,
/// bounded so a recurring fault cannot grow memory.
const MAX_WARNINGS: usize = 16;

/// Longest warning or error kept, in characters. Each is logged as one line
/// (memcore.Memory logs the warnings at open) and shown by `get_status`: the
/// messages name a file and the check it failed, and two paths fit; this
/// bounds whatever a library's error text adds (a whole file's content, say).
const MAX_MESSAGE_CHARS: usize = 500;

/// Health of the derived indexes, shared by the engine and the indexer.
#[derive(Debug, Default)]
pub struct Health {
    warnings: Mutex<Vec<String>>,
    /// The text index's last commit failed; cleared by the next that succeeds.
    text_error: Mutex<Option<String>>,
    /// The vector graph's last save failed; cleared by the next that succeeds.
    vector_error: Mutex<Option<String>>,
}

impl Health {
    /// Record something an operator should know (shown until the next open).
    /// A message already recorded is not repeated (a damaged segment makes
    /// every search fail the same way).
    pub fn warn(&self, message: impl Into<String>) {
        let message = one_short_line(message.into());
        let mut warnings = self.warnings.lock();
        if warnings.contains(&message) {
            return;
        }
        if warnings.len() >= MAX_WARNINGS {
            warnings.remove(0);
        }
        warnings.push(message);
    }

    /// [`Health::warn`] when there is something to say.
    pub fn warn_some(&self, message: Option<String>) {
        if let Some(m) = message {
            self.warn(m);
        }
    }

    /// Forget the warnings (after a full rebuild they describe a past state).
    pub fn clear_warnings(&self) {
        self.warnings.lock().clear();
    }

    /// Everything recorded by [`Health::warn`], oldest first.
    pub fn warnings(&self) -> Vec<String> {
        self.warnings.lock().clone()
    }

    /// Set (Some) or clear (None) the outstanding text-index failure.
    pub fn set_text_error(&self, error: Option<String>) {
        *self.text_error.lock() = error.map(one_short_line);
    }

    /// Set (Some) or clear (None) the outstanding vector-index failure.
    pub fn set_vector_error(&self, error: Option<String>) {
        *self.vector_error.lock() = error.map(one_short_line);
    }

    /// The failures not yet recovered from, if any (text first).
    pub fn last_error(&self) -> Option<String> {
        let text = self.text_error.lock().clone();
        let vectors = self.vector_error.lock().clone();
        match (text, vectors) {
            (Some(t), Some(v)) => Some(format!("{t}; {v}")),
            (t, v) => t.or(v),
        }
    }

    /// Ask the next writable open to rebuild the indexes in `index_dir`,
    /// recording why. Best effort: a store that cannot write the marker
    /// (read-only, disk full) still reports the reason in its warnings.
    pub fn mark_for_rebuild(&self, index_dir: &Path, reason: &str) {
        let written = std::fs::create_dir_all(index_dir)
            .and_then(|()| std::fs::write(index_dir.join(REBUILD_MARKER), reason));
        let when = if written.is_ok() {
            "they will be rebuilt from the database at the next open"
        } else {
            "rebuild them with rebuild_indexes (or delete the index folder) to be sure"
        };
        self.warn(format!(
            "The indexes may be inconsistent ({reason}); {when}."
        ));
    }
}

/// `message` on one line, cut to [`MAX_MESSAGE_CHARS`] characters.
fn one_short_line(message: String) -> String {
    let line = if message.contains(['\n', '\r']) {
        message.split_whitespace().collect::<Vec<_>>().join(" ")
    } else {
        message
    };
    match line.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_or_multiline_message_becomes_one_short_line() {
        let health = Health::default();
        health.warn(format!("damaged:\n{}", "é".repeat(5000)));
        health.set_text_error(Some("x".repeat(5000)));
        let warning = &health.warnings()[0];
        assert!(!warning.contains('\n'), "{warning}");
        assert!(warning.starts_with("damaged: éé") && warning.ends_with('…'));
        assert_eq!(warning.chars().count(), MAX_MESSAGE_CHARS + 1);
        let error = health.last_error().unwrap();
        assert_eq!(error.chars().count(), MAX_MESSAGE_CHARS + 1);
        health.warn("short");
        assert_eq!(health.warnings()[1], "short");
    }

    #[test]
    fn errors_clear_and_warnings_stay_bounded() {
        let health = Health::default();
        health.set_text_error(Some("text: disk full".into()));
        health.set_vector_error(Some("vectors: disk full".into()));
        assert_eq!(
            health.last_error().as_deref(),
            Some("text: disk full; vectors: disk full")
        );
        health.set_text_error(None);
        assert_eq!(health.last_error().as_deref(), Some("vectors: disk full"));
        for i in 0..40 {
            health.warn(format!("w{i}"));
            health.warn(format!("w{i}"));
        }
        let warnings = health.warnings();
        assert_eq!(warnings.len(), MAX_WARNINGS);
        assert_eq!(warnings.last().map(String::as_str), Some("w39"));
    }
}
