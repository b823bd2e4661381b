"""Knowledge-graph benchmarks (docs/performance.md) on a synthetic graph of its own:
building it, Personalized PageRank beside python-igraph's PRPACK on the same graph in the
same run, and recall with PPR at 100k memories (vector given).

    python benches/bench_graph.py --json out.json [--quick]

Standalone it writes `{"machine", "records", "notes"}` with benches.report records (name,
scale, p50, p95, p99, unit, target, pass, …). The runner can call it as an area too
(`AREA`, `collect(ctx)`). Correctness is checked outside the timed loops: PPR mass against
PRPACK, and that every recall answers with hits; a failed check exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if __package__ in (None, ""):  # run as a script: make `benches` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benches.report import Record, finalize, latency
from benches.stats import time_calls, time_once
from benches.stores import open_memory, settle

if TYPE_CHECKING:
    from benches.context import Context
    from memcore import Memory

AREA = "graph"
NS = "default"
DIM = 384
TELEPORT = 0.5
BATCH = 10_000  # entities, relations or memories per native call
TOPICS = 1_000  # vector clusters, so HNSW sees structure rather than Gaussian noise
PPR_TOLERANCE = 1e-3
# The engine's push precision (graph_read.rs): forward push guarantees |error(v)| ≤ ε·degree(v),
# so a hub's mass may be off by more than PPR_TOLERANCE while every other node is within it.
PPR_EPSILON = 1e-5
WORDS = [
    "deploy",
    "review",
    "budget",
    "incident",
    "release",
    "meeting",
    "invoice",
    "roadmap",
    "outage",
    "backup",
    "migration",
    "latency",
    "contract",
    "hiring",
    "onboarding",
    "audit",
    "refactor",
    "dashboard",
    "alert",
    "schema",
]
RELATION_TYPES = ("works on", "depends on", "owns", "mentions", "reports to", "uses")


@dataclass(frozen=True)
class Plan:
    """Sizes of one run: entities = memories / 2, relations = 3 per entity."""

    memories: int
    runs: int
    warmup: int

    @property
    def entities(self) -> int:
        return self.memories // 2

    @property
    def relations(self) -> int:
        return 3 * self.entities


@dataclass(frozen=True)
class SyntheticGraph:
    names: list[str]
    sources: np.ndarray
    targets: np.ndarray
    weights: np.ndarray
    kinds: list[str]


def synthetic_graph(n: int, m: int, rng: np.random.Generator) -> SyntheticGraph:
    """`n` entities, `m` distinct relations; targets Zipf-weighted so a few hubs collect many
    relations, as people and projects do; 2% of entities stay without relations."""
    names = [f"ent{i:06d}" for i in range(n)]
    linked = n - n // 50
    weights = 1.0 / np.arange(1, linked + 1) ** 0.8
    sources = rng.integers(0, linked, 2 * m)
    targets = rng.permutation(linked)[rng.choice(linked, 2 * m, p=weights / weights.sum())]
    pairs = np.unique(np.stack([sources, targets], axis=1)[sources != targets], axis=0)
    pairs = pairs[rng.permutation(len(pairs))[:m]]
    kinds = rng.integers(0, len(RELATION_TYPES), len(pairs))
    return SyntheticGraph(
        names=names,
        sources=pairs[:, 0],
        targets=pairs[:, 1],
        weights=np.round(rng.uniform(0.1, 1.0, len(pairs)), 3),
        kinds=[RELATION_TYPES[k] for k in kinds],
    )


def build_graph(mem: Memory, graph: SyntheticGraph) -> float:
    """Entities, then relations, through the engine in large batches; seconds taken."""
    engine = mem._engine
    start = time.perf_counter()
    for lo in range(0, len(graph.names), BATCH):
        engine.create_entities(
            NS, [{"name": x, "entityType": "Service"} for x in graph.names[lo : lo + BATCH]]
        )
    names = graph.names
    for lo in range(0, len(graph.sources), BATCH):
        hi = lo + BATCH
        rows = [
            (names[s], names[t], kind, w)
            for s, t, kind, w in zip(
                graph.sources[lo:hi].tolist(),
                graph.targets[lo:hi].tolist(),
                graph.kinds[lo:hi],
                graph.weights[lo:hi].tolist(),
                strict=True,
            )
        ]
        engine.create_relations(NS, rows)
    return time.perf_counter() - start


def memory_corpus(
    plan: Plan, graph: SyntheticGraph, rng: np.random.Generator
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Memories naming one or two random entities (linked on write by name matching),
    clustered vectors, and each memory's topic."""
    n = plan.memories
    first = rng.integers(0, plan.entities, n)
    second = rng.integers(0, plan.entities, n)
    words = rng.integers(0, len(WORDS), (n, 3))
    texts = [
        f"{WORDS[a]} {graph.names[e]} {WORDS[b]} with {graph.names[f]} {WORDS[c]} note {i}"
        if i % 2
        else f"{WORDS[a]} for {graph.names[e]} {WORDS[b]} {WORDS[c]} note {i}"
        for i, (e, f, (a, b, c)) in enumerate(zip(first, second, words, strict=True))
    ]
    centroids = _unit(rng.standard_normal((TOPICS, DIM)).astype(np.float32))
    topics = rng.integers(0, TOPICS, n)
    noise = rng.standard_normal((n, DIM)).astype(np.float32) * 0.04
    return texts, _unit(centroids[topics] + noise), topics


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def ingest_memories(mem: Memory, texts: list[str], vectors: np.ndarray) -> float:
    """Bulk ingest, then wait until every memory is HNSW/BM25-searchable; seconds taken."""
    start = time.perf_counter()
    for lo in range(0, len(texts), BATCH):
        mem._engine.store_memories(NS, texts[lo : lo + BATCH], vectors=vectors[lo : lo + BATCH])
    settle(mem)
    return time.perf_counter() - start


