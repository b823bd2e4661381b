"""bm25s: BM25 on scipy sparse matrices, pure Python/numpy."""

from __future__ import annotations

import time

import bm25s
import numpy as np

from benches.peers import Peer


class Bm25sPeer(Peer):
    name = "bm25s"
    supports = frozenset({"text"})

    def build(self, texts: list[str], vectors: np.ndarray) -> float:
        start = time.perf_counter()
        self.retriever = bm25s.BM25()
        tokens = bm25s.tokenize(texts, stopwords="en", show_progress=False)
        self.retriever.index(tokens, show_progress=False)
        return time.perf_counter() - start

    def search_text(self, text: str, k: int) -> list[int]:
        tokens = bm25s.tokenize([text], stopwords="en", show_progress=False)
        found, _scores = self.retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)
        return [int(i) for i in found[0]]

    def disk_bytes(self) -> int | None:
        return None

    def close(self) -> None:
        self.retriever = None


PEER = Bm25sPeer
