"""Child process of bench_rss: open a store, query it, print resident memory as JSON.

A fresh interpreter, so the number is memcore's and not the bench harness's or a peer's.
Usage: python -m benches.rss_probe STORE_DIR QUERIES.npz
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    import memcore

    store, queries = Path(sys.argv[1]), np.load(sys.argv[2])
    vectors, texts = queries["vectors"], [str(t) for t in queries["texts"]]
    baseline = _status_mb("VmRSS")
    mem = memcore.Memory(store, model=None)
    opened = _status_mb("VmRSS")
    for i, text in enumerate(texts):
        mem.search(vector=vectors[i], limit=10)
        mem.search_text(text, limit=10)
        mem.recall(text, vector=vectors[i], limit=10)
    queried = _status_mb("VmRSS")
    peak = _status_mb("VmHWM")
    mem.close()
    print(json.dumps({"baseline": baseline, "opened": opened, "queried": queried, "peak": peak}))


if __name__ == "__main__":
    main()
