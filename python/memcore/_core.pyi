"""Type stubs of the native core (`rust/memcore-py`). Arguments take timestamps as
integer microseconds since the Unix epoch (UTC); the records the engine returns
(`rust/memcore-py/src/records/`) show them as aware UTC datetimes."""

from datetime import datetime
from os import PathLike
from typing import Any, ClassVar, Literal, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "DEFAULT_QUESTION_PENALTY",
    "DEFAULT_THREAD_PRIOR",
    "DEFAULT_WEIGHTS",
    "DESIGN_WEIGHTS",
    "ERROR_CODES",
    "LIST_SPREAD",
    "MAX_ARGS_BYTES",
    "MAX_NAME_CHARS",
    "MAX_OBSERVATION_CHARS",
    "MAX_RESULTS",
    "MAX_SENTENCES",
    "MAX_TEXT_BYTES",
    "MAX_TYPE_CHARS",
    "MIN_OBSERVATION_CHARS",
    "SCHEMA_VERSION",
    "SNIPPET_MAX_CHARS",
    "Analytics",
    "BackupReport",
    "CheckProblem",
    "CodeHit",
    "CompactReport",
    "ConnectedEntity",
    "ContextItem",
    "ContextProcedure",
    "ContextResult",
    "DimensionMismatchError",
    "DocumentHistory",
    "DocumentSignal",
    "DocumentState",
    "DocumentVersion",
    "EmbeddingError",
    "Engine",
    "EntityHit",
    "EntityRecord",
    "EntityView",
    "GraphPage",
    "GraphQuality",
    "GraphView",
    "ImportantEntity",
    "IndexCheck",
    "IndexHealth",
    "InvalidParameterError",
    "MaintenanceReport",
    "MemcoreError",
    "MemoryNotFoundError",
    "MemoryRecord",
    "NotFoundError",
    "ObservationRecord",
    "OrphanedEntity",
    "PayloadTooLargeError",
    "ProcedureRecord",
    "RecentChange",
    "RelatedEntity",
    "RelationRecord",
    "RepairReport",
    "ResourceBusyError",
    "Scores",
    "SearchHit",
    "StorageError",
    "StoreCheck",
    "TurnRecord",
    "UnauthorizedError",
    "ValidationFailedError",
    "VersionTouch",
    "__version__",
    "database_key",
    "namespace_bucket",
    "parse_namespace_range",
    "repair_store",
    "reset_replica",
    "snippet_of",
    "turn_vector_text",
]

__version__: str
SCHEMA_VERSION: int
#: Fusion weights (vector, bm25, ppr): the measured default and the first design's preset.
DEFAULT_WEIGHTS: tuple[float, float, float]
DESIGN_WEIGHTS: tuple[float, float, float]
#: recall's weight for an episodic memory's thread (docs/retrieval.md, step 5).
DEFAULT_THREAD_PRIOR: float
#: How far recall lowers a memory or turn made only of questions, in z-score units
#: (docs/retrieval.md, step 6).
DEFAULT_QUESTION_PENALTY: float
#: Hits of one thread before another thread's next when a question asks for a list
#: and recall was given no max_per_thread (docs/retrieval.md, step 7).
LIST_SPREAD: int
#: Largest accepted text (a memory's content, a turn's texts, a code chunk), in UTF-8 bytes.
MAX_TEXT_BYTES: int
#: The knowledge-graph contract (docs/guide.md): an entity name is 1 to this many
#: characters, an entity or relation type 1 to MAX_TYPE_CHARS, an observation
#: MIN_OBSERVATION_CHARS to MAX_OBSERVATION_CHARS characters and at most MAX_SENTENCES
#: sentences.
MAX_NAME_CHARS: int
MAX_TYPE_CHARS: int
MIN_OBSERVATION_CHARS: int
MAX_OBSERVATION_CHARS: int
MAX_SENTENCES: int
#: Largest accepted procedure-argument JSON, in bytes.
MAX_ARGS_BYTES: int
#: A code hit's snippet is cut at a line boundary beyond this many characters.
SNIPPET_MAX_CHARS: int
#: Most results one search returns.
MAX_RESULTS: int
#: Every public error code; each has its exception class here and in `memcore.errors`.
ERROR_CODES: tuple[str, ...]

def snippet_of(content: str, line_count: int, max_chars: int = ...) -> str:
    """The code of a stored chunk: its last `line_count` lines, cut after the line that
    crosses `max_chars` (default `SNIPPET_MAX_CHARS`) characters."""

def turn_vector_text(at: int, user_text: str) -> str:
    """What a turn's vector embeds: its day and its own user text."""

def namespace_bucket(namespace: str, buckets: int) -> int:
    """memcore's fixed bucket of `namespace` among `buckets` (at least 1)."""

