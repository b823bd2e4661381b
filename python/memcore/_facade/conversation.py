"""The interaction log (docs/guide.md, "Conversations and documents"): conversations and
turns, the read wrapper, document histories, retrieve_context, and the turn lifecycle for
thin clients.

Rules and algorithms are the core's (versioning by content hash, exactly-once turns,
scoring and packing); this layer canonicalises document ids, reads and hashes files,
embeds user texts and queries, and converts values.

Embeddings: a turn's user text is embedded once the model is ready; a model still
loading is waited for (`embedding_wait`). When it is still loading after that, or it
failed, the turn is recorded without a vector rather than refused
(`TurnResult.embedded` is False): a turn logs tool calls that already happened and
cannot be replayed later, and the core's exactly-once rule means a retry could not add
the vector either. Such a turn is found by keyword search and shared documents.
Queries follow `recall`: BM25 and documents only when no model is configured or it
failed; EmbeddingError while it is still loading after the wait (`memory_before_turn`
falls back instead).

Token budgets are charged with the core's estimate, ceil(characters / 4)
(`estimate_tokens`); `count_tokens` gives the embedding tokenizer's count.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from memcore import _core
from memcore._core import Engine
from memcore._facade import lifecycle
from memcore._facade.base import Vector, VectorLike, as_vector, check_text_size
from memcore._facade.conversation_handles import (
    Conversation,
    DocumentLedger,
    build_procedures,
)
from memcore._facade.documents import DEFAULT_CONTENT_LIMIT, DocumentResolver, snapshot
from memcore._facade.search import SearchAPI
from memcore._time import TimeLike, iso, now_micros, optional_datetime, optional_micros
from memcore.code.overview import with_projects
from memcore.errors import EmbeddingError, NotFoundError, invalid
from memcore.records.conversation import (
    ContextResult,
    DocumentHistory,
    DocumentRead,
    TurnRecord,
    TurnResult,
)

_log = logging.getLogger("memcore._facade.conversation_handles")

#: retrieve_context's scoring options and their defaults (the core's).
SCORING_DEFAULTS: dict[str, float] = {
    "recency_half_life_days": 30.0,
    "staleness_weight": 0.15,
    "familiarity_weight": 0.1,
    "document_match": 0.6,
}


class ConversationAPI(SearchAPI):
    """Conversations, turns, versioned documents and retrieve_context."""

    _mode: str
    _project_root: Path | None
    #: Bytes of content stored with a document version; larger contents keep their
    #: hash only. Set per instance (`mem.document_content_limit = 0` stores no content).
    document_content_limit: int = DEFAULT_CONTENT_LIMIT
    _resolver_cache: DocumentResolver | None = None

    # -- recording -----------------------------------------------------------------------

    def conversation(
        self,
        conversation_id: str,
        *,
        thread_id: str | None = None,
        namespace: str | None = None,
    ) -> Conversation:
        """A conversation to record turns in (a context manager; see `conversation_handles`).

        Args:
            conversation_id: Your id of the conversation (a session, a chat).
            thread_id: A thread tag for its turns.
            namespace: Override the instance's namespace.
        """
        return Conversation(
            self, conversation_id, thread_id=thread_id, namespace=self._ns(namespace)
        )

    def record_turn(
        self,
        conversation_id: str,
        user_text: str,
        agent_text: str | None = None,
        procedures: Sequence[Mapping[str, Any]] | None = None,
        turn_id: str | None = None,
        thread_id: str | None = None,
        *,
        vector: VectorLike | None = None,
        at: TimeLike | None = None,
        namespace: str | None = None,
    ) -> TurnResult:
        """Record a whole turn in one call (atomic; exactly once per turn id).

        Args:
            conversation_id: The conversation.
            user_text: The user's message (searchable; embedded when the model is ready).
            agent_text: The agent's answer.
            procedures: Tool calls in order, each `{tool, args?, documents?, writes?,
                at?}`: `documents` are paths/URLs (read from disk now), `DocumentRead`
                values, or `{path, content?, content_hash?}`; `writes` defaults to
                True for writing tools (EDIT, WRITE, …). Pass the content of reads that
                happened before a write: read from disk now, they would see the write.
            turn_id: Your turn id (generated when None); the same id twice stores the
                turn once and returns `created=False`.
            thread_id: A thread tag.
            vector: A precomputed embedding of `user_text`.
            at: When the turn happened (default: now).
            namespace: Override the instance's namespace.

        Raises:
            InvalidParameterError: A malformed procedure, a path outside the project root.
            NotFoundError: A document file that does not exist (for a non-writing tool).
            PayloadTooLargeError: A text over 100,000 bytes or arguments over 64,000.
        """
        ns = self._ns(namespace)
        specs = build_procedures(self._document_resolver(), procedures, self._content_limit())
        return self._record(
            ns,
            conversation_id,
            _turn_key(turn_id),
            user_text,
            agent_text=agent_text,
            thread_id=thread_id,
            procedures=specs,
            vector=vector,
            at=optional_micros(at, "at"),
        )

    def get_turn(
        self, conversation_id: str, turn_id: str, *, namespace: str | None = None
    ) -> TurnRecord:
        """A recorded turn with its procedures and the versions they touched.

        Raises:
            NotFoundError: No such turn in that conversation.
        """
        raw = self._engine.get_turn(self._ns(namespace), conversation_id, turn_id)
        return TurnRecord.from_core(raw)

    def list_turns(
        self, conversation_id: str, *, limit: int = 1000, namespace: str | None = None
    ) -> list[TurnRecord]:
        """The turns of a conversation in order (1-1000, without procedures)."""
        rows = self._engine.conversation_turns(self._ns(namespace), conversation_id, limit=limit)
        return [TurnRecord.from_core(r, []) for r in rows]

    # -- documents -----------------------------------------------------------------------

    def document_id(self, path: Any) -> str:
        """The canonical id memcore stores for a path or URL (see memcore._facade.documents).

        Raises:
            InvalidParameterError: Not a path, or outside the project root in local mode.
        """
        return self._document_resolver().canonical(path)

    def read_document(
        self,
        path: Any,
        content: str | bytes | None = None,
        *,
        content_hash: str | None = None,
        conversation_id: str | None = None,
        namespace: str | None = None,
    ) -> DocumentRead:
        """What reading a document now would record, without recording anything.

        Versions are only created by turns (a version records which turn saw it), so
        outside a turn this is a preview: use `turn.read_document` inside
        `conversation.turn(...)`, or a READ procedure of `record_turn`, to record the
        read. Useful to check whether a file changed since a conversation saw it.

        Args:
            path: A path or URL.
            content: The content, when not read from disk (required for URLs).
            content_hash: Only the hash of the content.
            conversation_id: Fill `versions_since_seen` for this conversation.
            namespace: Override the instance's namespace.
        """
        if content is not None:
            snap = snapshot(self._document_resolver(), path, content)
        else:
            snap = snapshot(self._document_resolver(), path, known_hash=content_hash)
        ledger = DocumentLedger(self._engine, self._ns(namespace), conversation_id)
        return ledger.observe(snap, writes=False)[0]

    def get_document_history(self, path: Any, *, namespace: str | None = None) -> DocumentHistory:
        """A document's versions oldest first, each with its provenance and the turns
        (and tools) that touched it, plus volatility and familiarity.

        In global mode a relative path is looked up as given (the id a document sent
        with its content gets); a file memcore read from disk is found by its path
        (absolute, or the one `document_id` gives).

        Raises:
            NotFoundError: No turn ever touched the document.
        """
        canonical = self._document_resolver().canonical(path, on_disk=False)
        return DocumentHistory.from_core(
            self._engine.document_history(self._ns(namespace), canonical)
        )

    def get_document_content(self, version_id: str) -> str | None:
        """The stored content of a document version (None when only its hash was kept)."""
        return self._engine.version_content(version_id)

    # -- retrieval -----------------------------------------------------------------------

    def retrieve_context(
        self,
        query: str,
        conversation_id: str | None = None,
        documents: Sequence[Any] | None = None,
        token_budget: int = 2000,
        limit: int = 10,
        *,
        vector: VectorLike | None = None,
        namespace: str | None = None,
        **scoring: float,
    ) -> ContextResult:
        """Past turns worth showing the agent now, packed into a token budget.

        Two discovery paths: hybrid search over the user turns of other conversations,
        and hypernode lookup of turns that touched `documents`, however they were
        worded. Each turn comes with its agent answer, procedures and document versions
        and is scored search/document match × recency × staleness penalty × familiarity
        bonus.

        Args:
            query: The current request ("" is allowed when `documents` are given).
            conversation_id: The current conversation: never returned.
            documents: Paths or URLs the current conversation touches (canonicalised).
            token_budget: Tokens for the whole text block, estimated as chars / 4.
            limit: At most this many items (1-1000).
            vector: A precomputed query embedding.
            namespace: Override the instance's namespace.
            **scoring: `recency_half_life_days` (30), `staleness_weight` (0.15),
                `familiarity_weight` (0.1), `document_match` (0.6).

        Returns:
            ContextResult: `items` (structured) and `text` (prompt-ready, says why each
            item surfaced, the procedures used and what changed since).

        Raises:
            EmbeddingError: The embedding model is still loading.
        """
        options = _scoring(scoring)
        if not isinstance(query, str):
            raise invalid("query", "query must be a string.")
        resolver = self._document_resolver()
        docs = [
            resolver.canonical(d, "documents", on_disk=False)
            for d in _sequence(documents, "documents")
        ]
        if not query.strip() and not docs:
            raise invalid("query", "Pass a non-empty query, or documents to look up.")
        q: Vector | None
        if vector is not None:
            q = as_vector(vector)
        else:
            q = self._optional_query_vector(query) if query.strip() else None
        raw = self._engine.retrieve_context(
            self._ns(namespace),
            query,
            q,
            conversation_id=conversation_id,
            documents=docs,
            token_budget=_count("token_budget", token_budget),
            limit=_count("limit", limit),
            **options,
        )
        return ContextResult.from_core(raw)

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` by the embedding model's tokenizer; without a loaded model
        the ceil(chars / 4) estimate that budgets are charged with."""
        if not isinstance(text, str):
            raise invalid("text", "text must be a string.")
        if self._embeddings is not None:
            return self._embeddings.count_tokens(text)
        return Engine.estimate_tokens(text)

    # -- the turn lifecycle for thin clients ---------------------------------------------------

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
        estimate = Engine.estimate_tokens
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
            )["text"]
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
        return {"ok": True, **counters}

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

    def _document_resolver(self) -> DocumentResolver:
        # Mode and root never change after opening; a racing first call builds an equal one.
        resolver = self._resolver_cache
        if resolver is None:
            resolver = self._resolver_cache = DocumentResolver(self._mode, self._project_root)
        return resolver

    def _content_limit(self) -> int:
        limit = self.document_content_limit
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise invalid(
                "document_content_limit",
                f"document_content_limit must be a non-negative int, got {limit!r}.",
            )
        return limit

    def _record(
        self,
        namespace: str,
        conversation_id: str,
        turn_id: str,
        user_text: str,
        *,
        agent_text: str | None,
        thread_id: str | None,
        procedures: list[dict[str, Any]],
        vector: VectorLike | None,
        at: int | None,
    ) -> TurnResult:
        """One native record_turn with the user text's vector when one can be had."""
        if not isinstance(user_text, str) or not user_text.strip():
            raise invalid("user_text", "user_text must be the non-empty text of the user.")
        check_text_size("user_text", user_text, "Record a shorter message.")
        if isinstance(agent_text, str):
            check_text_size("agent_text", agent_text, "Record a shorter answer.")
        if vector is None and self._embeddings is not None and self._embeddings.status == "ready":
            # A retried turn (thin clients retry after_turn) is answered without paying
            # for an embedding that the core would discard.
            stored = self._stored_turn(namespace, conversation_id, turn_id)
            if stored is not None:
                return TurnResult(turn=stored, created=False, embedded=False)
        if at is None:
            # Fixed here so the vector's date and the stored turn's are the same day.
            at = now_micros()
        passage = self._turn_vector(_core.turn_vector_text(at, user_text), vector)
        raw = self._engine.record_turn(
            namespace,
            conversation_id,
            turn_id,
            user_text,
            agent_text=agent_text,
            thread_id=thread_id,
            procedures=procedures,
            vector=passage,
            at=at,
        )
        return TurnResult(
            turn=TurnRecord.from_core(raw["turn"], raw["procedures"]),
            created=raw["created"],
            embedded=passage is not None,
        )

    def _stored_turn(self, namespace: str, conversation_id: str, turn_id: str) -> TurnRecord | None:
        try:
            return TurnRecord.from_core(self._engine.get_turn(namespace, conversation_id, turn_id))
        except NotFoundError:
            return None

    def _turn_vector(self, text: str, vector: VectorLike | None) -> Vector | None:
        """The user text's vector, or None when the model is off, loading or failing
        (see the module docstring for why the turn is recorded anyway)."""
        if vector is not None:
            return as_vector(vector)
        service = self._embeddings
        if service is not None and service.status == "loading":
            service.wait_ready(service.wait)
        if service is None or service.status != "ready":
            return None
        try:
            row: Vector = service.embed_passages([text])[0]
        except EmbeddingError as exc:
            _log.warning("turn recorded without a vector: %s", exc)
            return None
        return row

    def _lifecycle_vector(self, query: str) -> Vector | None:
        """The query vector for memory_before_turn, which never fails a turn over it."""
        if not query.strip():
            return None
        try:
            vector: Vector | None = self._optional_query_vector(query)
        except EmbeddingError:
            return None
        return vector


def _turn_key(turn_id: str | None) -> str:
    if turn_id is None:
        return uuid.uuid4().hex
    _tag("turn_id", turn_id)
    return turn_id


def _tag(field: str, value: Any) -> None:
    if not isinstance(value, str) or not value.strip():
        raise invalid(field, f"{field} must be a non-empty string, got {value!r}.")


def _count(field: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise invalid(field, f"{field} must be a positive integer, got {value!r}.")
    return value


def _days(field: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise invalid(field, f"{field} must be a number of days, got {value!r}.")
    return float(value)


def _sequence(value: Any, field: str) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
        raise invalid(field, f"{field} must be a list of paths or URLs.")
    return list(value)


def _scoring(options: Mapping[str, Any]) -> dict[str, float]:
    unknown = sorted(set(options) - set(SCORING_DEFAULTS))
    if unknown:
        raise invalid(
            unknown[0],
            f"Unknown scoring option {unknown[0]!r}; use {', '.join(SCORING_DEFAULTS)}.",
        )
    out = dict(SCORING_DEFAULTS)
    for name, value in options.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise invalid(name, f"{name} must be a non-negative number, got {value!r}.")
        out[name] = float(value)
    return out
