"""memcore: long-term memory for AI agents, with a Rust core and no LLM calls."""

from memcore._core import __version__
from memcore.errors import (
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
from memcore.memory import Memory
from memcore.records import MemoryRecord, StoreResult, SupersedeResult

__all__ = [
    "DimensionMismatchError",
    "EmbeddingError",
    "InvalidParameterError",
    "MemcoreError",
    "Memory",
    "MemoryNotFoundError",
    "MemoryRecord",
    "NotFoundError",
    "PayloadTooLargeError",
    "ResourceBusyError",
    "StorageError",
    "StoreResult",
    "SupersedeResult",
    "UnauthorizedError",
    "ValidationFailedError",
    "__version__",
]
