"""The values the facade returns: small frozen dataclasses with `to_dict()`
(JSON-ready: ISO 8601 times, no embeddings ever)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from datetime import datetime
from functools import cache
from typing import Any, TypeVar

from memcore._time import from_micros, iso, optional_datetime


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def parse_metadata(text: str) -> Any:
    """A record's metadata JSON. Most memories carry none (``{}``), and json.loads costs
    more than the rest of a record's conversion, so that case is answered directly."""
    return {} if text == "{}" else json.loads(text)


def _same_or_new(micros: int, known: int, known_at: datetime) -> datetime:
    """`known_at` when `micros` is the same instant, else a new datetime."""
    return known_at if micros == known else from_micros(micros)


R = TypeVar("R", bound="Record")


def builder(cls: type[R]) -> Callable[..., R]:
    """A function taking the fields of the frozen, slotted dataclass `cls` positionally,
    in declaration order, and returning an instance holding them.

    The generated `__init__` of a frozen dataclass stores each field through
    `object.__setattr__` (its way round its own guard), which for a 21-field memory costs
    as much as the rest of converting it, and search results and bulk ingests convert
    thousands of records. The builder calls each slot descriptor's setter directly, one
    statement per field: a generated function, as `dataclasses` makes `__init__`, because
    a loop over the setters spent as long iterating as storing (a memory record's
    assembly 1.54 -> 0.78 us). A wrong number of values raises TypeError, as any call does.
    Made once per class.
    """
    return _generate_builder(cls)  # type: ignore[arg-type]  # mypy: type[R] "not Hashable"


@cache
def _generate_builder(cls: type) -> Callable[..., Any]:
    names = [f.name for f in fields(cls)]
    scope: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    scope |= {f"_set_{name}": cls.__dict__[name].__set__ for name in names}
    body = "".join(f"    _set_{name}(record, {name})\n" for name in names)
    source = f"def build({', '.join(names)}):\n    record = _new(_cls)\n{body}    return record\n"
    exec(source, scope)  # field names are identifiers, nothing from input
    build: Callable[..., Any] = scope["build"]
    build.__qualname__ = f"builder({cls.__name__})"
    return build


class Record:
    """Shared `to_dict()` for the dataclasses below."""

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready plain values."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class MemoryRecord(Record):
    """A stored fact (docs/guide.md, "The records"). The embedding is never included."""

    id: str
    namespace: str
    content: str
    memory_type: str
    source: str
    confidence: float
    importance: float
    metadata: dict[str, Any] | list[Any] | str | int | float | bool | None
    thread_id: str | None
    user_id: str | None
    event_time: datetime | None
    created_at: datetime
    updated_at: datetime
    accessed_at: datetime
    valid_from: datetime
    valid_until: datetime | None
    invalidated_at: datetime | None
    invalidation_reason: str | None
    supersedes: str | None
    superseded_by: str | None
    expires_at: datetime | None

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> MemoryRecord:
        """Build from the dict the native engine returns."""
        # A datetime costs about a microsecond to make and most records carry one instant
        # four times (created = updated = accessed = valid_from until something changes),
        # so equal stamps share one object: a tenth of a ten-hit search's facade time.
        created = raw["created_at"]
        created_at = from_micros(created)
        # Positional, in the order the fields are declared above.
        return builder(cls)(
            raw["id"],
            raw["namespace"],
            raw["content"],
            raw["memory_type"],
            raw["source"],
            raw["confidence"],
            raw["importance"],
            parse_metadata(raw["metadata"]),
            raw["thread_id"],
            raw["user_id"],
            optional_datetime(raw["event_time"]),
            created_at,
            _same_or_new(raw["updated_at"], created, created_at),
            _same_or_new(raw["accessed_at"], created, created_at),
            _same_or_new(raw["valid_from"], created, created_at),
            optional_datetime(raw["valid_until"]),
            optional_datetime(raw["invalidated_at"]),
            raw["invalidation_reason"],
            raw["supersedes"],
            raw["superseded_by"],
            optional_datetime(raw["expires_at"]),
        )

    @property
    def is_valid(self) -> bool:
        """Whether the memory holds now (not invalidated, superseded or expired)."""
        now = datetime.now(self.created_at.tzinfo)
        ends = [t for t in (self.valid_until, self.expires_at) if t is not None]
        return self.valid_from <= now and all(now < t for t in ends)