def parse_namespace_range(text: str) -> tuple[int, int, int]:
    """`(lo, hi, buckets)` of `LO-HI/BUCKETS`; InvalidParameterError otherwise."""

def database_key(database_url: str) -> str:
    """The name of the default replica folder of the PostgreSQL database at `database_url`:
    its identity (system identifier, oid, memcore's id of it), so no two databases share
    one."""

def reset_replica(path: str | PathLike[str]) -> list[str]:
    """Empty a PostgreSQL node's replica folder (never a SQLite store); the paths removed."""

_Vector = npt.NDArray[np.float32]
_Metadata = dict[str, Any] | list[Any] | str | int | float | bool | None

# -- records ----------------------------------------------------------------------------
# Frozen: every attribute is read-only. Each class takes its fields in order (positional or
# by name) as a dataclass would; `to_dict()` is JSON-ready (ISO 8601 times).

@final
class MemoryRecord:
    """A stored fact (docs/guide.md, "The records"). The embedding is never included."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls,
        id: str,
        namespace: str,
        content: str,
        memory_type: str,
        source: str,
        confidence: float,
        importance: float,
        metadata: _Metadata,
        thread_id: str | None,
        user_id: str | None,
        event_time: datetime | None,
        created_at: datetime,
        updated_at: datetime,
        accessed_at: datetime,
        valid_from: datetime,
        valid_until: datetime | None,
        invalidated_at: datetime | None,
        invalidation_reason: str | None,
        supersedes: str | None,
        superseded_by: str | None,
        expires_at: datetime | None,
        tier: str,
    ) -> MemoryRecord: ...
    @property
    def id(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def memory_type(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def confidence(self) -> float: ...
    @property
    def importance(self) -> float: ...
    @property
    def metadata(self) -> _Metadata: ...
    @property
    def thread_id(self) -> str | None: ...
    @property
    def user_id(self) -> str | None: ...
    @property
    def event_time(self) -> datetime | None: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def updated_at(self) -> datetime: ...
    @property
    def accessed_at(self) -> datetime: ...
    @property
    def valid_from(self) -> datetime: ...
    @property
    def valid_until(self) -> datetime | None: ...
    @property
    def invalidated_at(self) -> datetime | None: ...
    @property
    def invalidation_reason(self) -> str | None: ...
    @property
    def supersedes(self) -> str | None: ...
    @property
    def superseded_by(self) -> str | None: ...
    @property
    def expires_at(self) -> datetime | None: ...
    @property
    def tier(self) -> str: ...
    @property
    def is_valid(self) -> bool:
        """Whether the memory holds now (not invalidated, superseded or expired)."""
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[MemoryRecord], tuple[Any, ...]]: ...

@final
class Scores:
    """Why a hit ranked where it did: each signal's raw score and the fused one."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls, vector: float | None, bm25: float | None, ppr: float | None, fused: float
    ) -> Scores: ...
    @property
    def vector(self) -> float | None: ...
    @property
    def bm25(self) -> float | None: ...
    @property
    def ppr(self) -> float | None: ...
    @property
    def fused(self) -> float: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[Scores], tuple[Any, ...]]: ...

@final
class SearchHit:
    """A memory found by a search, its scores, and `relevance_score` (0-1, for display)."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(cls, memory: MemoryRecord, scores: Scores, relevance_score: float) -> SearchHit: ...
    @property
    def memory(self) -> MemoryRecord: ...
    @property
    def scores(self) -> Scores: ...
    @property
    def relevance_score(self) -> float: ...
    def to_dict(self) -> dict[str, Any]:
        """The memory's fields plus `scores` and `relevance_score`."""
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[SearchHit], tuple[Any, ...]]: ...

@final
class CompactReport:
    """What `Memory.compact` did to the derived search indexes."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls, vectors_rebuilt: bool, tombstones_dropped: int, text_merged: bool
    ) -> CompactReport: ...
    @property
    def vectors_rebuilt(self) -> bool: ...
    @property
    def tombstones_dropped(self) -> int: ...
    @property
    def text_merged(self) -> bool: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[CompactReport], tuple[Any, ...]]: ...

@final
class IndexHealth:
    """Sizes and health of the derived search indexes (vector and BM25), every namespace."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls,
        documents: int,
        vectors: int,
        vectors_pending: int,
        vector_tombstones: int,
        dim: int | None,
        text_documents: int,
        text_pending: int,
        last_error: str | None,
        warnings: tuple[str, ...] | list[str],
    ) -> IndexHealth: ...
    @property
    def documents(self) -> int: ...
    @property
    def vectors(self) -> int: ...
    @property
    def vectors_pending(self) -> int: ...
    @property
    def vector_tombstones(self) -> int: ...
    @property
    def dim(self) -> int | None: ...
    @property
    def text_documents(self) -> int: ...
    @property
    def text_pending(self) -> int: ...
    @property
    def last_error(self) -> str | None: ...
    @property
    def warnings(self) -> tuple[str, ...]: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[IndexHealth], tuple[Any, ...]]: ...

