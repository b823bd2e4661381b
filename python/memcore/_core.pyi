"""Type stubs of the native core (`rust/memcore-py`). Timestamps are integer
microseconds since the Unix epoch (UTC); records are plain dicts that the
facade turns into dataclasses."""

from os import PathLike
from typing import Any, ClassVar, final

import numpy as np
import numpy.typing as npt

__version__: str
SCHEMA_VERSION: int

_MemoryDict = dict[str, Any]
_Vector = npt.NDArray[np.float32]

class MemcoreError(Exception):
    """Base class of every memcore error."""

    code: ClassVar[str]
    details: dict[str, Any]

class NotFoundError(MemcoreError):
    """A record does not exist."""

class MemoryNotFoundError(NotFoundError):
    """A memory id does not exist."""

class InvalidParameterError(MemcoreError):
    """An argument is invalid."""

class ValidationFailedError(MemcoreError):
    """A request breaks a domain rule."""

class StorageError(MemcoreError):
    """The store could not be read or written."""

class EmbeddingError(MemcoreError):
    """Embeddings are unavailable or failed."""

class DimensionMismatchError(MemcoreError):
    """Stored vectors and model differ."""

class ResourceBusyError(MemcoreError):
    """The resource is held elsewhere."""

class UnauthorizedError(MemcoreError):
    """The caller is not authorised."""

class PayloadTooLargeError(MemcoreError):
    """A request exceeds a size limit."""

@final
class Engine:
    """An open memcore data directory. Thread-safe; calls release the GIL."""

    def __new__(
        cls,
        path: str | PathLike[str],
        *,
        read_only: bool = False,
        durability: str = "normal",
        text_analyzer: str | None = None,
    ) -> Engine: ...
    def close(self) -> None: ...
    @property
    def path(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    @property
    def read_only(self) -> bool: ...
    def metadata(self) -> dict[str, str]: ...
    def embedding_identity(self) -> tuple[str | None, int] | None: ...
    def check_embedding_identity(self, model: str, dim: int) -> None: ...
    def set_embedding_identity(self, model: str, dim: int) -> None: ...
    def quick_check(self) -> None: ...
    def reset_all(self) -> None: ...

    # -- memories -------------------------------------------------------------------
    def store_memory(
        self,
        namespace: str,
        content: str,
        *,
        memory_type: str = "semantic",
        source: str = "extracted",
        confidence: float = 1.0,
        importance: float = 0.5,
        metadata: str | None = None,
        thread_id: str | None = None,
        user_id: str | None = None,
        event_time: int | None = None,
        valid_from: int | None = None,
        expires_at: int | None = None,
        vector: _Vector | None = None,
    ) -> _MemoryDict: ...
    def store_memories(
        self,
        namespace: str,
        contents: list[str],
        *,
        vectors: npt.NDArray[np.float32] | None = None,
        memory_type: str = "semantic",
        source: str = "extracted",
        confidence: float = 1.0,
        importance: float = 0.5,
        metadatas: list[str | None] | None = None,
        thread_ids: list[str | None] | None = None,
        user_id: str | None = None,
    ) -> list[_MemoryDict]: ...
    def get_memory(self, namespace: str, id: str) -> _MemoryDict: ...
    def update_memory(
        self,
        namespace: str,
        id: str,
        *,
        content: str | None = None,
        memory_type: str | None = None,
        source: str | None = None,
        confidence: float | None = None,
        importance: float | None = None,
        metadata: str | None = None,
        thread_id: str | None = None,
        user_id: str | None = None,
        event_time: int | None = None,
        expires_at: int | None = None,
        vector: _Vector | None = None,
    ) -> _MemoryDict: ...
    def delete_memory(self, namespace: str, id: str) -> None: ...
    def list_memories(
        self,
        namespace: str,
        *,
        limit: int = 20,
        offset: int = 0,
        thread_id: str | None = None,
        as_of: int | None = None,
        valid_only: bool = False,
    ) -> list[_MemoryDict]: ...
    def count_memories(self, namespace: str) -> int: ...
    def invalidate(self, namespace: str, id: str, reason: str | None = None) -> _MemoryDict: ...
    def supersede_memory(
        self, namespace: str, old_id: str, new_id: str
    ) -> tuple[_MemoryDict, _MemoryDict]: ...

    # -- search ---------------------------------------------------------------------
    def search_vector(
        self,
        namespace: str,
        vector: _Vector,
        *,
        limit: int = 10,
        thread_id: str | None = None,
        as_of: int | None = None,
        valid_only: bool = True,
        kinds: list[str] | None = None,
    ) -> list[_MemoryDict]: ...
    def search_text(
        self,
        namespace: str,
        text: str,
        *,
        limit: int = 10,
        thread_id: str | None = None,
        as_of: int | None = None,
        valid_only: bool = True,
        kinds: list[str] | None = None,
    ) -> list[_MemoryDict]: ...
    def recall(
        self,
        namespace: str,
        text: str,
        vector: _Vector | None = None,
        *,
        limit: int = 10,
        thread_id: str | None = None,
        as_of: int | None = None,
        valid_only: bool = True,
        kinds: list[str] | None = None,
        weights: tuple[float, float, float] = ...,
        mode: str = "zscore",
    ) -> list[_MemoryDict]: ...
    def similar_memories(
        self,
        namespace: str,
        vector: _Vector,
        *,
        exclude_id: str | None = None,
        threshold: float = 0.8,
        limit: int = 5,
    ) -> list[tuple[_MemoryDict, float]]: ...
    def flush(self) -> None: ...
    def compact(self, force: bool = False) -> dict[str, Any]: ...
    def rebuild_indexes(self) -> None: ...
    def index_status(self) -> dict[str, Any]: ...
