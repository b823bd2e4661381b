"""The interaction log (docs/guide.md, "Conversations and documents"): conversations and
turns, the read wrapper, document histories and retrieve_context. The turn lifecycle for
thin clients builds on it in `memcore._facade.turn_lifecycle`.

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
(`turn_lifecycle.estimate_tokens`); `count_tokens` gives the embedding tokenizer's count.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from memcore import _core
from memcore._core import Engine
from memcore._facade.base import Vector, VectorLike, as_vector, check_text_size
from memcore._facade.conversation_handles import (
    Conversation,
    ConversationStore,
    DocumentLedger,
    build_procedures,
)
from memcore._facade.documents import DEFAULT_CONTENT_LIMIT, DocumentResolver, snapshot
from memcore._facade.search import SearchAPI
from memcore._time import TimeLike, now_micros, optional_micros
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
            self,
            conversation_id,
            thread_id=thread_id,
            namespace=self._ns(namespace),
            store=ConversationStore(
                self._engine, self._document_resolver, self._content_limit, self._record
            ),
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
        return self._engine.get_turn(self._ns(namespace), conversation_id, turn_id)

    def list_turns(
        self, conversation_id: str, *, limit: int = 1000, namespace: str | None = None
    ) -> list[TurnRecord]:
        """The turns of a conversation in order (1-1000, without procedures)."""
        return self._engine.conversation_turns(self._ns(namespace), conversation_id, limit=limit)

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
        return self._engine.document_history(self._ns(namespace), canonical)

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
        return self._engine.retrieve_context(
            self._ns(namespace),
            query,
            q,
            conversation_id=conversation_id,
            documents=docs,
            token_budget=_count("token_budget", token_budget),
            limit=_count("limit", limit),
            **options,
        )

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` by the embedding model's tokenizer; without a loaded model
        the ceil(chars / 4) estimate that budgets are charged with."""
        if not isinstance(text, str):
            raise invalid("text", "text must be a string.")
        if self._embeddings is not None:
            return self._embeddings.count_tokens(text)
        return Engine.estimate_tokens(text)

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
        turn, created = self._engine.record_turn(
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
        return TurnResult(turn=turn, created=created, embedded=passage is not None)

    def _stored_turn(self, namespace: str, conversation_id: str, turn_id: str) -> TurnRecord | None:
        try:
            return self._engine.get_turn(namespace, conversation_id, turn_id)
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
