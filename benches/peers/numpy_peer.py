"""Brute force with numpy: the exact answer, and the floor any index must beat."""

from __future__ import annotations

import time

import numpy as np

from benches.peers import Peer


class NumpyExactPeer(Peer):
    name = "numpy-exact"
    supports = frozenset({"vector"})

    def build(self, texts: list[str], vectors: np.ndarray) -> float:
        start = time.perf_counter()
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        return time.perf_counter() - start

    def search_vector(self, vector: np.ndarray, k: int) -> list[int]:
        sims = self.vectors @ vector
        top = np.argpartition(-sims, k - 1)[:k]
        return [int(i) for i in top[np.argsort(-sims[top])]]

    def disk_bytes(self) -> int | None:
        return None

    def close(self) -> None:
        self.vectors = np.empty((0, 0), dtype=np.float32)


PEER = NumpyExactPeer
