"""Search: vector, BM25, hybrid recall, and the supersede hints on store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from memcore import _core
from memcore._facade.base import FacadeBase, VectorLike, as_vector
from memcore._facade.updates import updated_facts
from memcore._time import TimeLike, optional_micros
from memcore.errors import invalid
from memcore.records.facts import MemoryRecord, SearchHit

#: At most this many similar memories are reported on store.
SIMILAR_LIMIT = 5
#: The nearest memories (by cosine, above the rule's floor) that the update rule reads on
#: store: one vector search, made by the same engine call as the store.
SIMILAR_CANDIDATES = 30
#: Named weight presets (vector, BM25, PPR), defined in the core's `fusion.rs`: "default"
#: is measured by the quality harness (`benches/results/quality-experiments.md`),
#: `recall(..., weights="design")` ranks as the first design did.
WEIGHT_PRESETS: dict[str, tuple[float, float, float]] = {
    "default": _core.DEFAULT_WEIGHTS,
    "design": _core.DESIGN_WEIGHTS,
}

FusionModeName = Literal["zscore", "rrf"]


def action_for(new_id: str, similar: Sequence[MemoryRecord]) -> str | None:
    """The exact call to make when a new memory may replace older ones."""
    if not similar:
        return None
    first = similar[0].id
    text = (
        f'Call supersede_memory("{first}", "{new_id}") to mark the old memory as outdated'
        " if the new one replaces it."
    )
    if len(similar) > 1:
        others = ", ".join(m.id for m in similar[1:])
        text += f" Also review {others}."
    return text


def similar_to_update(
    content: str, candidates: Sequence[tuple[MemoryRecord, float]]
) -> list[MemoryRecord]:
    """The candidates (closest first, with their cosines) that `content` looks like an
    update of, at most `SIMILAR_LIMIT` (the rule is in memcore/_facade/updates.py)."""
    picked = updated_facts(content, [(m.content, cosine) for m, cosine in candidates])
    return [candidates[i][0] for i in picked[:SIMILAR_LIMIT]]


class SearchAPI(FacadeBase):
    """Searches over memories."""

    def search(
        self,
        query: str | None = None,
        limit: int = 10,
        *,
        vector: VectorLike | None = None,
        thread_id: str | None = None,
        as_of: TimeLike | None = None,
        include_invalid: bool = False,
        namespace: str | None = None,
    ) -> list[SearchHit]:
        """Semantic (vector) search over memories.

        Args:
            query: Natural-language query (embedded with the query prefix).
            limit: 1-50 results.
            vector: A precomputed query embedding instead of `query`.
            thread_id: Only this thread's memories.
            as_of: See the memories valid at that time.
            include_invalid: Also return invalidated and superseded memories.
            namespace: Override the instance's namespace.

        Raises:
            EmbeddingError: No embedding model, or it is not ready.
        """
        q = self._query_vector(query, vector)
        return self._engine.search_vector(
            self._ns(namespace),
            q,
            limit=limit,
            thread_id=thread_id,
            as_of=optional_micros(as_of, "as_of"),
            valid_only=not include_invalid,
        )

    def search_text(
        self,
        query: str,
        limit: int = 10,
        *,
        thread_id: str | None = None,
        as_of: TimeLike | None = None,
        include_invalid: bool = False,
        namespace: str | None = None,
    ) -> list[SearchHit]:
        """Keyword (BM25) search over memories; works without an embedding model.

        The query's stop words ("what", "is", "the", ...) are left out unless it has no
        other words, and a memory holding two of its words side by side ranks above one
        holding them apart (docs/retrieval.md)."""
        return self._engine.search_text(
            self._ns(namespace),
            _query_text(query),
            limit=limit,
            thread_id=thread_id,
            as_of=optional_micros(as_of, "as_of"),
            valid_only=not include_invalid,
        )

    def recall(
        self,
        query: str,
        limit: int = 10,
        *,
        vector: VectorLike | None = None,
        thread_id: str | None = None,
        as_of: TimeLike | None = None,
        include_invalid: bool = False,
        weights: tuple[float, float, float] | str = "default",
        mode: FusionModeName = "zscore",
        thread_prior: float | None = None,
        max_per_thread: int | None = None,
        question_penalty: float | None = None,
        namespace: str | None = None,
        semantic: bool = True,
    ) -> list[SearchHit]:
        """Hybrid search: vector + BM25 (+ graph PPR), z-score fused.

        Falls back to BM25 and the graph alone when no embedding model is configured
        or it failed to load. A model still loading is waited for (``embedding_wait``);
        EmbeddingError is raised only if it is still loading after that.

        Args:
            query: Natural-language query.
            limit: 1-50 results.
            vector: A precomputed query embedding.
            weights: (vector, bm25, ppr) weights, or a preset name: "default"
                (``_core.DEFAULT_WEIGHTS``, measured on conversational memory: vector and
                BM25 weigh the same) or "design" (``_core.DESIGN_WEIGHTS``, the first
                design's). A signal no candidate has (no graph) gives its share to the
                others.
            mode: "zscore" (weighted z-scores) or "rrf" (reciprocal rank fusion).
            thread_prior: How much an episodic memory's thread counts beside its own
                signals (``_core.DEFAULT_THREAD_PRIOR`` when None; 0 turns it off):
                episodes of a thread whose memories, read together, match the query rank
                higher. A memory is still only found by its own text, vector and
                entities; facts (semantic, procedural) and memories without a
                ``thread_id`` are neither lifted nor lowered (docs/retrieval.md).
            max_per_thread: Spread the list across threads: at most this many hits of
                one thread come before another thread's next best. None ranks by score
                alone, except a question asking for a list ("What books has she
                read?"), which spreads at ``_core.LIST_SPREAD`` per thread; a cap at or
                past ``limit`` ranks any question by score alone. Nothing is dropped:
                once every other thread is used up, the held-back hits follow in their
                order. Memories without a ``thread_id`` are never held back.
            question_penalty: How far a memory made only of questions falls, in z-score
                units (``_core.DEFAULT_QUESTION_PENALTY`` when None; 0 turns it off); one
                whose sentences half ask falls half as far. A question is seldom the
                memory that answers one ("When did you go camping?" for "when did Melanie
                go camping?"). "zscore" mode only (docs/retrieval.md).
            semantic: False ranks by keywords and the graph without embedding the
                query (what the MCP server does while the model is unavailable).
        """
        text = _query_text(query)
        cap = _cap(max_per_thread)
        q: Any = None
        if vector is not None:
            q = as_vector(vector)
        elif semantic:
            q = self._optional_query_vector(text)
        return self._engine.recall(
            self._ns(namespace),
            text,
            q,
            limit=limit,
            thread_id=thread_id,
            as_of=optional_micros(as_of, "as_of"),
            valid_only=not include_invalid,
            weights=_weights(weights),
            mode=mode,
            thread_prior=thread_prior,
            max_per_thread=cap,
            question_penalty=question_penalty,
        )

    def search_memories(
        self,
        query: str,
        limit: int = 5,
        *,
        vector: VectorLike | None = None,
        namespace: str | None = None,
        semantic: bool = True,
    ) -> list[SearchHit]:
        """The agent-facing search: hybrid, 1-20 results, superseded memories filtered
        (``semantic`` as in :meth:`recall`)."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 20:
            raise invalid("limit", f"limit must be an integer from 1 to 20, got {limit!r}.")
        return self.recall(query, limit, vector=vector, namespace=namespace, semantic=semantic)

    def _optional_query_vector(self, text: str) -> Any:
        """The query embedding, or None when embeddings are off or failed."""
        service = self._embeddings
        if service is None or service.status == "error":
            return None
        return service.embed_query(text)


def _weights(weights: object) -> tuple[float, float, float]:
    """A weights tuple, or a preset's by name."""
    if isinstance(weights, str):
        preset = WEIGHT_PRESETS.get(weights)
        if preset is None:
            names = ", ".join(f'"{n}"' for n in WEIGHT_PRESETS)
            raise invalid("weights", f"Unknown weights preset {weights!r}; use {names} or a tuple.")
        return preset
    return weights  # type: ignore[return-value]  # the core checks the tuple


def _cap(max_per_thread: object) -> int | None:
    """``max_per_thread`` checked, and bounded so it fits the core's integer (a cap past
    the most results a search returns never changes a list)."""
    if max_per_thread is None:
        return None
    if (
        isinstance(max_per_thread, bool)
        or not isinstance(max_per_thread, int)
        or max_per_thread < 1
    ):
        raise invalid(
            "max_per_thread",
            f"max_per_thread must be a positive integer or None, got {max_per_thread!r}.",
        )
    return min(max_per_thread, _core.MAX_RESULTS)


def _query_text(query: object) -> str:
    if not isinstance(query, str) or not query.strip():
        raise invalid("query", "query must be a non-empty string.")
    return query
