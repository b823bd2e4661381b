"""Memories stored before their vector: `store_memory` never fails over the embedding
model (the contract of the store tool): when the model is still loading past the wait,
failed to load, or failed on this text, the memory is stored without its vector (found by
keywords at once) and its result says ``embedding: "pending"``. :class:`VectorBackfill`
embeds those memories once the model is ready, in this process or at the next open.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from memcore._exit import close_at_exit
from memcore.errors import EmbeddingError, MemcoreError

if TYPE_CHECKING:
    from memcore._core import Engine
    from memcore._facade.base import Vector
    from memcore.embeddings import EmbeddingService

_log = logging.getLogger("memcore.embeddings")

#: Memories embedded per round (one engine read, one model batch).
BATCH = 64
#: Seconds between looks at a model still loading (also how soon close() is heard).
POLL = 0.2
#: Embedding states in which a memory is stored without its vector: the model is
#: loading past the wait, failed to load, or failed on this text.
PENDING_STATES = frozenset({"loading", "failed", "inference"})


def stores_pending(error: EmbeddingError) -> bool:
    """Whether a failed embedding leaves the memory to store without its vector."""
    details = getattr(error, "details", None)
    return isinstance(details, dict) and details.get("state") in PENDING_STATES


class VectorBackfill:
    """One background thread per store that attaches vectors to memories stored without
    one; started when such a memory is stored and at open when some wait."""

    def __init__(self, engine: Engine, embeddings: EmbeddingService) -> None:
        self._engine = engine
        self._embeddings = embeddings
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._again = False

    def schedule(self) -> None:
        """Make sure a pass runs after this call (starting the thread if it is idle)."""
        with self._lock:
            if self._stop.is_set():
                return
            if self._thread is not None:
                self._again = True
                return
            self._thread = threading.Thread(
                target=self._run, name="memcore-vector-backfill", daemon=True
            )
            self._thread.start()
        # A pass still embedding when the interpreter ends would abort it (memcore._exit).
        close_at_exit(self, VectorBackfill.close)

    def close(self, timeout: float = 5.0) -> None:
        """Stop after the batch in flight (the rest waits for the next open)."""
        self._stop.set()
        with self._lock:
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def wait_idle(self, timeout: float) -> bool:
        """Block until no pass is running (tests and benches); True when idle."""
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def _run(self) -> None:
        try:
            while True:
                if self._model_ready():
                    self._pass()
                with self._lock:
                    if not self._again or self._stop.is_set():
                        self._thread = None
                        return
                    self._again = False
        except Exception:  # a background pass must never take the process down
            _log.exception("embedding stored memories failed; they stay keyword-searchable")
            with self._lock:
                self._thread = None

    def _model_ready(self) -> bool:
        while not self._stop.is_set():
            if self._embeddings.wait_ready(POLL):
                return True
            if self._embeddings.status == "error":
                return False  # the next open tries again
        return False

    def _pass(self) -> None:
        failed: set[str] = set()
        while not self._stop.is_set():
            batch = [
                row
                for row in self._engine.pending_vectors(None, BATCH + len(failed))
                if row[1] not in failed
            ][:BATCH]
            if not batch:
                return
            for rows in self._embedded(batch, failed):
                namespace, memory_id, content, vector = rows
                try:
                    self._engine.attach_vector(namespace, memory_id, content, vector)
                except MemcoreError as exc:
                    failed.add(memory_id)
                    _log.warning("could not attach the vector of %s: %s", memory_id, exc)

    def _embedded(
        self, batch: list[tuple[str, str, str]], failed: set[str]
    ) -> list[tuple[str, str, str, Vector]]:
        """Each memory of `batch` with its vector; when the batch fails, each memory
        alone, so that one text the model cannot take does not hold the others back
        (those go to `failed` until the next pass)."""
        try:
            vectors = self._embeddings.embed_passages([content for _, _, content in batch])
            return [(*row, vector) for row, vector in zip(batch, vectors, strict=True)]
        except EmbeddingError:
            if len(batch) == 1:
                failed.add(batch[0][1])
                return []
        out: list[tuple[str, str, str, Vector]] = []
        for row in batch:
            out.extend(self._embedded([row], failed))
        return out