# -- PPR --------------------------------------------------------------------------------------


def bench_ppr(
    mem: Memory, plan: Plan, rng: np.random.Generator, notes: list[str]
) -> tuple[list[Record], bool]:
    """PPR from random single seeds: memcore's engine vs igraph PRPACK on the same arrays."""
    arrays = mem._engine.graph_arrays(NS)
    names: list[str] = arrays["names"]
    seeds = [int(i) for i in rng.integers(0, len(names) - len(names) // 50, 500)]
    engine = mem._engine

    def ours(i: int) -> object:
        return engine.personalized_pagerank(NS, [(names[seeds[i % len(seeds)]], 1.0)], limit=100)

    size = f"{len(names):,} entities / {len(arrays['sources']):,} relations"
    mine = latency(
        "graph.ppr",
        "graph.ppr",
        time_calls(ours, warmup=plan.warmup, runs=plan.runs),
        scale=plan.memories,
        row="ppr",
        note=f"{size}; single random seed, top 100, teleport {TELEPORT}",
    )
    try:
        import igraph
    except ImportError as exc:
        notes.append(f"igraph peer skipped: {exc}")
        return [mine], True
    graph = igraph.Graph(
        n=len(names),
        edges=np.column_stack((arrays["sources"], arrays["targets"])).astype(np.int64),
        directed=False,
    )
    # Python floats: igraph reads numpy float32 attribute values as if unweighted.
    graph.es["weight"] = arrays["weights"].astype(np.float64).tolist()

    def theirs(i: int) -> object:
        return graph.personalized_pagerank(
            reset_vertices=seeds[i % len(seeds)],
            damping=1 - TELEPORT,
            weights="weight",
            directed=False,
            implementation="prpack",
        )

    runs = max(20, plan.runs // 10)  # PRPACK solves the whole graph: fewer runs suffice
    peer = latency(
        "graph.ppr.igraph",
        "graph.ppr",
        time_calls(theirs, warmup=3, runs=runs),
        system="igraph",
        scale=plan.memories,
        note=f"{size}; prpack, whole-graph vector, same seeds",
    )
    checks = [_ppr_check(engine, graph, names, s) for s in seeds[:20]]
    worst = max(c.worst_bound_ratio for c in checks)
    ok = worst <= 1.0
    mine.note += (
        f"; igraph/memcore p50 = {peer.p50 / mine.p50:.1f}x; max |Δ| "
        f"{max(c.max_abs for c in checks):.1e}; top-10 agreement "
        f"{sum(c.top10_overlap for c in checks) / len(checks):.0%}"
    )
    if not ok:
        notes.append(
            f"PPR check FAILED: an error exceeds max({PPR_TOLERANCE}, ε·degree) by {worst:.2f}x"
        )
    return [mine, peer], ok


@dataclass(frozen=True)
class PprCheck:
    max_abs: float
    worst_bound_ratio: float  # max over nodes of |Δ| / max(tolerance, ε·degree); ≤ 1 passes
    top10_overlap: float


def _ppr_check(engine: Any, graph: Any, names: list[str], seed: int) -> PprCheck:
    """memcore's top 100 against PRPACK: the largest difference, the worst ratio to the push's
    guarantee (tolerance, or ε·degree at hubs), and how many of the exact top 10 it returns."""
    exact = np.asarray(
        graph.personalized_pagerank(
            reset_vertices=seed, damping=1 - TELEPORT, weights="weight", directed=False
        )
    )
    degree = np.asarray(graph.strength(weights="weight"))
    index = {name: i for i, name in enumerate(names)}
    got = engine.personalized_pagerank(NS, [(names[seed], 1.0)], limit=100)
    nodes = np.array([index[name] for name, _ in got])
    diff = np.abs(np.array([score for _, score in got]) - exact[nodes])
    bound = np.maximum(PPR_TOLERANCE, PPR_EPSILON * degree[nodes])
    top10 = set(np.argsort(-exact)[:10].tolist())
    return PprCheck(
        max_abs=float(diff.max()),
        worst_bound_ratio=float((diff / bound).max()),
        top10_overlap=len(top10 & set(nodes[:10].tolist())) / 10,
    )


# -- recall -----------------------------------------------------------------------------------


def bench_recall(
    mem: Memory, plan: Plan, graph: SyntheticGraph, vectors: np.ndarray, rng: np.random.Generator
) -> tuple[list[Record], bool]:
    """recall (vector + BM25 + PPR fused) with the query vector given."""
    count = 500
    picks = rng.integers(0, plan.memories, count)
    entities = rng.integers(0, plan.entities, count)
    texts = [f"{WORDS[int(w)]} {graph.names[e]}" for w, e in zip(picks % 20, entities, strict=True)]
    noise = rng.standard_normal((count, DIM)).astype(np.float32) * 0.02
    queries = _unit(vectors[picks] + noise)
    engine = mem._engine

    def core(i: int) -> object:
        j = i % count
        return engine.recall(NS, texts[j], queries[j], limit=10)

    def facade(i: int) -> object:
        j = i % count
        return mem.recall(texts[j], 10, vector=queries[j])

    hits = [core(i) for i in range(50)]
    ok = all(len(h) == 10 for h in hits) and any(any(x.scores.ppr for x in h) for h in hits)
    note = f"{plan.memories:,} memories, {plan.entities:,} entities, k=10, vector given"
    records = [
        latency(
            "graph.recall",
            "graph.recall",
            time_calls(core, warmup=plan.warmup, runs=plan.runs),
            scale=plan.memories,
            row="recall",
            note=note + " (engine)",
        ),
        latency(
            "graph.recall.facade",
            "graph.recall.facade",
            time_calls(facade, warmup=plan.warmup, runs=plan.runs),
            scale=plan.memories,
            note=note + " (memcore.Memory.recall, records built)",
        ),
    ]
    return records, ok


# -- driver -----------------------------------------------------------------------------------


def run(plan: Plan, work_dir: Path, log: Any = print) -> tuple[list[Record], list[str], bool]:
    """Build the graph and memories in `work_dir`, then measure. Returns records, notes, ok."""
    rng = np.random.default_rng(2026)
    graph = synthetic_graph(plan.entities, plan.relations, rng)
    notes = [f"load average at start: {os.getloadavg()[0]:.2f} (2-core machine)"]
    mem = open_memory(work_dir / "graph-store")
    try:
        log(f"[graph] building {plan.entities:,} entities / {len(graph.sources):,} relations")
        seconds = build_graph(mem, graph)
        build = Record(
            name="graph.build",
            group="graph.build",
            unit="items/s",
            scale=plan.memories,
            value=(plan.entities + len(graph.sources)) / seconds,
            higher_is_better=True,
            note=f"{plan.entities:,} entities + {len(graph.sources):,} relations in "
            f"{seconds:.1f} s (create_entities/create_relations, {BATCH:,} per call)",
        )
        log(f"[graph] {build.note}")
        records, ok = bench_ppr(mem, plan, rng, notes)
        log(f"[graph] ingesting {plan.memories:,} memories")
        texts, vectors, _ = memory_corpus(plan, graph, rng)
        ingest_s, _ = time_once(lambda: ingest_memories(mem, texts, vectors))
        notes.append(
            f"memories ingested and indexed in {ingest_s:.1f} s "
            f"({len(mem._engine.mentions(NS)):,} mentions)"
        )
        recall, recall_ok = bench_recall(mem, plan, graph, vectors, rng)
    finally:
        mem.close()
    notes.append(f"load average at end: {os.getloadavg()[0]:.2f}")
    if not recall_ok:
        notes.append("recall check FAILED: a query returned fewer than 10 hits or no PPR signal")
    return [build, *records, *recall], notes, ok and recall_ok


def collect(ctx: Context) -> list[Record]:
    """The runner's entry point: one run at the largest configured scale."""
    s = ctx.settings
    plan = Plan(memories=s.max_scale, runs=s.runs, warmup=s.warmup)
    records, notes, ok = run(plan, ctx.scratch_dir("graph"), ctx.log)
    for note in notes:
        ctx.note(f"graph: {note}")
    if not ok:
        raise RuntimeError("graph bench correctness check failed (see notes)")
    return records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, required=True, help="output file")
    parser.add_argument("--quick", action="store_true", help="10k memories, fewer runs")
    parser.add_argument("--memories", type=int, help="override the scale")
    args = parser.parse_args(argv)
    plan = (
        Plan(memories=10_000, runs=200, warmup=20)
        if args.quick
        else Plan(memories=100_000, runs=2_000, warmup=100)
    )
    if args.memories:
        plan = Plan(memories=args.memories, runs=plan.runs, warmup=plan.warmup)
    with tempfile.TemporaryDirectory(prefix="memcore-bench-graph-") as tmp:
        records, notes, ok = run(plan, Path(tmp), lambda m: print(m, file=sys.stderr))
    finalize(records)
    from benches import machine

    payload = {
        "machine": machine.describe(),
        "records": [r.to_json() for r in records],
        "notes": notes,
    }
    args.json.write_text(json.dumps(payload, indent=1) + "\n")
    for r in records:
        verdict = {True: "pass", False: "MISS", None: ""}[r.passed]
        figures = (
            f"p50 {r.p50:.3f} p95 {r.p95:.3f} p99 {r.p99:.3f} {r.unit}"
            if r.p50 is not None
            else f"{r.value:,.0f} {r.unit}"
        )
        print(f"{r.name:22} {r.system:8} {figures:44} {verdict:4} {r.note}")
    for note in notes:
        print(f"note: {note}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
