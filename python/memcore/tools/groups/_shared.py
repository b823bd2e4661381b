"""Argument schemas and result shapes the tool groups share."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from memcore.tools import schema

if TYPE_CHECKING:
    from memcore.memory import Memory
    from memcore.records.facts import MemoryRecord, SearchHit

MEMORY_TYPES = ("episodic", "semantic", "procedural")
SOURCES = ("explicit", "extracted", "conversation")
#: Most results one search returns (docs/retrieval.md).
MAX_SEARCH_RESULTS = 50
#: Most memories one listing page returns (the core's limit).
MAX_PAGE = 1000
#: How a hybrid search behaves without a usable embedding model (for tool descriptions).
HYBRID_WITHOUT_MODEL = (
    " Without an embedding model (off or failed) it ranks by keywords and the graph; a "
    "model still loading is waited for a few seconds, then the call answers EMBEDDING_ERROR."
)
#: How a tool that embeds what it saves behaves without a usable model.
SAVED_WITHOUT_MODEL = (
    " What it saves is embedded: a model still loading is waited for a few seconds, then "
    "the call answers EMBEDDING_ERROR and saves nothing; without a model (off or failed) "
    "it saves without vectors (found by keywords and the graph)."
)


def memory_id(description: str = 'The memory\'s id ("mem_…").') -> schema.Schema:
    """A memory id argument."""
    return schema.string(description, min_length=1, max_length=200)


def thread_id() -> schema.Schema:
    """The optional thread filter every read tool takes."""
    return schema.string(
        "Only memories from this conversation or agent thread.", min_length=1, max_length=200
    )


def as_of(default: str = "now") -> schema.Schema:
    """The optional point in (valid) time a search or listing looks at.

    Args:
        default: What the tool shows without it, for the description.
    """
    return schema.string(
        "See memory as it was at this time (ISO 8601, e.g. 2026-01-31T12:00:00Z): facts valid "
        f"then, including ones since superseded or invalidated. Default: {default}.",
        date_time=True,
    )


def include_invalid() -> schema.Schema:
    """The switch that also returns invalidated and superseded memories."""
    return schema.boolean(
        "Also return memories that were invalidated or superseded.", default=False
    )


def search_limit(default: int = 10) -> schema.Schema:
    """How many search results to return."""
    return schema.integer(
        "Maximum number of results.", minimum=1, maximum=MAX_SEARCH_RESULTS, default=default
    )


def page(default_limit: int, maximum: int = MAX_PAGE) -> dict[str, schema.Schema]:
    """``limit`` and ``offset`` of a newest-first listing."""
    return {
        "limit": schema.integer(
            "Maximum number of memories.", minimum=1, maximum=maximum, default=default_limit
        ),
        "offset": schema.integer(
            "Memories to skip (for the next page, pass the previous next_offset).",
            minimum=0,
            maximum=2**53,
            default=0,
        ),
    }


def memory_out(record: MemoryRecord) -> dict[str, Any]:
    """A memory for the model: every field that has a value (never the embedding)."""
    return {key: value for key, value in record.to_dict().items() if value is not None}


def memories_out(records: Iterable[MemoryRecord]) -> list[dict[str, Any]]:
    """Several memories for the model."""
    return [memory_out(record) for record in records]


def hit_out(hit: SearchHit) -> dict[str, Any]:
    """A search hit: the memory, its ``relevance_score`` (0-1) and per-signal ``scores``."""
    return {
        **memory_out(hit.memory),
        "relevance_score": hit.relevance_score,
        "scores": hit.scores.to_dict(),
    }


def optional(arguments: Mapping[str, Any], *names: str) -> dict[str, Any]:
    """The named arguments the caller gave, as keyword arguments for the facade."""
    return {name: arguments[name] for name in names if name in arguments}


def keywords_only_reason(memory: Memory) -> str | None:
    """Why a hybrid search must rank by keywords and the graph alone, or None when the
    model can embed the query.

    A model still loading is waited for first, as long as the store's ``embedding_wait``
    (the server's ``--embedding-wait``), so only a model that is absent, failed, or still
    loading after that wait costs the semantic signal. The reason goes into the result as
    ``degraded`` so the agent knows the ranking is lexical.
    """
    service = memory.embeddings
    if service is None:
        return "keywords only: no embedding model"
    if service.status == "loading":
        service.wait_ready(service.wait)
    status = service.status
    if status == "ready":
        return None
    if status == "loading":
        return "keywords only: embedding model loading"
    return f"keywords only: embedding model failed: {service.error}"


def with_degraded(result: dict[str, Any], reason: str | None) -> dict[str, Any]:
    """``result`` with ``degraded`` set when the search ran on keywords only."""
    return result if reason is None else {**result, "degraded": reason}
