"""Semantic code search, front half: find a project's source files and cut them into chunks.

``scan_project`` walks a tree under gitignore/.memoryignore rules, ``chunk_file`` splits
a file along its syntax tree (tree-sitter) or into line windows, and
``split_identifiers`` yields the words of compound identifiers for BM25.

The names are imported on first access (PEP 562): the facade needs only
``memcore.records.code`` to open a store, and importing this package must not load
tree-sitter and pathspec for every CLI command and every server start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore import _lazy

if TYPE_CHECKING:
    from memcore.code.chunker import CodeChunkDraft, chunk_file, supports_syntax_chunking
    from memcore.code.grammars import has_grammar
    from memcore.code.identifiers import split_identifiers
    from memcore.code.ignore import (
        ALWAYS_SKIPPED,
        DEFAULT_EXCLUDES,
        IGNORE_FILE_NAMES,
        IgnoreRules,
    )
    from memcore.code.languages import detect_language
    from memcore.code.scanner import read_source_file, resolve_root, scan_project, should_index
    from memcore.code.sourcefile import SkipReason, SourceFile
    from memcore.code.specs import CHUNK_TYPES

#: Where each name lives.
__getattr__, __dir__ = _lazy.exports(
    __name__,
    (
        (f"memcore.code.{module}", names)
        for module, names in (
            ("chunker", "CodeChunkDraft chunk_file supports_syntax_chunking"),
            ("grammars", "has_grammar"),
            ("identifiers", "split_identifiers"),
            ("ignore", "ALWAYS_SKIPPED DEFAULT_EXCLUDES IGNORE_FILE_NAMES IgnoreRules"),
            ("languages", "detect_language"),
            ("scanner", "read_source_file resolve_root scan_project should_index"),
            ("sourcefile", "SkipReason SourceFile"),
            ("specs", "CHUNK_TYPES"),
        )
    ),
)


__all__ = [
    "ALWAYS_SKIPPED",
    "CHUNK_TYPES",
    "DEFAULT_EXCLUDES",
    "IGNORE_FILE_NAMES",
    "CodeChunkDraft",
    "IgnoreRules",
    "SkipReason",
    "SourceFile",
    "chunk_file",
    "detect_language",
    "has_grammar",
    "read_source_file",
    "resolve_root",
    "scan_project",
    "should_index",
    "split_identifiers",
    "supports_syntax_chunking",
]
