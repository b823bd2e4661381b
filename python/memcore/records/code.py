"""The values the code-search API returns, all with ``to_dict()``.

``CodeHit`` is a native class defined in ``rust/memcore-py/src/records/code.rs``: the
engine returns the hits of ``search_code`` as they are, with the snippet cut and the
display score computed in Rust. The others stay frozen dataclasses: ``IndexProgress`` and
``IndexReport`` are made by the Python indexing pass, and ``IndexStatus`` is the project's
status row as the facade reads it (the facade replaces a ``watching`` status left by a
process that ended, and the export and the overview read the engine's rows as mappings).

Times are aware UTC datetimes here and ISO 8601 strings in ``to_dict()``, as for the
memory records (:mod:`memcore.records.facts`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from memcore._core import SNIPPET_MAX_CHARS, CodeHit, snippet_of
from memcore._time import from_micros, optional_datetime
from memcore.records.facts import Record

ProjectState = Literal["idle", "indexing", "watching", "error"]


@dataclass(frozen=True, slots=True)
class IndexProgress:
    """Where an indexing pass is, for a progress callback.

    Attributes:
        done: Files current so far (unchanged files count at once).
        total: Files in the project (0 while scanning).
        path: The file just stored, or None.
    """

    done: int
    total: int
    path: str | None = None


ProgressCallback = Callable[[IndexProgress], None]


@dataclass(frozen=True, slots=True)
class IndexReport(Record):
    """What one indexing pass did (``Memory.index_project``).

    Attributes:
        project_id: The project's id (derived from the root when none was given).
        root: The project root, absolute with symlinks resolved.
        files_scanned: Indexable files found on disk.
        files_indexed: Files chunked and stored in this pass (new or changed).
        files_unchanged: Files whose stored fingerprint matched: not chunked or embedded again.
        files_removed: Files gone from disk (or now ignored) whose chunks were dropped.
        files_failed: Files that could not be stored; ``note`` names the first one.
        chunks: Chunks stored in this pass.
        total_chunks: Chunks of the project after the pass.
        embedded: Whether the stored chunks got vectors (False: keyword search only).
        seconds: Wall time of the pass.
        embedding_seconds: The part of ``seconds`` spent computing embeddings.
        watching: A watcher keeps the index current after this pass.
        note: Why vectors are missing or a file failed, else None.
    """

    project_id: str
    root: str
    files_scanned: int
    files_indexed: int
    files_unchanged: int
    files_removed: int
    files_failed: int
    chunks: int
    total_chunks: int
    embedded: bool
    seconds: float
    embedding_seconds: float
    watching: bool = False
    note: str | None = None


@dataclass(frozen=True, slots=True)
class IndexStatus(Record):
    """A project's indexing status (docs/guide.md, "Code search").

    Attributes:
        project_id: The project's id.
        root: The project root it was last indexed from.
        status: ``idle``, ``indexing``, ``watching`` or ``error``.
        total_files: Files in the project at the last scan.
        indexed_files: Files whose chunks are current (equal to ``total_files`` when done).
        total_chunks: Chunks stored for the project now.
        started_at: When the last pass began.
        completed_at: When the last pass (or watcher update) finished.
        error: Why the last pass failed; with a non-error status, a warning such as
            "indexed without vectors".
        updated_at: When the status was last written.
    """

    project_id: str
    root: str
    status: ProjectState
    total_files: int
    indexed_files: int
    total_chunks: int
    started_at: datetime | None
    completed_at: datetime | None
    error: str | None
    updated_at: datetime

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> IndexStatus:
        """Build from the dict the native engine returns."""
        return cls(
            project_id=raw["project_id"],
            root=raw["root"],
            status=raw["status"],
            total_files=raw["total_files"],
            indexed_files=raw["indexed_files"],
            total_chunks=raw["total_chunks"],
            started_at=optional_datetime(raw["started_at"]),
            completed_at=optional_datetime(raw["completed_at"]),
            error=raw["error"],
            updated_at=from_micros(raw["updated_at"]),
        )


__all__ = [
    "SNIPPET_MAX_CHARS",
    "CodeHit",
    "IndexProgress",
    "IndexReport",
    "IndexStatus",
    "ProgressCallback",
    "ProjectState",
    "snippet_of",
]
