"""CoSQA code search through memcore's code-search path: every function of the pool is a
file of a temporary project indexed with ``index_project`` (chunked and embedded like any
project), each natural-language query is searched with ``search_code``; gold = the file of
its retrieval_idx. A file counts once, at its best chunk.

``search_code`` fuses with code's own weights, one pair for queries that describe code
and one for queries that name an identifier (rust/memcore/src/engine/code_weights.rs,
chosen by ``benches.quality.cosqa_tune``); the single-signal rows are the same engine call
with the other signal withheld: no query vector (BM25 alone), or a query text that no
document holds (the vector alone; BM25 then scores nothing and the fusion is the
vector's). CoSQA's queries are all descriptions, so the same rankings are also scored on
identifier queries (:func:`identifier_queries`): an agent searches code by name too.
``benches.bench_code`` reports these numbers as records of its area through
:func:`search_code_scores`.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from benches import embedding_cache
from benches.quality.metrics import Scores, per_query

if TYPE_CHECKING:
    from memcore import Memory

KS = (1, 5, 10)
DEPTH = 50  # chunks fetched per query, so MRR is MRR@50
POOL_FILE = "code_idx_map.txt"
QUERY_FILE = "cosqa-retrieval-dev-500.json"
PROJECT = "cosqa"
NO_TERM = "qqzxjv"  # a query word in no document: BM25 finds nothing, the vector ranks alone
HYBRID, BM25, VECTOR = "search_code (hybrid)", "search_code, BM25 only", "search_code, vector only"
IDENTIFIER_ROWS = ", identifier queries"  # appended to the names of the identifier rows
IDENTIFIER_QUERIES = 500
_COMPOUND = re.compile(r"[a-z0-9]_+[a-z0-9]|[a-z][A-Z]", re.IGNORECASE)

Log = Callable[[str], None]
Ranker = Callable[[str, Any], list[str]]


def load(
    folder: Path, *, max_queries: int | None = None, pool_size: int | None = None
) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """The pool (function code -> idx) and the queries; a reduced pool keeps every gold
    function, then the others in idx order."""
    pool: dict[str, int] = json.loads((folder / POOL_FILE).read_text())
    queries: list[dict[str, Any]] = json.loads((folder / QUERY_FILE).read_text())[:max_queries]
    if pool_size is not None:
        codes = sorted(pool, key=pool.__getitem__)
        gold = {q["retrieval_idx"] for q in queries}
        keep = [c for c in codes if pool[c] in gold]
        keep += [c for c in codes if pool[c] not in gold][: max(pool_size - len(keep), 0)]
        pool = {c: pool[c] for c in keep}
    return pool, queries


def _file(idx: int) -> str:
    return f"f{idx:05d}.py"


def index_pool(mem: Memory, work: Path, pool: dict[str, int], log: Log) -> None:
    """Write each function of the pool as a file of project ``cosqa`` under ``work`` and
    index it with ``index_project``."""
    project = work / PROJECT
    project.mkdir(parents=True)
    for code, idx in pool.items():
        (project / _file(idx)).write_text(code + "\n", encoding="utf-8")
    log(f"  cosqa: indexing {len(pool):,} functions with index_project")
    report = mem.index_project(project, project_id=PROJECT)
    if report.files_indexed != len(pool):
        raise RuntimeError(f"expected {len(pool)} functions indexed, got {report}")
    log(f"  cosqa: indexed in {report.seconds:.0f} s ({report.total_chunks:,} chunks)")
    mem._engine.flush()  # searched from the committed index, as a long-lived store is


def query_vector(mem: Memory, query: dict[str, Any]) -> Any:
    """The query's embedding, or None without a model."""
    if mem.embeddings is None:
        return None
    return np.asarray(mem.embeddings.embed_query(query["doc"]), dtype=np.float32)


def gold_file(query: dict[str, Any]) -> set[str]:
    """The file that answers a query."""
    return {_file(query["retrieval_idx"])}


