"""One candidate file read and vetted: size, binary content, minified output, language."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from memcore.code.hashing import content_hash
from memcore.code.languages import detect_language, language_from_shebang, needs_shebang_sniff

logger = logging.getLogger(__name__)

DEFAULT_MAX_FILE_BYTES = 1_000_000
"""Files above this size are skipped: generated code, data dumps, vendored bundles."""

DEFAULT_MAX_LINE_CHARS = 5_000
"""A file with a longer line is taken for minified or generated output and skipped."""

# Git's own heuristic: a NUL byte in the first 8 KiB means binary.
_BINARY_SNIFF_BYTES = 8192


class SkipReason(StrEnum):
    """Why a file that passed the ignore rules was still not indexed."""

    TOO_LARGE = "too_large"
    BINARY = "binary"
    GENERATED = "generated"
    UNKNOWN_LANGUAGE = "unknown_language"
    UNREADABLE = "unreadable"
    SYMLINK = "symlink"
    OUTSIDE_ROOT = "outside_root"


SkipHandler = Callable[[str, SkipReason], None]
"""Called with the relative path and the reason for each skipped file or directory."""


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One file to index, read once: its text travels with it so hash and text agree.

    Attributes:
        rel_path: Path relative to the project root, ``/``-separated.
        abs_path: Absolute path (under the resolved root).
        language: Language name (see :mod:`memcore.code.languages`).
        size: Size in bytes.
        mtime_ns: Modification time in nanoseconds, for cheap change checks.
        content_hash: SHA-256 hex of the raw bytes.
        text: The decoded content, UTF-8 BOM removed, line endings normalised to LF.
    """

    rel_path: str
    abs_path: Path
    language: str
    size: int
    mtime_ns: int
    content_hash: str
    text: str = field(repr=False, compare=False)


class _FileSkippedError(Exception):
    """Raised inside :class:`FileLoader` to leave a file out, carrying the reason."""

    def __init__(self, reason: SkipReason) -> None:
        super().__init__(reason)
        self.reason = reason


class FileLoader:
    """Reads and vets candidate files under fixed limits, reporting what it skips."""

    def __init__(self, max_file_bytes: int, max_line_chars: int, report: SkipHandler) -> None:
        """Bind the limits.

        Args:
            max_file_bytes: Larger files are skipped.
            max_line_chars: Files with a longer line are skipped as generated.
            report: Told the relative path and reason of every skipped file.
        """
        self._max_bytes = max_file_bytes
        self._max_line = max_line_chars
        self.report = report

    def load(self, path: Path, rel: str) -> SourceFile | None:
        """Read a file and decide whether it is indexable source.

        Args:
            path: Where to read it.
            rel: Its path relative to the project root (names the language).

        Returns:
            The file, or None after reporting why it was skipped.
        """
        try:
            return self._read(path, rel)
        except _FileSkippedError as skipped:
            self.report(rel, skipped.reason)
            return None

    def _read(self, path: Path, rel: str) -> SourceFile:
        language = detect_language(rel)
        if language is None and not needs_shebang_sniff(rel):
            raise _FileSkippedError(SkipReason.UNKNOWN_LANGUAGE)  # no need to open it
        try:
            stat = path.stat()
            if stat.st_size > self._max_bytes:
                raise _FileSkippedError(SkipReason.TOO_LARGE)
            data = path.read_bytes()
        except OSError as exc:
            logger.debug("cannot read %s: %s", path, exc)
            raise _FileSkippedError(SkipReason.UNREADABLE) from exc
        if len(data) > self._max_bytes:  # grew since stat
            raise _FileSkippedError(SkipReason.TOO_LARGE)
        text = _decode(data)
        language = language or language_from_shebang(text.split("\n", 1)[0])
        if language is None:
            raise _FileSkippedError(SkipReason.UNKNOWN_LANGUAGE)
        if len(text) > self._max_line and max(map(len, text.split("\n"))) > self._max_line:
            raise _FileSkippedError(SkipReason.GENERATED)
        return SourceFile(
            rel_path=rel,
            abs_path=path,
            language=language,
            size=len(data),
            mtime_ns=stat.st_mtime_ns,
            content_hash=content_hash(data),
            text=text,
        )


def _decode(data: bytes) -> str:
    """Decode as UTF-8 with LF line endings; raise :class:`_FileSkippedError` if binary."""
    if b"\0" in data[:_BINARY_SNIFF_BYTES]:
        raise _FileSkippedError(SkipReason.BINARY)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _FileSkippedError(SkipReason.BINARY) from exc
    if "\r" in text:
        # Tree-sitter rows and our line numbers both count "\n" only.
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text
