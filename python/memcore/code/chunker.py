"""Turn one source file into the chunks that get embedded and indexed.

Languages with a grammar and a spec (:data:`memcore.code.specs.SPECS`) are cut along
their syntax tree (:mod:`memcore.code.syntax`); the rest, and files the parser rejects,
fall back to overlapping line windows. Each chunk's ``content`` starts with a short
comment header naming the file and, for nested code, the enclosing scope, so that a
method read on its own (by an embedding model, by BM25, by an agent) still says where
it lives; ``source`` keeps the exact lines.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from memcore.code.grammars import get_parser
from memcore.code.hashing import content_hash
from memcore.code.languages import line_comment_prefix
from memcore.code.specs import SPECS
from memcore.code.syntax import Segment, segment_tree
from memcore.code.windows import window_ranges
from memcore.errors import invalid

logger = logging.getLogger(__name__)

# Window chunks repeat at most this many signature lines of the definition they belong to.
_MAX_SIGNATURE_LINES = 6
# Code between definitions holding nothing but closing brackets or Ruby/Lua `end`s (the
# tail of a container) is not worth a chunk.
_TRIVIAL = re.compile(r"(?:[\s{}()\[\];,]|\bend\b)*")
_GAP_TYPES = frozenset({"module", "block"})


@dataclass(frozen=True, slots=True)
class CodeChunkDraft:
    """A chunk ready to be embedded and stored.

    This is the code chunk record (docs/guide.md, "The records") before the indexer adds
    ``project_id`` and ``indexed_at``.

    Attributes:
        file_path: Path relative to the project root, ``/``-separated.
        language: Language name.
        start_line: First line, 1-based.
        end_line: Last line, 1-based, inclusive.
        chunk_type: One of :data:`memcore.code.specs.CHUNK_TYPES`.
        name: Definition name; for code between definitions the enclosing container's
            name or the file name.
        parent_scope: ``"module <file_path>"`` at top level, else the enclosing scopes
            (``"class Auth"``, ``"impl Display for Parser"``, ``"mod tests > impl Foo"``).
        content: Header lines plus the code: the text to embed and to index for BM25.
        source: The file's lines ``start_line..end_line`` exactly.
        content_hash: SHA-256 hex of ``content`` (a chunk with the same hash needs no
            new embedding).
    """

    file_path: str
    language: str
    start_line: int
    end_line: int
    chunk_type: str
    name: str
    parent_scope: str
    content: str
    source: str
    content_hash: str


def chunk_file(
    text: str,
    language: str,
    rel_path: str,
    *,
    max_chunk_lines: int = 120,
    window: int = 60,
    overlap: int = 10,
) -> list[CodeChunkDraft]:
    """Split a file into chunks along its definitions, or into line windows.

    Args:
        text: The file content with LF line endings (as :class:`SourceFile` provides).
        language: Language name, e.g. from :func:`memcore.code.languages.detect_language`.
        rel_path: Path relative to the project root; recorded in every chunk and header.
        max_chunk_lines: A definition or code run longer than this is split into windows.
        window: Lines per window when splitting.
        overlap: Lines repeated between consecutive windows.

    Returns:
        Chunks in file order. Every non-blank line of the file is in at least one chunk,
        except lines holding only closing brackets between definitions. An empty file
        gives no chunks.

    Raises:
        InvalidParameterError: ``window`` or ``overlap`` are out of range.
    """
    _check_sizes(max_chunk_lines, window, overlap)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line does not start another
    if not any(line.strip() for line in lines):
        return []
    segments = _segments(text, language, rel_path, len(lines))
    builder = _ChunkBuilder(
        lines, language, rel_path, max_chunk_lines=max_chunk_lines, window=window, overlap=overlap
    )
    chunks: list[CodeChunkDraft] = []
    for segment in segments:
        chunks.extend(builder.build(segment))
    return chunks


def supports_syntax_chunking(language: str) -> bool:
    """Whether a language is chunked along its syntax tree on this machine.

    Args:
        language: A language name.

    Returns:
        True when a spec exists and its grammar is installed; False means line windows.
    """
    return language in SPECS and get_parser(language) is not None


def _check_sizes(max_chunk_lines: int, window: int, overlap: int) -> None:
    if not 1 <= window <= max_chunk_lines:
        raise invalid(
            "window",
            f"window must be between 1 and max_chunk_lines ({max_chunk_lines}), got {window}.",
        )
    if not 0 <= overlap < window:
        raise invalid(
            "overlap",
            f"overlap must be at least 0 and less than window ({window}), got {overlap}.",
        )


def _segments(text: str, language: str, rel_path: str, line_count: int) -> list[Segment]:
    file_name = PurePosixPath(rel_path).name
    spec = SPECS.get(language)
    parser = get_parser(language) if spec is not None else None
    if spec is None or parser is None:
        return [Segment(0, line_count - 1, "window", file_name, (), None)]
    source = text.encode("utf-8")
    try:
        tree = parser.parse(source)
    except Exception:  # a grammar bug must not lose the file: fall back to windows
        logger.warning("tree-sitter failed on %s; using line windows", rel_path, exc_info=True)
        return [Segment(0, line_count - 1, "window", file_name, (), None)]
    return segment_tree(tree.root_node, source, spec, file_name, line_count)


class _ChunkBuilder:
    """Renders segments of one file into chunks (trimming, windowing, headers)."""

    def __init__(
        self,
        lines: list[str],
        language: str,
        rel_path: str,
        *,
        max_chunk_lines: int,
        window: int,
        overlap: int,
    ) -> None:
        self._lines = lines
        self._language = language
        self._rel_path = rel_path
        self._comment = line_comment_prefix(language)
        self._max_lines = max_chunk_lines
        self._window = window
        self._overlap = overlap

    def build(self, segment: Segment) -> list[CodeChunkDraft]:
        is_gap = segment.chunk_type in _GAP_TYPES
        start, end = self._trim(
            segment.start, min(segment.end, len(self._lines) - 1), closers=is_gap
        )
        if start > end or (is_gap and _TRIVIAL.fullmatch("\n".join(self._lines[start : end + 1]))):
            return []
        ranges = window_ranges(
            start, end, max_lines=self._max_lines, window=self._window, overlap=self._overlap
        )
        return [
            self._chunk(segment, first, last, part, len(ranges))
            for part, (first, last) in enumerate(ranges, start=1)
        ]

    def _trim(self, start: int, end: int, *, closers: bool) -> tuple[int, int]:
        """Drop blank edge lines, and for code between definitions trailing closers.

        The closing brackets of a container end its last gap but belong to no member.
        """
        while start <= end and not self._lines[start].strip():
            start += 1
        while end >= start and (
            not self._lines[end].strip() or (closers and _TRIVIAL.fullmatch(self._lines[end]))
        ):
            end -= 1
        return start, end

    def _chunk(
        self, segment: Segment, first: int, last: int, part: int, parts: int
    ) -> CodeChunkDraft:
        scope = " > ".join(segment.scope) if segment.scope else f"module {self._rel_path}"
        source = "\n".join(self._lines[first : last + 1])
        header = [f"{self._comment} file: {self._rel_path}"]
        if segment.scope:
            header.append(f"{self._comment} scope: {scope}")
        if parts > 1:
            header.append(f"{self._comment} part {part} of {parts}")
            if part > 1 and segment.signature is not None:
                # A window from the middle of a long function repeats its signature.
                sig_start, sig_end = segment.signature
                sig_end = min(sig_end, sig_start + _MAX_SIGNATURE_LINES - 1, first - 1)
                header.extend(self._lines[sig_start : sig_end + 1])
                header.append(f"{self._comment} ...")
        content = "\n".join(header) + "\n" + source
        return CodeChunkDraft(
            file_path=self._rel_path,
            language=self._language,
            start_line=first + 1,
            end_line=last + 1,
            chunk_type=segment.chunk_type,
            name=segment.name,
            parent_scope=scope,
            content=content,
            source=source,
            content_hash=content_hash(content),
        )
