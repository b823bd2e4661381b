"""Choose search_code's signal weights on CoSQA without fitting the numbers we report.

    python -m benches.quality.cosqa_tune [--cosqa DIR]

Code chunks have no graph signal, so search_code's z-score fusion has one free
parameter per query shape: BM25's share ``b`` of the weight (the vector gets ``1 - b``),
one share for queries that describe code and one for queries that name an identifier
(``getUserName``, ``parse_args``, ``os.path``: the shape rule is ``names_identifier`` in
rust/memcore/src/engine/code_weights.rs, which holds the choice). CoSQA's queries are all
descriptions; the identifier queries are the name of each of the first functions whose
name is found nowhere else in the pool (``benches.quality.cosqa.identifier_queries``: 399
of 500 compound, the rest one plain word), gold = its file. For each set the queries
are split by index parity into two folds; ``b`` is chosen by MRR on one fold and scored
on the other, then the other way round, so each reported number comes from queries the
choice never saw. The pool is indexed once (``index_project``, as ``benches.quality.cosqa``
does) and every ``b`` of the grid is the same ``search_code`` call with explicit weights.
The result, with the grid, goes to benches/results/quality-experiments.md by hand.

Since search_code ranks the definitions of the names a query gives first, the identifier
queries here (unique names, one function per file) score full marks at any share; the
identifier share is chosen on a real project by ``benches.quality.identifier_tune``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from benches.quality import cosqa
from benches.quality.harness import DEFAULT_COSQA
from benches.quality.metrics import Scores, per_query

#: BM25 shares tried; the vector gets the rest (no graph signal for code).
GRID = (0.0, 0.01, 0.02, 0.03, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)
#: DESIGN's generic default (vector, bm25, ppr), the row to beat.
GENERIC = (0.40, 0.15, 0.45)
METRICS = ("MRR", "R@1", "R@5", "R@10")
Weights = tuple[float, float, float]


def weights_of(bm25_share: float) -> Weights:
    return (round(1.0 - bm25_share, 4), bm25_share, 0.0)


def per_query_metrics(
    mem: Any, queries: list[dict[str, Any]], weights: list[Weights]
) -> dict[Weights, list[dict[str, float | None]]]:
    """Each weighting's per-query metrics, in query order."""
    engine, ns = mem._engine, mem.namespace
    out: dict[Weights, list[dict[str, float | None]]] = {w: [] for w in weights}
    for q in queries:
        vector = cosqa.query_vector(mem, q)
        for w in weights:
            rows = engine.search_code(
                ns, q["doc"], vector, project_id=cosqa.PROJECT, limit=cosqa.DEPTH, weights=w
            )
            found = list(dict.fromkeys(r.file_path for r in rows))
            out[w].append(per_query(found, cosqa.gold_file(q), cosqa.KS, cosqa.DEPTH))
    return out


def means(rows: list[dict[str, float | None]]) -> dict[str, float]:
    scores = Scores()
    for row in rows:
        scores.add(row)
    return scores.means()


def cross_validate(
    results: dict[Weights, list[dict[str, float | None]]],
) -> list[dict[str, Any]]:
    """For each fold (even or odd query indexes), the share chosen on the other fold by
    MRR (ties to the smaller share) and its scores on this fold beside the generic
    weights'."""
    folds = []
    for held_out in (0, 1):
        tune = {w: means(r[1 - held_out :: 2]) for w, r in results.items()}
        best = max(
            (weights_of(b) for b in GRID),
            key=lambda w: (round(tune[w]["MRR"], 6), -w[1]),
        )
        folds.append(
            {
                "held_out": "even" if held_out == 0 else "odd",
                "bm25_share": best[1],
                "chosen": means(results[best][held_out::2]),
                "generic": means(results[GENERIC][held_out::2]),
            }
        )
    return folds


def markdown(results: dict[Weights, list[Any]], names: dict[Weights, list[Any]]) -> str:
    cells = " | ".join(METRICS)
    lines = [
        "| queries | held out | BM25 share chosen on the other half | weights | " + cells + " |",
        "|---" * (4 + len(METRICS)) + "|",
    ]
    for label, query_set in (("CoSQA", results), ("identifier", names)):
        for f in cross_validate(query_set):
            for weights, key in (("chosen", "chosen"), ("generic 0.40/0.15/0.45", "generic")):
                share = f"{f['bm25_share']:.2f}" if key == "chosen" else "—"
                values = " | ".join(f"{100 * f[key][m]:.1f}" for m in METRICS)
                lines.append(f"| {label} | {f['held_out']} | {share} | {weights} | {values} |")
    lines += ["", *grid_table("CoSQA queries", results)]
    lines += ["", *grid_table("identifier queries", names)]
    return "\n".join(lines) + "\n"


def grid_table(label: str, results: dict[Weights, list[Any]]) -> list[str]:
    n = len(next(iter(results.values())))
    lines = [f"| BM25 share ({n} {label}) | " + " | ".join(METRICS) + " |", "|---" * 5 + "|"]
    for b in GRID:
        m = means(results[weights_of(b)])
        lines.append(f"| {b:.2f} | " + " | ".join(f"{100 * m[k]:.1f}" for k in METRICS) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.quality.cosqa_tune")
    parser.add_argument("--cosqa", type=Path, default=DEFAULT_COSQA, help="a CoSQA folder")
    args = parser.parse_args(argv)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    pool, queries = cosqa.load(args.cosqa)
    weights = [weights_of(b) for b in GRID] + [GENERIC]
    with tempfile.TemporaryDirectory(prefix="cosqa-tune-") as tmp:
        mem, _ = cosqa.open_memory(Path(tmp) / "store")
        with mem:
            if mem.embeddings is None:
                raise SystemExit("the embedding model is needed to weigh the vector signal")
            cosqa.index_pool(mem, Path(tmp), pool, log)
            results = per_query_metrics(mem, queries, weights)
            names = per_query_metrics(mem, cosqa.identifier_queries(pool), weights)
    print(markdown(results, names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
