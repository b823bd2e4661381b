"""One code project's rows in the engine: the facade's side of
`memcore.code.indexer.ProjectStore`.

The indexer scans, chunks and embeds; every engine call it needs goes through here, so
the code package never holds the engine and the chunks' wire shape is decided in one place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from memcore._core import Engine
    from memcore.code.chunker import CodeChunkDraft
    from memcore.code.sourcefile import SourceFile
    from memcore.records.code import ProjectState


class ProjectRows:
    """The chunks, file fingerprints and status row of one project of one namespace."""

    def __init__(self, engine: Engine, namespace: str, project_id: str) -> None:
        self._engine = engine
        self.namespace = namespace
        self.project_id = project_id

    def indexed_files(self) -> dict[str, str]:
        """The stored files: relative path → fingerprint."""
        return self._engine.indexed_files(self.namespace, self.project_id)

    def remove_file(self, path: str) -> None:
        """Drop one file's chunks."""
        self._engine.remove_file(self.namespace, self.project_id, path)

    def store_file(
        self,
        source: SourceFile,
        fingerprint: str,
        chunks: Sequence[CodeChunkDraft],
        vectors: npt.NDArray[np.float32] | None,
    ) -> None:
        """Replace one file's chunks (and vectors, one row each) in one transaction."""
        self._engine.index_file(
            self.namespace,
            self.project_id,
            source.rel_path,
            source.language,
            fingerprint,
            [_chunk_row(c) for c in chunks],
            size=source.size,
            vectors=vectors,
        )

    def status(self) -> Mapping[str, Any]:
        """The project's status row.

        Raises:
            NotFoundError: The project has none yet.
        """
        return self._engine.project_status(self.namespace, self.project_id)

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
        self._engine.put_project_status(
            self.namespace,
            self.project_id,
            root,
            state,
            total_files=total_files,
            indexed_files=indexed_files,
            started_at=started_at,
            completed_at=completed_at,
            error=error,
        )


def _chunk_row(chunk: CodeChunkDraft) -> dict[str, Any]:
    return {
        "start_line": chunk.start_line,
        "end_line": chunk.end_line,
        "chunk_type": chunk.chunk_type,
        "name": chunk.name,
        "parent_scope": chunk.parent_scope,
        "content": chunk.content,
        "content_hash": chunk.content_hash,
    }
