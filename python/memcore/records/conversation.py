"""The values of the interaction log (docs/guide.md, "Conversations and documents"):
turns, procedures, document versions and their signals, and the packed context of
`retrieve_context`.

What the engine returns as is (`TurnRecord`, `ProcedureRecord`, `DocumentVersion`,
`VersionTouch`, `DocumentHistory`, `DocumentSignal`, `ContextProcedure`, `ContextItem`,
`ContextResult`) are native classes defined in `rust/memcore-py/src/records/conversation.rs`:
frozen, with typed read-only attributes, `to_dict()` (ISO 8601 times), equality, `repr`,
pickling and copying. Procedure arguments are stored as JSON text and read parsed.

Two stay frozen dataclasses holding native records, because the facade composes them:
`TurnResult` (the stored turn plus `embedded`, which only the facade knows: whether it
computed a vector) and `DocumentRead` (what a read will record, worked out by the turn's
document ledger from the store's latest version and the turn's own observations, before
anything is written).
"""

from __future__ import annotations

from dataclasses import dataclass

from memcore._core import (
    ContextItem,
    ContextProcedure,
    ContextResult,
    DocumentHistory,
    DocumentSignal,
    DocumentVersion,
    ProcedureRecord,
    TurnRecord,
    VersionTouch,
)
from memcore.records.facts import Record


@dataclass(frozen=True, slots=True)
class TurnResult(Record):
    """What recording a turn did.

    `created` is False when the turn id was already recorded: nothing was written and
    `turn` is the stored turn. `embedded` says whether this call stored a vector of the
    user text; False for a new turn means no model, or one still loading or failing,
    and the turn is then found by keyword search and shared documents only.
    """

    turn: TurnRecord
    created: bool
    embedded: bool

    @property
    def turn_id(self) -> str:
        """The caller's turn id."""
        return self.turn.turn_id


@dataclass(frozen=True, slots=True)
class DocumentRead(Record):
    """What the read wrapper saw (`read_document`, or a document of a procedure).

    Attributes:
        path: Canonical id (relative path in local mode, absolute path in global
            mode, or normalised URL).
        content: The text read (None when only a hash was given, or it was deleted).
        content_hash: sha256 hex of the bytes.
        size: Bytes, when the content is known.
        version: The version this content is (the latest one when unchanged, the
            next one when changed). Inside a turn it is a preview until the turn
            commits; `Turn.result` has the recorded versions.
        previous_version: The latest version before this read (None: first sight).
        changed: The content differs from `previous_version`.
        provenance: "agent" when a procedure of this turn wrote this content,
            else "external"; for unchanged content, the stored version's provenance.
        versions_since_seen: Versions since the one this conversation last saw
            (0: unchanged since), None when it never saw the document.
        familiarity: Conversations that touched the document before.
    """

    path: str
    content: str | None
    content_hash: str
    size: int | None
    version: int
    previous_version: int | None
    changed: bool
    provenance: str
    versions_since_seen: int | None
    familiarity: int


__all__ = [
    "ContextItem",
    "ContextProcedure",
    "ContextResult",
    "DocumentHistory",
    "DocumentRead",
    "DocumentSignal",
    "DocumentVersion",
    "ProcedureRecord",
    "TurnRecord",
    "TurnResult",
    "VersionTouch",
]