@dataclass(frozen=True, slots=True)
class StoreResult(Record):
    """What `store_memory` returns: the new memory, the similar valid memories
    that may now be outdated, and the exact call to make if one is."""

    created: MemoryRecord
    similar: list[MemoryRecord] = field(default_factory=list)
    action_required: str | None = None

    @property
    def id(self) -> str:
        """The new memory's id."""
        return self.created.id

    def to_dict(self) -> dict[str, Any]:
        """`{id, created, similar, action_required}` as in the MCP contract."""
        return {"id": self.id, **Record.to_dict(self)}


@dataclass(frozen=True, slots=True)
class SupersedeResult(Record):
    """The outcome of `supersede_memory`."""

    success: bool
    message: str
    old: MemoryRecord
    new: MemoryRecord


@dataclass(frozen=True, slots=True)
class Scores(Record):
    """Why a hit ranked where it did: each signal's raw score and the fused one."""

    vector: float | None
    bm25: float | None
    ppr: float | None
    fused: float

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> Scores:
        """Build from the native `scores` dict."""
        return builder(cls)(raw["vector"], raw["bm25"], raw["ppr"], raw["fused"])


@dataclass(frozen=True, slots=True)
class SearchHit(Record):
    """A memory found by a search, with the scores that explain its rank.

    `relevance_score` is a 0-1 number for display: the cosine for vector
    search, and the fused score mapped from its ±3 z-range for hybrid search.
    """

    memory: MemoryRecord
    scores: Scores
    relevance_score: float

    @classmethod
    def from_core(cls, raw: dict[str, Any], relevance: str) -> SearchHit:
        """Build from a native hit dict; `relevance` names the score to show."""
        scores = Scores.from_core(raw["scores"])
        if relevance == "vector":
            value = scores.vector or 0.0
        elif relevance == "bm25":
            value = (scores.bm25 or 0.0) / (1.0 + (scores.bm25 or 0.0))
        else:
            value = (scores.fused + 3.0) / 6.0
        relevance_score = round(min(1.0, max(0.0, value)), 4)
        return builder(cls)(MemoryRecord.from_core(raw), scores, relevance_score)

    def to_dict(self) -> dict[str, Any]:
        """The memory's fields plus `scores` and `relevance_score`."""
        return {
            **self.memory.to_dict(),
            "scores": self.scores.to_dict(),
            "relevance_score": self.relevance_score,
        }


@dataclass(frozen=True, slots=True)
class CompactReport(Record):
    """What `Memory.compact` did to the derived search indexes."""

    vectors_rebuilt: bool
    """Whether the HNSW graph was rebuilt without the slots of removed vectors."""
    tombstones_dropped: int
    """Removed vectors whose graph slots were reclaimed."""
    text_merged: bool
    """Whether the BM25 index's segments were merged."""

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> CompactReport:
        """Build from the native compaction report."""
        return cls(
            vectors_rebuilt=bool(raw["vectors_rebuilt"]),
            tombstones_dropped=int(raw["tombstones_dropped"]),
            text_merged=bool(raw["text_merged"]),
        )


@dataclass(frozen=True, slots=True)
class IndexHealth(Record):
    """Sizes and health of the derived search indexes (vector and BM25), every namespace."""

    documents: int
    """Live searchable records of every kind."""
    vectors: int
    """Vectors in the HNSW graph."""
    vectors_pending: int
    """Vectors already searchable but not yet in the graph."""
    vector_tombstones: int
    """Removed vectors still holding graph slots (`compact` reclaims them)."""
    dim: int | None
    """The vector dimension, once known."""
    text_documents: int
    """Records committed to the BM25 index."""
    text_pending: int
    """Records already searchable but not yet committed to the BM25 index."""
    last_error: str | None
    """The indexing failure not yet recovered from (a commit or save that keeps failing,
    e.g. on a full disk; the documents stay searchable from memory), or None."""
    warnings: tuple[str, ...] = ()
    """What happened to the indexes since open: damaged files set aside and rebuilt from
    the database, panics caught, rebuilds scheduled."""

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> IndexHealth:
        """Build from the native `index_status` dict."""
        return cls(
            documents=int(raw["documents"]),
            vectors=int(raw["vectors"]),
            vectors_pending=int(raw["vectors_pending"]),
            vector_tombstones=int(raw["vector_tombstones"]),
            dim=None if raw["dim"] is None else int(raw["dim"]),
            text_documents=int(raw["text_documents"]),
            text_pending=int(raw["text_pending"]),
            last_error=raw["last_error"],
            warnings=tuple(raw.get("warnings", ())),
        )
