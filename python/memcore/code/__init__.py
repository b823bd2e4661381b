"""Semantic code search, front half: find a project's source files and cut them into chunks.

``scan_project`` walks a tree under gitignore/.memoryignore rules, ``chunk_file`` splits
a file along its syntax tree (tree-sitter) or into line windows, and
``split_identifiers`` yields the words of compound identifiers for BM25.
"""

from memcore.code.chunker import CodeChunkDraft, chunk_file, supports_syntax_chunking
from memcore.code.grammars import has_grammar
from memcore.code.identifiers import split_identifiers
from memcore.code.ignore import ALWAYS_SKIPPED, DEFAULT_EXCLUDES, IGNORE_FILE_NAMES, IgnoreRules
from memcore.code.languages import detect_language
from memcore.code.scanner import read_source_file, resolve_root, scan_project, should_index
from memcore.code.sourcefile import SkipReason, SourceFile
from memcore.code.specs import CHUNK_TYPES

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
