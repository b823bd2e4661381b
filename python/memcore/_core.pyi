"""Type stubs of the native core (`rust/memcore-py`). Timestamps are integer
microseconds since the Unix epoch (UTC); records are plain dicts that the
facade turns into dataclasses."""

from os import PathLike
from typing import Any, ClassVar, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "DEFAULT_WEIGHTS",
    "DESIGN_WEIGHTS",
    "ERROR_CODES",
    "MAX_ARGS_BYTES",
    "MAX_TEXT_BYTES",
    "SCHEMA_VERSION",
    "DimensionMismatchError",
    "EmbeddingError",
    "Engine",
    "InvalidParameterError",
    "MemcoreError",
    "MemoryNotFoundError",
    "NotFoundError",
    "PayloadTooLargeError",
    "ResourceBusyError",
    "StorageError",
    "UnauthorizedError",
    "ValidationFailedError",
    "__version__",
    "repair_store",
    "turn_vector_text",
]

__version__: str
SCHEMA_VERSION: int
#: Fusion weights (vector, bm25, ppr): the measured default and the first design's preset.
DEFAULT_WEIGHTS: tuple[float, float, float]
DESIGN_WEIGHTS: tuple[float, float, float]
#: Largest accepted text (a memory's content, a turn's texts, a code chunk), in UTF-8 bytes.
MAX_TEXT_BYTES: int
#: Largest accepted procedure-argument JSON, in bytes.
MAX_ARGS_BYTES: int
#: Every public error code; each has its exception class here and in `memcore.errors`.
ERROR_CODES: tuple[str, ...]

