"""Try fusion rules outside the engine, on the engine's own candidates.

    python -m benches.quality.fusion_lab [--cosqa DIR] [--locomo FILE]

Each query's candidates are taken once from the real engine: the union of its top 50
under vector-only, BM25-only and the shipped weights, every candidate with its exact
cosine and its BM25 score. The rules below are then applied to those numbers in numpy,
so a dozen rules cost seconds instead of a rebuild and a harness run each. The pool is a
little smaller than the engine's (100 per signal), so the "shipped" rows are printed
beside the others to show how close the stand-in is; a rule worth keeping is then built
into rust/memcore/src/fusion.rs and measured with ``python -m benches.quality``.
Sections 8.1-8.3 of benches/results/quality-experiments.md are this script's output
(``--vector-share 0.3``, the default before section 10).

LoCoMo runs twice: isolated memories (a memory per turn, as ``recall`` sees them) and a
stand-in of the turn path (each memory's text is the key ``record_turn`` gives a turn: its
day, the two turns before it in its session and its own text, ``TURN_OWN_WEIGHT`` times;
its vector embeds the day and its own text).

``--turn-grid`` instead scores the turn-path stand-in for each weight of a turn's own text
in its key and each vector share, per conversation (section 11 of the experiments).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benches import embedding_cache
from benches.quality import cosqa, locomo
from benches.quality.harness import DEFAULT_COSQA, DEFAULT_LOCOMO
from benches.quality.metrics import Scores, per_query

Array = np.ndarray[Any, np.dtype[np.float64]]
#: A rule: (cosines, BM25 scores, BM25's share) -> one score per candidate. A candidate
#: BM25 did not return holds the pool's lowest BM25 score, as in the engine's z-scores.
Rule = Callable[[Array, Array, float], Array]
CLIP = 6.0
DEPTH = 50
#: (vector, BM25, graph) weightings whose top 50s make up a query's candidates.
POOL_WEIGHTS = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), None)
#: Times a turn's own text is in its BM25 key (TURN_OWN_WEIGHT in
#: rust/memcore/src/store/conversations.rs).
TURN_OWN_WEIGHT = 3


@dataclass
class Query:
    gold: set[str]
    ids: list[str]  # a candidate's document (a file, a dia_id), not unique for code
    vector: Array
    bm25: Array
    group: str  # the conversation or "cosqa"
    category: str


def z(x: Array, low: float = -CLIP) -> Array:
    sd = float(x.std())
    if sd < 1e-6:
        return np.zeros_like(x)
    return np.clip((x - x.mean()) / sd, low, CLIP)


def minmax(x: Array) -> Array:
    spread = float(x.max() - x.min())
    return (x - x.min()) / spread if spread > 1e-9 else np.zeros_like(x)


def rrf(x: Array, k: float, floor_counts: bool = True) -> Array:
    """Reciprocal ranks; with ``floor_counts`` False the candidates at the lowest score
    (those the signal did not return, and the last one it did, which shares their score)
    get none, as the engine's RRF gives none to the first."""
    ranks = np.empty(len(x))
    ranks[np.argsort(-x, kind="stable")] = np.arange(len(x))
    out = 1.0 / (k + ranks + 1.0)
    return out if floor_counts else np.where(x > x.min(), out, 0.0)


def peaked(measure: Callable[[Array], float], alpha: float) -> Rule:
    """Each signal's weight times (1 + alpha * how peaked its z-scores are)."""

    def rule(v: Array, b: Array, share: float) -> Array:
        zv, zb = z(v), z(b)
        wv = (1 - share) * (1 + alpha * measure(np.sort(zv)[::-1]))
        wb = share * (1 + alpha * measure(np.sort(zb)[::-1]))
        return wv * zv + wb * zb

    return rule


RULES: dict[str, Rule] = {
    "z-scores (shipped)": lambda v, b, s: (1 - s) * z(v) + s * z(b),
    "min-max": lambda v, b, s: (1 - s) * minmax(v) + s * minmax(b),
    "cosine + share * BM25 / top BM25": lambda v, b, s: v + s * b / max(float(b.max()), 1e-9),
    "weighted RRF k=60": lambda v, b, s: (1 - s) * rrf(v, 60) + s * rrf(b, 60, False),
    "weighted RRF k=10": lambda v, b, s: (1 - s) * rrf(v, 10) + s * rrf(b, 10, False),
    "z of log(1 + BM25)": lambda v, b, s: (1 - s) * z(v) + s * z(np.log1p(b)),
    "z clipped at -1 below": lambda v, b, s: (1 - s) * z(v, -1) + s * z(b, -1),
    "z clipped at 0 below": lambda v, b, s: (1 - s) * z(v, 0) + s * z(b, 0),
    "peak: top z, alpha 1": peaked(lambda s: float(s[0]), 1.0),
    "peak: top-two gap, alpha 2": peaked(lambda s: float(s[0] - s[1]), 2.0),
    "peak: mean of top 5, alpha 1": peaked(lambda s: float(s[:5].mean()), 1.0),
}