@final
class EntityRecord:
    """A node of the knowledge graph (a person, project, file, concept…)."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls,
        id: str,
        namespace: str,
        name: str,
        entity_type: str,
        description: str | None,
        importance: float,
        confidence: float,
        thread_id: str | None,
        created_at: datetime,
        updated_at: datetime,
        valid_from: datetime,
        valid_until: datetime | None,
    ) -> EntityRecord: ...
    @property
    def id(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def entity_type(self) -> str: ...
    @property
    def description(self) -> str | None: ...
    @property
    def importance(self) -> float: ...
    @property
    def confidence(self) -> float: ...
    @property
    def thread_id(self) -> str | None: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def updated_at(self) -> datetime: ...
    @property
    def valid_from(self) -> datetime: ...
    @property
    def valid_until(self) -> datetime | None: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[EntityRecord], tuple[Any, ...]]: ...

@final
class ObservationRecord:
    """One atomic fact about an entity, in a version chain (`supersedes`/`superseded_by`)."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls,
        id: str,
        namespace: str,
        entity_id: str,
        entity_name: str,
        content: str,
        version: int,
        supersedes: str | None,
        superseded_by: str | None,
        thread_id: str | None,
        confidence: float,
        importance: float,
        timestamp: datetime,
        valid_from: datetime,
        valid_until: datetime | None,
    ) -> ObservationRecord: ...
    @property
    def id(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def entity_id(self) -> str: ...
    @property
    def entity_name(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def version(self) -> int: ...
    @property
    def supersedes(self) -> str | None: ...
    @property
    def superseded_by(self) -> str | None: ...
    @property
    def thread_id(self) -> str | None: ...
    @property
    def confidence(self) -> float: ...
    @property
    def importance(self) -> float: ...
    @property
    def timestamp(self) -> datetime: ...
    @property
    def valid_from(self) -> datetime: ...
    @property
    def valid_until(self) -> datetime | None: ...
    @property
    def is_current(self) -> bool:
        """Whether this is the latest version (not superseded)."""
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[ObservationRecord], tuple[Any, ...]]: ...

@final
class RelationRecord:
    """A directed, typed, weighted edge; `from`/`to` in `to_dict()` are the entity names."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls,
        id: str,
        namespace: str,
        from_name: str,
        to_name: str,
        from_entity: str,
        to_entity: str,
        relation_type: str,
        importance: float,
        thread_id: str | None,
        created_at: datetime,
        valid_from: datetime,
        valid_until: datetime | None,
    ) -> RelationRecord: ...
    @property
    def id(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def from_name(self) -> str: ...
    @property
    def to_name(self) -> str: ...
    @property
    def from_entity(self) -> str: ...
    @property
    def to_entity(self) -> str: ...
    @property
    def relation_type(self) -> str: ...
    @property
    def importance(self) -> float: ...
    @property
    def thread_id(self) -> str | None: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def valid_from(self) -> datetime: ...
    @property
    def valid_until(self) -> datetime | None: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[RelationRecord], tuple[Any, ...]]: ...

@final
class EntityView:
    """An entity with its current observations and every relation it takes part in."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls,
        entity: EntityRecord,
        observations: list[ObservationRecord],
        observation_count: int,
        relations: list[RelationRecord],
    ) -> EntityView: ...
    @property
    def entity(self) -> EntityRecord: ...
    @property
    def observations(self) -> list[ObservationRecord]: ...
    @property
    def observation_count(self) -> int: ...
    @property
    def relations(self) -> list[RelationRecord]: ...
    @property
    def name(self) -> str:
        """The entity's name."""
    def to_dict(self) -> dict[str, Any]:
        """The entity's fields, then `observations`, `observation_count`, `relations`."""
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[EntityView], tuple[Any, ...]]: ...

@final
class EntityHit:
    """An entity found by `search_nodes`, with the scores of its best-matching document."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(cls, view: EntityView, scores: Scores) -> EntityHit: ...
    @property
    def view(self) -> EntityView: ...
    @property
    def scores(self) -> Scores: ...
    @property
    def name(self) -> str:
        """The entity's name."""
    def to_dict(self) -> dict[str, Any]:
        """The entity view plus `scores`."""
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[EntityHit], tuple[Any, ...]]: ...

