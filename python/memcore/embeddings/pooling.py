"""Turning model outputs into unit-length sentence vectors."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from memcore.embeddings.registry import Pooling

FloatMatrix = NDArray[np.float32]

# Below this norm a vector is treated as zero: dividing would amplify rounding noise into a
# meaningless direction (or NaN for an exact zero, e.g. potion on the empty string).
_MIN_NORM = 1e-12


def mean_pool(hidden: NDArray[np.float32], attention_mask: NDArray[np.int64]) -> FloatMatrix:
    """Average token vectors over real (unmasked) tokens.

    Args:
        hidden: ``(batch, seq, dim)`` token vectors.
        attention_mask: ``(batch, seq)``, 1 for real tokens and 0 for padding.

    Returns:
        ``(batch, dim)`` mean vectors; a row with no real token is zero.
    """
    mask = attention_mask.astype(np.float32)
    # (b,1,s) @ (b,s,d) sums the masked tokens with one BLAS call per row.
    summed: FloatMatrix = np.matmul(mask[:, np.newaxis, :], hidden)[:, 0, :]
    counts = np.maximum(mask.sum(axis=1, keepdims=True), np.float32(1.0))
    mean: FloatMatrix = summed / counts
    return mean


def cls_pool(hidden: NDArray[np.float32]) -> FloatMatrix:
    """The first token's vector ([CLS] / <s>) of each row."""
    return np.ascontiguousarray(hidden[:, 0, :], dtype=np.float32)


def pool(
    output: NDArray[np.float32], attention_mask: NDArray[np.int64], pooling: Pooling
) -> FloatMatrix:
    """Apply the model's pooling to its graph output.

    Args:
        output: ``(batch, seq, dim)`` for ``mean``/``cls``; ``(batch, dim)`` for ``none``.
        attention_mask: ``(batch, seq)`` mask of the batch.
        pooling: The model's pooling.

    Returns:
        ``(batch, dim)`` float32 sentence vectors (not yet normalised).

    Raises:
        ValueError: If the output's rank does not fit the pooling.
    """
    expected_rank = 2 if pooling == "none" else 3
    if output.ndim != expected_rank:
        raise ValueError(
            f"pooling {pooling!r} needs a rank-{expected_rank} output, got shape {output.shape}"
        )
    if pooling == "mean":
        return mean_pool(output, attention_mask)
    if pooling == "cls":
        return cls_pool(output)
    return np.ascontiguousarray(output, dtype=np.float32)


def l2_normalize(vectors: FloatMatrix) -> FloatMatrix:
    """Scale each row to unit length; rows of (near) zero norm stay zero instead of NaN.

    Args:
        vectors: ``(n, dim)`` float32.

    Returns:
        A new ``(n, dim)`` float32 array.
    """
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    out = np.zeros_like(vectors, dtype=np.float32)
    np.divide(vectors, norms, out=out, where=norms > _MIN_NORM)
    return out
