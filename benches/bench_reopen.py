"""Reopen (docs/performance.md): from `Memory(path)` to the first answered vector and text query,
on the shared store of each scale, and after a crash that left writes unindexed.

The page cache is warm (the store was just written, and dropping caches needs privileges a
bench should not ask for), so this is the cost of loading the indexes, not of the disk.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from benches.context import NAMESPACE, Context
from benches.report import Record
from benches.stores import open_memory, settle
from benches.workloads import Workload

AREA = "reopen"

# Run in a child that stores memories and then dies without closing, as kill -9 would leave it.
_CRASH_WRITER = """
import os, sys, numpy as np, memcore
path, n = sys.argv[1], int(sys.argv[2])
vectors = np.load(sys.argv[3])
mem = memcore.Memory(path, model=None)
mem.store_memories([f"written before the crash {i}" for i in range(n)], vectors=vectors[:n])
os._exit(0)
"""


def _time_reopen(path: Path, vector: np.ndarray, text: str) -> tuple[float, float]:
    """Seconds to construct Memory, and to the first answered vector + text query."""
    start = time.perf_counter()
    mem = open_memory(path)
    opened = time.perf_counter() - start
    try:
        hits = mem.search(vector=vector, limit=10)
        words = mem.search_text(text, limit=10)
        ready = time.perf_counter() - start
        assert hits and words, "a reopened store answered nothing"
    finally:
        mem.close()
    return opened, ready


def _record(name: str, samples: list[float], scale: int, row: str | None, note: str) -> Record:
    values = np.array(samples)
    return Record(
        name=name,
        group=name,
        unit="s",
        scale=scale,
        p50=float(np.percentile(values, 50)),
        p95=float(np.percentile(values, 95)),
        p99=float(np.percentile(values, 99)),
        row=row,
        runs=len(samples),
        note=note,
    )


def collect(ctx: Context) -> list[Record]:
    records: list[Record] = []
    repeats = 3 if ctx.settings.quick else 7
    for scale in ctx.settings.scales:
        ctx.log(f"[reopen] {scale:,} memories")
        w = ctx.workload(scale)
        path = ctx.store(scale).path
        _time_reopen(path, w.query_vectors[0], w.queries[0])  # warm the page cache
        samples = [
            _time_reopen(path, w.query_vectors[i], w.queries[i]) for i in range(1, repeats + 1)
        ]
        graph = f"{scale // 2:,} entities, warm page cache"
        records.append(
            _record("reopen.open", [s[0] for s in samples], scale, None, f"Memory() only; {graph}")
        )
        records.append(
            _record(
                "reopen.first_query",
                [s[1] for s in samples],
                scale,
                "reopen",
                f"to the first vector + text answers; {graph}",
            )
        )
        records.append(_after_crash(ctx, scale))
        records.append(_close_with_backlog(ctx, scale))
    return records


def _store_copy(ctx: Context, scale: int, purpose: str) -> tuple[Workload, int, Path]:
    """The scale's workload, how many of its extra memories to write (a tenth of the store,
    at least 100) and a copy of its store to write them into."""
    w = ctx.workload(scale)
    n = min(len(w.extra_texts), max(scale // 10, 100))
    copy = ctx.scratch_dir(purpose) / "data"
    shutil.copytree(ctx.store(scale).path, copy)
    return w, n, copy


def _close_with_backlog(ctx: Context, scale: int) -> Record:
    """close() right after one bulk write of `n` memories: it leaves what the indexer has
    not reached to the next open (which the second open times catching up)."""
    w, n, copy = _store_copy(ctx, scale, "close")
    mem = open_memory(copy)
    mem.store_memories(list(w.extra_texts[:n]), vectors=w.extra_vectors[:n])
    start = time.perf_counter()
    mem.close()
    closed = time.perf_counter() - start
    mem = open_memory(copy)
    try:
        start = time.perf_counter()
        mem.wait_indexed()
        caught_up = time.perf_counter() - start
    finally:
        mem.close()
    shutil.rmtree(copy.parent, ignore_errors=True)
    return Record(
        name="reopen.close_pending",
        group="reopen.close_pending",
        unit="s",
        scale=scale,
        value=closed,
        row="close_pending",
        runs=1,
        note=f"close() after storing {n:,} memories in one batch; the next open's indexer "
        f"caught up with them in {caught_up:.2f} s (what close() used to wait for)",
    )


def _after_crash(ctx: Context, scale: int) -> Record:
    """Reopen after a writer died with `n` stored but unindexed memories: the op-log replay."""
    w, n, copy = _store_copy(ctx, scale, "crash")
    vectors = copy.parent / "vectors.npy"
    np.save(vectors, w.extra_vectors[:n])
    subprocess.run(
        [sys.executable, "-c", _CRASH_WRITER, str(copy), str(n), str(vectors)],
        check=True,
        timeout=600,
    )
    start = time.perf_counter()
    mem = open_memory(copy)
    try:
        mem.search(vector=w.query_vectors[0], limit=10)
        first = time.perf_counter() - start
        settle(mem)
        settled = time.perf_counter() - start
        assert mem._engine.count_memories(NAMESPACE) == scale + n, "crashed writes were lost"
    finally:
        mem.close()
    shutil.rmtree(copy.parent, ignore_errors=True)
    return Record(
        name="reopen.after_crash",
        group="reopen.after_crash",
        unit="s",
        scale=scale,
        value=first,
        runs=1,
        note=f"{n:,} memories written by a process that exited without closing; "
        f"first answer {first:.2f} s, indexes caught up after {settled:.2f} s",
    )