@final
class RelatedEntity:
    """An entity reached by `get_related`: how deep, through which relation, from whom."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls, entity: EntityRecord, depth: int, via: RelationRecord, parent: str
    ) -> RelatedEntity: ...
    @property
    def entity(self) -> EntityRecord: ...
    @property
    def depth(self) -> int: ...
    @property
    def via(self) -> RelationRecord: ...
    @property
    def parent(self) -> str: ...
    @property
    def name(self) -> str:
        """The entity's name."""
    def to_dict(self) -> dict[str, Any]:
        """The entity's fields plus `depth`, `via` and `parent`."""
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[RelatedEntity], tuple[Any, ...]]: ...

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
class GraphView:
    """Entities and the relations among them (`open_nodes`)."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(cls, entities: list[EntityView], relations: list[RelationRecord]) -> GraphView: ...
    @property
    def entities(self) -> list[EntityView]: ...
    @property
    def relations(self) -> list[RelationRecord]: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[GraphView], tuple[Any, ...]]: ...

@final
class GraphPage:
    """A page of `read_graph`: entities oldest first, the relations among them, the
    namespace's totals, and the offset of the next page (None on the last one)."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls,
        entities: list[EntityView],
        relations: list[RelationRecord],
        total_entities: int,
        total_relations: int,
        offset: int,
        next_offset: int | None,
        summary: bool,
    ) -> GraphPage: ...
    @property
    def entities(self) -> list[EntityView]: ...
    @property
    def relations(self) -> list[RelationRecord]: ...
    @property
    def total_entities(self) -> int: ...
    @property
    def total_relations(self) -> int: ...
    @property
    def offset(self) -> int: ...
    @property
    def next_offset(self) -> int | None: ...
    @property
    def summary(self) -> bool: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[GraphPage], tuple[Any, ...]]: ...

# -- interaction log, code search and store health records ---------------------------

@final
class DocumentVersion:
    """One version of a document (a hypernode's version node); `touched_by` is filled
    by `document_history` only."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls,
        id: str,
        document_id: str,
        path: str,
        version: int,
        content_hash: str,
        size: int | None,
        provenance: str,
        created_in_turn: str | None,
        created_at: datetime,
        has_content: bool,
        touched_by: list[VersionTouch],
    ) -> DocumentVersion: ...
    @property
    def id(self) -> str: ...
    @property
    def document_id(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def version(self) -> int: ...
    @property
    def content_hash(self) -> str: ...
    @property
    def size(self) -> int | None: ...
    @property
    def provenance(self) -> str: ...
    @property
    def created_in_turn(self) -> str | None: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def has_content(self) -> bool: ...
    @property
    def touched_by(self) -> list[VersionTouch]: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[DocumentVersion], tuple[Any, ...]]: ...

@final
class VersionTouch:
    """A turn that touched a document version, and the tool it used."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls,
        conversation_id: str,
        turn_id: str,
        turn_index: int,
        tool: str,
        user_text: str,
        created_at: datetime,
    ) -> VersionTouch: ...
    @property
    def conversation_id(self) -> str: ...
    @property
    def turn_id(self) -> str: ...
    @property
    def turn_index(self) -> int: ...
    @property
    def tool(self) -> str: ...
    @property
    def user_text(self) -> str: ...
    @property
    def created_at(self) -> datetime: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[VersionTouch], tuple[Any, ...]]: ...

@final
class ProcedureRecord:
    """A recorded tool call: its tool, parsed arguments and the versions it touched."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls,
        id: str,
        position: int,
        tool: str,
        args: Any,
        created_at: datetime,
        documents: list[DocumentVersion],
    ) -> ProcedureRecord: ...
    @property
    def id(self) -> str: ...
    @property
    def position(self) -> int: ...
    @property
    def tool(self) -> str: ...
    @property
    def args(self) -> Any: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def documents(self) -> list[DocumentVersion]: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[ProcedureRecord], tuple[Any, ...]]: ...

@final
class TurnRecord:
    """A recorded turn; `turn_id` is the caller's id, `id` the internal one."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls,
        id: str,
        namespace: str,
        conversation_id: str,
        turn_id: str,
        turn_index: int,
        user_text: str,
        agent_text: str | None,
        thread_id: str | None,
        created_at: datetime,
        procedures: list[ProcedureRecord],
    ) -> TurnRecord: ...
    @property
    def id(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def conversation_id(self) -> str: ...
    @property
    def turn_id(self) -> str: ...
    @property
    def turn_index(self) -> int: ...
    @property
    def user_text(self) -> str: ...
    @property
    def agent_text(self) -> str | None: ...
    @property
    def thread_id(self) -> str | None: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def procedures(self) -> list[ProcedureRecord]: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[TurnRecord], tuple[Any, ...]]: ...

