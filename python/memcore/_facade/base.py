"""State and helpers every part of the facade shares."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt

# The core's limit on one text (a memory's content, a turn's texts), in UTF-8 bytes
# (rust/memcore/src/memory.rs). Checked here first so the error carries the field, the
# limit and the size, and no embedding is spent on a text the core would refuse.
from memcore._core import MAX_TEXT_BYTES as MAX_TEXT_BYTES
from memcore.errors import EmbeddingError, PayloadTooLargeError, invalid

if TYPE_CHECKING:
    from memcore._core import Engine
    from memcore._facade.pending_vectors import VectorBackfill
    from memcore._facade.turn_settings import TurnSettings
    from memcore.embeddings import EmbeddingService

Vector = npt.NDArray[np.float32]
VectorLike = npt.ArrayLike


class StoredVector(NamedTuple):
    """A memory's vector as it will be stored (see `FacadeBase._stored_vector`)."""

    vector: Vector | None
    state: str
    reason: str | None = None


def check_text_size(field: str, text: str, advice: str) -> None:
    """Refuse a text over :data:`MAX_TEXT_BYTES`.

    Raises:
        PayloadTooLargeError: With ``details`` ``{field, limit, size}``.
    """
    if len(text) * 4 <= MAX_TEXT_BYTES:  # no encoding needed: 4 bytes per char at most
        return
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_TEXT_BYTES:
        error = PayloadTooLargeError(
            f"{field} is {size} bytes; the limit is {MAX_TEXT_BYTES}. {advice}"
        )
        error.details = {"field": field, "limit": MAX_TEXT_BYTES, "size": size}
        raise error


class FacadeBase:
    """Holds the engine, the default namespace and the embedding service."""

    _engine: Engine
    _namespace: str
    _embeddings: EmbeddingService | None
    # The automatic path's settings (memory.py): tiers' retention, compaction, maintenance.
    _turn_settings: TurnSettings
    # A PostgreSQL node (memory.py sets it): every call's namespace is checked, so a
    # tenant routed to a node that does not serve it gets an error naming the fix
    # instead of an empty store, and a node that found another database behind its URL
    # serves nothing of its replica.
    _checks_node: bool = False
    # Attaches vectors to memories stored while the model was not ready (memory.py).
    _backfill: VectorBackfill | None = None

    def _ns(self, namespace: str | None) -> str:
        """The namespace of a call: the given one, else the instance default.

        Raises:
            InvalidParameterError: A node serving some namespaces, not this one.
            StorageError: A node whose database was replaced since it opened.
        """
        name = self._namespace if namespace is None else namespace
        if self._checks_node:
            self._engine.check_served(name)
        return name

    def _passage_vector(self, text: str, vector: VectorLike | None) -> Vector | None:
        """The vector to store with `text`: the one given, else an embedding,
        else None when no embedding model is configured (text-only store)."""
        if vector is not None:
            return as_vector(vector)
        if self._embeddings is None:
            return None
        row: Vector = self._embeddings.embed_passages([text])[0]
        return row

    def _stored_vector(self, text: str, vector: VectorLike | None) -> StoredVector:
        """The vector to store a memory with and its state: ``"stored"`` (given or
        embedded), ``"none"`` (a text-only store) or ``"pending"``: the model is still
        loading past the wait, failed, or failed on this text, so the memory is stored
        without it (keyword-searchable at once) and embedded when the model is ready;
        `reason` then says why, as the embedding error would have.

        Raises:
            EmbeddingError: The store is closed.
        """
        from memcore._facade.pending_vectors import stores_pending

        if vector is None and (self._embeddings is None or not text.strip()):
            return StoredVector(None, "none")
        try:
            embedded = self._passage_vector(text, vector)
        except EmbeddingError as exc:
            if self._backfill is None or not stores_pending(exc):
                raise
            self._backfill.schedule()
            return StoredVector(None, "pending", str(exc))
        return StoredVector(embedded, "stored")

    def _query_vector(self, query: str | None, vector: VectorLike | None) -> Vector:
        """The vector to search with: the one given, else the query's embedding."""
        if vector is not None:
            return as_vector(vector)
        if self._embeddings is None:
            error = EmbeddingError(
                "No embedding model is configured; pass vector=… or open Memory with a model "
                "(model='minilm', model_path=DIR or embedder=…)."
            )
            error.details = {"model": None, "state": "disabled"}
            raise error
        if query is None:
            raise invalid("query", "Pass a query text or a vector.")
        return self._embeddings.embed_query(query)


def as_vector(value: Any) -> Vector:
    """A contiguous 1-D float32 array from any array-like.

    Raises:
        InvalidParameterError: Not convertible, or not one-dimensional.
    """
    try:
        # A number past float32's range becomes infinity, which the core refuses by name;
        # numpy's overflow warning would only precede that error.
        with np.errstate(over="ignore"):
            array = np.ascontiguousarray(value, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise invalid("vector", f"vector is not a numeric array: {exc}") from None
    if array.ndim == 2 and array.shape[0] == 1:
        array = array[0]
    if array.ndim != 1:
        raise invalid("vector", f"vector must be one-dimensional, got shape {array.shape}.")
    return array


def native_engine(memory: FacadeBase) -> Engine:
    """The engine behind an open store, for the facade's modules that move records with
    their own ids and times (export and import: only the engine writes them back as they
    were). The front (MCP, CLI) never calls it: it does not import this module
    (tests/test_layers.py).
    """
    return memory._engine
