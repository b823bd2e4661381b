"""The ``memcore`` command: `commands` (every command; `main` is its entry point), `code`
(``memcore code …``), `store` (``check``/``repair``/``backup``), `replica`. Its settings
and model list are `memcore.settings`, which the MCP server reads too.

`main` (the console script's ``memcore.cli:main``) is imported on first use, so importing
the package loads no command.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "main":
        from memcore.cli.commands import main

        return main
    raise AttributeError(f"module 'memcore.cli' has no attribute {name!r}")