@final
class DocumentHistory:
    """A document's versions oldest first, with the turns that touched each."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls,
        path: str,
        versions: list[DocumentVersion],
        volatility: float,
        familiarity: int,
    ) -> DocumentHistory: ...
    @property
    def path(self) -> str: ...
    @property
    def versions(self) -> list[DocumentVersion]: ...
    @property
    def volatility(self) -> float: ...
    @property
    def familiarity(self) -> int: ...
    @property
    def latest(self) -> DocumentVersion:
        """The newest version."""
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[DocumentHistory], tuple[Any, ...]]: ...

@final
class DocumentSignal:
    """A document version a past turn touched, with what happened to it since."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls,
        version: DocumentVersion,
        latest_version: int,
        staleness: int,
        external_since: int,
        familiarity: int,
        volatility: float,
    ) -> DocumentSignal: ...
    @property
    def version(self) -> DocumentVersion: ...
    @property
    def latest_version(self) -> int: ...
    @property
    def staleness(self) -> int: ...
    @property
    def external_since(self) -> int: ...
    @property
    def familiarity(self) -> int: ...
    @property
    def volatility(self) -> float: ...
    @property
    def changed_since(self) -> bool:
        """Whether the document moved on after the past turn saw it."""
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[DocumentSignal], tuple[Any, ...]]: ...

@final
class ContextProcedure:
    """A procedure of a surfaced turn with its documents' signals."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(cls, tool: str, args: Any, documents: list[DocumentSignal]) -> ContextProcedure: ...
    @property
    def tool(self) -> str: ...
    @property
    def args(self) -> Any: ...
    @property
    def documents(self) -> list[DocumentSignal]: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[ContextProcedure], tuple[Any, ...]]: ...

@final
class ContextItem:
    """One past turn surfaced by `retrieve_context`, with why it ranked where it did."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls,
        turn: TurnRecord,
        score: float,
        search_score: float | None,
        shared_documents: list[str],
        recency: float,
        staleness_penalty: float,
        familiarity_bonus: float,
        procedures: list[ContextProcedure],
        text: str,
        tokens: int,
    ) -> ContextItem: ...
    @property
    def turn(self) -> TurnRecord: ...
    @property
    def score(self) -> float: ...
    @property
    def search_score(self) -> float | None: ...
    @property
    def shared_documents(self) -> list[str]: ...
    @property
    def recency(self) -> float: ...
    @property
    def staleness_penalty(self) -> float: ...
    @property
    def familiarity_bonus(self) -> float: ...
    @property
    def procedures(self) -> list[ContextProcedure]: ...
    @property
    def text(self) -> str: ...
    @property
    def tokens(self) -> int: ...
    @property
    def changed_documents(self) -> list[DocumentSignal]:
        """The documents of this turn that changed after it saw them."""
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[ContextItem], tuple[Any, ...]]: ...

@final
class ContextResult:
    """The packed context of `retrieve_context`: items best first and the prompt text."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls,
        items: list[ContextItem],
        text: str,
        token_count: int,
        omitted: int,
    ) -> ContextResult: ...
    @property
    def items(self) -> list[ContextItem]: ...
    @property
    def text(self) -> str: ...
    @property
    def token_count(self) -> int: ...
    @property
    def omitted(self) -> int: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[ContextResult], tuple[Any, ...]]: ...

@final
class DocumentState:
    """The latest stored version of a document (None: never seen) and its familiarity."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(cls, latest: DocumentVersion | None, familiarity: int) -> DocumentState: ...
    @property
    def latest(self) -> DocumentVersion | None: ...
    @property
    def familiarity(self) -> int: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[DocumentState], tuple[Any, ...]]: ...

@final
class CodeHit:
    """A code chunk found by `search_code`, with its snippet and scores."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls,
        file_path: str,
        start_line: int,
        end_line: int,
        name: str | None,
        chunk_type: str,
        language: str,
        parent_scope: str | None,
        snippet: str,
        scores: Scores,
        relevance_score: float,
        project_id: str,
        id: str,
    ) -> CodeHit: ...
    @property
    def file_path(self) -> str: ...
    @property
    def start_line(self) -> int: ...
    @property
    def end_line(self) -> int: ...
    @property
    def name(self) -> str | None: ...
    @property
    def chunk_type(self) -> str: ...
    @property
    def language(self) -> str: ...
    @property
    def parent_scope(self) -> str | None: ...
    @property
    def snippet(self) -> str: ...
    @property
    def scores(self) -> Scores: ...
    @property
    def relevance_score(self) -> float: ...
    @property
    def project_id(self) -> str: ...
    @property
    def id(self) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[CodeHit], tuple[Any, ...]]: ...

@final
class IndexCheck:
    """How one derived index compares with the database rows."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls,
        index: str,
        expected: int,
        found: int,
        sampled: int,
        missing: int,
    ) -> IndexCheck: ...
    @property
    def index(self) -> str: ...
    @property
    def expected(self) -> int: ...
    @property
    def found(self) -> int: ...
    @property
    def sampled(self) -> int: ...
    @property
    def missing(self) -> int: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[IndexCheck], tuple[Any, ...]]: ...

