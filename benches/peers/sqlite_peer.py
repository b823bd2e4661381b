"""Plain sqlite3 in WAL mode: one row per transaction, the cost floor of a durable write."""

from __future__ import annotations

import sqlite3
import time

import numpy as np

from benches.peers import Peer


class SqlitePeer(Peer):
    name = "sqlite3"
    supports = frozenset({"store"})
    synchronous = "NORMAL"

    def build(self, texts: list[str], vectors: np.ndarray) -> float:
        self.directory.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        self.db = sqlite3.connect(self.directory / "rows.sqlite3", isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute(f"PRAGMA synchronous={self.synchronous}")
        self.db.execute("CREATE TABLE rows (id INTEGER PRIMARY KEY, content TEXT, vector BLOB)")
        self.db.execute("BEGIN")
        self.db.executemany(
            "INSERT INTO rows VALUES (?, ?, ?)",
            ((i, t, vectors[i].tobytes()) for i, t in enumerate(texts)),
        )
        self.db.execute("COMMIT")
        return time.perf_counter() - start

    def set_synchronous(self, mode: str) -> None:
        self.synchronous = mode
        self.db.execute(f"PRAGMA synchronous={mode}")

    def store_one(self, row: int, text: str, vector: np.ndarray) -> None:
        # Autocommit mode: the INSERT is its own transaction, as one store_memory is.
        self.db.execute("INSERT INTO rows VALUES (?, ?, ?)", (row, text, vector.tobytes()))

    def close(self) -> None:
        self.db.close()


PEER = SqlitePeer
