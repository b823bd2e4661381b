"""Resident memory (docs/performance.md): a fresh process opens the shared store of each scale
and runs vector, text and hybrid queries; its RSS is the row. Disk footprints of memcore and
the peers are reported beside it (the budget quotes the peers' files)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from benches.context import Context
from benches.report import Record

AREA = "rss"
_MB = 2**20


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _probe(ctx: Context, scale: int) -> dict[str, float]:
    w = ctx.workload(scale)
    n = min(len(w.queries), 200)
    queries = ctx.scratch_dir("rss") / "queries.npz"
    np.savez(queries, vectors=w.query_vectors[:n], texts=np.array(w.queries[:n]))
    repo = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-m", "benches.rss_probe", str(ctx.store(scale).path), str(queries)],
        capture_output=True,
        text=True,
        check=True,
        timeout=900,
        cwd=repo,
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def collect(ctx: Context) -> list[Record]:
    records: list[Record] = []
    for scale in ctx.settings.scales:
        ctx.log(f"[rss] {scale:,} memories")
        mb = _probe(ctx, scale)
        records.append(
            Record(
                name="rss.after_queries",
                group="rss",
                unit="MB",
                scale=scale,
                value=mb["queried"],
                row="rss",
                runs=1,
                note=f"whole process (Python {mb['baseline']:.0f} MB before opening); "
                f"just opened {mb['opened']:.0f} MB; peak {mb['peak']:.0f} MB; "
                f"graph of {scale // 2:,} entities included",
            )
        )
        records.append(
            Record(
                name="disk.store",
                group="disk",
                unit="MB",
                scale=scale,
                value=_du(ctx.store(scale).path) / _MB,
                runs=1,
                note="data directory: SQLite (text, vectors, graph, op-log) + HNSW + BM25",
            )
        )
        records += _peer_disk(ctx, scale)
    return records


def _peer_disk(ctx: Context, scale: int) -> list[Record]:
    out = []
    for name in ("usearch", "chromadb", "lancedb"):
        peer = ctx.peer(name, scale)
        if peer is None:
            continue
        size = peer.save_bytes() if name == "usearch" else peer.disk_bytes()  # type: ignore[attr-defined]
        if size:
            note = "index file only (vectors, no text)" if name == "usearch" else "persist dir"
            out.append(
                Record(
                    name=f"disk.{name}",
                    group="disk",
                    unit="MB",
                    system=name,
                    scale=scale,
                    value=size / _MB,
                    runs=1,
                    note=note,
                )
            )
    return out