@final
class CheckProblem:
    """One thing `Memory.check` found wrong, and what to do about it."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(cls, area: str, message: str, fix: str) -> CheckProblem: ...
    @property
    def area(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def fix(self) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[CheckProblem], tuple[Any, ...]]: ...

@final
class StoreCheck:
    """What `Memory.check` found: the database's integrity and each index's consistency."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls,
        ok: bool,
        path: str,
        integrity: list[str],
        last_seq: int,
        indexes: list[IndexCheck],
        problems: list[CheckProblem],
    ) -> StoreCheck: ...
    @property
    def ok(self) -> bool: ...
    @property
    def path(self) -> str: ...
    @property
    def integrity(self) -> list[str]: ...
    @property
    def last_seq(self) -> int: ...
    @property
    def indexes(self) -> list[IndexCheck]: ...
    @property
    def problems(self) -> list[CheckProblem]: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[StoreCheck], tuple[Any, ...]]: ...

@final
class BackupReport:
    """What `Memory.backup` wrote."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(cls, path: str, bytes: int, last_seq: int) -> BackupReport: ...
    @property
    def path(self) -> str: ...
    @property
    def bytes(self) -> int: ...
    @property
    def last_seq(self) -> int: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[BackupReport], tuple[Any, ...]]: ...

@final
class RepairReport:
    """What a repair did."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls,
        indexes_rebuilt: bool,
        database_set_aside: str | None,
        log_set_aside: str | None,
        lost_writes: int,
        documents: int,
        last_seq: int,
    ) -> RepairReport: ...
    @property
    def indexes_rebuilt(self) -> bool: ...
    @property
    def database_set_aside(self) -> str | None: ...
    @property
    def log_set_aside(self) -> str | None: ...
    @property
    def lost_writes(self) -> int: ...
    @property
    def documents(self) -> int: ...
    @property
    def last_seq(self) -> int: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[RepairReport], tuple[Any, ...]]: ...

@final
class RecentChange:
    """`{entityName, entityType, lastModified, changeType}` in `to_dict()`."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls,
        entity_name: str,
        entity_type: str,
        last_modified: datetime,
        change_type: str,
    ) -> RecentChange: ...
    @property
    def entity_name(self) -> str: ...
    @property
    def entity_type(self) -> str: ...
    @property
    def last_modified(self) -> datetime: ...
    @property
    def change_type(self) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[RecentChange], tuple[Any, ...]]: ...

@final
class ImportantEntity:
    """`{entityName, entityType, importance, observationCount}` in `to_dict()`."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls,
        entity_name: str,
        entity_type: str,
        importance: float,
        observation_count: int,
    ) -> ImportantEntity: ...
    @property
    def entity_name(self) -> str: ...
    @property
    def entity_type(self) -> str: ...
    @property
    def importance(self) -> float: ...
    @property
    def observation_count(self) -> int: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[ImportantEntity], tuple[Any, ...]]: ...

@final
class ConnectedEntity:
    """`{entityName, entityType, relationCount, connectedTo}` in `to_dict()`."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls,
        entity_name: str,
        entity_type: str,
        relation_count: int,
        connected_to: list[str],
    ) -> ConnectedEntity: ...
    @property
    def entity_name(self) -> str: ...
    @property
    def entity_type(self) -> str: ...
    @property
    def relation_count(self) -> int: ...
    @property
    def connected_to(self) -> list[str]: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[ConnectedEntity], tuple[Any, ...]]: ...

@final
class OrphanedEntity:
    """`{entityName, entityType, reason}`; reason is no_relations or broken_relation."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(cls, entity_name: str, entity_type: str, reason: str) -> OrphanedEntity: ...
    @property
    def entity_name(self) -> str: ...
    @property
    def entity_type(self) -> str: ...
    @property
    def reason(self) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[OrphanedEntity], tuple[Any, ...]]: ...

