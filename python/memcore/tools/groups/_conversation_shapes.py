"""The interaction log on the wire: compact forms of turns, document reads and histories
and retrieved context for the conversation group.

The facade's records carry everything (internal ids, namespaces, whole texts twice over);
a model needs the ids it can pass back, the signals that explain a result, and each text
once. ``retrieve_context`` puts the past turns' texts in its prompt-ready ``text``, so its
structured items keep only a short anchor of the user request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memcore._time import iso

if TYPE_CHECKING:
    from memcore.records.conversation import (
        ContextItem,
        ContextResult,
        DocumentHistory,
        DocumentRead,
        DocumentVersion,
        TurnResult,
    )

#: Characters of a user request quoted in listings (the full text is in the turn).
ANCHOR_CHARS = 200
#: Characters of document content `read_document` returns at most.
MAX_CONTENT_CHARS = 200_000


def _anchor(text: str) -> str:
    return text if len(text) <= ANCHOR_CHARS else text[: ANCHOR_CHARS - 1] + "…"


def version_out(version: DocumentVersion) -> dict[str, Any]:
    """A document version a procedure touched."""
    return {
        "path": version.path,
        "version": version.version,
        "provenance": version.provenance,
        "content_hash": version.content_hash,
    }


def turn_out(result: TurnResult) -> dict[str, Any]:
    """What ``record_turn`` stored (or found stored)."""
    turn = result.turn
    return {
        "created": result.created,
        "embedded": result.embedded,
        "conversation_id": turn.conversation_id,
        "turn_id": turn.turn_id,
        "turn_index": turn.turn_index,
        "created_at": iso(turn.created_at),
        "procedures": [
            {"tool": p.tool, "documents": [version_out(v) for v in p.documents]}
            for p in turn.procedures
        ],
    }


def read_out(read: DocumentRead, *, include_content: bool) -> dict[str, Any]:
    """What reading a document now would record."""
    out = read.to_dict()
    content = out.pop("content", None)
    if include_content:
        truncated = isinstance(content, str) and len(content) > MAX_CONTENT_CHARS
        out["content"] = content[:MAX_CONTENT_CHARS] if truncated else content
        out["content_truncated"] = truncated
    return out


def history_out(history: DocumentHistory) -> dict[str, Any]:
    """A document's versions, oldest first, with the turns that touched each."""
    return {
        "path": history.path,
        "volatility": history.volatility,
        "familiarity": history.familiarity,
        "versions": [
            {
                "version": v.version,
                "content_hash": v.content_hash,
                "size": v.size,
                "provenance": v.provenance,
                "created_at": iso(v.created_at),
                "has_content": v.has_content,
                "touched_by": [
                    {
                        "conversation_id": t.conversation_id,
                        "turn_id": t.turn_id,
                        "tool": t.tool,
                        "created_at": iso(t.created_at),
                        "user_text": _anchor(t.user_text),
                    }
                    for t in v.touched_by
                ],
            }
            for v in history.versions
        ],
    }


def _item_out(item: ContextItem) -> dict[str, Any]:
    turn = item.turn
    return {
        "conversation_id": turn.conversation_id,
        "turn_id": turn.turn_id,
        "turn_index": turn.turn_index,
        "created_at": iso(turn.created_at),
        "user_text": _anchor(turn.user_text),
        "score": item.score,
        "search_score": item.search_score,
        "shared_documents": item.shared_documents,
        "recency": item.recency,
        "staleness_penalty": item.staleness_penalty,
        "familiarity_bonus": item.familiarity_bonus,
        "procedures": [
            {
                "tool": p.tool,
                "documents": [
                    {
                        "path": d.version.path,
                        "version": d.version.version,
                        "latest_version": d.latest_version,
                        "staleness": d.staleness,
                        "external_since": d.external_since,
                    }
                    for d in p.documents
                ],
            }
            for p in item.procedures
        ],
    }


def context_out(result: ContextResult) -> dict[str, Any]:
    """The packed context: the prompt-ready text first, then the items behind it."""
    return {
        "text": result.text,
        "token_count": result.token_count,
        "omitted": result.omitted,
        "items": [_item_out(item) for item in result.items],
    }
