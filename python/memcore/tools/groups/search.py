"""The search group: vector, keyword and hybrid search over memories (docs/retrieval.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memcore.tools import schema
from memcore.tools.groups._shared import (
    MAX_SEARCH_RESULTS,
    as_of,
    hit_out,
    include_invalid,
    keywords_only_reason,
    search_limit,
    thread_id,
    with_degraded,
)
from memcore.tools.registry import ToolCall, ToolRegistry, ToolSpec

if TYPE_CHECKING:
    from memcore.memory import Memory
    from memcore.records.facts import SearchHit

_Search = Callable[..., "list[SearchHit]"]


def _run(pick: Callable[[Memory], _Search]) -> Callable[[ToolCall], dict[str, Any]]:
    def handler(call: ToolCall) -> dict[str, Any]:
        args = call.arguments
        hits = pick(call.memory)(
            args["query"],
            args["limit"],
            include_invalid=args["include_invalid"],
            namespace=call.namespace,
            **{name: args[name] for name in ("thread_id", "as_of") if name in args},
        )
        return {"results": [{"kind": "memory", **hit_out(hit)} for hit in hits]}

    return handler


def recall(call: ToolCall) -> dict[str, Any]:
    """Hybrid recall; on keywords and the graph alone (and saying so) without a model."""
    args = call.arguments
    memory = call.memory
    reason = keywords_only_reason(memory)
    hits = memory.recall(
        args["query"],
        args["limit"],
        include_invalid=args["include_invalid"],
        namespace=call.namespace,
        semantic=reason is None,
        **{name: args[name] for name in ("thread_id", "as_of", "max_per_thread") if name in args},
    )
    results = [{"kind": "memory", **hit_out(hit)} for hit in hits]
    return with_degraded({"results": results}, reason)


def _arguments(query_help: str, **extra: schema.Schema) -> schema.Schema:
    return schema.arguments(
        {
            "query": schema.string(query_help, min_length=1),
            "limit": search_limit(),
            "thread_id": thread_id(),
            "as_of": as_of(),
            "include_invalid": include_invalid(),
            **extra,
        },
        required=["query"],
    )


_MAX_PER_THREAD = schema.integer(
    "Spread the results across threads: at most this many from one thread before another "
    "thread's next best (left out: by relevance alone, except a question asking for a list, "
    "such as 'what books has she read', which spreads at 4 per thread). Nothing is dropped; "
    "held-back results follow once the other threads run out.",
    minimum=1,
    maximum=MAX_SEARCH_RESULTS,
)


_RESULTS = (
    "Returns {results}, best first: each is a memory with kind, relevance_score (0-1) and "
    "scores {vector, bm25, ppr, fused} explaining its rank."
)


def register(registry: ToolRegistry) -> None:
    """Add the search group."""
    registry.add(
        ToolSpec(
            name="search",
            group="search",
            title="Semantic search",
            description=(
                "Semantic (vector) search: finds memories that mean the same as the query even "
                "with different words. Use it for paraphrased or conceptual questions. Needs "
                "the embedding model: waits a few seconds for one still loading, then answers "
                "EMBEDDING_ERROR (recall and search_text work without it). "
                f"{_RESULTS}"
            ),
            input_schema=_arguments("What to look for, in natural language."),
            handler=_run(lambda memory: memory.search),
            read_only=True,
        )
    )
    registry.add(
        ToolSpec(
            name="search_text",
            group="search",
            title="Keyword search",
            description=(
                "Keyword (BM25) search with stemming: finds memories containing the query's "
                "words. Use it for names, identifiers, exact terms and codes; it works without "
                f"the embedding model. {_RESULTS}"
            ),
            input_schema=_arguments("Keywords to match."),
            handler=_run(lambda memory: memory.search_text),
            read_only=True,
        )
    )
    registry.add(
        ToolSpec(
            name="recall",
            group="search",
            title="Recall",
            description=(
                "The best general-purpose retrieval: hybrid search fusing semantic similarity, "
                "keywords and the knowledge graph (Personalized PageRank over entities the "
                "query and the best candidates mention). Use it by default to bring back what "
                "you know about a topic, person or project; as_of looks at the past. When the "
                "embedding model is off, failed, or still loading after a few seconds' wait, "
                "it ranks by keywords and the graph alone and the result says so in "
                f"`degraded`. {_RESULTS}"
            ),
            input_schema=_arguments(
                "The topic, question or situation to recall memories for.",
                max_per_thread=_MAX_PER_THREAD,
            ),
            handler=recall,
            read_only=True,
        )
    )
