"""Code search: index a project (optionally watched), search its chunks, manage projects.

Scanning, chunking and embedding happen in :mod:`memcore.code`, whose pass reaches the
engine only through :class:`~memcore._facade.code_store.ProjectRows`; the core stores the
chunks per file, keeps the project status and runs the hybrid search (the same z-score
fusion as ``recall``, restricted to code chunks). The indexer and the watcher (with
tree-sitter, pathspec and watchfiles behind them) are imported on first use, so that
``import memcore`` and the MCP server's cold start do not pay for them.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from memcore._facade.base import VectorLike, as_vector
from memcore._facade.code_store import ProjectRows
from memcore._facade.search import SearchAPI, _query_text
from memcore.errors import StorageError, invalid
from memcore.records.code import CodeHit, IndexReport, IndexStatus, ProgressCallback

if TYPE_CHECKING:
    from memcore.code.indexer import ProjectIndexer
    from memcore.code.watcher import ProjectWatcher

logger = logging.getLogger(__name__)
_Key = tuple[str, str]  # (namespace, project_id)

#: Seconds close() and delete_project wait for a watcher's pass in progress.
WATCHER_JOIN_SECONDS = 5.0
#: Chunk vectors a watched project keeps so an edit re-embeds only the chunks it changed
#: (16,384 × 384-d float32 ≈ 24 MB at most).
WATCH_VECTOR_CACHE = 16_384


@dataclass
class _CodeState:
    """Watchers and per-project locks of one Memory (created on first use)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    closing: threading.Event = field(default_factory=threading.Event)
    watchers: dict[_Key, ProjectWatcher] = field(default_factory=dict)
    project_locks: dict[_Key, threading.RLock] = field(default_factory=dict)

    def project_lock(self, key: _Key) -> threading.RLock:
        with self.lock:
            return self.project_locks.setdefault(key, threading.RLock())

    def take_watcher(self, key: _Key) -> ProjectWatcher | None:
        with self.lock:
            return self.watchers.pop(key, None)


