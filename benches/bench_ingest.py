"""Ingest (docs/performance.md): durable and HNSW-searchable rates with vectors given.

Two stores are built per scale. A plain one answers the budget row (memories only, as the
usearch peer builds vectors only). The shared one, which every later area searches, first
gets the entity graph (scale/2 entities, 3 relations each) and then the same memories, so
each memory is matched against every entity name on the way in; its rates are reported too.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from benches.building import GRAPH_BATCH, IngestResult, ingest
from benches.context import Context
from benches.peers import load_peer
from benches.report import Record
from benches.stores import BuiltStore

AREA = "ingest"


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
        plain = ingest(
            ctx.workload(scale), scale, plain_dir, batch=ctx.settings.ingest_batch, with_graph=False
        )
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
    result = ingest(
        ctx.workload(scale), scale, path, batch=ctx.settings.ingest_batch, with_graph=True
    )
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
