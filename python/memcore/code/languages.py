"""Language detection for project files: extension, file name, then shebang.

Names follow tree-sitter grammar naming (``c_sharp``, ``tsx``) so a language name can be
handed straight to :mod:`memcore.code.grammars`. Files whose language is unknown are not
indexed: data files, images and archives are noise for code search, and an explicit
table keeps the indexed set predictable.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from types import MappingProxyType

# Keys are lower-case suffixes including the dot. `.h` is claimed by C: C++ headers more
# often use .hpp/.hh, and the C grammar still parses most C++-flavoured headers usefully.
_EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".rs": "rust",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    # tree-sitter-javascript parses JSX too, so .jsx needs no grammar of its own.
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".go": "go",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".h++": "cpp",
    ".ipp": "cpp",
    ".cs": "c_sharp",
    ".rb": "ruby",
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".php": "php",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".swift": "swift",
    ".scala": "scala",
    ".sc": "scala",
    ".sh": "bash",
    ".bash": "bash",
    ".zsh": "zsh",
    ".fish": "fish",
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".rst": "rst",
    ".txt": "text",
    ".adoc": "asciidoc",
    ".json": "json",
    ".jsonc": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".ini": "ini",
    ".cfg": "ini",
    ".xml": "xml",
    ".html": "html",
    ".htm": "html",
    ".css": "css",
    ".scss": "scss",
    ".less": "less",
    ".sql": "sql",
    ".lua": "lua",
    ".dart": "dart",
    ".ex": "elixir",
    ".exs": "elixir",
    ".erl": "erlang",
    ".hrl": "erlang",
    ".hs": "haskell",
    ".ml": "ocaml",
    ".mli": "ocaml",
    ".fs": "fsharp",
    ".fsx": "fsharp",
    ".clj": "clojure",
    ".cljs": "clojure",
    ".cljc": "clojure",
    ".r": "r",
    ".jl": "julia",
    ".pl": "perl",
    ".pm": "perl",
    ".ps1": "powershell",
    ".groovy": "groovy",
    ".gradle": "groovy",
    ".m": "objc",
    ".mm": "objc",
    ".zig": "zig",
    ".nim": "nim",
    ".elm": "elm",
    ".vue": "vue",
    ".svelte": "svelte",
    ".proto": "proto",
    ".graphql": "graphql",
    ".gql": "graphql",
    ".tf": "hcl",
    ".hcl": "hcl",
    ".sol": "solidity",
    ".cmake": "cmake",
    ".dockerfile": "dockerfile",
}

# Whole file names that carry no (useful) extension.
_FILE_NAMES: dict[str, str] = {
    "Dockerfile": "dockerfile",
    "Containerfile": "dockerfile",
    "Makefile": "make",
    "GNUmakefile": "make",
    "makefile": "make",
    "CMakeLists.txt": "cmake",
    "Rakefile": "ruby",
    "Gemfile": "ruby",
    "Vagrantfile": "ruby",
    "Jenkinsfile": "groovy",
    "BUILD": "starlark",
    "BUILD.bazel": "starlark",
    "WORKSPACE": "starlark",
    ".bashrc": "bash",
    ".bash_profile": "bash",
    ".profile": "bash",
    ".zshrc": "zsh",
}

# Interpreter (last path component of the shebang program, or the argument of `env`).
_INTERPRETERS: dict[str, str] = {
    "python": "python",
    "sh": "bash",
    "bash": "bash",
    "dash": "bash",
    "zsh": "zsh",
    "node": "javascript",
    "deno": "typescript",
    "ruby": "ruby",
    "perl": "perl",
    "php": "php",
    "lua": "lua",
}

_LINE_COMMENTS: dict[str, str] = {
    "python": "#",
    "ruby": "#",
    "bash": "#",
    "zsh": "#",
    "fish": "#",
    "yaml": "#",
    "toml": "#",
    "ini": "#",
    "r": "#",
    "julia": "#",
    "perl": "#",
    "powershell": "#",
    "elixir": "#",
    "make": "#",
    "cmake": "#",
    "dockerfile": "#",
    "starlark": "#",
    "hcl": "#",
    "nim": "#",
    "text": "#",
    "markdown": "#",
    "rst": "#",
    "asciidoc": "#",
    "sql": "--",
    "lua": "--",
    "haskell": "--",
    "elm": "--",
    "erlang": "%",
    "clojure": ";;",
}

# `python3.12` and `python3` name the same language as `python`.
_VERSION_SUFFIX = re.compile(r"[\d.]+$")

EXTENSIONS: Mapping[str, str] = MappingProxyType(_EXTENSIONS)
"""Lower-case file suffix (with the dot) → language name."""

FILE_NAMES: Mapping[str, str] = MappingProxyType(_FILE_NAMES)
"""Exact file name → language name, for files such as ``Dockerfile``."""


def detect_language(rel_path: str, first_line: str | None = None) -> str | None:
    """Return the language of a file from its name, or from its shebang line.

    Args:
        rel_path: The file path (any separator style is fine; only the name is used).
        first_line: The file's first line, consulted only when the name is not
            conclusive (extensionless scripts such as ``bin/deploy``).

    Returns:
        The language name (e.g. ``"python"``, ``"c_sharp"``), or None if unknown.
    """
    name = PurePosixPath(rel_path.replace("\\", "/")).name
    if name in _FILE_NAMES:
        return _FILE_NAMES[name]
    suffix = PurePosixPath(name).suffix.lower()
    if suffix in _EXTENSIONS:
        return _EXTENSIONS[suffix]
    if first_line is not None:
        return language_from_shebang(first_line)
    return None


def language_from_shebang(first_line: str) -> str | None:
    """Return the language named by a ``#!`` line, or None.

    Args:
        first_line: The first line of a file.

    Returns:
        The language name for known interpreters (python, sh, node, ...), else None.
    """
    if not first_line.startswith("#!"):
        return None
    words = first_line[2:].split()
    if not words:
        return None
    program = words[0].rsplit("/", 1)[-1]
    if program == "env":
        # `#!/usr/bin/env -S python3 -u`: the interpreter is the first non-option word.
        program = next((w for w in words[1:] if not w.startswith("-")), "")
    return _INTERPRETERS.get(_VERSION_SUFFIX.sub("", program))


def needs_shebang_sniff(rel_path: str) -> bool:
    """Whether the file name alone cannot tell the language but a shebang might.

    Args:
        rel_path: The file path.

    Returns:
        True for names with no extension that are not in the file-name table.
    """
    name = PurePosixPath(rel_path.replace("\\", "/")).name
    return name not in _FILE_NAMES and not PurePosixPath(name).suffix


def line_comment_prefix(language: str) -> str:
    """Return the line-comment marker used for injected chunk headers.

    Args:
        language: A language name from :func:`detect_language`.

    Returns:
        ``"#"``, ``"--"``, ``"%"``, ``";;"`` or, for the C family and the rest, ``"//"``.
    """
    return _LINE_COMMENTS.get(language, "//")
