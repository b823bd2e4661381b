"""CoSQA code search: every function of the pool stored as a memory (until memcore's code
search exists), each natural-language query searched; gold = its retrieval_idx."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benches import embedding_cache
from benches.quality.metrics import Scores, per_query
from benches.quality.retrievers import usable

KS = (1, 5, 10)
DEPTH = 50  # results fetched per query, so MRR is MRR@50
POOL_FILE = "code_idx_map.txt"
QUERY_FILE = "cosqa-retrieval-dev-500.json"


def evaluate(
    folder: Path,
    *,
    max_queries: int | None = None,
    pool_size: int | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """MRR@50 and recall@1/5/10 per retriever. A reduced pool keeps every gold function."""
    import memcore

    pool: dict[str, int] = json.loads((folder / POOL_FILE).read_text())
    queries = json.loads((folder / QUERY_FILE).read_text())[:max_queries]
    codes = sorted(pool, key=pool.__getitem__)
    if pool_size is not None:
        gold = {q["retrieval_idx"] for q in queries}
        keep = [c for c in codes if pool[c] in gold]
        keep += [c for c in codes if pool[c] not in gold][: max(pool_size - len(keep), 0)]
        codes = keep
    log(f"  cosqa: {len(codes):,} functions, {len(queries)} queries")
    vectors_ok = embedding_cache.available() is None
    retrievers = usable(vectors_ok)
    code_v = (
        embedding_cache.embed(codes, "passage", label="cosqa functions") if vectors_ok else None
    )
    query_v = (
        embedding_cache.embed([q["doc"] for q in queries], "query", label="cosqa queries")
        if vectors_ok
        else None
    )
    scores = {r.name: Scores() for r in retrievers}
    with (
        tempfile.TemporaryDirectory(prefix="cosqa-") as tmp,
        memcore.Memory(tmp, model=None) as mem,
    ):
        mem.store_memories(codes, vectors=code_v, metadatas=[{"idx": pool[c]} for c in codes])
        for qi, q in enumerate(queries):
            vector = None if query_v is None else query_v[qi]
            for r in retrievers:
                hits = r.search(mem, q["doc"], vector, DEPTH)
                found = [str(h.memory.metadata["idx"]) for h in hits]  # type: ignore[index]
                scores[r.name].add(per_query(found, {str(q["retrieval_idx"])}, KS, r.max_depth))
    return {
        "folder": str(folder),
        "functions": len(codes),
        "queries": len(queries),
        "vectors": "all-MiniLM-L6-v2 int8" if vectors_ok else "none",
        "mrr_depth": DEPTH,
        "retrievers": {name: {"n": s.count, **s.means()} for name, s in scores.items()},
    }
