"""Shared state of one benchmark run: settings, workloads, built stores and built peers.

Building a 100k store or a peer's index takes a while, so each is built once per scale and
shared by the areas that need it; whoever asks first pays (and bench_ingest asks first on
purpose, so that its timings are the build itself; the build is `benches.building`).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benches import workloads
from benches.peers import Peer, load_peer
from benches.stores import NAMESPACE, BuiltStore

__all__ = ["NAMESPACE", "BuiltStore", "Context", "Settings"]


@dataclass(frozen=True)
class Settings:
    """How much to run. `quick` is the CI smoke run: small scales, few repetitions."""

    quick: bool
    scales: tuple[int, ...]
    runs: int  # timed calls per latency loop
    warmup: int
    n_queries: int
    n_extra: int  # fresh memories available to the store benches
    ingest_batch: int
    peers: tuple[str, ...]  # peer names to try (an uninstalled one is skipped with a note)
    work_dir: Path

    @property
    def max_scale(self) -> int:
        return max(self.scales)


@dataclass
class Context:
    settings: Settings
    notes: list[str] = field(default_factory=list)
    # Correctness checks that failed without stopping their area (the run exits 1).
    failures: list[str] = field(default_factory=list)
    _workloads: dict[int, workloads.Workload] = field(default_factory=dict)
    _stores: dict[int, BuiltStore] = field(default_factory=dict)
    _peers: dict[tuple[str, int], Peer | None] = field(default_factory=dict)
    _exact: dict[int, np.ndarray] = field(default_factory=dict)
    # What building each peer cost, for bench_ingest: (name, scale) -> (seconds, count).
    peer_builds: dict[tuple[str, int], tuple[float, int]] = field(default_factory=dict)

    def log(self, message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    def note(self, message: str) -> None:
        """A remark that belongs in the report (a skipped peer, a fallback)."""
        if message not in self.notes:
            self.notes.append(message)
            self.log(f"note: {message}")

    def fail(self, message: str) -> None:
        """A failed correctness check whose area could still finish measuring."""
        self.failures.append(message)
        self.note(f"CORRECTNESS CHECK FAILED: {message}")

    def workload(self, scale: int) -> workloads.Workload:
        if scale not in self._workloads:
            s = self.settings
            self._workloads[scale] = workloads.build(
                scale, max_scale=s.max_scale, n_queries=s.n_queries, n_extra=s.n_extra
            )
        return self._workloads[scale]

    def exact(self, scale: int, k: int = 10) -> np.ndarray:
        """Exact top-k of every query at this scale (the recall ground truth)."""
        if scale not in self._exact:
            w = self.workload(scale)
            self._exact[scale] = workloads.exact_top_k(w.vectors, w.query_vectors, k)
        return self._exact[scale]

    def store(self, scale: int, builder: Callable[[Path], BuiltStore] | None = None) -> BuiltStore:
        """The memcore store of this scale, built by `builder` (or the default) if absent."""
        if scale not in self._stores:
            path = self.settings.work_dir / f"memcore-{scale}"
            if path.exists():
                shutil.rmtree(path)
            self._stores[scale] = (builder or self._default_build(scale))(path)
        return self._stores[scale]

    def _default_build(self, scale: int) -> Callable[[Path], BuiltStore]:
        from benches.building import ingest

        def build(path: Path) -> BuiltStore:
            workload, batch = self.workload(scale), self.settings.ingest_batch
            return ingest(workload, scale, path, batch=batch, with_graph=True).store

        return build

    def scratch_dir(self, label: str) -> Path:
        return Path(tempfile.mkdtemp(prefix=f"{label}-", dir=self.settings.work_dir))

    def peer(self, name: str, scale: int) -> Peer | None:
        """A peer built over this scale's workload, or None (with a note) if unavailable."""
        if (name, scale) not in self._peers:
            self._peers[(name, scale)] = self._build_peer(name, scale)
        return self._peers[(name, scale)]

    def _build_peer(self, name: str, scale: int) -> Peer | None:
        if name not in self.settings.peers:
            return None
        peer, reason = load_peer(name, self.scratch_dir(name))
        if peer is None:
            self.note(f"peer {name} skipped: {reason}")
            return None
        w = self.workload(scale)
        self.log(f"  building peer {name} at {scale:,}")
        try:
            seconds = peer.build(w.texts, w.vectors)
        except Exception as exc:  # a peer's failure must not end the run
            self.note(f"peer {name} failed to build at {scale:,}: {exc!r}")
            return None
        self.peer_builds[(name, scale)] = (seconds, scale)
        return peer

    def drop_scale(self, scale: int) -> None:
        """Free the peers of a finished scale (chroma and LanceDB hold memory and threads)."""
        for (name, s), peer in list(self._peers.items()):
            if s == scale and peer is not None:
                try:
                    peer.close()
                except Exception as exc:
                    self.note(f"peer {name} failed to close: {exc!r}")
                self._peers[(name, s)] = None

    def vector_source(self) -> str:
        """Where the workload's vectors came from (real model or the stand-in)."""
        first = next(iter(self._workloads.values()), None)
        return first.vector_source if first is not None else "—"

    def describe(self) -> dict[str, Any]:
        s = self.settings
        return {
            "quick": s.quick,
            "scales": list(s.scales),
            "runs": s.runs,
            "warmup": s.warmup,
            "queries": s.n_queries,
            "ingest_batch": s.ingest_batch,
            "peers": list(s.peers),
        }
