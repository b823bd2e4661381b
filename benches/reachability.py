"""Reachability: each stored vector searched by itself, through the engine (``Memory.search``,
top 10); a vector absent from its own results is unreachable (docs/reliability.md).

    python -m benches.reachability                      # random 64-d and real MiniLM, 10k and 100k
    python -m benches.reachability --scales 10000 --sources real --label after

Each store is built as a store is: memories written in batches of 1,000 (vectors given) and
indexed by the background indexer on both cores, then checked; then its indexes are rebuilt
from the database (``Memory.repair``, a clean rebuild) and it is checked again. Beside the
counts: the seconds until every vector was in the graph (writes of the whole store, then
``flush``), and the p50 of a vector search (1,000 queries). Real embeddings are MiniLM's of the
benchmark corpus (benches/embedding_cache.py; computed once, cached). Results are merged into
``results/reachability.json`` under the ``--label``; nothing is asserted here.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benches import embedding_cache, workloads

RESULTS = Path(__file__).resolve().parent / "results"
BATCH = 1000
LIMIT = 10
QUERIES = 1000


def vectors(source: str, n: int) -> tuple[list[str], np.ndarray]:
    """The texts and vectors of a store of `n` memories."""
    if source == "real":
        texts = workloads.corpus(n)
        return texts, embedding_cache.embed(texts, "passage", label=f"corpus {n:,}")
    rng = np.random.default_rng(20)
    dim = int(source.removeprefix("random").removesuffix("d") or 64)
    return [f"vector {i}" for i in range(n)], rng.standard_normal((n, dim)).astype(np.float32)


def unreachable(mem: Any, ids: list[str], matrix: np.ndarray) -> list[int]:
    """Indexes of the memories a search by their own vector does not return."""
    missing = []
    for i, memory_id in enumerate(ids):
        hits = mem.search(vector=matrix[i], limit=LIMIT)
        if memory_id not in [h.memory.id for h in hits]:
            missing.append(i)
    return missing


def search_p50(mem: Any, matrix: np.ndarray) -> float:
    rng = np.random.default_rng(7)
    picks = rng.integers(0, len(matrix), QUERIES)
    noise = rng.standard_normal((QUERIES, matrix.shape[1])).astype(np.float32) * 0.05
    times = []
    for row, extra in zip(picks, noise, strict=True):
        start = time.perf_counter()
        mem.search(vector=matrix[row] + extra, limit=LIMIT)
        times.append(time.perf_counter() - start)
    return float(np.percentile(times, 50) * 1000)


def measure(source: str, n: int) -> dict[str, Any]:
    import memcore

    texts, matrix = vectors(source, n)
    with (
        tempfile.TemporaryDirectory(prefix="memcore-reach-") as tmp,
        memcore.Memory(Path(tmp) / "store", model=None) as mem,
    ):
        start = time.perf_counter()
        ids: list[str] = []
        for at in range(0, n, BATCH):
            stored = mem.store_memories(texts[at : at + BATCH], vectors=matrix[at : at + BATCH])
            ids.extend(r.id for r in stored)
        mem._engine.flush()
        indexed = time.perf_counter() - start
        live = unreachable(mem, ids, matrix)
        p50 = search_p50(mem, matrix)
        start = time.perf_counter()
        mem.repair()
        rebuilt_s = time.perf_counter() - start
        rebuilt = unreachable(mem, ids, matrix)
    return {
        "source": source,
        "dim": int(matrix.shape[1]),
        "n": n,
        "unreachable": len(live),
        "unreachable_after_rebuild": len(rebuilt),
        "examples": [ids[i] for i in (live + rebuilt)[:5]],
        "indexed_s": round(indexed, 2),
        "vectors_per_s": round(n / indexed),
        "rebuild_s": round(rebuilt_s, 2),
        "search_p50_ms": round(p50, 4),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.reachability", description=__doc__)
    parser.add_argument("--scales", default="10000,100000")
    parser.add_argument("--sources", default="random64d,real", help="random<N>d and/or real")
    parser.add_argument("--label", default="run", help="the results' key (e.g. before, after)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    path = args.out / "reachability.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    rows = results.setdefault(args.label, [])
    for source in args.sources.split(","):
        if source == "real" and (reason := embedding_cache.available()) is not None:
            print(f"skipping real embeddings: {reason}")
            continue
        for n in (int(s) for s in args.scales.split(",")):
            row = {**measure(source, n), "commit": commit, "date": time.strftime("%Y-%m-%d")}
            print(json.dumps(row), flush=True)
            rows[:] = [r for r in rows if (r["source"], r["n"]) != (source, n)] + [row]
            args.out.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
