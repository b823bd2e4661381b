"""Ranking metrics over retrieved ids and gold ids (binary relevance)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any


def recall_at(found: Sequence[str], gold: set[str], k: int) -> float:
    """Share of the gold items in the top k (LoCoMo's turn-level recall@k)."""
    return len(gold.intersection(found[:k])) / len(gold)


def ndcg_at(found: Sequence[str], gold: set[str], k: int) -> float:
    dcg = sum(1.0 / math.log2(rank + 2) for rank, item in enumerate(found[:k]) if item in gold)
    ideal = sum(1.0 / math.log2(rank + 2) for rank in range(min(len(gold), k)))
    return dcg / ideal


def reciprocal_rank(found: Sequence[str], gold: set[str]) -> float:
    """1/rank of the first gold item, 0 when none was retrieved (MRR@len(found))."""
    for rank, item in enumerate(found):
        if item in gold:
            return 1.0 / (rank + 1)
    return 0.0


@dataclass
class Scores:
    """Running means of named metrics."""

    sums: dict[str, float] = field(default_factory=dict)
    count: int = 0

    def add(self, values: dict[str, float | None]) -> None:
        self.count += 1
        for name, value in values.items():
            if value is not None:
                self.sums[name] = self.sums.get(name, 0.0) + value

    def means(self) -> dict[str, float]:
        return {name: total / self.count for name, total in self.sums.items()} if self.count else {}


def per_query(
    found: Sequence[str], gold: set[str], ks: Iterable[int], depth: int
) -> dict[str, float | None]:
    """recall@k for each k (None where k exceeds what the retriever may return), NDCG@10, MRR."""
    values: dict[str, float | None] = {
        f"R@{k}": recall_at(found, gold, k) if k <= depth else None for k in ks
    }
    values["NDCG@10"] = ndcg_at(found, gold, 10)
    values["MRR"] = reciprocal_rank(found, gold)
    return values


def table_row(scores: dict[str, Any], metrics: Sequence[str]) -> str:
    """The cells of one markdown table row: n, then each metric in percent ("—" if absent)."""
    cells = [str(scores.get("n", 0))]
    cells += ["—" if scores.get(m) is None else f"{100 * scores[m]:.1f}" for m in metrics]
    return " | ".join(cells)
