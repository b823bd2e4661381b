"""Offline loading of tree-sitter grammars.

tree-sitter-language-pack 1.x ships no grammars: ``get_parser`` downloads them from
GitHub releases on first use. memcore makes no network call at run time
(docs/configuration.md, "Embedding models") and its machines reach only PyPI, so grammars
come first from the per-language PyPI wheels (``tree-sitter-python``,
``tree-sitter-rust``, ...), which bundle the compiled parser.
The language pack is consulted second, and only for grammars already present on disk
(its cache, or the bundled grammars of the 0.x releases); it is never asked to download.
A language without a grammar falls back to line windows in the chunker.
"""

from __future__ import annotations

import functools
import importlib
import logging
import threading
from typing import Any

from tree_sitter import Language, Parser

logger = logging.getLogger(__name__)

# language name → (module of the PyPI grammar wheel, function returning the TSLanguage).
_WHEELS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "javascript": ("tree_sitter_javascript", "language"),
    "go": ("tree_sitter_go", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "c_sharp": ("tree_sitter_c_sharp", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "php": ("tree_sitter_php", "language_php"),
    "bash": ("tree_sitter_bash", "language"),
    "kotlin": ("tree_sitter_kotlin", "language"),
    "swift": ("tree_sitter_swift", "language"),
    "scala": ("tree_sitter_scala", "language"),
    "json": ("tree_sitter_json", "language"),
    "yaml": ("tree_sitter_yaml", "language"),
    "toml": ("tree_sitter_toml", "language"),
    "html": ("tree_sitter_html", "language"),
    "css": ("tree_sitter_css", "language"),
    "markdown": ("tree_sitter_markdown", "language"),
    "sql": ("tree_sitter_sql", "language"),
}

# Where the language pack spells a language differently from memcore.
_PACK_NAMES: dict[str, str] = {"c_sharp": "csharp"}

# Parsers hold mutable state and are not safe to share across threads; one per thread
# and language is cheap (the Language object itself is immutable and shared).
_local = threading.local()


@functools.cache
def get_language(language: str) -> Language | None:
    """Return the tree-sitter grammar for a language, loading it without network access.

    Args:
        language: A language name from :func:`memcore.code.languages.detect_language`.

    Returns:
        The grammar, or None when no installed grammar covers the language.
    """
    return _from_wheel(language) or _from_language_pack(language)


def get_parser(language: str) -> Parser | None:
    """Return this thread's parser for a language.

    Args:
        language: A language name.

    Returns:
        A parser bound to the language's grammar, or None without a grammar.
    """
    parsers: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = {}
        _local.parsers = parsers
    parser = parsers.get(language)
    if parser is None:
        grammar = get_language(language)
        if grammar is None:
            return None
        parser = Parser(grammar)
        parsers[language] = parser
    return parser


def has_grammar(language: str) -> bool:
    """Whether syntax-aware chunking can parse this language on this machine.

    Args:
        language: A language name.

    Returns:
        True when a grammar is installed (wheel or already-cached language-pack grammar).
    """
    return get_language(language) is not None


def _from_wheel(language: str) -> Language | None:
    entry = _WHEELS.get(language)
    if entry is None:
        return None
    module_name, function_name = entry
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    return Language(getattr(module, function_name)())


def _from_language_pack(language: str) -> Language | None:
    try:
        pack: Any = importlib.import_module("tree_sitter_language_pack")
    except ImportError:
        return None
    name = _PACK_NAMES.get(language, language)
    # 1.x downloads on a cache miss; only ask for grammars it already holds on disk.
    # 0.x has no `downloaded_languages` and bundles every grammar in the wheel.
    downloaded = getattr(pack, "downloaded_languages", None)
    if downloaded is not None and name not in downloaded():
        return None
    try:
        grammar = pack.get_language(name)
        # Releases differ: some return a tree_sitter.Language, some the raw TSLanguage.
        return grammar if isinstance(grammar, Language) else Language(grammar)
    except Exception as exc:  # any failure of an optional source just means "no grammar"
        logger.debug("tree-sitter-language-pack has no usable grammar for %s: %s", name, exc)
        return None
