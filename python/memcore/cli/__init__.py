"""The ``memcore`` command: `commands` (every command; `main` is its entry point), `code`
(``memcore code …``), `store` (``check``/``repair``/``backup``), and the two modules the
MCP server shares: `settings` (flags and ``MEMCORE_*`` variables) and `models` (the
model list). The command line may use the server's modules, never the reverse.

`main` (the console script's ``memcore.cli:main``) is imported on first use, so the MCP
server can read `memcore.cli.settings` without loading every command.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "main":
        from memcore.cli.commands import main

        return main
    raise AttributeError(f"module 'memcore.cli' has no attribute {name!r}")
