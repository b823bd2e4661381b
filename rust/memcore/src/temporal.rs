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

/// A day as people write it, "8 May 2023" (UTC): part of what a
/// conversation turn is searched by, so "when did we talk about X in May"
/// and a date in the question match the turns of that day.
pub fn date_label(at: Timestamp) -> String {
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    let (year, month, day) = civil_date(at.div_euclid(86_400_000_000));
    format!("{day} {} {year}", MONTHS[(month - 1) as usize])
}

/// (year, month 1-12, day 1-31) of a day count since 1970-01-01, in the
/// proleptic Gregorian calendar (the days-to-civil algorithm over 400-year eras).
pub fn civil_date(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
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

    #[test]
    fn dates_read_as_people_write_them() {
        assert_eq!(date_label(0), "1 January 1970");
        // 2023-05-08T13:56:00Z
        assert_eq!(date_label(1_683_554_160_000_000), "8 May 2023");
        // a leap day, and a day before the epoch
        assert_eq!(date_label(951_782_400_000_000), "29 February 2000");
        assert_eq!(date_label(-1), "31 December 1969");
    }
}
