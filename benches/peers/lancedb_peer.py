"""LanceDB (embedded): vector search on an IVF_HNSW_SQ index, native FTS, and hybrid."""

from __future__ import annotations

import os
import time
from typing import Any

# Lance logs warnings through its Rust logger (index statistics, deprecations): a write inside
# a timed call that floods the log. Errors still show.
os.environ.setdefault("LANCE_LOG", "error")
os.environ.setdefault("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")  # silences a per-index warning

import lancedb
import numpy as np
import pyarrow as pa

from benches.peers import Peer

# Rows per add() while loading: one Lance fragment each, as a batch ingest would write.
_LOAD_BATCH = 10_000


def _table(ids: np.ndarray, texts: list[str], vectors: np.ndarray) -> pa.Table:
    flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).ravel())
    return pa.table(
        {
            "id": pa.array(ids, type=pa.int64()),
            "text": pa.array(texts, type=pa.string()),
            "vector": pa.FixedSizeListArray.from_arrays(flat, vectors.shape[1]),
        }
    )


class LanceDBPeer(Peer):
    name = "lancedb"
    supports = frozenset({"vector", "text", "hybrid", "store"})

    def build(self, texts: list[str], vectors: np.ndarray) -> float:
        start = time.perf_counter()
        self.insert_seconds = self.load(texts, vectors)
        self.table.create_index(
            metric="cosine", vector_column_name="vector", index_type="IVF_HNSW_SQ"
        )
        self.table.create_fts_index("text")
        return time.perf_counter() - start

    def load(self, texts: list[str], vectors: np.ndarray) -> float:
        """Insert every row (no index yet); return the seconds it took."""
        start = time.perf_counter()
        self.db = lancedb.connect(str(self.directory))
        ids = np.arange(len(texts))
        self.table = self.db.create_table(
            "memories", data=_table(ids[:_LOAD_BATCH], texts[:_LOAD_BATCH], vectors[:_LOAD_BATCH])
        )
        for lo in range(_LOAD_BATCH, len(texts), _LOAD_BATCH):
            hi = lo + _LOAD_BATCH
            self.table.add(_table(ids[lo:hi], texts[lo:hi], vectors[lo:hi]))
        return time.perf_counter() - start

    @staticmethod
    def _ids(query: Any, score: str) -> list[int]:
        # Fetch the text as a user would, but only the columns needed (no vectors). Naming the
        # score column keeps Lance from logging a deprecation warning on every query.
        result = query.select(["id", "text", score]).to_arrow()
        return [int(i) for i in result.column("id").to_pylist()]

    def search_vector(self, vector: np.ndarray, k: int) -> list[int]:
        return self._ids(self.table.search(vector).metric("cosine").limit(k), "_distance")

    def search_text(self, text: str, k: int) -> list[int]:
        return self._ids(self.table.search(text, query_type="fts").limit(k), "_score")

    def hybrid(self, text: str, vector: np.ndarray, k: int) -> list[int]:
        query = self.table.search(query_type="hybrid").vector(vector).text(text).limit(k)
        return [int(i) for i in query.to_arrow().column("id").to_pylist()]

    def store_one(self, row: int, text: str, vector: np.ndarray) -> None:
        self.table.add(_table(np.array([row]), [text], vector.reshape(1, -1)))

    def optimize(self) -> None:
        self.table.optimize()

    def close(self) -> None:
        self.table = None
        self.db = None


PEER = LanceDBPeer
