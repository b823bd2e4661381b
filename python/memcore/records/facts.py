"""The values the facade returns for facts and search, all with `to_dict()` (JSON-ready:
ISO 8601 times, no embeddings ever).

The records the engine returns (`MemoryRecord`, `Scores`, `SearchHit`, `CompactReport`,
`IndexHealth`) are native classes defined in `rust/memcore-py/src/records/`: frozen, with
typed read-only attributes, equality, `repr`, pickling and copying. `StoreResult` and
`SupersedeResult` stay dataclasses: the facade composes them from native records and its
own decisions (the update rule's pick, the supersede message), so a native class would only
move those few lines across the boundary.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

from memcore._core import CompactReport, IndexHealth, MemoryRecord, Scores, SearchHit
from memcore._time import iso


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return iso(value)
    # A record, dataclass or native (whose classes share no base): its own `to_dict()`.
    to_dict = getattr(value, "to_dict", None)
    if to_dict is not None:
        return to_dict()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


class Record:
    """Shared `to_dict()` of the dataclass records (here and in the other `records` modules)."""

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready plain values."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class StoreResult(Record):
    """What `store_memory` returns: the new memory, the similar valid memories
    that may now be outdated, and the exact call to make if one is."""

    created: MemoryRecord
    similar: list[MemoryRecord] = field(default_factory=list)
    action_required: str | None = None
    #: "stored" (with its vector), "pending" (stored without it while the model is not
    #: ready: keyword-searchable now, embedded when the model is) or "none" (no model).
    embedding: str = "stored"
    #: Why the vector is pending (the embedding error's message), else None.
    pending_reason: str | None = None

    @property
    def id(self) -> str:
        """The new memory's id."""
        return self.created.id

    def to_dict(self) -> dict[str, Any]:
        """`{id, created, similar, action_required, embedding}` as in the MCP contract,
        and `pending_reason` when the embedding is pending."""
        out = {"id": self.id, **Record.to_dict(self)}
        if self.pending_reason is None:
            del out["pending_reason"]
        return out


@dataclass(frozen=True, slots=True)
class SupersedeResult(Record):
    """The outcome of `supersede_memory`."""

    success: bool
    message: str
    old: MemoryRecord
    new: MemoryRecord


__all__ = [
    "CompactReport",
    "IndexHealth",
    "MemoryRecord",
    "Record",
    "Scores",
    "SearchHit",
    "StoreResult",
    "SupersedeResult",
]
