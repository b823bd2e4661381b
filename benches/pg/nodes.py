"""In-process measures of a PostgreSQL node against a SQLite store (the facade, no model,
384-d vectors given): write latency, search latency, apply lag between two nodes, and how
long a node takes to start from its snapshot or from nothing.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

import memcore
from benches import stats
from memcore._facade.base import native_engine

DIM = 384
_VOCABULARY = """
harbour lantern granite orchid meteor violin glacier saffron copper willow falcon ember
tundra quartz maple cobalt juniper canyon pebble thistle beacon marble cedar walrus prism
lagoon nebula basalt heron velvet summit tulip ferry comet anvil
"""
_WORDS = tuple(_VOCABULARY.split())


class Corpus:
    """Deterministic memories (a few words each) with random unit vectors."""

    def __init__(self, seed: int) -> None:
        self._rng = np.random.default_rng(seed)

    def texts(self, n: int) -> list[str]:
        picks = self._rng.integers(0, len(_WORDS), size=(n, 6))
        return [f"note {i}: " + " ".join(_WORDS[j] for j in row) for i, row in enumerate(picks)]

    def vectors(self, n: int) -> npt.NDArray[np.float32]:
        v = self._rng.standard_normal((n, DIM)).astype(np.float32)
        unit: npt.NDArray[np.float32] = v / np.linalg.norm(v, axis=1, keepdims=True)
        return unit

    def queries(self, n: int) -> list[tuple[str, npt.NDArray[np.float32]]]:
        words = self._rng.integers(0, len(_WORDS), size=(n, 2))
        vectors = self.vectors(n)
        return [(f"{_WORDS[a]} {_WORDS[b]}", vectors[i]) for i, (a, b) in enumerate(words)]


def fill(mem: memcore.Memory, corpus: Corpus, n: int, batch: int = 1_000) -> None:
    """`n` memories in batches (one transaction, and on PostgreSQL one log entry, each)."""
    for start in range(0, n, batch):
        size = min(batch, n - start)
        mem.store_memories(corpus.texts(size), vectors=corpus.vectors(size))


def settle(mem: memcore.Memory, timeout: float = 1_800.0) -> float:
    """Seconds until the indexer has committed everything the store holds."""
    started = time.perf_counter()
    deadline = started + timeout
    while time.perf_counter() < deadline:
        health = native_engine(mem).index_status()
        if health.text_pending == 0 and health.vectors_pending == 0:
            return time.perf_counter() - started
        time.sleep(0.05)
    raise TimeoutError(f"indexes not settled after {timeout:.0f} s")


def _row(t: stats.Timings) -> dict[str, Any]:
    return {"p50_ms": t.p50, "p99_ms": t.p99, "runs": t.runs}


def latencies(mem: memcore.Memory, corpus: Corpus, runs: int) -> dict[str, Any]:
    """store_memory, search_text and recall on an open store already holding data."""
    texts, vectors = corpus.texts(runs + 20), corpus.vectors(runs + 20)
    store = stats.time_calls(
        lambda i: mem.store_memory(texts[i], vector=vectors[i]), warmup=10, runs=runs
    )
    settle(mem)
    queries = corpus.queries(runs)
    search = stats.time_calls(lambda i: mem.search_text(queries[i][0]), warmup=10, runs=runs)
    recall = stats.time_calls(
        lambda i: mem.recall(queries[i][0], vector=queries[i][1]), warmup=10, runs=runs
    )
    return {"store_memory": _row(store), "search_text": _row(search), "recall": _row(recall)}


def apply_lag(a: memcore.Memory, b: memcore.Memory, corpus: Corpus, runs: int) -> dict[str, Any]:
    """From a write returning on node `a` to node `b` having applied it (its wait for the
    write's seq returning), one write every 5 ms."""
    texts, vectors = corpus.texts(runs), corpus.vectors(runs)
    lags = np.empty(runs)
    for i in range(runs):
        a.store_memory(texts[i], vector=vectors[i])
        seq = a.last_write_seq()
        assert seq is not None
        returned = time.perf_counter()
        b.wait_for_seq(seq, timeout=30)
        lags[i] = (time.perf_counter() - returned) * 1000
        time.sleep(0.005)
    t = stats.Timings(lags)
    return {"p50_ms": t.p50, "p99_ms": t.p99, "runs": t.runs}


def node(url: str, replica: Path) -> memcore.Memory:
    return memcore.Memory(url, replica_dir=replica, model=None)


def head(mem: memcore.Memory) -> int:
    """The namespace's head as this node last wrote it (the tail's last write)."""
    seq = mem.last_write_seq()
    assert seq is not None
    return seq


def start_times(url: str, work: Path, corpus: Corpus, n: int, tail: int) -> dict[str, Any]:
    """Build `n` memories on PostgreSQL through node S and close it (its snapshot saved);
    time a fresh node F bootstrapping from PostgreSQL; let F write a `tail`; then time S
    restarting from its snapshot and applying only that tail."""
    built = time.perf_counter()
    with node(url, work / "s") as s:
        fill(s, corpus, n)
        settle(s)
    build_s = time.perf_counter() - built
    print(f"start: {n:,} memories built and indexed in {build_s:.0f} s", flush=True)

    started = time.perf_counter()
    f = node(url, work / "f")
    fresh_open = time.perf_counter() - started
    f_settled = fresh_open + settle(f)
    print(f"start: a new node opened in {fresh_open:.1f} s, indexed in {f_settled:.0f} s")
    texts, vectors = corpus.texts(tail), corpus.vectors(tail)
    for i in range(tail):
        f.store_memory(texts[i], vector=vectors[i])
    last = head(f)
    f.close()

    started = time.perf_counter()
    with node(url, work / "s") as s:
        opened = time.perf_counter() - started
        s.wait_for_seq(last, timeout=600)
        caught_up = time.perf_counter() - started
        settled = caught_up + settle(s)
        count = s.count_memories()
    assert count == n + tail, f"the restarted node holds {count}, expected {n + tail}"
    return {
        "memories": n,
        "tail": tail,
        "build_seconds": build_s,
        "restart_open_s": opened,
        "restart_caught_up_s": caught_up,
        "restart_indexed_s": settled,
        "fresh_open_s": fresh_open,
        "fresh_indexed_s": f_settled,
    }


def sqlite_vs_node(
    url: str, work: Path, corpus_seed: int, base: int, runs: int
) -> Iterator[tuple[str, dict[str, Any]]]:
    """The same data and calls on a SQLite store and on a PostgreSQL node, then the apply
    lag from that node to a second one."""
    with memcore.Memory(work / "sqlite", model=None) as local:
        corpus = Corpus(corpus_seed)
        fill(local, corpus, base)
        settle(local)
        yield "sqlite", latencies(local, corpus, runs)
    with node(url, work / "a") as a:
        corpus = Corpus(corpus_seed)
        fill(a, corpus, base)
        settle(a)
        yield "postgres", latencies(a, corpus, runs)
        with node(url, work / "b") as b:
            settle(b)
            yield "apply_lag", apply_lag(a, b, Corpus(corpus_seed + 1), runs)
