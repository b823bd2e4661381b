"""Ingest (docs/performance.md): durable and HNSW-searchable rates with vectors given.

Two stores are built per scale. A plain one answers the budget row (memories only, as the
usearch peer builds vectors only). The shared one, which every later area searches, first
gets the entity graph (scale/2 entities, 3 relations each) and then the same memories, so
each memory is matched against every entity name on the way in; its rates are reported too.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from benches.context import NAMESPACE, BuiltStore, Context
from benches.peers import load_peer
from benches.report import Record
from benches.stats import rates
from benches.stores import open_memory, settle
from benches.workloads import EntityGraph, Workload

if TYPE_CHECKING:
    from memcore import Memory

AREA = "ingest"
# Entities or relations per create_entities / create_relations call.
GRAPH_BATCH = 5_000


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


def ingest(ctx: Context, scale: int, path: Path, *, with_graph: bool) -> IngestResult:
    """Build a store of `scale` memories at `path`, timing each phase."""
    w = ctx.workload(scale)
    batch = ctx.settings.ingest_batch
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
            stored = mem.store_memories(w.texts[lo:hi], vectors=w.vectors[lo:hi])
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


def _durable(name: str, group: str, result: IngestResult, scale: int, note: str) -> Record:
    # p95/p99 of a rate are its slow tail: the 5th and 1st percentiles of per-batch rates.
    per_batch = result.batch_rates
    return Record(
        name=name,
        group=group,
        unit="memories/s",
        scale=scale,
        value=scale / result.durable_s,
        p50=float(np.percentile(per_batch, 50)),
        p95=float(np.percentile(per_batch, 5)),
        p99=float(np.percentile(per_batch, 1)),
        higher_is_better=True,
        runs=len(per_batch),
        note=note,
    )


def _searchable(name: str, group: str, result: IngestResult, scale: int, note: str) -> Record:
    return Record(
        name=name,
        group=group,
        unit="memories/s",
        scale=scale,
        value=scale / result.searchable_s,
        higher_is_better=True,
        runs=1,
        note=note,
    )


def collect(ctx: Context) -> list[Record]:
    records: list[Record] = []
    batch = ctx.settings.ingest_batch
    for scale in ctx.settings.scales:
        ctx.log(f"[ingest] {scale:,} memories")
        plain_dir = ctx.scratch_dir("ingest-plain")
        plain = ingest(ctx, scale, plain_dir, with_graph=False)
        shutil.rmtree(plain_dir, ignore_errors=True)
        durable = _durable(
            "ingest.durable",
            "ingest_durable",
            plain,
            scale,
            f"store_memories, {batch} per call; p50/p95/p99 = per-call rate (slow tail)",
        )
        durable.row = "ingest_durable"
        searchable = _searchable(
            "ingest.searchable",
            "ingest_searchable",
            plain,
            scale,
            "first batch until flush() returns with 0 pending",
        )
        searchable.row = "ingest_searchable"
        records += [durable, searchable]
        shared: list[Record] = []
        ctx.store(scale, lambda path, s=scale, out=shared: _build_shared(ctx, s, path, out))
        records += shared
        records += _peer_builds(ctx, scale)
    return records


def _build_shared(ctx: Context, scale: int, path: Path, out: list[Record]) -> BuiltStore:
    """Build the shared store (graph first, then memories) and report its rates."""
    result = ingest(ctx, scale, path, with_graph=True)
    graph = ctx.workload(scale).graph()
    if result.graph_s is not None:
        out.append(
            Record(
                name="graph.build",
                group="graph_build",
                unit="items/s",
                scale=scale,
                value=(len(graph.names) + len(graph.edges)) / result.graph_s,
                higher_is_better=True,
                runs=1,
                note=f"{len(graph.names):,} entities + {len(graph.edges):,} relations in "
                f"{result.graph_s:.1f} s, {GRAPH_BATCH:,} per call",
            )
        )
    note = f"into a store holding {len(graph.names):,} entities (mention matching on write)"
    out.append(_durable("ingest.durable.with_graph", "ingest_durable_graph", result, scale, note))
    out.append(
        _searchable("ingest.searchable.with_graph", "ingest_searchable_graph", result, scale, note)
    )
    return result.store


def _peer_builds(ctx: Context, scale: int) -> list[Record]:
    """The same rows loaded into each peer; chroma and usearch index as they insert."""
    out: list[Record] = []
    for name in ("sqlite3", "lancedb", "chromadb", "usearch"):
        peer = ctx.peer(name, scale)
        if peer is None or (name, scale) not in ctx.peer_builds:
            continue
        seconds, count = ctx.peer_builds[(name, scale)]
        if name == "sqlite3":
            out.append(_peer_rate(name, "ingest_durable", count, seconds, scale, "executemany"))
        elif name == "lancedb":
            insert_s = getattr(peer, "insert_seconds", seconds)
            out.append(
                _peer_rate(name, "ingest_durable", count, insert_s, scale, "10k-row adds, no index")
            )
            out.append(
                _peer_rate(
                    name, "ingest_searchable", count, seconds, scale, "insert + HNSW + FTS index"
                )
            )
        elif name == "chromadb":
            out.append(
                _peer_rate(name, "ingest_searchable", count, seconds, scale, "add, max batch size")
            )
        else:
            out.append(
                _peer_rate(
                    "usearch (2 threads)", "ingest_searchable", count, seconds, scale, "threads=0"
                )
            )
            out += _usearch_single_thread(ctx, scale)
    return out


def _usearch_single_thread(ctx: Context, scale: int) -> list[Record]:
    """The budget's peer figure is a single-threaded usearch build."""
    peer, _reason = load_peer("usearch", ctx.scratch_dir("usearch-1t"))
    if peer is None:
        return []
    w = ctx.workload(scale)
    seconds = peer.build(w.texts, w.vectors, threads=1)  # type: ignore[call-arg]
    peer.close()
    return [
        _peer_rate("usearch (1 thread)", "ingest_searchable", scale, seconds, scale, "threads=1")
    ]


def _peer_rate(
    system: str, group: str, count: int, seconds: float, scale: int, note: str
) -> Record:
    return Record(
        name=group.replace("_", "."),
        group=group,
        unit="memories/s",
        system=system,
        scale=scale,
        value=count / seconds,
        higher_is_better=True,
        runs=1,
        note=note,
    )
