"""memcore's exceptions. Every one is a `MemcoreError` carrying its public
`code` (docs/configuration.md, "Errors") as a class attribute and, when the engine raised it,
a `details` dict (the offending `field`, the missing `id`, …)."""

from __future__ import annotations

from typing import Any

from memcore._core import (
    DimensionMismatchError,
    EmbeddingError,
    InvalidParameterError,
    MemcoreError,
    MemoryNotFoundError,
    NotFoundError,
    PayloadTooLargeError,
    ResourceBusyError,
    StorageError,
    UnauthorizedError,
    ValidationFailedError,
)

__all__ = [
    "DimensionMismatchError",
    "EmbeddingError",
    "InvalidParameterError",
    "MemcoreError",
    "MemoryNotFoundError",
    "NotFoundError",
    "PayloadTooLargeError",
    "ResourceBusyError",
    "StorageError",
    "UnauthorizedError",
    "ValidationFailedError",
    "error_payload",
    "invalid",
]


def invalid(field: str, message: str) -> InvalidParameterError:
    """An `InvalidParameterError` naming the offending field in its details."""
    err = InvalidParameterError(message)
    err.details = {"field": field}
    return err


def error_payload(error: MemcoreError) -> dict[str, Any]:
    """The wire form of an error: `{"code", "message", "details"}`."""
    details = getattr(error, "details", None)
    return {
        "code": type(error).code,
        "message": str(error),
        "details": dict(details) if isinstance(details, dict) else {},
    }
