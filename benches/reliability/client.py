"""A synchronous MCP client over stdio for the reliability run (the SDK's client in an event
loop of its own thread), and the server's environment."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx2
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[2]


def server_env(home: Path) -> dict[str, str]:
    """The caller's environment without MEMCORE_* settings, offline, with its own home."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCORE_")}
    env.update({"HOME": str(home), "XDG_DATA_HOME": str(home / "xdg"), "HF_HUB_OFFLINE": "1"})
    return env


def free_port() -> int:
    """A TCP port free on the loopback interface now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_http_server(
    args: Sequence[str], home: Path, log_path: Path, *, timeout: float = 60.0
) -> tuple[subprocess.Popen[bytes], str]:
    """`python -m memcore.mcp --transport http` on a free port with ``args``, its output
    appended to ``log_path``; returns the process and its base URL once /healthz answers.

    Raises:
        RuntimeError: The server exited, or was not healthy within ``timeout`` seconds
            (the process is stopped then).
    """
    port = free_port()
    argv = [sys.executable, "-m", "memcore.mcp", "--transport", "http", "--port", str(port)]
    with log_path.open("a") as log:
        server = subprocess.Popen(
            [*argv, *args],
            env=server_env(home),
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while True:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited with {server.returncode}; see {log_path}")
        try:
            if httpx2.get(f"{base}/healthz", timeout=1).status_code == 200:
                return server, base
        except httpx2.TransportError:
            pass
        if time.monotonic() > deadline:
            server.terminate()
            server.wait(timeout=60)
            raise RuntimeError(f"the server was not healthy within {timeout:.0f} s; see {log_path}")
        time.sleep(0.05)


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
