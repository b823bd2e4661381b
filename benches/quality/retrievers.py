"""The memcore search paths that the quality harness scores, as uniform callables."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from memcore import Memory
    from memcore.records.facts import SearchHit

Search = Callable[["Memory", str, "np.ndarray | None", int], "list[SearchHit]"]


@dataclass(frozen=True)
class Retriever:
    name: str
    search: Search
    max_depth: int  # the most results the call may return
    needs_vector: bool


RETRIEVERS: tuple[Retriever, ...] = (
    Retriever("search (vector only)", lambda m, q, v, k: m.search(vector=v, limit=k), 50, True),
    Retriever("search_text (BM25 only)", lambda m, q, v, k: m.search_text(q, limit=k), 50, False),
    Retriever("recall (hybrid)", lambda m, q, v, k: m.recall(q, limit=k, vector=v), 50, False),
    # The first design's weights (0.40, 0.15, 0.45), kept as a preset: the old default.
    Retriever(
        "recall, design weights",
        lambda m, q, v, k: m.recall(q, limit=k, vector=v, weights="design"),
        50,
        False,
    ),
    Retriever(
        "recall, RRF",
        lambda m, q, v, k: m.recall(q, limit=k, vector=v, mode="rrf"),
        50,
        False,
    ),
    # The agent-facing call caps results at 20, so its recall@25 is not defined.
    Retriever(
        "search_memories",
        lambda m, q, v, k: m.search_memories(q, min(k, 20), vector=v),
        20,
        False,
    ),
)


def usable(vectors_available: bool) -> list[Retriever]:
    return [r for r in RETRIEVERS if vectors_available or not r.needs_vector]
