"""Timestamps at the boundary: the core counts integer microseconds since the
Unix epoch (UTC); Python callers use aware datetimes or ISO 8601 strings."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memcore.errors import InvalidParameterError, invalid

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

TimeLike = datetime | str | int | float


def to_micros(value: TimeLike, field: str) -> int:
    """Convert a datetime, an ISO 8601 string or epoch seconds to microseconds.

    Naive datetimes and strings without an offset are taken as UTC.

    Raises:
        InvalidParameterError: The value is not a time (names the field).
    """
    if isinstance(value, bool):
        raise _bad(field, value)
    if isinstance(value, int | float):
        return round(value * 1_000_000)
    if isinstance(value, str):
        text = value.strip()
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            raise _bad(field, value) from None
        value = parsed
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return (value - _EPOCH) // timedelta(microseconds=1)
    raise _bad(field, value)


def optional_micros(value: TimeLike | None, field: str) -> int | None:
    """`to_micros` that passes None through."""
    return None if value is None else to_micros(value, field)


def from_micros(value: int) -> datetime:
    """An aware UTC datetime from microseconds."""
    return _EPOCH + timedelta(microseconds=value)


def optional_datetime(value: int | None) -> datetime | None:
    """`from_micros` that passes None through."""
    return None if value is None else from_micros(value)


def iso(value: datetime | None) -> str | None:
    """ISO 8601 with a `Z` suffix, or None."""
    if value is None:
        return None
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def now_micros() -> int:
    """The current time in microseconds."""
    return to_micros(datetime.now(UTC), "now")


def _bad(field: str, value: object) -> InvalidParameterError:
    return invalid(
        field,
        f"{field} is not a valid time: {value!r}. Use ISO 8601 such as "
        "'2026-01-01T00:00:00Z', a datetime, or seconds since the epoch.",
    )