def _query(
    hits: dict[Any, tuple[str, float | None, float | None]],
    gold: set[str],
    group: str,
    category: str,
) -> Query:
    rows = list(hits.values())
    present = [r[2] for r in rows if r[2] is not None]
    floor = min(present) if present else 0.0  # as the engine fills a missing BM25 score
    return Query(
        gold,
        [r[0] for r in rows],
        np.array([r[1] or 0.0 for r in rows]),
        np.array([floor if r[2] is None else r[2] for r in rows]),
        group,
        category,
    )


def cosqa_queries(folder: Path, log: Callable[[str], None]) -> list[Query]:
    pool, queries = cosqa.load(folder)
    out = []
    with tempfile.TemporaryDirectory(prefix="fusion-lab-") as tmp:
        mem, _ = cosqa.open_memory(Path(tmp) / "store")
        with mem:
            cosqa.index_pool(mem, Path(tmp), pool, log)
            engine, ns = mem._engine, mem.namespace
            for q in queries:
                vector = cosqa.query_vector(mem, q)
                hits: dict[Any, tuple[str, float | None, float | None]] = {}
                for w in POOL_WEIGHTS:
                    rows = engine.search_code(
                        ns,
                        q["doc"],
                        vector,
                        project_id=cosqa.PROJECT,
                        limit=DEPTH,
                        weights=w or (0.95, 0.05, 0.0),
                    )
                    for r in rows:
                        s = r.scores
                        hits[(r.file_path, r.start_line)] = (
                            r.file_path,
                            s.vector,
                            s.bm25,
                        )
                out.append(_query(hits, cosqa.gold_file(q), "cosqa", "all"))
    return out


def locomo_queries(
    path: Path, *, turn_keys: bool, own_weight: int = TURN_OWN_WEIGHT
) -> list[Query]:
    import memcore
    from memcore import _core

    out = []
    for conv in locomo.load(path):
        texts, vector_texts = [], []
        position: dict[int, int] = {}
        for i, t in enumerate(conv.turns):
            position[t.session] = position.get(t.session, -1) + 1
            at = int(t.at(position[t.session]).timestamp() * 1_000_000)
            before = [u.content for u in conv.turns[max(0, i - 2) : i] if u.session == t.session]
            day = _core.turn_vector_text(at, "").strip()
            own = [t.content] * own_weight
            texts.append("\n".join([day, *before, *own]) if turn_keys else t.content)
            vector_texts.append(_core.turn_vector_text(at, t.content) if turn_keys else t.content)
        passages = embedding_cache.embed(vector_texts, "passage", label=conv.sample_id)
        questions = embedding_cache.embed([q.text for q in conv.questions], "query", label="qs")
        with tempfile.TemporaryDirectory() as tmp, memcore.Memory(tmp, model=None) as mem:
            mem.store_memories(
                texts, vectors=passages, metadatas=[{"dia_id": t.dia_id} for t in conv.turns]
            )
            for q, qv in zip(conv.questions, questions, strict=True):
                hits: dict[Any, tuple[str, float | None, float | None]] = {}
                for w in POOL_WEIGHTS:
                    extra: dict[str, Any] = {} if w is None else {"weights": w}
                    for h in mem.recall(q.text, limit=DEPTH, vector=qv, **extra):
                        dia_id = str(h.memory.metadata["dia_id"])  # type: ignore[index]
                        hits[dia_id] = (dia_id, h.scores.vector, h.scores.bm25)
                category = locomo.CATEGORIES[q.category]
                out.append(_query(hits, q.gold, conv.sample_id, category))
    return out