def turn_vector_text(at: int, user_text: str) -> str:
    """What a turn's vector embeds: its day and its own user text."""

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
    @staticmethod
    def export_kinds() -> list[str]:
        """Record types in the order an import should replay them."""
    def export_page(
        self,
        kind: str,
        *,
        namespace: str | None = None,
        after: str = "",
        limit: int = 1000,
        with_vectors: bool = False,
    ) -> list[dict[str, Any]]:
        """One page of records of `kind` ordered by id after `after` ("" to start)."""
    def restore(
        self, records: list[dict[str, Any]], *, skip_existing: bool = False
    ) -> dict[str, int]:
        """Restore exported records in one transaction: `{"restored", "skipped"}`."""
    @staticmethod
    def writing_tools() -> list[str]:
        """Tool names whose documents count as written by the agent."""
    @staticmethod
    def normalize_tool(tool: str) -> str:
        """A tool name as stored (upper-case, `_` for spaces and dashes)."""
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
        entities: list[str] | None = None,
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
        weights: tuple[float, float, float] | None = None,
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
    def check(self) -> dict[str, Any]: ...
    def repair(self) -> dict[str, Any]: ...
    def backup(self, dest: str | PathLike[str]) -> dict[str, Any]: ...

    # -- knowledge graph ------------------------------------------------------------
    # Entity dicts use the save_memory contract's keys (name, entityType, observations,
    # relations[{targetEntity, relationType, importance?}], confidence?, importance?,
    # description?) plus optional `vector` and `observation_vectors`.
    @staticmethod
    def entity_document_text(
        name: str, entity_type: str, description: str | None = None
    ) -> str: ...
    def save_memory(
        self,
        namespace: str,
        thread_id: str,
        entities: list[dict[str, Any]],
        *,
        strict: bool = True,
    ) -> dict[str, Any]: ...
    def create_entities(
        self,
        namespace: str,
        entities: list[dict[str, Any]],
        *,
        thread_id: str | None = None,
    ) -> list[dict[str, Any]]: ...
    def create_relations(
        self,
        namespace: str,
        relations: list[tuple[str, str, str, float | None]],
        *,
        thread_id: str | None = None,
    ) -> list[dict[str, Any]]: ...
    def add_observations(
        self,
        namespace: str,
        entity: str,
        contents: list[str],
        *,
        supersedes: str | None = None,
        vectors: list[_Vector | None] | None = None,
        thread_id: str | None = None,
        confidence: float | None = None,
        importance: float | None = None,
    ) -> list[dict[str, Any]]: ...
    def delete_entities(self, namespace: str, names: list[str]) -> list[str]: ...
    def delete_observations(self, namespace: str, entity: str, which: list[str]) -> int: ...
    def delete_relations(self, namespace: str, relations: list[tuple[str, str, str]]) -> int: ...
    def get_entity(self, namespace: str, name: str) -> dict[str, Any]: ...
    def open_nodes(
        self, namespace: str, names: list[str]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]: ...
    def read_graph(
        self, namespace: str, *, limit: int = 50, offset: int = 0, summary: bool = False
    ) -> dict[str, Any]: ...
    def query_nodes(
        self,
        namespace: str,
        *,
        entity_type: str | None = None,
        min_importance: float | None = None,
        thread_id: str | None = None,
        limit: int = 50,
    ) -> list[dict[str, Any]]: ...
    def get_related(
        self,
        namespace: str,
        name: str,
        *,
        depth: int = 2,
        direction: str = "both",
        relation_type: str | None = None,
        as_of: int | None = None,
        limit: int = 100,
    ) -> list[dict[str, Any]]: ...
    def find_relation_path(
        self, namespace: str, source: str, target: str, *, max_depth: int = 6
    ) -> list[dict[str, Any]]: ...
    def observation_history(
        self, namespace: str, entity: str, observation_id: str
    ) -> list[dict[str, Any]]: ...
    def analytics(
        self, namespace: str, thread_id: str | None = None, *, limit: int = 10
    ) -> dict[str, Any]: ...
    def graph_arrays(self, namespace: str) -> dict[str, Any]: ...
    def personalized_pagerank(
        self,
        namespace: str,
        seeds: list[tuple[str, float]],
        *,
        teleport: float = 0.5,
        limit: int = 100,
    ) -> list[tuple[str, float]]: ...
    def mentions(self, namespace: str) -> list[tuple[str, str, bool]]: ...
    def count_graph(self, namespace: str) -> tuple[int, int]: ...
    def search_nodes(
        self, namespace: str, text: str, vector: _Vector | None = None, *, limit: int = 10
    ) -> list[dict[str, Any]]: ...

    # -- interaction log ------------------------------------------------------------
    # Procedures are dicts {tool, args (JSON text), at?, documents?: [{canonical,
    # content_hash, content?, size?, written?}]}; document ids arrive canonical.
    def record_turn(
        self,
        namespace: str,
        conversation_id: str,
        turn_id: str,
        user_text: str,
        *,
        agent_text: str | None = None,
        thread_id: str | None = None,
        procedures: list[dict[str, Any]] | None = None,
        vector: _Vector | None = None,
        at: int | None = None,
    ) -> dict[str, Any]: ...
    def get_turn(self, namespace: str, conversation_id: str, turn_id: str) -> dict[str, Any]: ...
    def conversation_turns(
        self, namespace: str, conversation_id: str, *, limit: int = 1000
    ) -> list[dict[str, Any]]: ...
    def document_state(self, namespace: str, canonical: str) -> dict[str, Any]: ...
    def document_history(self, namespace: str, canonical: str) -> dict[str, Any]: ...
    def version_content(self, version_id: str) -> str | None: ...
    def retrieve_context(
        self,
        namespace: str,
        query: str,
        vector: _Vector | None = None,
        *,
        conversation_id: str | None = None,
        documents: list[str] | None = None,
        token_budget: int = 2000,
        limit: int = 10,
        recency_half_life_days: float = 30.0,
        staleness_weight: float = 0.15,
        familiarity_weight: float = 0.1,
        document_match: float = 0.6,
    ) -> dict[str, Any]: ...
    def run_maintenance(
        self,
        namespace: str,
        *,
        episodic_ttl_days: float | None = None,
        archive_after_days: float | None = None,
        force_compact: bool = False,
    ) -> dict[str, Any]: ...
    def overview(
        self, namespace: str | None = None, *, depth: int = 2, limit: int = 200
    ) -> list[dict[str, Any]]: ...
    @staticmethod
    def estimate_tokens(text: str) -> int: ...

    # -- code search ------------------------------------------------------------------
    # Chunk dicts in: {start_line, end_line, chunk_type, name?, parent_scope?, content,
    # content_hash}. Chunk dicts out add id, namespace, project_id, file_path, language,
    # indexed_at (and `scores` from search_code). Project dicts: namespace, project_id,
    # root, status (idle|indexing|watching|error), total_files, indexed_files,
    # total_chunks, started_at, completed_at, error, updated_at.
    def index_file(
        self,
        namespace: str,
        project_id: str,
        file_path: str,
        language: str,
        content_hash: str,
        chunks: list[dict[str, Any]],
        *,
        size: int | None = None,
        vectors: npt.NDArray[np.float32] | None = None,
    ) -> dict[str, int]: ...
    def remove_file(self, namespace: str, project_id: str, file_path: str) -> int: ...
    def delete_project(self, namespace: str, project_id: str) -> int: ...
    def put_project_status(
        self,
        namespace: str,
        project_id: str,
        root: str,
        status: str,
        *,
        total_files: int = 0,
        indexed_files: int = 0,
        started_at: int | None = None,
        completed_at: int | None = None,
        error: str | None = None,
    ) -> None: ...
    def project_status(self, namespace: str, project_id: str) -> dict[str, Any]: ...
    def list_projects(self, namespace: str) -> list[dict[str, Any]]: ...
    def indexed_files(self, namespace: str, project_id: str) -> dict[str, str]: ...
    def search_code(
        self,
        namespace: str,
        text: str,
        vector: _Vector | None = None,
        *,
        project_id: str | None = None,
        language: str | None = None,
        limit: int = 10,
        weights: tuple[float, float, float] | None = None,
    ) -> list[dict[str, Any]]: ...

def repair_store(
    path: str | PathLike[str], *, accept_empty: bool = False, text_analyzer: str | None = None
) -> dict[str, Any]:
    """Rebuild the search indexes of the closed store at `path` from its database."""
