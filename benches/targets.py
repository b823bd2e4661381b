"""The performance budget (docs/performance.md), as data.

A `Row` is one line of that table: what is measured, its targets and the peers the budget
quotes. Records point at a row by key; the report checks the targets and lists the rows that
no bench measured yet. Keep this in step with docs/performance.md when the table changes.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    """One line of the performance budget (docs/performance.md)."""

    key: str
    operation: str
    unit: str
    # Statistic name ("p50", "p99" or "value") -> bound. Latencies, sizes and times must be
    # at most the bound; rates (higher_is_better) at least.
    targets: dict[str, float]
    higher_is_better: bool = False
    design_peers: str = "—"
    # Which bench module measures it, for the "not measured yet" line.
    pending_on: str = ""
    # Set when the bound is for a workload of this size and grows in proportion to it
    # (index_project: 60 s for 1,000 files). A run of another size is judged against the
    # bound scaled to the size it really ran, never against the full-size bound, and the
    # report names that size in `size_unit`.
    design_size: int | None = None
    size_unit: str = ""

    def bounds_at(self, size: int | None) -> dict[str, float]:
        """The targets for a run of `size` (the row's own unless it scales with size)."""
        if self.design_size is None or size is None:
            return dict(self.targets)
        return {stat: bound * size / self.design_size for stat, bound in self.targets.items()}


ROWS: tuple[Row, ...] = (
    Row(
        "store",
        "store_memory in the core (vector given), durable, immediately searchable",
        "ms",
        {"p50": 0.3, "p99": 3.0},
        design_peers="LanceDB insert 2.1 ms; chroma add 7.9 ms; mem0+qdrant 2.9 ms; "
        "sqlite WAL row 0.007 ms",
        pending_on="bench_store.py",
    ),
    Row(
        "search_vector",
        "search, k=10 (vector given)",
        "ms",
        {"p50": 0.5},
        design_peers="usearch 0.60 ms; chroma 1.09 ms; LanceDB HNSW 1.76 ms; numpy exact 4.1 ms",
        pending_on="bench_search.py",
    ),
    Row(
        "search_vector_recall",
        "search recall@10 vs exact, real embeddings",
        "recall",
        {"value": 0.95},
        higher_is_better=True,
        pending_on="bench_search.py (needs the MiniLM model for real embeddings)",
    ),
    Row(
        "search_text",
        "search_text (BM25), k=10",
        "ms",
        {"p50": 0.2},
        design_peers="tantivy-py 0.09 ms; LanceDB FTS 1.52 ms; bm25s 2.28 ms",
        pending_on="bench_search.py",
    ),
    Row(
        "recall",
        "recall (hybrid + PPR), vector given",
        "ms",
        {"p50": 3.0, "p99": 15.0},
        design_peers="LanceDB hybrid (no graph) 2.77 ms",
        pending_on="bench_search.py, bench_graph.py",
    ),
    Row(
        "ppr",
        "PPR alone, 50k entities / 150k relations",
        "ms",
        {"p50": 1.0},
        design_peers="igraph prpack 16.3 ms",
        pending_on="bench_graph.py",
    ),
    Row(
        "query_embedding",
        "query embedding (minilm, short)",
        "ms",
        {"p50": 4.0},
        design_peers="onnxruntime direct ≈ 2 ms",
        pending_on="embeddings_rows.py via bench_embeddings.py (needs the MiniLM model)",
    ),
    Row(
        "query_embedding_cache_hit",
        "query embedding, cache hit",
        "ms",
        {"p50": 0.05},
        pending_on="embeddings_rows.py via bench_embeddings.py (needs the MiniLM model)",
    ),
    Row(
        "mcp_store",
        "MCP over stdio: store_memory incl. embedding",
        "ms",
        {"p50": 10.0},
        design_peers="mem0+qdrant search 68 ms",
        pending_on="bench_mcp.py (memcore.mcp)",
    ),
    Row(
        "mcp_recall",
        "MCP over stdio: recall incl. embedding",
        "ms",
        {"p50": 15.0},
        pending_on="bench_mcp.py (memcore.mcp)",
    ),
    Row(
        "hooks_before",
        "memory_before_turn at a 10k-turn store, with compaction, embedding included",
        "ms",
        {"p95": 300.0},
        design_peers="lifecycle seed: p95 < 300 ms",
        pending_on="bench_hooks.py (needs the MiniLM model)",
    ),
    Row(
        "hooks_after",
        "memory_after_turn at a 10k-turn store, with fact capture, embedding included",
        "ms",
        {"p95": 500.0},
        design_peers="lifecycle seed: p95 < 500 ms",
        pending_on="bench_hooks.py (needs the MiniLM model)",
    ),
    Row(
        "cold_start",
        "cold start to answering tools/list",
        "s",
        {"value": 0.7},
        design_peers="first asked: ≤ 1 s",
        pending_on="bench_mcp.py (memcore.mcp)",
    ),
    Row(
        "cli_start",
        "memcore status on a text-only store, whole process",
        "s",
        {"p50": 0.3},
        design_peers="issue 21 asks ≤ 0.3 s per CLI command",
        pending_on="bench_cli.py",
    ),
    Row(
        "first_call",
        "first tool call after initialize, store open",
        "s",
        {"value": 0.1},
        pending_on="bench_mcp.py (memcore.mcp)",
    ),
    Row(
        "reopen",
        "reopen a store (to first answered query)",
        "s",
        {"p50": 2.0},
        pending_on="bench_reopen.py",
    ),
    Row(
        "close_pending",
        "close() right after a bulk ingest the vector graph has not caught up with (scale/10 "
        "memories pending)",
        "s",
        {"value": 2.0},
        design_peers="issue 47: <= 2 s at 1M pending (it waited for the graph: 21 min)",
        pending_on="bench_reopen.py",
    ),
    Row(
        "ingest_durable",
        "ingest, vectors given, durable (store_memories batches)",
        "memories/s",
        {"value": 20_000.0},
        higher_is_better=True,
        pending_on="bench_ingest.py",
    ),
    Row(
        "ingest_searchable",
        "ingest, vectors given, until HNSW holds everything (flush, 0 pending)",
        "memories/s",
        {"value": 2_000.0},
        higher_is_better=True,
        design_peers="usearch single-thread build ≈ 1,050/s at 100k",
        pending_on="bench_ingest.py",
    ),
    Row(
        "index_project",
        "index_project, 1,000 source files incl. embeddings",
        "s",
        {"value": 60.0},
        design_peers="first asked: 100 files in 5 min",
        pending_on="bench_code.py, area index_project (needs the MiniLM model)",
        design_size=1_000,
        size_unit="files",
    ),
    Row(
        "processes_store",
        "store_memory over stdio, each of N servers on one store (scale: N; the budget is at "
        "4), --model none: the slowest one's p50 ÷ one server's alone",
        "ratio",
        {"value": 2.0},
        design_peers="issue 42: within 2× at 4 processes",
        pending_on="bench_processes.py",
    ),
    Row(
        "processes_lag",
        "visibility lag: store_memory in one process until another's search_text finds it "
        "(--model none)",
        "ms",
        {"p99": 1000.0},
        design_peers="issue 42: within 1 s",
        pending_on="bench_processes.py",
    ),
    Row(
        "rss",
        "resident memory, store open and searched",
        "MB",
        {"value": 400.0},
        design_peers="usearch index file 161 MB; chroma 273 MB on disk",
        pending_on="bench_rss.py",
    ),
)

BY_KEY: dict[str, Row] = {row.key: row for row in ROWS}

# The budget states these rows at 100k memories; at other scales they are reported against the
# same bound for orientation, and the README table marks the 100k line as the verdict.
BUDGET_SCALE = 100_000