@final
class GraphQuality:
    """The knowledge graph's success metrics in one scope (`get_analytics`): relation
    coverage, mean relations per entity, observation atomicity, and the
    `save_memory` validation error rate of this process."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls,
        entities: int,
        entities_with_relations: int,
        relation_coverage: float,
        mean_relations_per_entity: float,
        observations: int,
        atomic_observations: int,
        observation_atomicity: float,
        save_calls: int,
        save_error_rate: float,
    ) -> GraphQuality: ...
    @property
    def entities(self) -> int: ...
    @property
    def entities_with_relations(self) -> int: ...
    @property
    def relation_coverage(self) -> float: ...
    @property
    def mean_relations_per_entity(self) -> float: ...
    @property
    def observations(self) -> int: ...
    @property
    def atomic_observations(self) -> int: ...
    @property
    def observation_atomicity(self) -> float: ...
    @property
    def save_calls(self) -> int: ...
    @property
    def save_error_rate(self) -> float: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[GraphQuality], tuple[Any, ...]]: ...

@final
class Analytics:
    """The analytics of `get_analytics` (a thread's, or the namespace's), with the
    success metrics of that scope (`quality`) and, for a thread, of the namespace."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls,
        recent_changes: list[RecentChange],
        top_important: list[ImportantEntity],
        most_connected: list[ConnectedEntity],
        orphaned_entities: list[OrphanedEntity],
        quality: GraphQuality,
        store_quality: GraphQuality | None,
    ) -> Analytics: ...
    @property
    def recent_changes(self) -> list[RecentChange]: ...
    @property
    def top_important(self) -> list[ImportantEntity]: ...
    @property
    def most_connected(self) -> list[ConnectedEntity]: ...
    @property
    def orphaned_entities(self) -> list[OrphanedEntity]: ...
    @property
    def quality(self) -> GraphQuality: ...
    @property
    def store_quality(self) -> GraphQuality | None: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[Analytics], tuple[Any, ...]]: ...

