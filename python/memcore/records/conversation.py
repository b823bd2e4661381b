"""The values of the interaction log (docs/guide.md, "Conversations and documents"):
turns, procedures, document versions and their signals, and the packed context of
`retrieve_context`.

Frozen dataclasses with `to_dict()` (ISO 8601 times), built from the native engine's
dicts. Procedure arguments are stored as JSON text and returned parsed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memcore._time import from_micros
from memcore.records.facts import Record


def _args(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:  # stored by the core only after validation; kept readable anyway
        return text


@dataclass(frozen=True, slots=True)
class DocumentVersion(Record):
    """One version of a document (a hypernode's version node).

    `created_in_turn` is the internal id of the turn whose procedure created the
    version; `touched_by` lists every turn that read or wrote it (filled by
    `get_document_history` only).
    """

    id: str
    document_id: str
    path: str
    version: int
    content_hash: str
    size: int | None
    provenance: str
    created_in_turn: str | None
    created_at: datetime
    has_content: bool
    touched_by: list[VersionTouch] = field(default_factory=list)

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> DocumentVersion:
        """Build from a native version dict (with `turns` when it has them)."""
        return cls(
            id=raw["id"],
            document_id=raw["document_id"],
            path=raw["path"],
            version=raw["version"],
            content_hash=raw["content_hash"],
            size=raw["size"],
            provenance=raw["provenance"],
            created_in_turn=raw["turn_id"],
            created_at=from_micros(raw["created_at"]),
            has_content=raw["has_content"],
            touched_by=[VersionTouch.from_core(t) for t in raw.get("turns", [])],
        )


@dataclass(frozen=True, slots=True)
class VersionTouch(Record):
    """A turn that touched a document version, and the tool it used."""

    conversation_id: str
    turn_id: str
    turn_index: int
    tool: str
    user_text: str
    created_at: datetime

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> VersionTouch:
        """Build from a native turn dict carrying `tool`."""
        return cls(
            conversation_id=raw["conversation_id"],
            turn_id=raw["turn_id"],
            turn_index=raw["turn_index"],
            tool=raw["tool"],
            user_text=raw["user_text"],
            created_at=from_micros(raw["created_at"]),
        )


@dataclass(frozen=True, slots=True)
class ProcedureRecord(Record):
    """A recorded tool call: its tool (the relationship type), arguments and the
    document versions it touched, in order within its turn."""

    id: str
    position: int
    tool: str
    args: Any
    created_at: datetime
    documents: list[DocumentVersion]

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> ProcedureRecord:
        """Build from a native procedure dict."""
        return cls(
            id=raw["id"],
            position=raw["position"],
            tool=raw["tool"],
            args=_args(raw["args"]),
            created_at=from_micros(raw["created_at"]),
            documents=[DocumentVersion.from_core(v) for v in raw["documents"]],
        )


@dataclass(frozen=True, slots=True)
class TurnRecord(Record):
    """A recorded turn. `turn_id` is the caller's id (unique per conversation), `id`
    the internal one. `procedures` is empty where the source had none loaded."""

    id: str
    namespace: str
    conversation_id: str
    turn_id: str
    turn_index: int
    user_text: str
    agent_text: str | None
    thread_id: str | None
    created_at: datetime
    procedures: list[ProcedureRecord] = field(default_factory=list)

    @classmethod
    def from_core(
        cls, raw: dict[str, Any], procedures: list[dict[str, Any]] | None = None
    ) -> TurnRecord:
        """Build from a native turn dict (procedures from `procedures` or `raw`)."""
        rows = procedures if procedures is not None else raw.get("procedures", [])
        return cls(
            id=raw["id"],
            namespace=raw["namespace"],
            conversation_id=raw["conversation_id"],
            turn_id=raw["turn_id"],
            turn_index=raw["turn_index"],
            user_text=raw["user_text"],
            agent_text=raw["agent_text"],
            thread_id=raw["thread_id"],
            created_at=from_micros(raw["created_at"]),
            procedures=[ProcedureRecord.from_core(p) for p in rows],
        )


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


@dataclass(frozen=True, slots=True)
class DocumentHistory(Record):
    """A document's versions oldest first, with the turns that touched each.

    `volatility` is versions per day between the first and the latest version;
    `familiarity` the number of conversations that touched the document.
    """

    path: str
    versions: list[DocumentVersion]
    volatility: float
    familiarity: int

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> DocumentHistory:
        """Build from the native `document_history` dict."""
        return cls(
            path=raw["path"],
            versions=[DocumentVersion.from_core(v) for v in raw["versions"]],
            volatility=raw["volatility"],
            familiarity=raw["familiarity"],
        )

    @property
    def latest(self) -> DocumentVersion:
        """The newest version."""
        return self.versions[-1]


@dataclass(frozen=True, slots=True)
class DocumentSignal(Record):
    """A document version a past turn touched, with what happened to it since.

    `staleness` counts the versions after this one; `external_since` those of them
    that no agent procedure made.
    """

    version: DocumentVersion
    latest_version: int
    staleness: int
    external_since: int
    familiarity: int
    volatility: float

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> DocumentSignal:
        """Build from a native signal dict (a version dict plus the signals)."""
        return cls(
            version=DocumentVersion.from_core(raw),
            latest_version=raw["latest_version"],
            staleness=raw["staleness"],
            external_since=raw["external_since"],
            familiarity=raw["familiarity"],
            volatility=raw["volatility"],
        )

    @property
    def changed_since(self) -> bool:
        """Whether the document moved on after the past turn saw it."""
        return self.staleness > 0


@dataclass(frozen=True, slots=True)
class ContextProcedure(Record):
    """A procedure of a surfaced turn with its documents' signals."""

    tool: str
    args: Any
    documents: list[DocumentSignal]

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> ContextProcedure:
        """Build from a native context-procedure dict."""
        return cls(
            tool=raw["tool"],
            args=_args(raw["args"]),
            documents=[DocumentSignal.from_core(d) for d in raw["documents"]],
        )


@dataclass(frozen=True, slots=True)
class ContextItem(Record):
    """One past turn surfaced by `retrieve_context`, with why it ranked where it did.

    `score` = max(search_score, document match) × recency × staleness_penalty ×
    familiarity_bonus. `text` is its rendering in the prompt block and `tokens` the
    estimate of that text the budget was charged.
    """

    turn: TurnRecord
    score: float
    search_score: float | None
    shared_documents: list[str]
    recency: float
    staleness_penalty: float
    familiarity_bonus: float
    procedures: list[ContextProcedure]
    text: str
    tokens: int

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> ContextItem:
        """Build from a native context item."""
        return cls(
            turn=TurnRecord.from_core(raw["turn"], []),
            score=raw["score"],
            search_score=raw["search_score"],
            shared_documents=list(raw["shared_documents"]),
            recency=raw["recency"],
            staleness_penalty=raw["staleness_penalty"],
            familiarity_bonus=raw["familiarity_bonus"],
            procedures=[ContextProcedure.from_core(p) for p in raw["procedures"]],
            text=raw["text"],
            tokens=raw["tokens"],
        )

    @property
    def changed_documents(self) -> list[DocumentSignal]:
        """The documents of this turn that changed after it saw them."""
        return [d for p in self.procedures for d in p.documents if d.changed_since]


@dataclass(frozen=True, slots=True)
class ContextResult(Record):
    """The packed context: `items` best first, `text` ready for the prompt (empty
    when nothing fits), `token_count` its estimated tokens (never above the budget)
    and `omitted` the candidates left out by the budget or the limit."""

    items: list[ContextItem]
    text: str
    token_count: int
    omitted: int

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> ContextResult:
        """Build from the native `retrieve_context` dict."""
        return cls(
            items=[ContextItem.from_core(i) for i in raw["items"]],
            text=raw["text"],
            token_count=raw["token_count"],
            omitted=raw["omitted"],
        )
