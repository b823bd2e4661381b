"""A synchronous MCP client over stdio for the reliability run (the SDK's client in an event
loop of its own thread), and the server's environment."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[2]


def server_env(home: Path) -> dict[str, str]:
    """The caller's environment without MEMCORE_* settings, offline, with its own home."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCORE_")}
    env.update({"HOME": str(home), "XDG_DATA_HOME": str(home / "xdg"), "HF_HUB_OFFLINE": "1"})
    return env


class SyncClient:
    """One MCP session, called from synchronous code."""

    def __init__(self, portal: BlockingPortal, client: Client) -> None:
        self._portal, self._client = portal, client

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        return self._portal.call(self._client.call_tool, name, arguments or {})

    def schemas(self) -> dict[str, dict[str, Any]]:
        listing = self._portal.call(self._client.list_tools)
        return {tool.name: dict(tool.input_schema) for tool in listing.tools}


@contextmanager
def stdio_client_session(args: Sequence[str], home: Path) -> Iterator[SyncClient]:
    """``python -m memcore.mcp ARGS`` and a session to it; its log in ``home/server.log``."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memcore.mcp", *args],
        env=server_env(home),
        cwd=str(ROOT),
    )
    with ExitStack() as stack:
        errlog = stack.enter_context((home / "server.log").open("a", encoding="utf-8"))
        portal = stack.enter_context(start_blocking_portal("asyncio"))
        client = Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120)
        yield SyncClient(portal, stack.enter_context(portal.wrap_async_context_manager(client)))
