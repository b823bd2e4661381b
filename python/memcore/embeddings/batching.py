"""Grouping texts into inference batches bounded by padded token count."""

from __future__ import annotations

from collections.abc import Sequence

MAX_BATCH_TOKENS = 8192
"""Hard cap on ``rows x padded length`` per inference call (docs/configuration.md,
"Embedding models"): it bounds peak memory and keeps one call short enough that a
concurrent query is not starved behind it."""

DEFAULT_BATCH_TOKENS = 2048
"""The default budget, below the cap because attention memory grows with ``rows x length²``:
on the 2-core reference machine MiniLM embeds 256-token passages 20-45 % faster in
2048-token batches than in 8192-token ones (the score matrices stop fitting in cache), and
short or mid-length texts are equally fast at either (benches/bench_embeddings.py)."""


def plan_batches(lengths: Sequence[int], max_tokens: int, max_items: int) -> list[list[int]]:
    """Split texts into batches by token count, shortest first.

    Sorting by length puts texts of similar length together, so little of each batch is
    padding. A batch's cost is ``len(batch) * longest``, because every row is padded to the
    longest one; a batch is closed before that would exceed ``max_tokens``. A single text
    longer than ``max_tokens`` still gets a batch of its own (the tokenizer's truncation
    length is what bounds it).

    Args:
        lengths: Token count of each text, in input order.
        max_tokens: Budget of padded tokens per batch.
        max_items: Most texts per batch.

    Returns:
        Batches of indices into ``lengths``; every index appears exactly once.
    """
    if max_tokens < 1 or max_items < 1:
        raise ValueError("max_tokens and max_items must be positive")
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:
        # Ascending order: the newcomer is the longest, so it sets the padded width.
        width = max(lengths[index], 1)
        if current and (len(current) >= max_items or (len(current) + 1) * width > max_tokens):
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches
