"""Indexing passes started by ``index_project``, run in background threads.

A first pass over a large project takes minutes (1,000 files with embeddings: up to a
minute on two cores), longer than an MCP client waits for a result. So the tool starts the
pass here and waits only ``wait_seconds`` for it: a small project answers with the finished
report, a large one with ``status: "indexing"`` while the pass goes on, which
``get_index_status`` follows. The pass never runs on the event loop, and other calls go on
meanwhile (they share the store, not the pass's lock).

One pass per project at a time: asking again while one runs answers with the running one.
``delete_project`` and server shutdown stop a pass between two files (its progress
callback raises), so neither waits for a whole pass.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memcore.errors import MemcoreError, StorageError

if TYPE_CHECKING:
    from memcore.memory import Memory
    from memcore.records.code import IndexProgress, IndexReport

_log = logging.getLogger("memcore.mcp.index")

#: The host attachment key of the jobs.
KEY = "index-jobs"
#: Longest shutdown (or a delete) waits for a stopped pass to finish its current file batch.
STOP_SECONDS = 30.0

Key = tuple[str, str]  # (namespace, project_id)


class _StoppedError(StorageError):
    """Raised from the progress callback to end a pass early."""


@dataclass
class Job:
    """One pass in a background thread."""

    project_id: str
    root: str
    stop: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    report: IndexReport | None = None
    error: MemcoreError | None = None
    files_done: int = 0
    files_total: int = 0

    def progress(self, update: IndexProgress) -> None:
        """The pass's progress callback: counts, and the way to stop it."""
        self.files_done, self.files_total = update.done, update.total
        if self.stop.is_set():
            raise _StoppedError(f"Indexing of project {self.project_id!r} was stopped.")


class IndexJobs:
    """The passes of one store (a :class:`~memcore.tools.host.StoreHost` attachment)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[Key, Job] = {}

    def start(
        self, memory: Memory, namespace: str, root: str, project_id: str, *, watch: bool
    ) -> Job:
        """Start a pass of the project, or return the one that is running."""
        key = (namespace, project_id)
        with self._lock:
            running = self._jobs.get(key)
            if running is not None and not running.done.is_set():
                return running
            job = self._jobs[key] = Job(project_id, root)
        thread = threading.Thread(
            target=self._run,
            args=(job, memory, namespace, watch),
            name=f"memcore-index[{project_id}]",
            daemon=True,
        )
        thread.start()
        return job

    def running(self, namespace: str, project_id: str) -> Job | None:
        """The project's pass if one is running."""
        with self._lock:
            job = self._jobs.get((namespace, project_id))
        return None if job is None or job.done.is_set() else job

    def stop(self, namespace: str, project_id: str, timeout: float = STOP_SECONDS) -> None:
        """Stop the project's running pass, if any, and wait for it to end."""
        with self._lock:
            job = self._jobs.get((namespace, project_id))
        if job is not None:
            job.stop.set()
            job.done.wait(timeout)

    def close(self) -> None:
        """Stop every pass (the store is closing)."""
        with self._lock:
            jobs = list(self._jobs.values())
        for job in jobs:
            job.stop.set()
        for job in jobs:
            job.done.wait(STOP_SECONDS)

    def _run(self, job: Job, memory: Memory, namespace: str, watch: bool) -> None:
        try:
            job.report = memory.index_project(
                job.root,
                job.project_id,
                watch,
                progress=job.progress,
                namespace=namespace,
            )
        except MemcoreError as exc:
            job.error = exc
        except Exception as exc:  # a thread's failure would otherwise go unseen
            _log.exception("indexing of %s failed", job.project_id)
            job.error = StorageError(f"Indexing failed: {type(exc).__name__}: {exc}")
        finally:
            job.done.set()
