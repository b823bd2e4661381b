"""usearch's Python package: the raw HNSW that memcore itself builds on, without a store."""

from __future__ import annotations

import time

import numpy as np
from usearch.index import Index

from benches.peers import Peer


class UsearchPeer(Peer):
    name = "usearch"
    supports = frozenset({"vector"})
    # memcore's own HNSW parameters (rust/memcore/src/vector/hnsw.rs), so the comparison is of
    # the engines around the graph, not of two different graphs.
    CONNECTIVITY, EXPANSION_ADD, EXPANSION_SEARCH = 16, 128, 80

    def _new_index(self) -> Index:
        return Index(
            ndim=384,
            metric="cos",
            dtype="f32",
            connectivity=self.CONNECTIVITY,
            expansion_add=self.EXPANSION_ADD,
            expansion_search=self.EXPANSION_SEARCH,
        )

    def build(self, texts: list[str], vectors: np.ndarray, threads: int = 0) -> float:
        """Add every vector (threads=0: all cores, as memcore's indexer may use both)."""
        self.index = self._new_index()
        start = time.perf_counter()
        self.index.add(np.arange(len(vectors), dtype=np.uint64), vectors, threads=threads)
        return time.perf_counter() - start

    def search_vector(self, vector: np.ndarray, k: int) -> list[int]:
        return [int(key) for key in self.index.search(vector, k).keys]

    def save_bytes(self) -> int:
        """Size of the serialised index file (the budget quotes it against memcore's RSS)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / "index.usearch"
        self.index.save(str(path))
        return path.stat().st_size

    def close(self) -> None:
        self.index = None  # type: ignore[assignment]


PEER = UsearchPeer