@final
class MaintenanceReport:
    """What a maintenance pass did: its counters."""

    __match_args__: ClassVar[tuple[str, ...]]
    def __new__(
        cls,
        memories_expired: int,
        versions_deduplicated: int,
        conversations_archived: int,
        summaries_refreshed: int,
        turn_claims_pruned: int,
        log_entries_compacted: int,
        vectors_rebuilt: bool,
        tombstones_dropped: int,
        text_merged: bool,
    ) -> MaintenanceReport: ...
    @property
    def memories_expired(self) -> int: ...
    @property
    def versions_deduplicated(self) -> int: ...
    @property
    def conversations_archived(self) -> int: ...
    @property
    def summaries_refreshed(self) -> int: ...
    @property
    def turn_claims_pruned(self) -> int: ...
    @property
    def log_entries_compacted(self) -> int: ...
    @property
    def vectors_rebuilt(self) -> bool: ...
    @property
    def tombstones_dropped(self) -> int: ...
    @property
    def text_merged(self) -> bool: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[type[MaintenanceReport], tuple[Any, ...]]: ...

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
        database_url: str | None = None,
        namespaces: list[str] | None = None,
        namespace_range: str | None = None,
        shared: bool = True,
        replica_rebuild: bool = False,
    ) -> Engine:
        """Open a store; `shared` (SQLite): other processes may write it too."""
    def close(self) -> None: ...
    @property
    def owns_indexes(self) -> bool:
        """Whether this process writes the index files of the store."""
    @property
    def on_postgres(self) -> bool:
        """Whether this engine is a node of a PostgreSQL database."""
    def last_write_position(self) -> tuple[str, int] | None:
        """`(namespace, seq)` of the calling thread's last write on this engine."""
    def check_served(self, namespace: str) -> None:
        """Raise InvalidParameterError for a namespace this node does not serve."""
    def applied_seq(self, namespace: str) -> int:
        """The last seq of `namespace` this node applied (0 on SQLite)."""
    def wait_for_seq(self, namespace: str, min_seq: int, timeout: float = 2.0) -> int:
        """Wait until this node applied `namespace` up to `min_seq`; the seq applied."""
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
        tier: str = "durable",
        vector: _Vector | None = None,
        entities: list[str] | None = None,
        similar_threshold: float | None = None,
        similar_limit: int = 5,
    ) -> tuple[MemoryRecord, list[tuple[MemoryRecord, float]]]:
        """Store a memory; with a vector and `similar_threshold`, also the valid memories at
        least that cosine-similar to it (itself excluded), most similar first."""
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
    ) -> list[MemoryRecord]: ...
    def get_memory(self, namespace: str, id: str) -> MemoryRecord: ...
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
        tier: str | None = None,
        vector: _Vector | None = None,
    ) -> MemoryRecord: ...
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
    ) -> list[MemoryRecord]: ...
    def count_memories(self, namespace: str) -> int: ...
    def pending_vectors(
        self, namespace: str | None = None, limit: int = 256
    ) -> list[tuple[str, str, str]]:
        """Memories stored without a vector, oldest first: `(namespace, id, content)`."""
    def count_pending_vectors(self) -> int: ...
    def attach_vector(self, namespace: str, id: str, content: str, vector: _Vector) -> bool:
        """Attach a vector to a memory stored without one whose content is still `content`."""
    def invalidate(self, namespace: str, id: str, reason: str | None = None) -> MemoryRecord: ...
    def supersede_memory(
        self, namespace: str, old_id: str, new_id: str
    ) -> tuple[MemoryRecord, MemoryRecord]: ...

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
    ) -> list[SearchHit]: ...
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
    ) -> list[SearchHit]: ...
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
        thread_prior: float | None = None,
        max_per_thread: int | None = None,
        question_penalty: float | None = None,
    ) -> list[SearchHit]: ...
    def similar_memories(
        self,
        namespace: str,
        vector: _Vector,
        *,
        exclude_id: str | None = None,
        threshold: float = 0.8,
        limit: int = 5,
    ) -> list[tuple[MemoryRecord, float]]: ...
    def flush(self) -> None: ...
    def wait_indexed(self, timeout: float | None = None) -> bool: ...
    def settle_hubness(self) -> None: ...
    def compact(self, force: bool = False) -> CompactReport: ...
    def rebuild_indexes(self) -> None: ...
    def index_status(self) -> IndexHealth: ...
    def check(self) -> StoreCheck: ...
    def repair(self) -> RepairReport: ...
    def backup(self, dest: str | PathLike[str]) -> BackupReport: ...

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
    ) -> list[EntityRecord]: ...
    def create_relations(
        self,
        namespace: str,
        relations: list[tuple[str, str, str, float | None]],
        *,
        thread_id: str | None = None,
    ) -> list[RelationRecord]: ...
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
    ) -> list[ObservationRecord]: ...
    def delete_entities(self, namespace: str, names: list[str]) -> list[str]: ...
    def delete_observations(self, namespace: str, entity: str, which: list[str]) -> int: ...
    def delete_relations(self, namespace: str, relations: list[tuple[str, str, str]]) -> int: ...
    def get_entity(self, namespace: str, name: str) -> EntityView: ...
    def open_nodes(self, namespace: str, names: list[str]) -> GraphView: ...
    def read_graph(
        self, namespace: str, *, limit: int = 50, offset: int = 0, summary: bool = False
    ) -> GraphPage: ...
    def query_nodes(
        self,
        namespace: str,
        *,
        entity_type: str | None = None,
        min_importance: float | None = None,
        thread_id: str | None = None,
        limit: int = 50,
    ) -> list[EntityView]: ...
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
    ) -> list[RelatedEntity]: ...
    def find_relation_path(
        self, namespace: str, source: str, target: str, *, max_depth: int = 6
    ) -> list[RelationRecord]: ...
    def observation_history(
        self, namespace: str, entity: str, observation_id: str
    ) -> list[ObservationRecord]: ...
    def analytics(
        self, namespace: str, thread_id: str | None = None, *, limit: int = 10
    ) -> Analytics: ...
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
    ) -> list[EntityHit]: ...

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
    ) -> tuple[TurnRecord, bool]:
        """The turn as stored (with its procedures) and whether this call created it."""
    def get_turn(self, namespace: str, conversation_id: str, turn_id: str) -> TurnRecord: ...
    def conversation_turns(
        self, namespace: str, conversation_id: str, *, limit: int = 1000
    ) -> list[TurnRecord]: ...
    def document_state(self, namespace: str, canonical: str) -> DocumentState: ...
    def document_history(self, namespace: str, canonical: str) -> DocumentHistory: ...
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
    ) -> ContextResult: ...
    def run_maintenance(
        self,
        namespace: str,
        *,
        episodic_ttl_days: float | None = None,
        archive_after_days: float | None = None,
        force_compact: bool = False,
        log_min_age_hours: float | None = None,
        summary_refresh_minutes: float | None = None,
        max_processed_turns: int | None = None,
        now: int | None = None,
    ) -> MaintenanceReport: ...
    def claim_turn(
        self, namespace: str, session_id: str, turn_id: str, now: int, stale_after: int
    ) -> tuple[Literal["claimed", "done", "busy"], str | None, int | None]:
        """Claim a turn for memory_after_turn: `("claimed", None, None)`, `("done",
        result JSON or None, None)` or `("busy", None, claimed_at)`."""
    def finish_turn(
        self, namespace: str, session_id: str, turn_id: str, result: str, now: int
    ) -> None: ...
    def release_turn(self, namespace: str, session_id: str, turn_id: str) -> None: ...
    def overview(
        self, namespace: str | None = None, *, depth: int = 2, limit: int = 200
    ) -> list[dict[str, Any]]: ...
    @staticmethod
    def estimate_tokens(text: str) -> int: ...

    # -- code search ------------------------------------------------------------------
    # Chunk dicts in: {start_line, end_line, chunk_type, name?, parent_scope?, content,
    # content_hash}; search_code returns CodeHit records. Project dicts:
    # namespace, project_id, root, status (idle|indexing|watching|error), total_files,
    # indexed_files, total_chunks, started_at, completed_at, error, updated_at.
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
    ) -> list[CodeHit]: ...

def repair_store(
    path: str | PathLike[str], *, accept_empty: bool = False, text_analyzer: str | None = None
) -> RepairReport:
    """Rebuild the search indexes of the closed store at `path` from its database."""
