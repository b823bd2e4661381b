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

import json
from collections.abc import Mapping, Sequence
from typing import Any

from memcore._core import Engine
from memcore._facade import lifecycle
from memcore._facade.base import Vector
from memcore._facade.compaction import MIN_ROOM, compact_items, item_tokens
from memcore._facade.conversation import ConversationAPI, _count, _sequence, _tag
from memcore._facade.conversation_handles import build_procedures
from memcore._facade.fact_capture import FactCaptureAPI
from memcore._time import (
    TimeLike,
    from_micros,
    iso,
    now_micros,
    optional_datetime,
    optional_micros,
    to_micros,
)
from memcore.code.overview import with_projects
from memcore.errors import EmbeddingError, invalid


def estimate_tokens(text: str) -> int:
    """The tokens a budget is charged for `text`: the core's ceil(characters / 4)."""
    return Engine.estimate_tokens(text)


class TurnLifecycleAPI(ConversationAPI, FactCaptureAPI):
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
        base_instructions: str | None = None,
        user_id: str | None = None,
        documents: Sequence[Any] | None = None,
        namespace: str | None = None,
    ) -> lifecycle.BeforeTurnResult:
        """Prepare a turn's input: recalled facts and past context as one item put first,
        and the session compacted when it no longer fits.

        The memory block is a `{"role": "system", "content": text}` item prepended to
        the input; it holds up to half its budget of facts (hybrid recall on the user
        message) and past turns of other sessions (`retrieve_context`) in the rest. Its
        budget is `memory_budget`, lowered so that the input keeps room. When the
        instructions, the block and the items exceed `compact_threshold` of
        `max_input_tok`, the latest `recent_context_items` items stay verbatim and the
        older ones become one extractive digest (memcore/_facade/compaction.py), so the
        whole fits; the recorded turns stay whole in the store. Nothing is recorded. If
        the embedding model is still loading, retrieval uses keywords and documents only.

        Args:
            session_id: The conversation; its own turns are never recalled.
            turn_id: The turn being prepared (for symmetry with memory_after_turn).
            current_input: The user message, or the input items (`{role, content}`).
            max_input_tok: The model's input budget in tokens.
            memory_budget: Most tokens the memory block may take.
            recall_limit: Most facts considered (1-50).
            base_instructions: The caller's system instructions, counted against
                `max_input_tok` (not returned).
            user_id: Accepted for the contract; namespaces are the isolation boundary.
            documents: Paths or URLs the session works on (hypernode lookup).
            namespace: Override the instance's namespace.

        Returns:
            `{input_items, recall_fact_ids, recall_turns, context_token_count,
            memory_token_count, compacted}`: `recall_turns` are the past turns the block
            shows (`{session_id, turn_id}`, best first), `context_token_count` is what the
            whole input costs
            (instructions, memory block and items, estimated as the core does),
            `memory_token_count` the memory block's share.
        """
        with self._turn_metrics.counting("before_turn"):
            return self._before_turn(
                session_id,
                turn_id,
                current_input,
                max_input_tok,
                memory_budget,
                recall_limit,
                base_instructions,
                documents,
                namespace,
            )

    def _before_turn(
        self,
        session_id: str,
        turn_id: str,
        current_input: str | Sequence[Mapping[str, Any]],
        max_input_tok: int,
        memory_budget: int,
        recall_limit: int,
        base_instructions: str | None,
        documents: Sequence[Any] | None,
        namespace: str | None,
    ) -> lifecycle.BeforeTurnResult:
        _tag("session_id", session_id)
        _tag("turn_id", turn_id)
        items = lifecycle.as_items(current_input, "current_input")
        if base_instructions is not None and not isinstance(base_instructions, str):
            raise invalid("base_instructions", "base_instructions must be a string.")
        ns = self._ns(namespace)
        resolver = self._document_resolver()
        docs = [
            resolver.canonical(d, "documents", on_disk=False)
            for d in _sequence(documents, "documents")
        ]
        limit = _count("max_input_tok", max_input_tok)
        settings = self._turn_settings
        # What the output may cost before compaction is due, less what is fixed.
        target = int(settings.compact_threshold * limit)
        fixed = estimate_tokens(base_instructions) if base_instructions else 0
        query = lifecycle.query_text(items)
        # The memory block never takes the room the items need at the least.
        budget = min(_count("memory_budget", memory_budget), target - fixed - MIN_ROOM)
        block = lifecycle.MemoryBlock()
        if budget >= lifecycle.MIN_BLOCK_TOKENS and (query.strip() or docs):
            block = self._memory_block(
                ns, session_id, query, docs, budget, _count("recall_limit", recall_limit)
            )
        head = [{"role": lifecycle.MEMORY_ROLE, "content": block.text}] if block.text else []
        block_tokens = sum(item_tokens(i, estimate_tokens) for i in head)
        items_tokens = sum(item_tokens(i, estimate_tokens) for i in items)
        compacted = fixed + block_tokens + items_tokens > target
        if compacted:
            fitted = compact_items(
                items,
                room=max(1, target - fixed - block_tokens),
                recent=settings.recent_context_items,
                query=query,
                estimate=estimate_tokens,
            )
            items, items_tokens = fitted.items, fitted.tokens
            self._turn_metrics.compacted()
        return {
            "input_items": [*head, *items],
            "recall_fact_ids": block.fact_ids,
            "recall_turns": block.turns,
            "context_token_count": fixed + block_tokens + items_tokens,
            "memory_token_count": block_tokens,
            "compacted": compacted,
        }

    def _memory_block(
        self,
        namespace: str,
        session_id: str,
        query: str,
        documents: list[str],
        budget: int,
        recall_limit: int,
    ) -> lifecycle.MemoryBlock:
        """The memory block within `budget` tokens, with the facts and turns it holds.

        Past turns come first, ranked by relevance alone (no recency decay: an agent's
        memory of months ago matters as much as last week's, and on LoCoMo a 30-day
        half-life lost 45 points of R@10, benches/results/quality-experiments.md); then
        the facts, less those whose own turn is already shown (they would say it twice)
        unless they replaced an older fact.
        """
        estimate = estimate_tokens
        q = self._lifecycle_vector(query)
        facts: list[tuple[str, str]] = []
        sources: dict[str, tuple[str, str]] = {}
        if query.strip():
            for hit in self._engine.recall(namespace, query, q, limit=recall_limit):
                facts.append((hit.memory.id, hit.memory.content))
                # A fact that replaced another says what holds now: kept even beside its
                # turn, which shows no more than the older turns around it.
                if hit.memory.supersedes is None:
                    sources[hit.memory.id] = _provenance(hit.memory.metadata)
        # Half the budget is the facts' at most; the context gets the rest.
        facts_text, fact_ids = lifecycle.pack_facts(facts, budget // 2, estimate)
        left = budget - (estimate(facts_text) + 1 if facts_text else 0)
        context_text, turns = "", list[lifecycle.RecalledTurn]()
        if left >= lifecycle.MIN_BLOCK_TOKENS:
            context = self._engine.retrieve_context(
                namespace,
                query,
                q,
                conversation_id=session_id,
                documents=documents,
                token_budget=left,
                recency_half_life_days=lifecycle.CONTEXT_HALF_LIFE_DAYS,
            )
            context_text = context.text
            turns = [
                {"session_id": i.turn.conversation_id, "turn_id": i.turn.turn_id}
                for i in context.items
            ]
        shown = {(t["session_id"], t["turn_id"]) for t in turns}
        kept = [(i, c) for i, c in facts if i in fact_ids and sources.get(i) not in shown]
        facts_text, fact_ids = lifecycle.pack_facts(kept, budget // 2, estimate)
        text = "\n".join(t for t in (context_text, facts_text) if t)
        return lifecycle.MemoryBlock(text, fact_ids, turns)

    def memory_after_turn(
        self,
        session_id: str,
        turn_id: str,
        input_items: str | Sequence[Mapping[str, Any]],
        output_items: str | Sequence[Mapping[str, Any]],
        *,
        user_id: str | None = None,
        at: TimeLike | None = None,
        namespace: str | None = None,
    ) -> lifecycle.AfterTurnResult:
        """Record a finished turn and capture its facts, exactly once per (namespace,
        session_id, turn_id), from any process.

        The recorded user text is the last user message of `input_items` (the memory
        block is skipped), the agent text the assistant messages of `output_items`, and
        its tool calls become procedures. Texts over the core's 100,000-byte limit are
        truncated rather than refused, so a long paste never loses the turn.

        Facts: the durable statements of the turn's user messages are stored as
        memories (memcore/_facade/fact_capture.py; docs/guide.md, "The automatic path"),
        each with its retention tier; one that updates a stored fact supersedes it.

        Args:
            at: When the turn happened (default: now): the turn's time, and the day a
                captured fact's tier counts from.

        Returns:
            `{ok, created, captured, skipped, extractor}`: `created` is False when the
            turn was already recorded (then the first call's result is returned, or
            empty lists when it is no longer kept); `captured` lists each stored fact
            (id, content, tier, the fact it superseded, possible updates left to the
            caller), `skipped` each statement not stored and why.

        Raises:
            ResourceBusyError: The same turn is being recorded right now (retryable).
            InvalidParameterError: `input_items` holds no user message.
        """
        with self._turn_metrics.counting("after_turn"):
            return self._after_turn(
                session_id, turn_id, input_items, output_items, user_id, at, namespace
            )

    def _after_turn(
        self,
        session_id: str,
        turn_id: str,
        input_items: str | Sequence[Mapping[str, Any]],
        output_items: str | Sequence[Mapping[str, Any]],
        user_id: str | None,
        at: TimeLike | None,
        namespace: str | None,
    ) -> lifecycle.AfterTurnResult:
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
        when = from_micros(optional_micros(at, "at") or now_micros())
        answer = lifecycle.agent_text(outputs)
        procedures = build_procedures(
            self._document_resolver(), lifecycle.tool_calls(outputs), self._content_limit()
        )
        claim = lifecycle.claim(self._engine, ns, session_id, turn_id, self._claim_wait())
        if claim is not None:
            self._turn_metrics.conflict()
            return claim
        try:
            report = self._capture_turn_facts(
                ns, session_id, turn_id, inputs, outputs, at=when, user_id=user_id
            )
            recorded = self._record(
                ns,
                session_id,
                turn_id,
                lifecycle.fit_bytes(user),
                agent_text=lifecycle.fit_bytes(answer) if answer else None,
                thread_id=None,
                procedures=procedures,
                vector=None,
                at=to_micros(when, "at"),
            )
            result: lifecycle.AfterTurnResult = {
                "ok": True,
                "created": recorded.created,
                **report.to_dict(),  # type: ignore[typeddict-item]
            }
            self._engine.finish_turn(
                ns, session_id, turn_id, json.dumps(result, ensure_ascii=False), now_micros()
            )
        except BaseException:
            self._engine.release_turn(ns, session_id, turn_id)
            raise
        return result

    def _claim_wait(self) -> int:
        """Microseconds after which an unfinished claim counts as abandoned (its process
        died): well past the slowest turn, a fact extractor's timeout included."""
        extractor = 0.0 if self._fact_extractor is None else self._fact_extractor[1]
        return int((lifecycle.CLAIM_STALE_SECONDS + 2 * extractor) * 1e6)

    def memory_run_maintenance(
        self,
        *,
        episodic_ttl_days: float | None = None,
        archive_after_days: float | None = None,
        force_compact: bool = False,
        now: TimeLike | None = None,
        namespace: str | None = None,
    ) -> dict[str, Any]:
        """Maintenance, idempotent and resumable (a run stopped at any point, a kill -9
        included, is finished by the next): expired memories (a tier's retention, a ttl)
        become invalidated (history keeps them), the episodic retention tier when given,
        duplicate version contents stored once, conversations untouched and unretrieved
        for `archive_after_days` archived, each conversation's summary refreshed (new
        turns, older than `summary_refresh_interval_minutes`), the idempotency history
        bounded to `max_processed_turns` per session, operation-log entries older than
        `compaction_min_age_hours` compacted, index compaction, SQLite optimize.

        Args:
            now: The time the run takes as now (default: the clock).

        Returns:
            `{ok: True, memories_expired, versions_deduplicated, conversations_archived,
            summaries_refreshed, turn_claims_pruned, log_entries_compacted,
            vectors_rebuilt, tombstones_dropped, text_merged}`.
        """
        with self._turn_metrics.counting("maintenance"):
            if not isinstance(force_compact, bool):
                raise invalid("force_compact", "force_compact must be True or False.")
            settings = self._turn_settings
            counters = self._engine.run_maintenance(
                self._ns(namespace),
                episodic_ttl_days=_days("episodic_ttl_days", episodic_ttl_days),
                archive_after_days=_days("archive_after_days", archive_after_days),
                force_compact=force_compact,
                log_min_age_hours=settings.compaction_min_age_hours,
                summary_refresh_minutes=settings.summary_refresh_interval_minutes,
                max_processed_turns=settings.max_processed_turns,
                now=optional_micros(now, "now"),
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


def _provenance(metadata: Any) -> tuple[str, str]:
    """The (session, turn) a captured fact came from, or ("", "") for other facts."""
    if isinstance(metadata, dict):
        return str(metadata.get("session_id", "")), str(metadata.get("turn_id", ""))
    return "", ""


def _days(field: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise invalid(field, f"{field} must be a number of days, got {value!r}.")
    return float(value)
