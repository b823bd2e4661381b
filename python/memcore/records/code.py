"""The values the code-search API returns: small frozen dataclasses with ``to_dict()``.

Times are aware UTC datetimes here and ISO 8601 strings in ``to_dict()``, as for the
memory records (:mod:`memcore.records.facts`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from memcore._time import from_micros, optional_datetime
from memcore.records.facts import Record, Scores

ProjectState = Literal["idle", "indexing", "watching", "error"]

SNIPPET_MAX_CHARS = 2000
"""A hit's snippet is cut at a line boundary beyond this many characters: enough for a
function of about 50 lines, short enough that ten hits fit in an agent's context."""


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


@dataclass(frozen=True, slots=True)
class CodeHit(Record):
    """A code chunk found by ``search_code``, with the scores that explain its rank.

    Attributes:
        file_path: Path relative to the project root, ``/``-separated.
        start_line: First line, 1-based.
        end_line: Last line, inclusive.
        name: The definition's name (a function, class, ...), or the file name.
        chunk_type: ``function``, ``method``, ``class``, ``module``, ``window``, ...
        language: Language name.
        parent_scope: Where the chunk lives (``module a.py``, ``class Auth``).
        snippet: The chunk's code without the indexing header, cut at a line boundary
            after :data:`SNIPPET_MAX_CHARS` with a note of the lines left out.
        scores: Per-signal scores (``vector``, ``bm25``, ``fused``).
        relevance_score: 0-1 for display: the fused z-score mapped from its ±3 range.
        project_id: The chunk's project.
        id: The chunk's id.
    """

    file_path: str
    start_line: int
    end_line: int
    name: str | None
    chunk_type: str
    language: str
    parent_scope: str | None
    snippet: str
    scores: Scores
    relevance_score: float
    project_id: str
    id: str

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> CodeHit:
        """Build from a native ``search_code`` result."""
        scores: Scores = raw["scores"]
        line_count = raw["end_line"] - raw["start_line"] + 1
        return cls(
            file_path=raw["file_path"],
            start_line=raw["start_line"],
            end_line=raw["end_line"],
            name=raw["name"],
            chunk_type=raw["chunk_type"],
            language=raw["language"],
            parent_scope=raw["parent_scope"],
            snippet=snippet_of(raw["content"], line_count),
            scores=scores,
            relevance_score=round(min(1.0, max(0.0, (scores.fused + 3.0) / 6.0)), 4),
            project_id=raw["project_id"],
            id=raw["id"],
        )


def snippet_of(content: str, line_count: int, max_chars: int = SNIPPET_MAX_CHARS) -> str:
    """The code of a stored chunk: its last ``line_count`` lines, shortened if long.

    The chunker stores ``header + "\\n" + source`` where ``source`` is exactly the chunk's
    line range, so the source is the tail of the content whatever the header held.

    Args:
        content: The stored chunk content.
        line_count: Lines in the chunk's range.
        max_chars: Cut after the line that crosses this many characters.

    Returns:
        The source lines, with ``… (N more lines)`` appended when cut.
    """
    lines = content.split("\n")[-line_count:] if line_count > 0 else []
    kept: list[str] = []
    size = 0
    for line in lines:
        if kept and size + len(line) > max_chars:
            return "\n".join(kept) + f"\n… ({len(lines) - len(kept)} more lines)"
        kept.append(line)
        size += len(line) + 1
    return "\n".join(kept)