def score(queries: list[Query], rule: Rule, share: float, ks: tuple[int, ...]) -> dict[str, Any]:
    """Mean metrics per bucket ("all", each group, each category)."""
    buckets: dict[str, Scores] = {}
    for q in queries:
        order = np.argsort(-rule(q.vector, q.bm25, share), kind="stable")
        found = list(dict.fromkeys(q.ids[i] for i in order))  # a document once, at its best
        values = per_query(found, q.gold, ks, DEPTH)
        for bucket in {"all", q.group, q.category}:
            buckets.setdefault(bucket, Scores()).add(values)
    return {name: s.means() for name, s in buckets.items()}


def _cells(means: dict[str, float], metrics: tuple[str, ...]) -> str:
    return " ".join(f"{100 * means[m]:.1f}" for m in metrics)


def cosqa_table(queries: list[Query]) -> list[str]:
    shares = (0.02, 0.05, 0.1, 0.2)
    metrics = ("MRR", "R@1", "R@5", "R@10")
    lines = [
        "| rule (BM25 share) | " + " | ".join(f"{s}" for s in shares) + " |",
        "|---" * (len(shares) + 1) + "|",
    ]
    for name, rule in RULES.items():
        cells = [_cells(score(queries, rule, s, (1, 5, 10))["all"], metrics) for s in shares]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def locomo_table(queries: list[Query], vector_share: float) -> list[str]:
    metrics = ("R@1", "R@5", "R@10")
    groups = sorted({q.group for q in queries})
    categories = list(locomo.CATEGORIES.values())
    lines = [
        "| rule | all | " + " | ".join(groups) + " | " + " | ".join(categories) + " |",
        "|---" * (2 + len(groups) + len(categories)) + "|",
    ]
    rows: dict[str, Rule] = {
        "BM25 alone": lambda v, b, s: z(b),
        "vector alone": lambda v, b, s: z(v),
        **RULES,
    }
    for name, rule in rows.items():
        means = score(queries, rule, 1 - vector_share, (1, 5, 10))
        cells = [_cells(means[k], metrics) for k in ["all", *groups]]
        cells += [f"{100 * means[c]['R@10']:.1f}" for c in categories if c in means]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def turn_grid(path: Path, own_weights: tuple[int, ...], shares: tuple[float, ...]) -> list[str]:
    """The turn-path stand-in per own-text weight and vector share: R@1 R@5 R@10 per
    conversation (their sum picks a cell on one conversation, read on the other) and
    multi-hop R@10."""
    metrics = ("R@1", "R@5", "R@10")
    lines: list[str] = []
    for own in own_weights:
        queries = locomo_queries(path, turn_keys=True, own_weight=own)
        groups = sorted({q.group for q in queries})
        if not lines:
            lines = [
                "| own text x | vector share | all | " + " | ".join(groups) + " | multi-hop R@10 |",
                "|---" * (4 + len(groups)) + "|",
            ]
        for share in shares:
            means = score(queries, RULES["z-scores (shipped)"], 1 - share, (1, 5, 10))
            cells = [_cells(means[k], metrics) for k in ["all", *groups]]
            multi = f"{100 * means['multi-hop']['R@10']:.1f}"
            lines.append(f"| {own} | {share} | " + " | ".join(cells) + f" | {multi} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.quality.fusion_lab")
    parser.add_argument("--cosqa", type=Path, default=DEFAULT_COSQA)
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO)
    parser.add_argument(
        "--vector-share",
        type=float,
        default=0.5,
        help="the vector's share of the non-graph weight for isolated memories (recall's)",
    )
    parser.add_argument(
        "--turn-vector-share",
        type=float,
        default=0.3,
        help="the same for the turn-path stand-in (Weights::TURNS, retrieve_context's)",
    )
    parser.add_argument(
        "--turn-grid",
        action="store_true",
        help="only the turn-path stand-in, per own-text weight (1-4) and vector share",
    )
    args = parser.parse_args(argv)
    if args.turn_grid:
        print("\n".join(turn_grid(args.locomo, (1, 2, 3, 4), (0.3, 0.35, 0.4, 0.5))))
        return 0

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    out = [
        "### CoSQA: MRR R@1 R@5 R@10 per BM25 share",
        "",
        *cosqa_table(cosqa_queries(args.cosqa, log)),
    ]
    for label, turn_keys, share in (
        ("isolated memories", False, args.vector_share),
        ("turn-path stand-in", True, args.turn_vector_share),
    ):
        queries = locomo_queries(args.locomo, turn_keys=turn_keys)
        out += [
            "",
            f"### LoCoMo, {label}: R@1 R@5 R@10 (all, per conversation), R@10 per category",
            "",
            *locomo_table(queries, share),
        ]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
