"""Index a project incrementally: scan, chunk and embed what changed, drop what is gone.

The store is reached through :class:`ProjectStore`, which the facade implements over the
engine (``memcore._facade.code_store``): this package scans, chunks and embeds, the facade
owns every engine call.

A pass compares each scanned file with the fingerprint the store keeps for it
(``ProjectStore.indexed_files``). The fingerprint is the file's SHA-256 plus
:data:`CHUNKING_VERSION` and whether the chunks got vectors, so that

- an unchanged file is neither chunked nor embedded again;
- a file stored without vectors (the model was off, loading or failing) is embedded by the
  first pass that has a working model, while a pass without a model never replaces
  stored vectors with none;
- a change to the chunker (bump :data:`CHUNKING_VERSION`) re-chunks every file once.

Chunks of several files are embedded together, so small files still fill the embedding
service's token-bounded batches (sorted by length, 2048 padded tokens each by default, with
retries; see :mod:`memcore.embeddings`), each chunk cut at :data:`EMBED_MAX_TOKENS`. Each
file is then stored with one ``ProjectStore.store_file`` call, which replaces its previous
chunks atomically.

Progress goes to ``ProjectStore.put_status``: ``indexing`` with the files done so far,
then ``idle`` (or ``watching``), or ``error`` with the reason. When vectors could not be
computed, the final status keeps the reason in its ``error`` field as a warning while the
status itself stays ``idle``: keyword (BM25) search works on such an index.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from memcore._time import now_micros
from memcore.code import hashing
from memcore.code.chunker import CodeChunkDraft, chunk_file
from memcore.code.ignore import IGNORE_FILE_NAMES, IgnoreRules
from memcore.code.scanner import read_source_file, resolve_root, scan_project, should_index
from memcore.code.sourcefile import SourceFile
from memcore.errors import EmbeddingError, MemcoreError, StorageError
from memcore.records.code import IndexProgress, IndexReport, ProgressCallback, ProjectState

if TYPE_CHECKING:
    from memcore.embeddings import EmbeddingService

logger = logging.getLogger(__name__)

CHUNKING_VERSION = "2"
"""Part of every stored file fingerprint; bump it when chunk boundaries, headers or the
embedded text (:func:`passage_text`) change."""

DEFAULT_EMBED_WAIT = 120.0
"""Seconds a pass waits for an embedding model that is still loading before it indexes
for keyword search only (a later pass adds the vectors)."""

EMBED_MAX_TOKENS = 128
"""Tokens of a chunk (special tokens included) the model sees, below the model's own limit
(MiniLM's is 256, for memories and documents): 128 is the length all-MiniLM-L6-v2 was
fine-tuned at, and its own tokenizer.json truncates there. Embedding is nearly all of an
indexing pass and costs at least linearly in tokens; in a 1,000-file sample of
site-packages, half the chunks are longer than 128 tokens, and the cut takes the tokens
to embed from 2.35 M to 1.62 M. Code search loses nothing by it: on CoSQA (500 queries,
6,267 functions, vector alone) MRR@50 is 0.525 at 256 tokens, 0.526 at 128, 0.518 at 96,
since the head of a chunk (header, signature, docstring) is what a natural-language query
matches. BM25 still indexes the whole chunk."""

PASS_VECTOR_CACHE = 2048
"""Vectors an indexing pass without a watcher's cache keeps to embed a repeated text once
(2,048 × 384-d float32 ≈ 3 MB). Repeats sit close together in a pass (files of a folder are
indexed together): in the 1,000-file benchmark this catches 1,117 of its 1,121 repeated
texts, and 1,024 already catches 1,089."""

EMBED_MAX_CHARS = 3000
"""Characters of a chunk handed to the tokenizer: far beyond :data:`EMBED_MAX_TOKENS` of
code (about 3.3 characters a token), so the cut never shortens what the model sees; it
saves tokenizing text that would be thrown away, and bounds what a custom embedding
function (which has no token limit) receives."""

# The header's first line, as the chunker writes it: a line-comment marker, then the path.
_FILE_LINE = re.compile(r"(?:#|//|--|%|;;) file: [^\n]*\n")


def passage_text(content: str) -> str:
    """What a chunk's vector embeds: its content without the header's file line, cut at
    :data:`EMBED_MAX_CHARS`.

    The path stays in what BM25 indexes (``content`` is unchanged), so a query naming a
    file still finds it; in the vector it spent some of the 128 tokens on a name rather
    than on the code. On CoSQA (500 queries, 6,267 functions, one per file) the vector
    alone scored MRR@50 0.522 with the line and 0.543 without it (exact cosine);
    CoSQA's file names are meaningless by construction, so that is an upper bound of
    the gain on a real project, whose paths mean something but stay searchable by BM25.
    """
    match = _FILE_LINE.match(content)
    return (content[match.end() :] if match else content)[:EMBED_MAX_CHARS]


BATCH_CHUNKS = 256
"""Chunks collected across files before one embedding call (which splits them into
token-bounded batches): enough to keep batches full, small enough for steady progress."""

MAX_CHUNK_BYTES = 100_000
"""The core's limit on one chunk's content (PAYLOAD_TOO_LARGE beyond)."""

KEEP_TEXT_BYTES = 32_000_000
"""Texts of changed files kept from the scan for chunking; beyond this a file is read
again when its turn comes, so a first pass over a huge tree stays bounded in memory."""

_STATUS_INTERVAL = 0.5  # seconds between progress writes to the status row


class IndexCancelledError(StorageError):
    """The pass was stopped (the store is closing or the project is being deleted)."""


def default_project_id(root: Path) -> str:
    """The id of a project indexed without one: its folder name and a hash of its path.

    ``"<folder name>-<first 8 hex of SHA-256 of the absolute resolved root>"``, e.g.
    ``"memcore-3f2a9c1d"``: readable, stable for a given location, and distinct for two
    checkouts with the same folder name. Moving the folder changes it; pass an explicit
    ``project_id`` to keep one id across moves (paths are stored relative to the root).

    Args:
        root: The resolved project root.

    Returns:
        The id.
    """
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", root.name).strip("-.")[:64] or "root"
    digest = hashlib.sha256(str(root).encode("utf-8")).hexdigest()[:8]
    return f"{name}-{digest}"


def fingerprint(content_hash: str, *, embedded: bool) -> str:
    """The value stored as a file's hash (see the module docstring)."""
    return f"{content_hash}:{CHUNKING_VERSION}{'v' if embedded else 't'}"


def is_current(stored: str | None, content_hash: str, *, vectors: bool) -> bool:
    """Whether a stored fingerprint makes re-indexing a file pointless in this pass."""
    if stored == fingerprint(content_hash, embedded=True):
        return True
    return not vectors and stored == fingerprint(content_hash, embedded=False)


class ProjectStore(Protocol):
    """One project's rows in the store, as a pass reads and writes them.

    Attributes:
        namespace: The namespace the chunks live in.
        project_id: The project's id.
    """

    namespace: str
    project_id: str

    def indexed_files(self) -> dict[str, str]:
        """The stored files: path relative to the root → fingerprint."""
        ...

    def remove_file(self, path: str) -> None:
        """Drop one file's chunks."""
        ...

    def store_file(
        self,
        source: SourceFile,
        fingerprint: str,
        chunks: Sequence[CodeChunkDraft],
        vectors: npt.NDArray[np.float32] | None,
    ) -> None:
        """Replace one file's chunks (and their vectors, one row each) atomically."""
        ...

    def status(self) -> Mapping[str, Any]:
        """The project's status row: ``status``, ``root``, ``total_files``,
        ``indexed_files``, ``total_chunks``, ``started_at``, ``completed_at`` (µs)."""
        ...

    def put_status(
        self,
        root: str,
        state: ProjectState,
        *,
        total_files: int,
        indexed_files: int,
        started_at: int | None,
        completed_at: int | None,
        error: str | None,
    ) -> None:
        """Write the project's status row."""
        ...


class ProjectIndexer:
    """Indexes one project of one namespace; one pass at a time (an internal lock).

    Shared by ``Memory.index_project`` and the project's watcher, which calls
    :meth:`apply_changes` with the paths it saw change.
    """

    def __init__(
        self,
        store: ProjectStore,
        embeddings: EmbeddingService | None,
        *,
        root: str | os.PathLike[str],
        follow_symlinks: bool = False,
        embed_wait: float = DEFAULT_EMBED_WAIT,
        cancel: threading.Event | None = None,
        lock: threading.RLock | None = None,
        vector_cache: int = 0,
    ) -> None:
        """Bind a project.

        Args:
            store: The project's rows (its namespace and id come with it).
            embeddings: The embedding service, or None for keyword search only.
            root: The project directory.
            follow_symlinks: Follow links whose target stays inside the root.
            embed_wait: Seconds to wait for a model that is still loading.
            cancel: Set to stop a pass between files (e.g. when the store closes).
            lock: Held during a pass; share one per project so that passes from
                several indexers of the same project never overlap.
            vector_cache: Chunk vectors to keep between passes (see
                :class:`VectorCache`); 0 keeps none.

        Raises:
            InvalidParameterError: The root is not an existing directory.
        """
        self.root = resolve_root(root)
        self.project_id = store.project_id
        self.namespace = store.namespace
        self.rules = IgnoreRules(self.root)
        self.store = store
        self._embeddings = embeddings
        self._follow = follow_symlinks
        self._embed_wait = embed_wait
        self._cancel = cancel or threading.Event()
        self._stopped = threading.Event()
        self._lock = lock or threading.RLock()
        self._vector_cache = VectorCache(vector_cache) if vector_cache > 0 else None

    def stop(self) -> None:
        """Make a pass in progress (and every later one) end between two files."""
        self._stopped.set()

    def state(self) -> str:
        """The project's recorded state (``idle``, ``indexing``, ``watching``, ``error``)."""
        return str(self.store.status()["status"])

    def record_status(self, state: ProjectState, *, error: str | None = None) -> None:
        """Change the project's state outside a pass, keeping its counts and times.

        Args:
            state: The new state.
            error: The reason for ``error``, or a warning; None clears it.
        """
        row = self.store.status()
        self.store.put_status(
            row["root"],
            state,
            total_files=row["total_files"],
            indexed_files=row["indexed_files"],
            started_at=row["started_at"],
            completed_at=row["completed_at"],
            error=error,
        )

    # -- full pass -----------------------------------------------------------------------

    def run(
        self, *, final_status: ProjectState = "idle", progress: ProgressCallback | None = None
    ) -> IndexReport:
        """Bring the whole project up to date.

        Args:
            final_status: ``idle``, or ``watching`` when a watcher takes over.
            progress: Called after the scan and after each stored file.

        Returns:
            What the pass did.

        Raises:
            IndexCancelledError: The cancel event was set.
            MemcoreError: The engine failed; the status says ``error`` with the reason.
        """
        with self._lock:
            status = _StatusWriter(self, progress)
            try:
                return self._run(status, final_status)
            except BaseException as exc:
                status.failed(exc)
                raise

    def _run(self, status: _StatusWriter, final_status: ProjectState) -> IndexReport:
        status.write("indexing")
        vectors = _Vectorizer(self._embeddings, self._embed_wait, self._vector_cache)
        stored = self.store.indexed_files()
        on_disk: set[str] = set()
        todo: list[tuple[str, SourceFile | None]] = []
        kept = 0
        for source in scan_project(self.root, follow_symlinks=self._follow, rules=self.rules):
            self._check_cancel()
            on_disk.add(source.rel_path)
            if is_current(stored.get(source.rel_path), source.content_hash, vectors=vectors.on):
                continue
            keep = kept + source.size <= KEEP_TEXT_BYTES
            kept += source.size if keep else 0
            todo.append((source.rel_path, source if keep else None))
        gone = [path for path in stored if path not in on_disk]
        for path in gone:
            self.store.remove_file(path)
        status.total, status.done = len(on_disk), len(on_disk) - len(todo)
        status.write("indexing")
        status.report()
        batch = _Batch(self, vectors, status)
        for rel, kept_source in todo:
            self._check_cancel()
            current = kept_source or self._read(rel)
            if current is None:  # vanished or turned binary since the scan
                status.total -= 1
                if rel in stored:
                    self.store.remove_file(rel)
                continue
            batch.add(current, self._chunks(current))
        batch.flush()
        return status.finish(
            final_status,
            batch,
            vectors,
            scanned=len(on_disk),
            unchanged=len(on_disk) - len(todo),
            removed=len(gone),
        )

    # -- changes seen by a watcher ---------------------------------------------------------

    def apply_changes(self, paths: Iterable[str]) -> IndexReport:
        """Re-index the given paths only (absolute, as a file watcher reports them).

        A changed ignore file, or a directory created, moved or deleted, makes this a full
        :meth:`run` (the ignore cache is invalidated first), since any number of files may
        have entered or left the index.

        Args:
            paths: Paths that changed, were created or were deleted.

        Returns:
            What was done; the status ends as ``watching``.
        """
        rels, full = self._classify(paths)
        if full:
            return self.run(final_status="watching")
        with self._lock:
            status = _StatusWriter(self, None)
            try:
                return self._apply(rels, status)
            except BaseException as exc:
                status.failed(exc)
                raise

    def _classify(self, paths: Iterable[str]) -> tuple[set[str], bool]:
        rels: set[str] = set()
        full = False
        for path in paths:
            rel = self._relative(path)
            if rel is None:
                continue
            if PurePosixPath(rel).name in IGNORE_FILE_NAMES or rel == ".git/info/exclude":
                self.rules.invalidate()
                full = True
            elif rel == "." or (self.root / rel).is_dir():
                full = True
            else:
                rels.add(rel)
        return rels, full

    def _apply(self, rels: set[str], status: _StatusWriter) -> IndexReport:
        vectors = _Vectorizer(self._embeddings, self._embed_wait, self._vector_cache)
        stored = self.store.indexed_files()
        gone: set[str] = set()
        unchanged = 0
        batch = _Batch(self, vectors, status)
        for rel in sorted(rels):
            self._check_cancel()
            source = self._read(rel) if should_index(self.root, rel, rules=self.rules) else None
            if source is not None:
                if is_current(stored.get(rel), source.content_hash, vectors=vectors.on):
                    unchanged += 1  # touched but not changed (a save without edits)
                else:
                    batch.add(source, self._chunks(source))
            elif rel in stored:
                gone.add(rel)
            elif not (self.root / rel).exists():
                # A deleted directory is reported by its own path only.
                gone.update(p for p in stored if p.startswith(rel + "/"))
        for path in sorted(gone):
            self.store.remove_file(path)
        batch.flush()
        total = len(self.store.indexed_files())
        status.total = status.done = total
        return status.finish(
            "watching",
            batch,
            vectors,
            scanned=len(rels),
            unchanged=unchanged,
            removed=len(gone),
        )

    # -- helpers ---------------------------------------------------------------------------

    def _read(self, rel: str) -> SourceFile | None:
        return read_source_file(self.root, rel, follow_symlinks=self._follow)

    def _relative(self, path: str) -> str | None:
        try:
            rel = Path(path).relative_to(self.root)
        except ValueError:
            return None
        return rel.as_posix()

    def _check_cancel(self) -> None:
        if self._cancel.is_set() or self._stopped.is_set():
            raise IndexCancelledError(f"Indexing of project {self.project_id!r} was stopped.")

    def _chunks(self, source: SourceFile) -> list[CodeChunkDraft]:
        chunks = chunk_file(source.text, source.language, source.rel_path)
        if all(len(c.content.encode("utf-8")) <= MAX_CHUNK_BYTES for c in chunks):
            return chunks
        # Long lines (up to the scanner's 5,000 characters) times 120-line chunks can pass
        # the core's limit: cut this file into windows short enough for its longest line.
        longest = max(len(line.encode("utf-8")) for line in source.text.split("\n"))
        lines = max(1, min(120, MAX_CHUNK_BYTES // 2 // max(longest, 1)))
        return chunk_file(
            source.text,
            source.language,
            source.rel_path,
            max_chunk_lines=lines,
            window=lines,
            overlap=0,
        )

    def store_file(
        self,
        source: SourceFile,
        chunks: list[CodeChunkDraft],
        rows: npt.NDArray[np.float32] | None,
    ) -> None:
        """Replace one file's chunks in the store (``rows``: its vectors or None)."""
        embedded = fingerprint(source.content_hash, embedded=rows is not None)
        self.store.store_file(source, embedded, chunks, rows)


class VectorCache:
    """Recent chunk vectors by the hash of the text embedded (:func:`passage_text`; least
    recently used dropped first).

    A watched project keeps one, filled by its first pass, so that an edit re-embeds only
    the chunks whose text changed rather than every chunk of the file. Every other pass
    keeps a small one of its own (:data:`PASS_VECTOR_CACHE`): generated code, licence
    headers and ``if __name__ == "__main__"`` blocks repeat across files with only the
    header's file line differing, which the vector does not embed (7.5% of the chunks of
    the 1,000-file benchmark, benches/bench_code.py), so each such text is embedded once.
    """

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._rows: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()

    def get(self, key: str) -> npt.NDArray[np.float32] | None:
        row = self._rows.get(key)
        if row is not None:
            self._rows.move_to_end(key)
        return row

    def put(self, key: str, row: npt.NDArray[np.float32]) -> None:
        self._rows[key] = row
        self._rows.move_to_end(key)
        while len(self._rows) > self._capacity:
            self._rows.popitem(last=False)


class _Vectorizer:
    """Embeddings for one pass; switches to keyword-only (with a note) when they fail."""

    def __init__(
        self, service: EmbeddingService | None, wait: float, cache: VectorCache | None
    ) -> None:
        self.note: str | None = None
        self.seconds = 0.0
        self._service = service
        self._cache = cache if cache is not None else VectorCache(PASS_VECTOR_CACHE)
        self.on = self._ready(wait)

    def _ready(self, wait: float) -> bool:
        service = self._service
        if service is None:
            return False  # a text-only store by choice: nothing to warn about
        if service.status == "loading":
            service.wait_ready(wait)
        if service.status == "ready":
            return True
        prefix = "Indexed without vectors (keyword search only): the embedding model"
        if service.status == "loading":
            self.note = f"{prefix} was still loading after {wait:g} s."
        else:
            self.note = f"{prefix} is unavailable: {service.error}"
        return False

    def embed(self, chunks: list[CodeChunkDraft]) -> npt.NDArray[np.float32] | None:
        """One row per chunk, or None when this pass goes without vectors."""
        if not self.on or not chunks or self._service is None:
            return None
        known: dict[str, npt.NDArray[np.float32]] = {}
        todo: dict[str, str] = {}  # a text repeated in the batch is embedded once
        keys: list[str] = []
        for chunk in chunks:
            text = passage_text(chunk.content)
            key = hashing.content_hash(text)  # the code index's one hash
            keys.append(key)
            row = self._cache.get(key)
            if row is not None:
                known[key] = row
            elif key not in known:
                todo[key] = text
        if todo:
            fresh = self._embed(self._service, list(todo.values()))
            if fresh is None:
                return None
            for key, row in zip(todo, fresh, strict=True):
                known[key] = row
                self._cache.put(key, row)
        return np.vstack([known[key] for key in keys])

    def _embed(self, service: EmbeddingService, texts: list[str]) -> npt.NDArray[np.float32] | None:
        started = time.perf_counter()
        try:
            return service.embed_passages(texts, max_tokens=EMBED_MAX_TOKENS)
        except EmbeddingError as exc:
            # Retries are done inside the service; the rest of this pass goes without
            # vectors, and the next pass embeds these files (their fingerprints say so).
            logger.warning("embedding failed, indexing for keyword search only: %s", exc)
            self.on = False
            self.note = f"Indexed without vectors after an embedding failure: {exc}"
            return None
        finally:
            self.seconds += time.perf_counter() - started


class _Batch:
    """Files waiting for one shared embedding call, then stored one by one."""

    def __init__(self, owner: ProjectIndexer, vectors: _Vectorizer, status: _StatusWriter):
        self._owner = owner
        self._vectors = vectors
        self._status = status
        self._files: list[tuple[SourceFile, list[CodeChunkDraft]]] = []
        self._pending = 0
        self.indexed = 0
        self.failed = 0
        self.chunks = 0
        self.first_failure: str | None = None

    def add(self, source: SourceFile, chunks: list[CodeChunkDraft]) -> None:
        self._files.append((source, chunks))
        self._pending += len(chunks)
        if self._pending >= BATCH_CHUNKS:
            self.flush()

    def flush(self) -> None:
        files, self._files, self._pending = self._files, [], 0
        matrix = self._vectors.embed([c for _, chunks in files for c in chunks])
        start = 0
        for source, chunks in files:
            rows = None if matrix is None or not chunks else matrix[start : start + len(chunks)]
            start += len(chunks)
            try:
                self._owner.store_file(source, chunks, rows)
            except MemcoreError as exc:
                # One bad file (a path the core refuses, an oversized chunk) must not
                # stop the project; it is counted and named in the report.
                logger.warning("cannot index %s: %s", source.rel_path, exc)
                self.failed += 1
                self.first_failure = self.first_failure or f"{source.rel_path}: {exc}"
                continue
            self.indexed += 1
            self.chunks += len(chunks)
            self._status.advance(source.rel_path)


class _StatusWriter:
    """The project's status row and the progress callback during one pass."""

    def __init__(self, owner: ProjectIndexer, progress: ProgressCallback | None) -> None:
        self._owner = owner
        self._progress = progress
        self._started = time.perf_counter()
        self._last_write = 0.0
        self.started_at = now_micros()
        self.total = 0
        self.done = 0

    def write(
        self,
        state: ProjectState,
        *,
        force: bool = True,
        completed_at: int | None = None,
        error: str | None = None,
    ) -> None:
        now = time.perf_counter()
        if not force and now - self._last_write < _STATUS_INTERVAL:
            return
        self._last_write = now
        owner = self._owner
        owner.store.put_status(
            str(owner.root),
            state,
            total_files=self.total,
            indexed_files=self.done,
            started_at=self.started_at,
            completed_at=completed_at,
            error=error,
        )

    def report(self, path: str | None = None) -> None:
        if self._progress is not None:
            self._progress(IndexProgress(self.done, self.total, path))

    def advance(self, path: str) -> None:
        self.done += 1
        self.write("indexing", force=False)
        self.report(path)

    def finish(
        self,
        state: ProjectState,
        batch: _Batch,
        vectors: _Vectorizer,
        *,
        scanned: int,
        unchanged: int,
        removed: int,
    ) -> IndexReport:
        owner = self._owner
        note = vectors.note or (
            f"{batch.failed} file(s) could not be indexed; first: {batch.first_failure}"
            if batch.failed
            else None
        )
        self.write(state, completed_at=now_micros(), error=note)
        row = owner.store.status()
        return IndexReport(
            project_id=owner.project_id,
            root=str(owner.root),
            files_scanned=scanned,
            files_indexed=batch.indexed,
            files_unchanged=unchanged,
            files_removed=removed,
            files_failed=batch.failed,
            chunks=batch.chunks,
            total_chunks=int(row["total_chunks"]),
            embedded=vectors.on,
            seconds=time.perf_counter() - self._started,
            embedding_seconds=vectors.seconds,
            watching=state == "watching",
            note=note,
        )

    def failed(self, exc: BaseException) -> None:
        """Record a failed pass; never raises (the original error matters more)."""
        reason = str(exc) or type(exc).__name__
        try:
            self.write("error", completed_at=now_micros(), error=reason)
        except Exception:
            logger.debug("cannot record the failure of %s", self._owner.project_id, exc_info=True)
