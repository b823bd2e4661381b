"""Facts: store, read, update, delete, list, and the temporal operations."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from memcore._facade.base import VectorLike, check_text_size
from memcore._facade.search import (
    SIMILAR_CANDIDATES,
    SearchAPI,
    action_for,
    similar_to_update,
)
from memcore._facade.tiers import check_tier, tier_expiry
from memcore._facade.updates import candidate_floor
from memcore._time import TimeLike, from_micros, optional_micros, to_micros
from memcore.errors import invalid
from memcore.records.facts import MemoryRecord, StoreResult, SupersedeResult

_UNSET: Any = object()
_SPLIT_ADVICE = "Store a shorter fact, or split it into several memories."


def _metadata_json(metadata: Any) -> str | None:
    if metadata is None:
        return None
    try:
        return json.dumps(metadata, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise invalid("metadata", f"metadata is not JSON-serialisable: {exc}") from None


def _expiry(ttl: float | timedelta | None, expires_at: TimeLike | None) -> int | None:
    if ttl is not None and expires_at is not None:
        raise invalid("ttl", "Pass ttl or expires_at, not both.")
    if ttl is None:
        return optional_micros(expires_at, "expires_at")
    seconds = ttl.total_seconds() if isinstance(ttl, timedelta) else _number("ttl", ttl)
    if not seconds > 0:
        raise invalid("ttl", f"ttl must be a positive number of seconds, got {ttl!r}.")
    try:
        expires = datetime.now(UTC) + timedelta(seconds=seconds)
    except OverflowError:
        raise invalid("ttl", f"ttl is too long: {ttl!r} seconds.") from None
    return to_micros(expires, "ttl")


def _number(field: str, value: Any) -> float:
    if isinstance(value, bool):
        raise invalid(field, f"{field} must be a number, got {value!r}.")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise invalid(field, f"{field} must be a number, got {value!r}.") from None


class FactsAPI(SearchAPI):
    """Memory records (facts) with valid time and supersession."""

    def store_memory(
        self,
        content: str,
        *,
        memory_type: str = "semantic",
        source: str = "extracted",
        confidence: float = 1.0,
        importance: float = 0.5,
        metadata: Any = None,
        thread_id: str | None = None,
        user_id: str | None = None,
        event_time: TimeLike | None = None,
        valid_from: TimeLike | None = None,
        ttl: float | timedelta | None = None,
        expires_at: TimeLike | None = None,
        tier: str = "durable",
        namespace: str | None = None,
        vector: VectorLike | None = None,
        entities: Sequence[str] | None = None,
    ) -> StoreResult:
        """Store a fact and report the valid memories it looks like an update of.

        Args:
            content: One clear, standalone statement.
            memory_type: "episodic" (a moment of a conversation or an event, understood
                with the rest of its thread: `recall` reads it in its thread), "semantic"
                (a standing fact that says all it means itself) or "procedural".
            source: "explicit" (the user asked) or "extracted".
            confidence: 0-1.
            importance: 0-1.
            metadata: Any JSON-serialisable value.
            thread_id: Conversation or agent thread this came from; `recall` ranks an
                episodic memory higher when the rest of its thread matches the question
                too (a semantic fact ranks by itself).
            user_id: Whose fact this is.
            event_time: When the event happened (episodic memories).
            valid_from: When the fact starts to hold (default: now).
            ttl: Seconds (or a timedelta) until the memory expires.
            expires_at: An absolute expiry instead of ttl.
            tier: "L1" (about today: expires at the start of the UTC day
                `l1_retention_days` later), "L2" (this week or a passing state:
                `l2_retention_days`) or "durable" (no expiry). An explicit ttl or
                expires_at wins over the tier's expiry.
            namespace: Override the instance's namespace.
            vector: A precomputed embedding instead of embedding `content`.
            entities: Names of entities the memory is about (unknown names
                become entities); known names in the text are linked anyway.

        Returns:
            StoreResult with `created`, `similar` (stored facts about the same subject
            that the new one restates or says has changed; see _facade/updates.py) and
            `action_required` (the supersede call to make, when `similar` is not empty).

        Raises:
            InvalidParameterError: A value is out of range or malformed.
            EmbeddingError: The embedding model is not ready.
        """
        if not isinstance(content, str):
            raise invalid("content", "content must be a string.")
        check_text_size("content", content, _SPLIT_ADVICE)
        ns = self._ns(namespace)
        passage_vector, embedding, pending_reason = self._stored_vector(content, vector)
        # Candidates for the update rule come back with the new memory: one crossing.
        floor = None if passage_vector is None else candidate_floor(content)
        created, candidates = self._engine.store_memory(
            ns,
            content,
            memory_type=memory_type,
            source=source,
            confidence=_number("confidence", confidence),
            importance=_number("importance", importance),
            metadata=_metadata_json(metadata),
            thread_id=thread_id,
            user_id=user_id,
            event_time=optional_micros(event_time, "event_time"),
            valid_from=optional_micros(valid_from, "valid_from"),
            expires_at=_expiry(ttl, expires_at) or self._tier_expiry(tier, valid_from),
            tier=tier,
            vector=passage_vector,
            entities=_names(entities),
            similar_threshold=floor,
            similar_limit=SIMILAR_CANDIDATES,
        )
        if passage_vector is None:
            return StoreResult(created=created, embedding=embedding, pending_reason=pending_reason)
        similar = similar_to_update(content, candidates)
        return StoreResult(
            created=created,
            similar=similar,
            action_required=action_for(created.id, similar),
            embedding=embedding,
        )

    def _tier_expiry(self, tier: str, valid_from: TimeLike | None) -> int | None:
        start = optional_micros(valid_from, "valid_from")
        written = datetime.now(UTC) if start is None else from_micros(start)
        return tier_expiry(check_tier(tier), written, self._turn_settings)

    def store_memories(
        self,
        contents: Sequence[str],
        *,
        vectors: VectorLike | None = None,
        memory_type: str = "semantic",
        source: str = "extracted",
        confidence: float = 1.0,
        importance: float = 0.5,
        metadatas: Sequence[Any] | None = None,
        thread_ids: Sequence[str | None] | None = None,
        user_id: str | None = None,
        namespace: str | None = None,
    ) -> list[MemoryRecord]:
        """Bulk ingest: store many memories in one transaction (all or nothing).

        Much faster than calling `store_memory` in a loop; no similar-memory
        check is made. Contents are embedded in adaptive batches unless
        `vectors` (one row per content) is given.

        Raises:
            InvalidParameterError: A value is invalid (the message names its index).
        """
        texts = list(contents)
        if not all(isinstance(t, str) for t in texts):
            raise invalid("contents", "contents must be a sequence of strings.")
        for i, text in enumerate(texts):
            check_text_size(f"contents[{i}]", text, _SPLIT_ADVICE)
        matrix = None
        if vectors is not None:
            matrix = np.ascontiguousarray(vectors, dtype=np.float32)
            if matrix.ndim != 2:
                raise invalid("vectors", f"vectors must be 2-D, got shape {matrix.shape}.")
        elif self._embeddings is not None and texts:
            matrix = self._embeddings.embed_passages(texts)
        return self._engine.store_memories(
            self._ns(namespace),
            texts,
            vectors=matrix,
            memory_type=memory_type,
            source=source,
            confidence=_number("confidence", confidence),
            importance=_number("importance", importance),
            metadatas=None if metadatas is None else [_metadata_json(m) for m in metadatas],
            thread_ids=None if thread_ids is None else list(thread_ids),
            user_id=user_id,
        )

    def get_memory(self, memory_id: str, *, namespace: str | None = None) -> MemoryRecord:
        """One memory by id.

        Raises:
            MemoryNotFoundError: No memory with that id in the namespace.
        """
        return self._engine.get_memory(self._ns(namespace), memory_id)

    def update_memory(
        self,
        memory_id: str,
        *,
        content: str | None = None,
        memory_type: str | None = None,
        source: str | None = None,
        confidence: float | None = None,
        importance: float | None = None,
        metadata: Any = _UNSET,
        thread_id: str | None = None,
        user_id: str | None = None,
        event_time: TimeLike | None = None,
        expires_at: TimeLike | None = None,
        namespace: str | None = None,
        vector: VectorLike | None = None,
    ) -> MemoryRecord:
        """Change some fields of a memory; new content is re-embedded.

        Raises:
            MemoryNotFoundError: No memory with that id in the namespace.
            InvalidParameterError: Nothing to update, or a bad value.
        """
        ns = self._ns(namespace)
        if content is not None and not isinstance(content, str):
            raise invalid("content", "content must be a string.")
        if content is not None:
            check_text_size("content", content, _SPLIT_ADVICE)
        new_vector = None
        if content is not None and content.strip():
            new_vector = self._passage_vector(content, vector)
        elif vector is not None:
            raise invalid("vector", "A vector was given without new content; pass both.")
        return self._engine.update_memory(
            ns,
            memory_id,
            content=content,
            memory_type=memory_type,
            source=source,
            confidence=None if confidence is None else _number("confidence", confidence),
            importance=None if importance is None else _number("importance", importance),
            metadata=None if metadata is _UNSET else _metadata_json(metadata) or "null",
            thread_id=thread_id,
            user_id=user_id,
            event_time=optional_micros(event_time, "event_time"),
            expires_at=optional_micros(expires_at, "expires_at"),
            vector=new_vector,
        )

    def delete_memory(self, memory_id: str, *, namespace: str | None = None) -> None:
        """Delete a memory for good (use `invalidate` to keep its history).

        Raises:
            MemoryNotFoundError: No memory with that id in the namespace.
        """
        self._engine.delete_memory(self._ns(namespace), memory_id)

    def list_memories(
        self,
        limit: int = 20,
        offset: int = 0,
        *,
        thread_id: str | None = None,
        as_of: TimeLike | None = None,
        valid_only: bool = False,
        namespace: str | None = None,
    ) -> list[MemoryRecord]:
        """Memories newest first, in every state unless `valid_only` or `as_of`.

        Args:
            limit: Page size, 1-1000.
            offset: Records to skip.
            thread_id: Only this thread's memories.
            as_of: Only memories valid at that time (valid time); it takes the place
                of `valid_only`.
            valid_only: Only memories valid now.
            namespace: Override the instance's namespace.
        """
        return self._list(
            namespace, limit, offset, thread_id, optional_micros(as_of, "as_of"), valid_only
        )

    def _list(
        self,
        namespace: str | None,
        limit: int,
        offset: int,
        thread_id: str | None,
        as_of_micros: int | None,
        valid_only: bool,
    ) -> list[MemoryRecord]:
        return self._engine.list_memories(
            self._ns(namespace),
            limit=_count("limit", limit),
            offset=_count("offset", offset, minimum=0),
            thread_id=thread_id,
            as_of=as_of_micros,
            valid_only=valid_only,
        )

    def list_recent_memories(
        self,
        limit: int = 10,
        *,
        thread_id: str | None = None,
        as_of: TimeLike | None = None,
        namespace: str | None = None,
    ) -> list[MemoryRecord]:
        """The newest memories valid now, or valid at `as_of` (superseded ones excluded).

        Args:
            limit: How many, 1-1000.
            thread_id: Only this thread's memories.
            as_of: See the memories that were valid at that time (ISO 8601 or datetime),
                including ones since superseded or invalidated.
            namespace: Override the instance's namespace.
        """
        return self.get_valid(limit, thread_id=thread_id, as_of=as_of, namespace=namespace)

    def get_valid(
        self,
        limit: int = 100,
        offset: int = 0,
        *,
        thread_id: str | None = None,
        as_of: TimeLike | None = None,
        namespace: str | None = None,
    ) -> list[MemoryRecord]:
        """Memories valid now, or valid at `as_of`, newest first.

        Args:
            limit: Page size, 1-1000.
            offset: Records to skip.
            thread_id: Only this thread's memories.
            as_of: See the memories that were valid at that time (ISO 8601 or datetime);
                the same as `get_valid_at(as_of)`.
            namespace: Override the instance's namespace.
        """
        # valid_only means "valid now"; the core lets an as_of instant take its place.
        when = optional_micros(as_of, "as_of")
        return self._list(namespace, limit, offset, thread_id, when, True)

    def get_valid_at(
        self,
        timestamp: TimeLike,
        limit: int = 100,
        offset: int = 0,
        *,
        thread_id: str | None = None,
        namespace: str | None = None,
    ) -> list[MemoryRecord]:
        """Memories that were valid at `timestamp` (ISO 8601 or datetime)."""
        when = to_micros(timestamp, "timestamp")
        return self._list(namespace, limit, offset, thread_id, when, False)

    def invalidate(
        self, memory_id: str, reason: str | None = None, *, namespace: str | None = None
    ) -> MemoryRecord:
        """Soft-delete: close the memory's validity now; history still sees it.

        Raises:
            MemoryNotFoundError: No memory with that id in the namespace.
            InvalidParameterError: The memory is already invalid.
        """
        return self._engine.invalidate(self._ns(namespace), memory_id, reason)

    def supersede_memory(
        self, old_memory_id: str, new_memory_id: str, *, namespace: str | None = None
    ) -> SupersedeResult:
        """Mark an old memory as replaced by a newer one.

        Links both ways and closes the old memory's validity where the new one
        starts, so default searches drop it and `as_of` reads still find it.

        Raises:
            MemoryNotFoundError: Either id does not exist in the namespace.
            InvalidParameterError: Same id twice, or the old one is already superseded.
        """
        old, new = self._engine.supersede_memory(self._ns(namespace), old_memory_id, new_memory_id)
        return SupersedeResult(
            success=True,
            message=f"Memory {old_memory_id} marked as superseded by {new_memory_id}",
            old=old,
            new=new,
        )

    def count_memories(self, *, namespace: str | None = None) -> int:
        """How many memories the namespace holds, in every state."""
        return self._engine.count_memories(self._ns(namespace))


# Offsets travel to SQLite as a signed 64-bit integer.
_MAX_COUNT = 2**63 - 1


def _count(field: str, value: int, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= _MAX_COUNT:
        raise invalid(field, f"{field} must be an integer ≥ {minimum}, got {value!r}.")
    return value


def _names(entities: Sequence[str] | None) -> list[str] | None:
    if entities is None:
        return None
    if isinstance(entities, str) or not all(isinstance(e, str) for e in entities):
        raise invalid("entities", "entities must be a list of entity names.")
    return list(entities)