class CodeAPI(SearchAPI):
    """Semantic code search over indexed projects (docs/guide.md, "Code search")."""

    def index_project(
        self,
        path: str | os.PathLike[str],
        project_id: str | None = None,
        watch: bool = False,
        *,
        progress: ProgressCallback | None = None,
        follow_symlinks: bool = False,
        embed_wait: float = 120.0,
        namespace: str | None = None,
    ) -> IndexReport:
        """Index a project's source files for ``search_code``, incrementally.

        Files are found under gitignore rules (nested ``.gitignore`` and ``.memoryignore``
        files, built-in excludes such as ``node_modules/``), chunked along their syntax
        tree and embedded. Unchanged files are skipped (their content hash is stored);
        changed files replace their chunks; files gone from disk drop theirs. If the
        embedding model is still loading, the pass waits up to ``embed_wait`` seconds;
        without a usable model it indexes for keyword search only, says so in the
        report and the status, and a later pass adds the vectors.

        Args:
            path: The project directory.
            project_id: The project's id; by default ``"<folder name>-<8 hex>"``, from a
                hash of the resolved path (stable for that location).
            watch: Keep the index current afterwards: a watcher thread re-indexes
                changed files 500 ms after the last change, until ``delete_project``
                or ``close``.
            progress: Called with an ``IndexProgress`` (files done, total, path) as
                the pass advances.
            follow_symlinks: Follow symlinks whose target stays inside the project.
            embed_wait: Seconds to wait for a model that is still loading.
            namespace: Override the instance's namespace.

        Returns:
            Counts of files scanned, indexed, unchanged and removed, chunks, seconds.

        Raises:
            InvalidParameterError: The path is not a directory, or the id is invalid.
            StorageError: The store is closing.
        """
        ns = self._ns(namespace)
        if not isinstance(watch, bool):
            raise invalid("watch", f"watch must be true or false, got {watch!r}.")
        state = self._code_state()
        if state.closing.is_set():
            raise StorageError("The store is closed.")
        indexer = self._indexer(ns, path, project_id, follow_symlinks, embed_wait, watch)
        key = (ns, indexer.project_id)
        self._stop_watcher(key)  # a new pass (maybe of another root) replaces it
        watcher = None
        if watch:
            from memcore.code.watcher import ProjectWatcher

            # Started before the pass, so a change made while it runs is not missed.
            watcher = ProjectWatcher(indexer)
            watcher.start()
            with state.lock:
                state.watchers[key] = watcher
        try:
            return indexer.run(final_status="watching" if watch else "idle", progress=progress)
        except BaseException:
            if watcher is not None:
                self._stop_watcher(key)
            raise

    def search_code(
        self,
        query: str,
        project_id: str | None = None,
        language: str | None = None,
        limit: int = 10,
        *,
        vector: VectorLike | None = None,
        namespace: str | None = None,
    ) -> list[CodeHit]:
        """Find code by what it does or by its identifiers.

        Hybrid ranking as in ``recall``: the query's embedding against chunk vectors
        (less each chunk's hubness penalty, docs/retrieval.md) plus BM25 over
        identifier-split code (``getUserName`` matches "user name"), each z-scored and
        fused with weights that follow the query's shape: a description ("read a file
        line by line") ranks by the vector alone, a query naming an identifier
        (``parse_args``, ``getUserName``, ``os.path.join``) ranks by BM25 (whole names are
        terms of their own).
        The chunks that define a name the query gives (an identifier-shaped word, the last
        part of a path or call, or a query of one word such as ``setlocale``) come first,
        best fused first, then the rest: asking for a name mostly means its definition.
        Without an embedding model (or if it failed to load) BM25 alone ranks; while
        the model is still loading this raises, like ``recall``.

        Args:
            query: A description of the code, or identifiers.
            project_id: Only this project (default: every project of the namespace).
            language: Only this language (``python``, ``rust``, ``typescript``, ...).
            limit: 1-50 results.
            vector: A precomputed query embedding.
            namespace: Override the instance's namespace.

        Returns:
            Hits, best first: file path, line range, name, type, snippet and scores.

        Raises:
            InvalidParameterError: Empty query or limit out of range.
            EmbeddingError: The model is still loading.
        """
        text = _query_text(query)
        if language is not None and not isinstance(language, str):
            raise invalid("language", f"language must be a string, got {language!r}.")
        q = as_vector(vector) if vector is not None else self._optional_query_vector(text)
        return self._engine.search_code(
            self._ns(namespace),
            text,
            q,
            project_id=project_id,
            language=language.strip().lower() if language else None,
            limit=limit,
        )

    def get_index_status(self, project_id: str, *, namespace: str | None = None) -> IndexStatus:
        """A project's indexing status.

        A project recorded as ``watching`` by a process that ended without closing (a
        crash) reads as ``idle`` when this writable instance has no watcher for it.

        Raises:
            NotFoundError: The project is unknown.
        """
        ns = self._ns(namespace)
        return self._live(ns, IndexStatus.from_core(self._engine.project_status(ns, project_id)))

    def list_projects(self, *, namespace: str | None = None) -> list[IndexStatus]:
        """Every indexed project of the namespace with its status."""
        ns = self._ns(namespace)
        return [
            self._live(ns, IndexStatus.from_core(row)) for row in self._engine.list_projects(ns)
        ]

    def delete_project(self, project_id: str, *, namespace: str | None = None) -> int:
        """Stop the project's watcher and remove every chunk and the status of the project.

        Returns:
            The number of chunks removed.

        Raises:
            NotFoundError: The project is unknown.
        """
        ns = self._ns(namespace)
        key = (ns, project_id)
        self._stop_watcher(key)
        with self._code_state().project_lock(key):
            return self._engine.delete_project(ns, project_id)

    # -- internals -----------------------------------------------------------------------

    def _code_state(self) -> _CodeState:
        # Memory's __init__ belongs to the facade; the state appears on first use.
        # dict.setdefault is atomic, so two threads racing here share one state.
        state: _CodeState = self.__dict__.setdefault("_code_runtime", _CodeState())
        return state

    def _indexer(
        self,
        ns: str,
        path: str | os.PathLike[str],
        project_id: str | None,
        follow_symlinks: bool,
        embed_wait: float,
        watch: bool,
    ) -> ProjectIndexer:
        from memcore.code.indexer import ProjectIndexer

        if project_id is not None and (not isinstance(project_id, str) or not project_id.strip()):
            raise invalid(
                "project_id", f"project_id must be a non-empty string, got {project_id!r}."
            )
        root, pid = project_identity(path, project_id)
        state = self._code_state()
        return ProjectIndexer(
            ProjectRows(self._engine, ns, pid),
            self._embeddings,
            root=root,
            follow_symlinks=follow_symlinks,
            embed_wait=embed_wait,
            cancel=state.closing,
            # Shared by every indexer of the project, the watcher's included.
            lock=state.project_lock((ns, pid)),
            vector_cache=WATCH_VECTOR_CACHE if watch else 0,
        )

    def _stop_watcher(self, key: _Key) -> None:
        watcher = self._code_state().take_watcher(key)
        if watcher is not None and not watcher.stop(WATCHER_JOIN_SECONDS):
            # A long embedding call is still running; the thread ends after it, and the
            # caller's next step waits for the project lock the pass holds.
            logger.info("watcher of project %s is finishing a pass", key[1])

    def _live(self, ns: str, status: IndexStatus) -> IndexStatus:
        if status.status != "watching" or self._engine.read_only:
            return status
        watcher = self._code_state().watchers.get((ns, status.project_id))
        if watcher is not None and watcher.alive:
            return status
        return dataclasses.replace(status, status="idle")

    def _close_code(self) -> None:
        """Stop every watcher (Memory.close calls this before closing the engine)."""
        state = self.__dict__.get("_code_runtime")
        if not isinstance(state, _CodeState):
            return
        state.closing.set()
        with state.lock:
            watchers = list(state.watchers.values())
            state.watchers.clear()
        for watcher in watchers:
            watcher.stop(timeout=0)  # signal them all first: they wind down in parallel
        for watcher in watchers:
            if watcher.stop(WATCHER_JOIN_SECONDS):
                _settle(watcher)


def project_identity(
    path: str | os.PathLike[str], project_id: str | None = None
) -> tuple[Path, str]:
    """Where a project is and the id `index_project` files it under: the resolved root,
    and `project_id`, or by default ``"<folder name>-<8 hex>"`` from a hash of the root.

    For callers that answer before a pass has started (the MCP tool reports the id of
    the pass it runs in the background).

    Raises:
        InvalidParameterError: The path is not an existing directory.
    """
    from memcore.code.indexer import default_project_id
    from memcore.code.scanner import resolve_root

    root = resolve_root(path)
    return root, project_id if project_id is not None else default_project_id(root)


def _settle(watcher: ProjectWatcher) -> None:
    """Record a stopped watcher's project as idle unless its last pass failed."""
    try:
        if watcher.indexer.state() == "watching":
            watcher.indexer.record_status("idle")
    except Exception:  # closing must go on whatever the status row says
        return
