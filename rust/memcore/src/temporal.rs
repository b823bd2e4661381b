//! Time: timestamps and the valid-time filter every read applies.
//!
//! Timestamps are microseconds since the Unix epoch, UTC, as `i64`: they sort
//! and compare in SQLite and in the indexes without parsing. ISO 8601 lives
//! only at the Python boundary.

use std::time::{SystemTime, UNIX_EPOCH};

/// Microseconds since 1970-01-01T00:00:00Z.
pub type Timestamp = i64;

/// The current time in microseconds.
pub fn now_micros() -> Timestamp {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    since.as_micros() as i64
}

/// Which records a read admits, judged on valid time (when a fact holds).
///
/// A record holds at `t` when `valid_from <= t` and neither its `valid_until`
/// nor its `expires_at` has passed. Supersession and invalidation close
/// `valid_until`, so they are covered by the same rule, and a historical read
/// (`At`) still sees what was true back then.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ValidAt {
    /// Valid right now (the default for every search and listing).
    #[default]
    Now,
    /// Valid at a given instant (`as_of`).
    At(Timestamp),
    /// Every record, valid or not.
    Any,
}

impl ValidAt {
    /// The instant to test against, or `None` when every record is admitted.
    pub fn instant(self, now: Timestamp) -> Option<Timestamp> {
        match self {
            ValidAt::Now => Some(now),
            ValidAt::At(t) => Some(t),
            ValidAt::Any => None,
        }
    }

    /// Whether a record with this validity interval is admitted.
    /// `valid_end` is the effective end: the earlier of `valid_until` and `expires_at`.
    pub fn admits(
        self,
        valid_from: Timestamp,
        valid_end: Option<Timestamp>,
        now: Timestamp,
    ) -> bool {
        match self.instant(now) {
            None => true,
            Some(t) => valid_from <= t && valid_end.is_none_or(|end| t < end),
        }
    }
}

/// The effective end of a validity interval: the earlier of the two bounds.
pub fn effective_end(
    valid_until: Option<Timestamp>,
    expires_at: Option<Timestamp>,
) -> Option<Timestamp> {
    match (valid_until, expires_at) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_interval_is_valid_from_its_start() {
        assert!(ValidAt::Now.admits(10, None, 20));
        assert!(!ValidAt::At(5).admits(10, None, 20));
        assert!(ValidAt::At(10).admits(10, None, 20));
    }

    #[test]
    fn closed_interval_excludes_its_end() {
        assert!(ValidAt::At(14).admits(10, Some(15), 20));
        assert!(!ValidAt::At(15).admits(10, Some(15), 20));
        assert!(!ValidAt::Now.admits(10, Some(15), 20));
        assert!(ValidAt::Any.admits(10, Some(15), 20));
    }

    #[test]
    fn expiry_counts_as_an_end() {
        assert_eq!(effective_end(None, Some(7)), Some(7));
        assert_eq!(effective_end(Some(9), Some(7)), Some(7));
        assert_eq!(effective_end(Some(3), None), Some(3));
        assert_eq!(effective_end(None, None), None);
    }
}
