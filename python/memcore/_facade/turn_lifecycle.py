"""The turn lifecycle for thin clients (docs/guide.md, "Conversations and documents"):
`memory_before_turn` assembles a turn's input with recalled facts and past context,
`memory_after_turn` records the finished turn exactly once, `memory_run_maintenance` and
`memory_list_dir_with_abstract` keep and describe the store.

Item parsing, block packing and the in-flight guard need no engine and live in
`memcore._facade.lifecycle`; recording and retrieval are `ConversationAPI`'s.

Token budgets are charged with the core's estimate, ceil(characters / 4)
(:func:`estimate_tokens`), the same the core packs context with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memcore._core import Engine
from memcore._facade import lifecycle
from memcore._facade.base import Vector
from memcore._facade.conversation import ConversationAPI, _count, _sequence, _tag
from memcore._facade.conversation_handles import build_procedures
from memcore._time import iso, optional_datetime
from memcore.code.overview import with_projects
from memcore.errors import EmbeddingError, invalid


def estimate_tokens(text: str) -> int:
    """The tokens a budget is charged for `text`: the core's ceil(characters / 4)."""
    return Engine.estimate_tokens(text)


class TurnLifecycleAPI(ConversationAPI):
    """The four lifecycle calls of a thin client, over the interaction log."""

    def memory_before_turn(
        self,
        session_id: str,
        turn_id: str,
        current_input: str | Sequence[Mapping[str, Any]],
        *,
        max_input_tok: int = 120_000,
        memory_budget: int = 2000,
        recall_limit: int = 20,
        user_id: str | None = None,
        documents: Sequence[Any] | None = None,
        namespace: str | None = None,
    ) -> lifecycle.BeforeTurnResult:
        """Prepare a turn's input: recalled facts and past context, as one item put first.

        The memory block is a `{"role": "system", "content": text}` item prepended to
        the input; it holds up to half its budget of facts (hybrid recall on the user
        message) and past turns of other sessions (`retrieve_context`) in the rest. Its
        budget is `memory_budget`, lowered to what `max_input_tok` leaves after the
        input (estimated at chars / 4). Nothing is recorded. If the embedding model is
        still loading, retrieval uses keywords and documents only.

        Args:
            session_id: The conversation; its own turns are never recalled.
            turn_id: The turn being prepared (for symmetry with memory_after_turn).
            current_input: The user message, or the input items (`{role, content}`).
            max_input_tok: The model's input budget in tokens.
            memory_budget: Most tokens the memory block may take.
            recall_limit: Most facts considered (1-50).
            user_id: Accepted for the contract; namespaces are the isolation boundary.
            documents: Paths or URLs the session works on (hypernode lookup).
            namespace: Override the instance's namespace.

        Returns:
            `{input_items, recall_fact_ids, context_token_count}`.
        """
        del user_id  # isolation is by namespace: map users to namespaces
        _tag("session_id", session_id)
        _tag("turn_id", turn_id)
        items = lifecycle.as_items(current_input, "current_input")
        ns = self._ns(namespace)
        resolver = self._document_resolver()
        docs = [
            resolver.canonical(d, "documents", on_disk=False)
            for d in _sequence(documents, "documents")
        ]
        query = lifecycle.query_text(items)
        estimate = estimate_tokens
        room = _count("max_input_tok", max_input_tok) - sum(
            estimate(lifecycle.item_text(i)) for i in items
        )
        budget = min(_count("memory_budget", memory_budget), room)
        if budget < lifecycle.MIN_BLOCK_TOKENS or not (query.strip() or docs):
            return {"input_items": items, "recall_fact_ids": [], "context_token_count": 0}
        q = self._lifecycle_vector(query)
        facts_text, fact_ids = "", list[str]()
        if query.strip():
            hits = self._engine.recall(ns, query, q, limit=_count("recall_limit", recall_limit))
            facts = [(h.memory.id, h.memory.content) for h in hits]
            facts_text, fact_ids = lifecycle.pack_facts(facts, budget // 2, estimate)
        # The blocks are joined by a newline: charge it so the sum stays within budget.
        left = budget - (estimate(facts_text) + 1 if facts_text else 0)
        context_text = ""
        if left >= lifecycle.MIN_BLOCK_TOKENS:
            context_text = self._engine.retrieve_context(
                ns, query, q, conversation_id=session_id, documents=docs, token_budget=left
            ).text
        block = "\n".join(t for t in (facts_text, context_text) if t)
        if not block:
            return {"input_items": items, "recall_fact_ids": [], "context_token_count": 0}
        return {
            "input_items": [{"role": lifecycle.MEMORY_ROLE, "content": block}, *items],
            "recall_fact_ids": fact_ids,
            "context_token_count": estimate(block),
        }

    def memory_after_turn(
        self,
        session_id: str,
        turn_id: str,
        input_items: str | Sequence[Mapping[str, Any]],
        output_items: str | Sequence[Mapping[str, Any]],
        *,
        user_id: str | None = None,
        namespace: str | None = None,
    ) -> lifecycle.AfterTurnResult:
        """Record a finished turn exactly once per (namespace, session_id, turn_id).

        The user text is the last user message of `input_items` (the memory block is
        skipped), the agent text the assistant messages of `output_items`, and its
        tool calls become procedures. Texts over the core's 100,000-byte limit are
        truncated rather than refused, so a long paste never loses the turn.

        Returns:
            `{ok: True, created}`; `created` is False when the turn was already stored.

        Raises:
            ResourceBusyError: The same turn is being recorded right now (retryable).
            InvalidParameterError: `input_items` holds no user message.
        """
        del user_id  # isolation is by namespace: map users to namespaces
        _tag("session_id", session_id)
        _tag("turn_id", turn_id)
        inputs = lifecycle.as_items(input_items, "input_items")
        outputs = (
            [{"role": "assistant", "content": output_items}]
            if isinstance(output_items, str)
            else lifecycle.as_items(output_items, "output_items")
        )
        user = lifecycle.user_text(inputs)
        if not user.strip():
            raise invalid("input_items", "input_items holds no user message to record.")
        ns = self._ns(namespace)
        answer = lifecycle.agent_text(outputs)
        procedures = build_procedures(
            self._document_resolver(), lifecycle.tool_calls(outputs), self._content_limit()
        )
        with lifecycle.IN_FLIGHT.claim((self._engine.path, ns, session_id, turn_id)):
            result = self._record(
                ns,
                session_id,
                turn_id,
                lifecycle.fit_bytes(user),
                agent_text=lifecycle.fit_bytes(answer) if answer else None,
                thread_id=None,
                procedures=procedures,
                vector=None,
                at=None,
            )
        return {"ok": True, "created": result.created}

    def memory_run_maintenance(
        self,
        *,
        episodic_ttl_days: float | None = None,
        archive_after_days: float | None = None,
        force_compact: bool = False,
        namespace: str | None = None,
    ) -> dict[str, Any]:
        """Maintenance: expiry becomes invalidation (history keeps it), the episodic
        retention tier, duplicate version contents stored once, conversations untouched
        and unretrieved for `archive_after_days` archived, index compaction, SQLite
        optimize.

        Returns:
            `{ok: True, memories_expired, versions_deduplicated, conversations_archived,
            vectors_rebuilt, tombstones_dropped, text_merged}`.
        """
        if not isinstance(force_compact, bool):
            raise invalid("force_compact", "force_compact must be True or False.")
        counters = self._engine.run_maintenance(
            self._ns(namespace),
            episodic_ttl_days=_days("episodic_ttl_days", episodic_ttl_days),
            archive_after_days=_days("archive_after_days", archive_after_days),
            force_compact=force_compact,
        )
        return {"ok": True, **counters.to_dict()}

    def memory_list_dir_with_abstract(
        self,
        path: str = "",
        depth: int = 2,
        limit: int = 200,
        *,
        namespace: str | None = None,
        all_namespaces: bool = False,
    ) -> dict[str, list[dict[str, Any]]]:
        """What the store holds: namespaces, threads, conversations and indexed code
        projects with counts, last update and an abstract made without an LLM (first
        request and top terms; for a project its files, languages and path terms).

        Args:
            path: Only entries at or below this path ("" for all), e.g. "/default" or
                "/default/conversations" or "/default/projects".
            depth: 1 lists namespaces only; 2 (up to 8) adds threads, conversations and
                projects.
            limit: Most entries (1-1000).
            namespace: The namespace listed (default: the instance's).
            all_namespaces: List every namespace instead.

        Returns:
            `{summaries: [{path, kind, count, updated_at, abstract}]}`: per namespace its
            own entry, then its threads, conversations and projects (`count` is memories,
            turns or chunks).
        """
        prefix = lifecycle.dir_prefix(path)
        wanted = _count("limit", limit)
        if wanted > 1000:
            raise invalid("limit", f"limit must be between 1 and 1000, got {limit}.")
        levels = _count("depth", depth)
        own = self._ns(namespace)
        requested = 1000 if prefix else wanted
        entries = self._engine.overview(
            None if all_namespaces else own, depth=levels, limit=requested
        )
        # The core does not know code projects; they come from their status rows.
        listed = with_projects(
            self._engine, entries, own, depth=levels, complete=len(entries) < requested
        )
        kept = [e for e in listed if lifecycle.under(e["path"], prefix)][:wanted]
        return {
            "summaries": [
                {
                    "path": e["path"],
                    "kind": e["kind"],
                    "count": e["count"],
                    "updated_at": iso(optional_datetime(e["updated_at"])),
                    "abstract": e["abstract"],
                }
                for e in kept
            ]
        }

    # -- internals -----------------------------------------------------------------------

    def _lifecycle_vector(self, query: str) -> Vector | None:
        """The query vector for memory_before_turn, which never fails a turn over it."""
        if not query.strip():
            return None
        try:
            vector: Vector | None = self._optional_query_vector(query)
        except EmbeddingError:
            return None
        return vector


def _days(field: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise invalid(field, f"{field} must be a number of days, got {value!r}.")
    return float(value)