def identifier_queries(pool: dict[str, int]) -> list[dict[str, Any]]:
    """CoSQA-shaped queries whose text is a function's name: the first
    :data:`IDENTIFIER_QUERIES` functions (by idx) whose only chunk has a name of two
    letters or more that names nothing else in the pool; gold = its file.

    :data:`_COMPOUND` was meant to keep compound names only, but it matches
    case-insensitively, so any two letters pass: of the 500, 399 are snake_case or
    camelCase and 101 one plain word (``timespan``, ``dictapply``). The set is kept as it
    is, so its rows stay comparable with the earlier ones; both kinds are names an agent
    searches for."""
    from memcore.code import chunk_file

    names = {
        idx: [c.name for c in chunk_file(code + "\n", "python", "f.py")]
        for code, idx in pool.items()
    }
    counts = Counter(name for found in names.values() for name in found)
    queries = [
        {"doc": found[0], "retrieval_idx": idx}
        for idx, found in sorted(names.items())
        if len(found) == 1 and counts[found[0]] == 1 and _COMPOUND.search(found[0])
    ]
    return queries[:IDENTIFIER_QUERIES]


def search_code_scores(
    mem: Memory,
    work: Path,
    pool: dict[str, int],
    queries: list[dict[str, Any]],
    log: Log,
    *,
    names: list[dict[str, Any]] | None = None,
) -> dict[str, dict[str, float]]:
    """Index the pool as project ``cosqa`` under ``work`` and score each ranking on the
    queries, then on ``names`` (identifier queries) when given.

    Returns:
        Retriever name -> ``{n, MRR, R@1, R@5, R@10, NDCG@10}`` (means over the queries;
        the identifier rows' names end with :data:`IDENTIFIER_ROWS`). Without an embedding
        model, only the hybrid call (then BM25 alone) and BM25 run.
    """
    index_pool(mem, work, pool, log)
    engine, ns = mem._engine, mem.namespace
    rankers: dict[str, Ranker] = {
        HYBRID: lambda q, v: [
            h.file_path for h in mem.search_code(q, PROJECT, limit=DEPTH, vector=v)
        ],
        BM25: lambda q, v: [
            r.file_path for r in engine.search_code(ns, q, None, project_id=PROJECT, limit=DEPTH)
        ],
    }
    if mem.embeddings is not None:
        rankers[VECTOR] = lambda q, v: [
            r.file_path for r in engine.search_code(ns, NO_TERM, v, project_id=PROJECT, limit=DEPTH)
        ]
    out: dict[str, dict[str, float]] = {}
    for suffix, query_set in (("", queries), (IDENTIFIER_ROWS, names or [])):
        scores = {name: Scores() for name in rankers}
        for q in query_set:
            vector = query_vector(mem, q)
            for name, rank in rankers.items():
                found = list(dict.fromkeys(rank(q["doc"], vector)))  # a file once, at its best
                scores[name].add(per_query(found, gold_file(q), KS, DEPTH))
        if query_set:
            out.update({name + suffix: {"n": s.count, **s.means()} for name, s in scores.items()})
    return out


def open_memory(store: Path) -> tuple[Memory, str]:
    """A store with the MiniLM model when it is here (else keyword search only) and the
    name of its vectors for the report."""
    import memcore

    folder = embedding_cache.model_dir()
    if folder is None:
        return memcore.Memory(store, model=None), f"none ({embedding_cache.available()})"
    mem = memcore.Memory(store, model_path=folder)
    if mem.embeddings is None or not mem.embeddings.wait_ready(300):
        error = None if mem.embeddings is None else mem.embeddings.error
        mem.close()
        raise RuntimeError(f"embedding model failed to load: {error}")
    return mem, "all-MiniLM-L6-v2 int8"


def evaluate(
    folder: Path,
    *,
    max_queries: int | None = None,
    pool_size: int | None = None,
    log: Log = print,
) -> dict[str, Any]:
    """MRR@50, recall@1/5/10 and NDCG@10 per ranking of ``search_code``."""
    pool, queries = load(folder, max_queries=max_queries, pool_size=pool_size)
    log(f"  cosqa: {len(pool):,} functions, {len(queries)} queries")
    with tempfile.TemporaryDirectory(prefix="cosqa-") as tmp:
        mem, vectors = open_memory(Path(tmp) / "store")
        with mem:
            names = identifier_queries(pool)[:max_queries]
            retrievers = search_code_scores(mem, Path(tmp), pool, queries, log, names=names)
    return {
        "folder": str(folder),
        "functions": len(pool),
        "queries": len(queries),
        "path": "index_project + search_code",
        "vectors": vectors,
        "mrr_depth": DEPTH,
        "retrievers": retrievers,
    }
