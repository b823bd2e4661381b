"""The embedding rows of the performance budget (docs/performance.md), measured by
bench_embeddings.py (owned by the embeddings work) and translated into this runner's
records."""

from __future__ import annotations

import argparse

from benches import embedding_cache
from benches.context import Context
from benches.report import Record

AREA = "embeddings"

# bench_embeddings record name -> (group, budget row or None, system)
_MAPPING: dict[str, tuple[str, str | None, str]] = {
    "query_embedding_short_uncached": ("query_embedding", "query_embedding", "memcore"),
    "query_onnxruntime_direct_reference": ("query_embedding", None, "onnxruntime direct"),
    "query_embedding_cache_hit": (
        "query_embedding_cache_hit",
        "query_embedding_cache_hit",
        "memcore",
    ),
}


def collect(ctx: Context) -> list[Record]:
    reason = embedding_cache.available()
    if reason is not None:
        ctx.note(f"embedding rows not measured: {reason}")
        return []
    from benches import bench_embeddings

    ctx.log("[embeddings] bench_embeddings.run")
    args = argparse.Namespace(
        model="minilm",
        model_path=embedding_cache.model_dir(),
        threads=None,
        quick=ctx.settings.quick,
    )
    out = []
    for r in bench_embeddings.run(args):
        group, row, system = _MAPPING.get(r.name, (r.name, None, "memcore"))
        out.append(
            Record(
                name=f"embeddings.{r.name}",
                group=group,
                unit=r.unit,
                system=system,
                p50=r.p50,
                p95=r.p95,
                p99=r.p99,
                higher_is_better=r.unit.endswith("/s"),
                row=row,
                note="all-MiniLM-L6-v2 int8, 'fix the login bug'" if row else "",
            )
        )
    return out
