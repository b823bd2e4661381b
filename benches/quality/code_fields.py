"""Screen a field-aware BM25 for code on CoSQA before touching the index schema.

    python -m benches.quality.code_fields [--cosqa DIR]

Each function of the pool is split into its name, its docstring and the rest of its body
(Python's ``ast``); each part gets a BM25 of its own (own idf, own length normalisation,
as separate tantivy fields would), and a function's lexical score is their weighted sum
(a multi-field query with per-field boosts). That score is fused with the exact cosine of
the MiniLM vectors as the engine fuses (z-scores clipped at ±6 over the union of each
signal's top 100). The analyser is a stand-in of rust/memcore/src/text/analyzer.rs
(identifier splitting, lower case, a crude suffix stemmer), so every variant, the
whole-text baseline included, is scored by the same code and only the differences count.
Dev / held-out: the queries split by index parity as in ``cosqa_tune``; a variant and a
BM25 share are picked by MRR on one half and read on the other.
Section 11.3 of benches/results/quality-experiments.md is this script's output.
"""

from __future__ import annotations

import argparse
import ast
import math
import re
import sys
from collections import Counter
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np

from benches import embedding_cache
from benches.quality import cosqa
from benches.quality.harness import DEFAULT_COSQA
from benches.quality.metrics import Scores, per_query

Array = np.ndarray[Any, np.dtype[np.float64]]
POOL = 100  # candidates per signal, as the engine's recall pool
SHARES = (0.02, 0.05, 0.1, 0.15, 0.2)
_WORD = re.compile(r"[A-Za-z0-9]+")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_DOCSTRING = re.compile(r"(\"\"\"|''')(.*?)\1", re.S)


