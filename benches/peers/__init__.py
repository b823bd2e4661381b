"""Peers: other engines run over the same workload in the same process and run.

Each peer lives in its own module and implements the parts of `Peer` it supports; an area
asks `supports` before timing an operation. Peers import their library lazily, so a missing
package (the `bench` extra is optional) turns into a note, not a failure.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np

# name -> module in this package that defines `PEER` (a Peer subclass)
REGISTRY: dict[str, str] = {
    "usearch": "usearch_peer",
    "numpy-exact": "numpy_peer",
    "lancedb": "lancedb_peer",
    "chromadb": "chroma_peer",
    "tantivy-py": "tantivy_peer",
    "bm25s": "bm25s_peer",
    "sqlite3": "sqlite_peer",
}


class Peer:
    """The operations a peer may support, over row indices 0..n-1 of the workload."""

    name = "peer"
    # Any of: "vector", "text", "hybrid", "store".
    supports: frozenset[str] = frozenset()

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def build(self, texts: list[str], vectors: np.ndarray) -> float:
        """Load the workload and build every index; return the seconds it took."""
        raise NotImplementedError

    def search_vector(self, vector: np.ndarray, k: int) -> list[int]:
        raise NotImplementedError

    def search_text(self, text: str, k: int) -> list[int]:
        raise NotImplementedError

    def hybrid(self, text: str, vector: np.ndarray, k: int) -> list[int]:
        raise NotImplementedError

    def store_one(self, row: int, text: str, vector: np.ndarray) -> None:
        """Insert one new row durably, so that the next search can find it."""
        raise NotImplementedError

    def disk_bytes(self) -> int | None:
        """Size of what the peer keeps on disk, if it keeps anything."""
        if not self.directory.exists():
            return None
        return sum(p.stat().st_size for p in self.directory.rglob("*") if p.is_file())

    def close(self) -> None:
        """Release memory and threads."""


def load_peer(name: str, directory: Path) -> tuple[Peer | None, str]:
    """An unbuilt peer, or None and the reason it cannot run here."""
    module_name = REGISTRY.get(name)
    if module_name is None:
        return None, f"unknown peer {name!r}"
    try:
        module = importlib.import_module(f"benches.peers.{module_name}")
        peer: Peer = module.PEER(directory)
    except ImportError as exc:
        return None, f"not installed ({exc}); `pip install -e .[bench]` adds it"
    except Exception as exc:  # a broken install must not end the run
        return None, f"failed to start: {exc!r}"
    return peer, ""
