"""Search latency (docs/performance.md): vector k=10 with recall@10 vs exact, search_text, and
hybrid recall with the vector given, on the shared store (graph included) at each scale.

memcore is timed through the facade (`Memory.search` etc., what a user calls, records
converted to dataclasses) and through the native engine alone (`mem._engine.…`), so the
facade's share is visible. Peers return ids plus the text where their API fetches it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from benches.context import NAMESPACE, Context
from benches.peers import Peer
from benches.report import Record, latency
from benches.stats import Timings, time_calls
from benches.stores import open_memory, settle
from benches.workloads import recall_at_k

if TYPE_CHECKING:
    from memcore import Memory

AREA = "search"
K = 10
_RECALL_NOTE = "mean over {n} queries; a tie with the 10th exact neighbour counts as a hit"


def collect(ctx: Context) -> list[Record]:
    records: list[Record] = []
    for scale in ctx.settings.scales:
        ctx.log(f"[search] {scale:,} memories")
        built = ctx.store(scale)
        mem = open_memory(built.path)
        settle(mem)  # steady state: the committed indexes, not the pending buffers
        try:
            records += _memcore(ctx, scale, mem, built.index_of())
        finally:
            mem.close()
        records += _peers(ctx, scale)
    records += _small_store(ctx)
    return records


SMALL = 3_000
"""A typical agent's store: small enough that a search could be answered by scoring every
memory exactly, which is what the engine must not do when the graph walk is cheaper."""


def _small_store(ctx: Context) -> list[Record]:
    """Vector search (unfiltered and in one thread) on a 3,000-memory store."""
    s, w = ctx.settings, ctx.workload(min(ctx.settings.scales))
    qv, n = w.query_vectors, len(w.query_vectors)
    size = min(SMALL, len(w.texts))
    mem = open_memory(ctx.scratch_dir("search-small"))
    try:
        mem.store_memories(
            w.texts[:size],
            vectors=w.vectors[:size],
            thread_ids=[f"thread-{i % 10}" for i in range(size)],
        )
        settle(mem)

        def timed(op: Callable[[int], object]) -> Timings:
            return time_calls(op, warmup=s.warmup, runs=s.runs)

        return [
            latency(
                "search_vector.facade.small",
                "search_vector",
                scale=size,
                timings=timed(lambda i: mem.search(vector=qv[i % n], limit=K)),
                note=f"{size:,} memories, k=10",
            ),
            latency(
                "search_vector.facade.small_thread",
                "search_vector",
                scale=size,
                timings=timed(
                    lambda i: mem.search(vector=qv[i % n], limit=K, thread_id="thread-3")
                ),
                note=f"{size:,} memories, k=10, one thread's {size // 10:,} (exact scoring)",
            ),
        ]
    finally:
        mem.close()


def _memcore(ctx: Context, scale: int, mem: Memory, index: dict[str, int]) -> list[Record]:
    s, w = ctx.settings, ctx.workload(scale)
    qv, qt, n = w.query_vectors, w.queries, len(w.queries)
    engine = mem._engine

    def timed(op: Callable[[int], object]) -> Timings:
        return time_calls(op, warmup=s.warmup, runs=s.runs)

    out = [
        latency(
            "search_vector.facade",
            "search_vector",
            scale=scale,
            row="search_vector",
            timings=timed(lambda i: mem.search(vector=qv[i % n], limit=K)),
        ),
        latency(
            "search_vector.core",
            "search_vector",
            scale=scale,
            timings=timed(lambda i: engine.search_vector(NAMESPACE, qv[i % n], limit=K)),
            note="native engine call, no facade",
        ),
        latency(
            "search_text.facade",
            "search_text",
            scale=scale,
            row="search_text",
            timings=timed(lambda i: mem.search_text(qt[i % n], limit=K)),
        ),
        latency(
            "search_text.core",
            "search_text",
            scale=scale,
            timings=timed(lambda i: engine.search_text(NAMESPACE, qt[i % n], limit=K)),
            note="native engine call, no facade",
        ),
        latency(
            "recall.facade",
            "recall",
            scale=scale,
            row="recall",
            timings=timed(lambda i: mem.recall(qt[i % n], vector=qv[i % n], limit=K)),
            note=f"vector + BM25 + PPR over {scale // 2:,} entities, z-score fusion",
        ),
        latency(
            "recall.facade.no_thread_prior",
            "recall",
            scale=scale,
            timings=timed(
                lambda i: mem.recall(qt[i % n], vector=qv[i % n], limit=K, thread_prior=0.0)
            ),
            note="the same without the thread prior: the difference is what it costs",
        ),
        latency(
            "recall.core",
            "recall",
            scale=scale,
            timings=timed(lambda i: engine.recall(NAMESPACE, qt[i % n], qv[i % n], limit=K)),
            note="native engine call, no facade",
        ),
        latency(
            "search_memories.facade",
            "search_memories",
            scale=scale,
            timings=timed(lambda i: mem.search_memories(qt[i % n], vector=qv[i % n])),
            note="agent-facing hybrid, limit 5",
        ),
    ]
    # Correctness, outside the timing: recall@10 against exact, and text search answers.
    found = [[index[h.memory.id] for h in mem.search(vector=qv[i], limit=K)] for i in range(n)]
    out.append(_recall_record("memcore", scale, found, ctx))
    empty = sum(1 for q in qt if not mem.search_text(q, limit=K))
    hybrid_empty = sum(1 for i in range(n) if not mem.recall(qt[i], vector=qv[i], limit=K))
    assert hybrid_empty == 0, f"recall returned nothing for {hybrid_empty} queries"
    if empty:
        ctx.note(f"search_text found nothing for {empty}/{n} queries at {scale:,}")
    return out


def _recall_record(system: str, scale: int, found: list[list[int]], ctx: Context) -> Record:
    w = ctx.workload(scale)
    value = recall_at_k(found, ctx.exact(scale, K), w.vectors, w.query_vectors)
    return Record(
        name="search_vector.recall@10",
        group="search_vector_recall",
        unit="recall",
        system=system,
        scale=scale,
        value=value,
        higher_is_better=True,
        row="search_vector_recall" if system == "memcore" else None,
        runs=len(found),
        note=_RECALL_NOTE.format(n=len(found)) + f"; vectors: {w.vector_source}",
    )


def _peers(ctx: Context, scale: int) -> list[Record]:
    s, w = ctx.settings, ctx.workload(scale)
    qv, qt, n = w.query_vectors, w.queries, len(w.queries)
    runs = max(s.runs // 2, 20)  # peers are slower; half the runs keep the full run short
    out: list[Record] = []
    ops: dict[str, Callable[[Peer, int], object]] = {
        "vector": lambda p, i: p.search_vector(qv[i % n], K),
        "text": lambda p, i: p.search_text(qt[i % n], K),
        "hybrid": lambda p, i: p.hybrid(qt[i % n], qv[i % n], K),
    }
    groups = {"vector": "search_vector", "text": "search_text", "hybrid": "recall"}
    for name in ("usearch", "numpy-exact", "chromadb", "lancedb", "tantivy-py", "bm25s"):
        peer = ctx.peer(name, scale)
        if peer is None:
            continue
        for capability, op in ops.items():
            if capability not in peer.supports:
                continue
            try:
                timings = time_calls(lambda i, p=peer, f=op: f(p, i), warmup=s.warmup, runs=runs)
            except Exception as exc:  # a peer crashing is reported, not fatal
                ctx.note(f"peer {name} {capability} search failed at {scale:,}: {exc!r}")
                continue
            note = "no graph signal (RRF of vector + FTS)" if capability == "hybrid" else ""
            out.append(
                latency(
                    f"{groups[capability]}.{name}",
                    groups[capability],
                    timings,
                    system=name,
                    scale=scale,
                    note=note,
                )
            )
            if capability == "vector" and name != "numpy-exact":
                found = [peer.search_vector(qv[i], K) for i in range(n)]
                out.append(_recall_record(name, scale, found, ctx))
    return out