def _stem(term: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(term) > 4 and term.endswith(suffix):
            return term[: -len(suffix)]
    return term


def terms(text: str) -> list[str]:
    """Words, lower-cased and stemmed; a compound word also gives its parts."""
    out = []
    for word in _WORD.findall(text):
        out.append(_stem(word.lower()))
        parts = _PART.findall(word)
        if len(parts) > 1:
            out += [_stem(p.lower()) for p in parts]
    return out


def split_function(code: str) -> dict[str, str]:
    """The function's name, docstring, body without the docstring, and whole text."""
    name, doc = "", ""
    try:
        tree = ast.parse(code if not code[:1].isspace() else "if 1:\n" + code)
        node = next(
            (
                n
                for n in ast.walk(tree)
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            ),
            None,
        )
        if node is not None:
            name, doc = node.name, ast.get_docstring(node) or ""
    except SyntaxError:
        found = re.search(r"def\s+(\w+)", code)
        name = found.group(1) if found else ""
    match = _DOCSTRING.search(code) if doc else None
    body = code[: match.start()] + code[match.end() :] if match else code
    return {"name": name, "doc": doc, "body": body, "full": code}


class Bm25:
    """Okapi BM25 (k1 1.2, b 0.75, tantivy's defaults) over one field."""

    def __init__(self, docs: list[list[str]]) -> None:
        self.n = len(docs)
        self.lengths = np.array([len(d) for d in docs], dtype=np.float64)
        self.mean_length = max(float(self.lengths.mean()), 1e-9)
        self.postings: dict[str, list[tuple[int, int]]] = {}
        for i, doc in enumerate(docs):
            for term, count in Counter(doc).items():
                self.postings.setdefault(term, []).append((i, count))

    def scores(self, query: list[str]) -> Array:
        out = np.zeros(self.n)
        for term in set(query):
            posting = self.postings.get(term)
            if not posting:
                continue
            idf = math.log(1 + (self.n - len(posting) + 0.5) / (len(posting) + 0.5))
            ids = np.array([i for i, _ in posting])
            tf = np.array([c for _, c in posting], dtype=np.float64)
            norm = 1.2 * (0.25 + 0.75 * self.lengths[ids] / self.mean_length)
            out[ids] += idf * tf * 2.2 / (tf + norm)
        return out


def _z(x: Array) -> Array:
    sd = float(x.std())
    return np.zeros_like(x) if sd < 1e-6 else np.clip((x - x.mean()) / sd, -6.0, 6.0)


def variants() -> dict[str, dict[str, float]]:
    """Field weights to try: the whole text (today's key), then name / doc / body boosts
    (z-scoring makes a common factor irrelevant, so the grid keeps distinct ratios)."""
    out: dict[str, dict[str, float]] = {"whole text (today)": {"full": 1.0}}
    seen: set[tuple[float, ...]] = set()
    for name, doc, body in product((0, 1, 2), (0, 1, 2), (0, 0.25, 0.5, 1)):
        top = max(name, doc)
        ratio = (name / top, doc / top, body / top) if top else ()
        if not ratio or ratio in seen:
            continue
        seen.add(ratio)
        out[f"name {name}, doc {doc}, body {body}"] = {"name": name, "doc": doc, "body": body}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.quality.code_fields")
    parser.add_argument("--cosqa", type=Path, default=DEFAULT_COSQA)
    args = parser.parse_args(argv)
    pool, queries = cosqa.load(args.cosqa)
    codes = sorted(pool, key=pool.__getitem__)
    files = [cosqa.gold_file({"retrieval_idx": pool[c]}).pop() for c in codes]
    parts = [split_function(c) for c in codes]
    fields = {f: Bm25([terms(p[f]) for p in parts]) for f in ("name", "doc", "body", "full")}
    passages = embedding_cache.embed([c[:3000] for c in codes], "passage", label="cosqa pool")
    query_v = embedding_cache.embed([q["doc"] for q in queries], "query", label="cosqa queries")
    passages /= np.linalg.norm(passages, axis=1, keepdims=True)
    query_v /= np.linalg.norm(query_v, axis=1, keepdims=True)
    cosines = query_v @ passages.T
    query_terms = [terms(q["doc"]) for q in queries]
    by_field = {f: np.stack([bm.scores(t) for t in query_terms]) for f, bm in fields.items()}
    lines = [
        "| BM25 fields | BM25 alone MRR | "
        + " | ".join(f"b = {s}: MRR R@1" for s in SHARES)
        + " | b picked on even → odd's MRR | b picked on odd → even's MRR |",
        "|---" * (4 + len(SHARES)) + "|",
    ]
    for label, weights in variants().items():
        lexical = sum(w * by_field[f] for f, w in weights.items() if w)
        cells, halves = [], []
        for share in (1.0, *SHARES):
            buckets = {"all": Scores(), "even": Scores(), "odd": Scores()}
            for qi, q in enumerate(queries):
                v, b = cosines[qi], lexical[qi]
                top_b = np.argsort(-b)[:POOL] if b.max() > 0 else np.array([], dtype=int)
                pool_ids = np.union1d(np.argsort(-v)[:POOL], top_b).astype(int)
                fused = (1 - share) * _z(v[pool_ids]) + share * _z(b[pool_ids])
                order = pool_ids[np.argsort(-fused, kind="stable")][: cosqa.DEPTH]
                found = list(dict.fromkeys(files[i] for i in order))
                values = per_query(found, cosqa.gold_file(q), cosqa.KS, cosqa.DEPTH)
                for bucket in ("all", "even" if qi % 2 == 0 else "odd"):
                    buckets[bucket].add(values)
            means = {k: s.means() for k, s in buckets.items()}
            if share == 1.0:
                cells.append(f"{100 * means['all']['MRR']:.1f}")
                continue
            cells.append(f"{100 * means['all']['MRR']:.1f} {100 * means['all']['R@1']:.1f}")
            halves.append((share, means["even"]["MRR"], means["odd"]["MRR"]))
        on_even = max(halves, key=lambda h: h[1])
        on_odd = max(halves, key=lambda h: h[2])
        cells.append(f"{on_even[0]} → {100 * on_even[2]:.1f}")
        cells.append(f"{on_odd[0]} → {100 * on_odd[1]:.1f}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
        print(lines[-1], file=sys.stderr, flush=True)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
