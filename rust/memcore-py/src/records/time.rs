//! Core timestamps (integer microseconds since the Unix epoch, UTC) as the
//! facade shows them: aware UTC datetimes (the values `memcore._time.from_micros`
//! gives) and ISO 8601 text with a `Z` (what `memcore._time.iso` writes).

use memcore::temporal::civil_date;
use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{IntoPyDict, PyDateTime, PyDelta, PyTzInfo};

const MICROS_PER_DAY: i64 = 86_400_000_000;

/// A UTC instant split into calendar fields.
struct Civil {
    year: i64,
    month: u8,
    day: u8,
    hour: u8,
    minute: u8,
    second: u8,
    micro: u32,
}

/// The calendar date and time of `micros` (proleptic Gregorian, UTC).
fn civil(micros: i64) -> Civil {
    let (year, month, day) = civil_date(micros.div_euclid(MICROS_PER_DAY));
    let rem = micros.rem_euclid(MICROS_PER_DAY);
    let secs = rem / 1_000_000;
    // Each value below is bounded by its unit (month < 13, hour < 24, …).
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Civil {
        year,
        month: month as u8,
        day: day as u8,
        hour: (secs / 3_600) as u8,
        minute: (secs / 60 % 60) as u8,
        second: (secs % 60) as u8,
        micro: (rem % 1_000_000) as u32,
    }
}

/// An aware UTC datetime; OverflowError outside years 1-9999 (as `from_micros`).
pub fn datetime(py: Python<'_>, micros: i64) -> PyResult<Bound<'_, PyAny>> {
    let c = civil(micros);
    let year = i32::try_from(c.year)
        .ok()
        .filter(|y| (1..=9999).contains(y))
        .ok_or_else(|| PyOverflowError::new_err("date value out of range"))?;
    let utc = PyTzInfo::utc(py)?;
    Ok(PyDateTime::new(
        py,
        year,
        c.month,
        c.day,
        c.hour,
        c.minute,
        c.second,
        c.micro,
        Some(&utc),
    )?
    .into_any())
}

/// ISO 8601 with a `Z` suffix, fractional seconds only when there are some,
/// exactly as `datetime.isoformat()` then `+00:00` → `Z`.
pub fn iso(micros: i64) -> String {
    let c = civil(micros);
    let fraction = if c.micro == 0 {
        String::new()
    } else {
        format!(".{:06}", c.micro)
    };
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{fraction}Z",
        c.year, c.month, c.day, c.hour, c.minute, c.second
    )
}

/// Microseconds since the epoch of a datetime (naive ones taken as UTC, as
/// `memcore._time.to_micros` does): how a record given datetimes is stored.
pub fn micros(value: &Bound<'_, PyAny>) -> PyResult<i64> {
    static EPOCH: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    static ONE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let py = value.py();
    let value = value.cast::<PyDateTime>()?;
    let utc = PyTzInfo::utc(py)?;
    let aware = if value.getattr("tzinfo")?.is_none() {
        value.call_method("replace", (), Some(&[("tzinfo", &utc)].into_py_dict(py)?))?
    } else {
        value.clone().into_any()
    };
    let epoch = EPOCH.get_or_try_init(py, || {
        PyDateTime::new(py, 1970, 1, 1, 0, 0, 0, 0, Some(&utc)).map(|d| d.into_any().unbind())
    })?;
    let one = ONE.get_or_try_init(py, || {
        PyDelta::new(py, 0, 0, 1, false).map(|d| d.into_any().unbind())
    })?;
    aware.sub(epoch)?.floor_div(one)?.extract()
}

#[cfg(test)]
mod tests {
    use super::{civil, iso};

    #[test]
    fn iso_matches_python_isoformat() {
        assert_eq!(iso(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso(1_700_000_000_123_456), "2023-11-14T22:13:20.123456Z");
        assert_eq!(iso(-1), "1969-12-31T23:59:59.999999Z");
        // 2000-02-29, a leap day of a century leap year.
        assert_eq!(iso(951_782_400_000_000), "2000-02-29T00:00:00Z");
        // The first instant Python can represent: 0001-01-01.
        assert_eq!(iso(-62_135_596_800_000_000), "0001-01-01T00:00:00Z");
        assert_eq!(civil(253_402_300_799_999_999).year, 9999);
    }
}
