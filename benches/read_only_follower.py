"""A read-only process after its writer was killed with vectors unindexed (docs/reliability.md):
vector search p50 right after ``Memory(path, read_only=True)``, while every left-over vector is
scored exactly, and once the follower has put them into the graph it holds in memory.

    python -m benches.read_only_follower                 # 10,000 left-over 384-d vectors
    python -m benches.read_only_follower --left-over 50000

The writer (a child process) stores the memories in one batch and exits without closing, before
its indexer saved any graph. Vectors are random unit vectors (the hard case for a graph);
nothing is asserted here. The row is merged into ``results/read_only_follower.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results" / "read_only_follower.json"
DIM = 384
QUERIES = 200
DRAIN_TIMEOUT_S = 900

_KILLED_WRITER = """
import os, sys, numpy as np, memcore
vectors = np.load(sys.argv[2])
mem = memcore.Memory(sys.argv[1], model=None)
mem.store_memories([f"left over {i}" for i in range(len(vectors))], vectors=vectors)
os._exit(0)
"""


def _p50_ms(mem: object, queries: np.ndarray) -> float:
    samples = []
    for q in queries:
        start = time.perf_counter()
        mem.search(vector=q, limit=10)  # type: ignore[attr-defined]
        samples.append(time.perf_counter() - start)
    return float(np.median(samples) * 1000)


def measure(left_over: int) -> dict[str, float]:
    import memcore

    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((left_over + QUERIES, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    with tempfile.TemporaryDirectory() as tmp:
        stored = Path(tmp) / "vectors.npy"
        np.save(stored, vectors[:left_over])
        store = Path(tmp) / "store"
        subprocess.run([sys.executable, "-c", _KILLED_WRITER, str(store), str(stored)], check=True)
        mem = memcore.Memory(store, model=None, read_only=True)
        try:
            at_open = _p50_ms(mem, vectors[left_over:])
            start = time.perf_counter()
            while mem._engine.index_status().vectors_pending > 0:
                if time.perf_counter() - start > DRAIN_TIMEOUT_S:
                    raise TimeoutError("the follower never indexed the left-over vectors")
                time.sleep(0.1)
            drained = time.perf_counter() - start
            after = _p50_ms(mem, vectors[left_over:])
        finally:
            mem.close()
    return {
        "left_over": left_over,
        "search_p50_ms_at_open": round(at_open, 3),
        "indexed_in_memory_after_s": round(drained, 2),
        "search_p50_ms_after": round(after, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--left-over", type=int, default=10_000)
    args = parser.parse_args()
    row = measure(args.left_over)
    print(json.dumps(row))
    rows = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    rows[str(args.left_over)] = row
    RESULTS.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
