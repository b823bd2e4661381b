"""Building a memcore store of one scale (the entity graph, then the memories), timing
each phase: what `Context.store` builds by default and what bench_ingest reports.

Kept out of bench_ingest so that the shared context can build a store without importing
a bench area (which imports the context).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from benches.stats import rates
from benches.stores import NAMESPACE, BuiltStore, open_memory, settle
from benches.workloads import EntityGraph, Workload

if TYPE_CHECKING:
    from memcore import Memory

# Entities or relations per create_entities / create_relations call.
GRAPH_BATCH = 5_000
# An agent's memories come from its conversations: consecutive memories share a thread,
# and they are stored as episodes, so recall pays for its thread prior (docs/retrieval.md)
# on every query: the cost measured is the prior's worst case (facts skip it).
THREAD_SIZE = 50


@dataclass
class IngestResult:
    store: BuiltStore
    durable_s: float  # from the first batch until the last store_memories returned
    searchable_s: float  # from the first batch until flush() returned with 0 pending
    batch_rates: np.ndarray  # memories/s of each store_memories call
    graph_s: float | None


def build_graph(mem: Memory, graph: EntityGraph) -> float:
    """Create the entities, then the relations, in batches; return the seconds taken."""
    start = time.perf_counter()
    for lo in range(0, len(graph.names), GRAPH_BATCH):
        drafts = [
            {"name": graph.names[i], "entityType": graph.types[i]}
            for i in range(lo, min(lo + GRAPH_BATCH, len(graph.names)))
        ]
        mem._engine.create_entities(NAMESPACE, drafts)
    for lo in range(0, len(graph.edges), GRAPH_BATCH):
        pairs = graph.edges[lo : lo + GRAPH_BATCH]
        kinds = graph.relation_types[lo : lo + GRAPH_BATCH]
        relations = [
            (graph.names[s], graph.names[t], kind, None)
            for (s, t), kind in zip(pairs.tolist(), kinds, strict=True)
        ]
        mem._engine.create_relations(NAMESPACE, relations)
    return time.perf_counter() - start


def ingest(w: Workload, scale: int, path: Path, *, batch: int, with_graph: bool) -> IngestResult:
    """Build a store of `scale` memories of workload `w` at `path`, `batch` per write,
    timing each phase."""
    mem = open_memory(path)
    try:
        graph_s = build_graph(mem, w.graph()) if with_graph else None
        counts: list[int] = []
        seconds: list[float] = []
        ids: list[str] = []
        start = time.perf_counter()
        for lo in range(0, scale, batch):
            hi = min(lo + batch, scale)
            t0 = time.perf_counter()
            stored = mem.store_memories(
                w.texts[lo:hi],
                vectors=w.vectors[lo:hi],
                thread_ids=[f"thread-{i // THREAD_SIZE}" for i in range(lo, hi)],
                memory_type="episodic",
            )
            seconds.append(time.perf_counter() - t0)
            counts.append(hi - lo)
            ids.extend(r.id for r in stored)
        durable_s = time.perf_counter() - start
        settle(mem)
        searchable_s = time.perf_counter() - start
        _check(mem, w, ids)
    finally:
        mem.close()
    batch_rates = rates(np.array(counts, dtype=float), np.array(seconds))
    return IngestResult(BuiltStore(path, ids), durable_s, searchable_s, batch_rates, graph_s)


def _check(mem: Memory, w: Workload, ids: list[str]) -> None:
    """Outside the timing: everything is stored and a stored vector finds its own memory."""
    assert mem._engine.count_memories(NAMESPACE) == w.scale, "memory count differs from workload"
    for i in np.linspace(0, w.scale - 1, 5).astype(int):
        top = mem.search(vector=w.vectors[i], limit=1)
        assert top and top[0].memory.id == ids[i], f"memory {i} does not find itself"
