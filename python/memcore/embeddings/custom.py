"""A user-supplied embedding function in place of the ONNX model."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from memcore.embeddings.pooling import FloatMatrix, l2_normalize
from memcore.embeddings.retry import RetryPolicy

EmbedFunction = Callable[[list[str]], Any]
"""``list[str] -> 2-D float array`` with one row per text (numpy or anything array-like)."""

_PROBE_TEXT = "memcore dimension probe"


class InvalidEmbedderOutputError(Exception):
    """The custom function returned something that is not one finite row per text."""


def custom_model_id(embedder: EmbedFunction) -> str:
    """Model id the dimension guard records for a custom function: ``custom:<name>``.

    The function's ``__name__`` (or its class name for callable objects and partials) is the
    only stable identity a callable has across processes.
    """
    name = getattr(embedder, "__name__", None) or type(embedder).__name__
    return f"custom:{name}"


class CustomEmbedder:
    """Adapts an :data:`EmbedFunction` to the embedder interface the service uses.

    Calls go out in chunks of at most ``batch_size`` texts (there is no tokenizer to
    budget tokens with), are retried on exceptions, and every result is validated and
    L2-normalised so a custom function cannot put malformed vectors into the index.
    """

    def __init__(
        self, embedder: EmbedFunction, *, batch_size: int = 32, retry: RetryPolicy | None = None
    ) -> None:
        """Wrap ``embedder`` and discover its dimension with one probe call.

        Raises:
            InvalidEmbedderOutputError: If the probe's result is not a single finite row.
            RetriesExhaustedError: If the probe keeps raising.
        """
        self.model_id = custom_model_id(embedder)
        self.source = f"custom function {self.model_id.removeprefix('custom:')}"
        self._embedder = embedder
        self._batch_size = batch_size
        self._retry = retry or RetryPolicy()
        self.dim = 0
        self.dim = int(self._embed_chunk([_PROBE_TEXT]).shape[1])

    def embed(self, texts: Sequence[str], max_tokens: int | None = None) -> FloatMatrix:
        """Embed ``texts`` through the function, in order.

        ``max_tokens`` is ignored: without a tokenizer, truncation is the function's own.

        Returns:
            ``(len(texts), dim)`` float32, L2-normalised.

        Raises:
            InvalidEmbedderOutputError: If any call returns a malformed result.
            RetriesExhaustedError: If a call keeps raising.
        """
        result = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), self._batch_size):
            chunk = list(texts[start : start + self._batch_size])
            result[start : start + len(chunk)] = self._embed_chunk(chunk)
        return result

    def count_tokens(self, text: str) -> int | None:
        """A custom function has no tokenizer; the service falls back to its estimate."""
        return None

    def close(self) -> None:
        """Nothing to release: the function belongs to the caller."""

    def _embed_chunk(self, chunk: list[str]) -> FloatMatrix:
        raw = self._retry.call(lambda: self._embedder(list(chunk)), what=self.model_id)
        return l2_normalize(self._validated(raw, len(chunk)))

    def _validated(self, raw: Any, rows: int) -> FloatMatrix:
        try:
            vectors = np.asarray(raw, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise InvalidEmbedderOutputError(f"not convertible to a float32 array: {exc}") from None
        if vectors.ndim != 2 or vectors.shape[0] != rows or vectors.shape[1] == 0:
            raise InvalidEmbedderOutputError(
                f"expected shape ({rows}, {self.dim or 'dim'}), got {vectors.shape}"
            )
        if self.dim and vectors.shape[1] != self.dim:
            raise InvalidEmbedderOutputError(f"expected {self.dim} columns, got {vectors.shape[1]}")
        if not np.isfinite(vectors).all():
            raise InvalidEmbedderOutputError("contains NaN or infinite values")
        return vectors
