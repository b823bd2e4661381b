"""Single writes (docs/performance.md): store_memory with the vector given, durable NORMAL and
FULL, and store-then-immediately-search, into a copy of the shared store of each scale.

The copy keeps the shared store unchanged for the areas after this one. Peers write into the
indexes they built for the search area, which is why this area runs after it.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from itertools import count
from typing import TYPE_CHECKING, Literal

import numpy as np

from benches.context import NAMESPACE, Context
from benches.peers import Peer
from benches.report import Record, latency
from benches.stats import time_calls
from benches.stores import open_memory, settle

if TYPE_CHECKING:
    from memcore import Memory

AREA = "store"
Durability = Literal["normal", "full"]


class FreshMemories:
    """New (text, vector) pairs for writes, cycling through the workload's extras; a text
    seen again gets a suffix so every stored content is distinct."""

    def __init__(self, texts: list[str], vectors: np.ndarray) -> None:
        self.texts, self.vectors = texts, vectors
        self.taken = 0

    def take(self) -> tuple[str, np.ndarray]:
        n = self.taken
        self.taken += 1
        i, lap = n % len(self.texts), n // len(self.texts)
        text = self.texts[i] if lap == 0 else f"{self.texts[i]} (note {lap})"
        return text, self.vectors[i]


def collect(ctx: Context) -> list[Record]:
    records: list[Record] = []
    for scale in ctx.settings.scales:
        ctx.log(f"[store] {scale:,} memories")
        w = ctx.workload(scale)
        fresh = FreshMemories(w.extra_texts, w.extra_vectors)
        copy = ctx.scratch_dir("store") / "data"
        shutil.copytree(ctx.store(scale).path, copy)
        for durability in ("normal", "full"):
            mem = open_memory(copy, durability)
            try:
                settle(mem)
                records += _memcore(ctx, scale, mem, durability, fresh)
            finally:
                mem.close()
        shutil.rmtree(copy.parent, ignore_errors=True)
        records += _peers(ctx, scale, fresh)
    return records


def _runs(ctx: Context, durability: Durability) -> int:
    # An fsync per commit makes FULL writes far slower; fewer runs keep the area short.
    return ctx.settings.runs if durability == "normal" else max(ctx.settings.runs // 4, 50)


def _memcore(
    ctx: Context, scale: int, mem: Memory, durability: Durability, fresh: FreshMemories
) -> list[Record]:
    engine, warmup, runs = mem._engine, ctx.settings.warmup, _runs(ctx, durability)
    before, taken = engine.count_memories(NAMESPACE), fresh.taken

    def core(_i: int) -> object:
        text, vector = fresh.take()
        return engine.store_memory(NAMESPACE, text, vector=vector)

    found: list[tuple[str, str]] = []

    def store_then_search(_i: int) -> None:
        text, vector = fresh.take()
        new, _ = engine.store_memory(NAMESPACE, text, vector=vector)
        top = engine.search_vector(NAMESPACE, vector, limit=1)
        found.append((new.id, top[0].memory.id if top else ""))

    group = f"store.{durability}"
    out = [
        latency(
            f"store_memory.core.{durability}",
            group,
            time_calls(core, warmup=warmup, runs=runs),
            scale=scale,
            row="store" if durability == "normal" else None,
            note=f"synchronous={durability.upper()}, one transaction per call",
        )
    ]
    if durability == "normal":

        def facade(_i: int) -> object:
            text, vector = fresh.take()
            return mem.store_memory(text, vector=vector)

        out.append(
            latency(
                "store_memory.facade.normal",
                group,
                time_calls(facade, warmup=warmup, runs=runs),
                scale=scale,
                note="Memory.store_memory: includes the similar-memories search",
            )
        )
        out.append(
            latency(
                "store_then_search.core.normal",
                "store_then_search",
                time_calls(store_then_search, warmup=warmup, runs=runs),
                scale=scale,
                note="store_memory, then search_vector(k=1) for the same vector",
            )
        )
        misses = sum(1 for new_id, top_id in found if new_id != top_id)
        if misses:
            # A read-your-writes failure: reported (and the run exits 1), but the latencies
            # above are still valid, so the area goes on.
            out[-1].note += f"; CHECK FAILED: {misses}/{len(found)} new memories not the top hit"
            ctx.fail(
                f"read-your-writes at {scale:,}: {misses} of {len(found)} memories were not "
                "the top vector hit right after store_memory"
            )
    # Every timed or warm-up call above stored exactly one fresh memory.
    stored = fresh.taken - taken
    assert engine.count_memories(NAMESPACE) == before + stored, "store count mismatch"
    return out


def _peers(ctx: Context, scale: int, fresh: FreshMemories) -> list[Record]:
    out: list[Record] = []
    rows = count(10 * scale)  # row ids after the workload's, so a peer never sees a duplicate
    for name in ("sqlite3", "lancedb", "chromadb"):
        peer = ctx.peer(name, scale)
        if peer is None:
            continue
        try:
            out += _peer_writes(ctx, scale, name, peer, fresh, rows)
        except Exception as exc:  # a crashing peer is reported, not fatal
            ctx.note(f"peer {name} writes failed at {scale:,}: {exc!r}")
    return out


def _peer_writes(
    ctx: Context, scale: int, name: str, peer: Peer, fresh: FreshMemories, rows: Iterator[int]
) -> list[Record]:
    warmup = ctx.settings.warmup
    # LanceDB writes a file per add and chroma persists per add: fewer runs keep it bounded.
    runs = _runs(ctx, "normal") if name == "sqlite3" else max(ctx.settings.runs // 4, 50)

    def store(_i: int) -> None:
        text, vector = fresh.take()
        peer.store_one(next(rows), text, vector)

    out: list[Record] = []
    if name == "sqlite3":
        for mode in ("NORMAL", "FULL"):
            peer.set_synchronous(mode)  # type: ignore[attr-defined]
            n = runs if mode == "NORMAL" else _runs(ctx, "full")
            timings = time_calls(store, warmup=warmup, runs=n)
            out.append(
                latency(
                    f"store.{name}.{mode.lower()}",
                    f"store.{mode.lower()}",
                    timings,
                    system=name,
                    scale=scale,
                )
            )
        return out
    out.append(
        latency(
            f"store.{name}",
            "store.normal",
            time_calls(store, warmup=warmup, runs=runs),
            system=name,
            scale=scale,
            note="one row per call",
        )
    )
    misses: list[int] = []
    out.append(
        latency(
            f"store_then_search.{name}",
            "store_then_search",
            time_calls(_then_search(peer, fresh, rows, misses), warmup=warmup, runs=runs),
            system=name,
            scale=scale,
            note=f"{len(misses)} of the new rows were not the top hit" if misses else "",
        )
    )
    if name == "lancedb":
        out += _lancedb_after_writes(ctx, scale, peer)
    return out


def _then_search(
    peer: Peer, fresh: FreshMemories, rows: Iterator[int], misses: list[int]
) -> Callable[[int], None]:
    def op(_i: int) -> None:
        text, vector = fresh.take()
        row = next(rows)
        peer.store_one(row, text, vector)
        top = peer.search_vector(vector, 1)
        if not top or top[0] != row:
            misses.append(row)

    return op


def _lancedb_after_writes(ctx: Context, scale: int, peer: Peer) -> list[Record]:
    """The budget notes that LanceDB search slows after single-row adds until optimize()."""
    w = ctx.workload(scale)
    n = len(w.queries)
    runs = max(ctx.settings.runs // 4, 50)

    def search(i: int) -> object:
        return peer.search_vector(w.query_vectors[i % n], 10)

    after = time_calls(search, warmup=ctx.settings.warmup, runs=runs)
    peer.optimize()  # type: ignore[attr-defined]
    optimized = time_calls(search, warmup=ctx.settings.warmup, runs=runs)
    return [
        latency(
            "search_vector.lancedb.after_single_adds",
            "lancedb_after_adds",
            after,
            system="lancedb",
            scale=scale,
            note="vector search after the single-row adds above, before optimize()",
        ),
        latency(
            "search_vector.lancedb.after_optimize",
            "lancedb_after_adds",
            optimized,
            system="lancedb",
            scale=scale,
            note="the same search after optimize()",
        ),
    ]
