"""The ``memcore`` command: `commands` (every command but ``serve``), `code`
(``memcore index``), `store` (``check``/``repair``/``backup``), `replica`. Its settings and
model list are `memcore.settings`; the tools its commands run are `memcore.tools`, which
the MCP server serves.

This package's own :func:`main` is the console script (``memcore.cli:main``) and the entry
point of ``python -m memcore`` and ``python -m memcore.cli``: it picks the front, the MCP
server for ``memcore serve`` and the command line for the rest, which never import each
other (tests/test_layers.py). It imports neither until it runs, so importing the package
loads no command.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``memcore``; the exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["serve"]:
        from memcore.mcp.main import main as serve

        return serve(arguments[1:], prog="memcore serve")
    from memcore.cli.commands import main as run

    return run(arguments)
