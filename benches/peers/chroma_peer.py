"""chromadb (embedded, persistent): HNSW with cosine space."""

from __future__ import annotations

import time

import chromadb
import numpy as np
from chromadb.config import Settings

from benches.peers import Peer


class ChromaPeer(Peer):
    name = "chromadb"
    supports = frozenset({"vector", "store"})

    def build(self, texts: list[str], vectors: np.ndarray) -> float:
        start = time.perf_counter()
        self.client = chromadb.PersistentClient(
            path=str(self.directory), settings=Settings(anonymized_telemetry=False)
        )
        self.collection = self.client.create_collection(
            "memories", metadata={"hnsw:space": "cosine"}
        )
        batch = self.client.get_max_batch_size()
        for lo in range(0, len(texts), batch):
            hi = min(lo + batch, len(texts))
            self.collection.add(
                ids=[str(i) for i in range(lo, hi)],
                embeddings=vectors[lo:hi],
                documents=texts[lo:hi],
            )
        return time.perf_counter() - start

    def search_vector(self, vector: np.ndarray, k: int) -> list[int]:
        found = self.collection.query(
            query_embeddings=vector.reshape(1, -1), n_results=k, include=["documents"]
        )
        return [int(i) for i in found["ids"][0]]

    def store_one(self, row: int, text: str, vector: np.ndarray) -> None:
        self.collection.add(ids=[str(row)], embeddings=vector.reshape(1, -1), documents=[text])

    def close(self) -> None:
        self.collection = None
        self.client = None


PEER = ChromaPeer
