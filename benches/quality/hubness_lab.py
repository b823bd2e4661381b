"""Choose the hub penalty of the vector signal on CoSQA, outside the engine.

    python -m benches.quality.hubness_lab [--cosqa DIR]

Some stored vectors lie close to many others (generic code, small talk) and come up for
every query. Hubness reduction (the CSLS correction of Conneau et al., 2018) ranks by
``cos(q, d) - a * h(d)``, ``h(d)`` being the mean cosine of ``d``'s ``k`` nearest other
stored vectors. Here every function of the CoSQA pool is embedded as the code indexer
embeds a one-function file (its text, cut at ``EMBED_MAX_TOKENS``), BM25 scores come from
the engine (``search_code`` without a vector), and each ``(k, a)`` of the grid is ranked
exactly in numpy: vector alone, and fused with BM25 as search_code fuses (z-scores clipped
at ±6 as in ``fusion_lab``, BM25's share 0.05). The queries are split by index parity;
``(k, a)`` is chosen by the hybrid's MRR on one half and read on the other. The identifier
queries of ``benches.quality.cosqa`` are scored as a check. Section 12 of
benches/results/quality-experiments.md is this script's output.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from benches import embedding_cache
from benches.quality import cosqa
from benches.quality.fusion_lab import z
from benches.quality.harness import DEFAULT_COSQA

Array = np.ndarray[Any, np.dtype[Any]]
DEPTH = 50
BM25_SHARE = 0.05  # search_code's share when this lab ran (before code_weights.rs)
GRID = tuple((k, a) for k in (5, 10, 20, 50) for a in (0.1, 0.15, 0.2, 0.25, 0.3, 0.4))


def function_vectors(codes: list[str]) -> Array:
    from memcore.code.indexer import EMBED_MAX_CHARS, EMBED_MAX_TOKENS
    from memcore.embeddings import EmbeddingService

    service = EmbeddingService(model_path=embedding_cache.model_dir(), cache_size=0)
    if not service.wait_ready(timeout=300):
        raise RuntimeError(f"embedding model failed to load: {service.error}")
    texts = [code[:EMBED_MAX_CHARS] for code in codes]
    return np.asarray(service.embed_passages(texts, max_tokens=EMBED_MAX_TOKENS), np.float32)


def bm25_scores(
    pool: dict[str, int], query_sets: list[list[dict[str, Any]]], position: dict[str, int]
) -> list[list[dict[int, float]]]:
    """Per query set, per query: pool position -> the engine's BM25 score (its top 50)."""
    import memcore

    out: list[list[dict[int, float]]] = []
    with (
        tempfile.TemporaryDirectory(prefix="hubness-lab-") as tmp,
        memcore.Memory(Path(tmp) / "store", model=None) as mem,
    ):
        cosqa.index_pool(mem, Path(tmp), pool, lambda m: print(m, file=sys.stderr))
        for queries in query_sets:
            rows = []
            for q in queries:
                hits = mem._engine.search_code(
                    mem.namespace, q["doc"], None, project_id=cosqa.PROJECT, limit=DEPTH
                )
                scores: dict[int, float] = {}
                for h in hits:
                    j = position[h.file_path]
                    scores[j] = max(scores.get(j, 0.0), h.scores.bm25 or 0.0)
                rows.append(scores)
            out.append(rows)
    return out


def rank_of_gold(vector: Array, bm25: dict[int, float], gold: int, share: float) -> int:
    """The gold function's rank under the fused order (as search_code fuses), or DEPTH."""
    cand = np.array(sorted(set(np.argsort(-vector)[: 2 * DEPTH]) | set(bm25)))
    b = np.array([bm25.get(int(j), np.nan) for j in cand])
    b = np.where(np.isnan(b), np.nanmin(b) if np.any(~np.isnan(b)) else 0.0, b)
    fused = (1 - share) * z(vector[cand]) + share * z(b)
    order = cand[np.argsort(-fused, kind="stable")][:DEPTH]
    hit = np.flatnonzero(order == gold)
    return int(hit[0]) if len(hit) else DEPTH


def metrics(ranks: list[int]) -> str:
    r = np.array(ranks)
    values = (np.where(r < DEPTH, 1.0 / (r + 1), 0.0).mean(), (r < 1).mean(), (r < 5).mean())
    return " ".join(f"{100 * v:.1f}" for v in (*values, (r < 10).mean()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.quality.hubness_lab")
    parser.add_argument("--cosqa", type=Path, default=DEFAULT_COSQA)
    args = parser.parse_args(argv)
    pool, queries = cosqa.load(args.cosqa)
    names = cosqa.identifier_queries(pool)
    codes = sorted(pool, key=pool.__getitem__)
    position = {cosqa.gold_file({"retrieval_idx": pool[c]}).pop(): j for j, c in enumerate(codes)}
    docs = function_vectors(codes)
    near = docs @ docs.T
    np.fill_diagonal(near, -1.0)
    near.sort(axis=1)
    bm25 = bm25_scores(pool, [queries, names], position)
    lines = [
        "| k | a | vector alone | hybrid | hybrid, even queries | hybrid, odd queries "
        "| identifier queries, hybrid |",
        "|---|---|---|---|---|---|---|",
    ]
    picks: dict[str, tuple[float, tuple[int, float]]] = {}
    halves: dict[tuple[int, float], tuple[str, str]] = {}
    for k, a in ((0, 0.0), *GRID):
        hub = a * near[:, -k:].mean(axis=1) if k else np.zeros(len(codes))
        cells = []
        for qs, scores in ((queries, bm25[0]), (names, bm25[1])):
            qv = embedding_cache.embed([q["doc"] for q in qs], "query", label="queries")
            gold = [position[cosqa.gold_file(q).pop()] for q in qs]
            cos = qv @ docs.T - hub[None, :]
            alone = [rank_of_gold(cos[i], {}, g, 0.0) for i, g in enumerate(gold)]
            fused = [rank_of_gold(cos[i], scores[i], g, BM25_SHARE) for i, g in enumerate(gold)]
            cells.append((alone, fused))
        (alone, fused), (_, named) = cells
        even, odd = metrics(fused[0::2]), metrics(fused[1::2])
        halves[(k, a)] = (even, odd)
        for half, text in (("even", even), ("odd", odd)):
            mrr = float(text.split()[0])
            if half not in picks or mrr > picks[half][0]:
                picks[half] = (mrr, (k, a))
        lines.append(
            f"| {k or '—'} | {a or '—'} | {metrics(alone)} | {metrics(fused)} | {even} | {odd} "
            f"| {metrics(named)} |"
        )
    lines.append("")
    for chosen_on, read_on, col in (("even", "odd", 1), ("odd", "even", 0)):
        k, a = picks[chosen_on][1]
        lines.append(
            f"chosen on the {chosen_on} queries: k {k}, a {a}; on the {read_on} ones "
            f"{halves[(k, a)][col]} (no penalty: {halves[(0, 0.0)][col]})"
        )
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
