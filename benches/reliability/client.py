"""Synchronous MCP clients over stdio for the reliability run: the SDK's client in an event
loop of its own thread, and one that writes raw JSON-RPC lines (:class:`WireClient`), which
can send what the SDK's cannot; and the server's environment."""

from __future__ import annotations

import itertools
import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
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


@dataclass(frozen=True)
class WireText:
    """A text content of a tool result, as the SDK's client gives it."""

    type: str
    text: str


@dataclass(frozen=True)
class WireResult:
    """A ``tools/call`` result read off the wire, shaped as the SDK's ``CallToolResult``
    (the fields ``fuzz.classify`` reads)."""

    content: list[WireText]
    structured_content: Any
    is_error: bool


class WireClient:
    """One MCP session over a server's stdin and stdout, as raw JSON-RPC lines.

    It writes JSON with Python's encoder, which escapes a lone surrogate as ``\\ud800``:
    valid JSON that the SDK's client refuses to write (pydantic cannot encode it), and that
    a server must still answer with a tool result.
    """

    def __init__(self, proc: subprocess.Popen[bytes], timeout: float = 120.0) -> None:
        self._proc, self._timeout = proc, timeout
        self._ids = itertools.count(1)
        self._lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, name="wire-reader", daemon=True).start()
        hello = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "memcore-reliability", "version": "1"},
        }
        self._request("initialize", hello)
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> WireResult:
        """One tool call; raises RuntimeError for a JSON-RPC error (not a tool result)."""
        reply = self._request("tools/call", {"name": name, "arguments": arguments or {}})
        if "error" in reply:
            raise RuntimeError(f"JSON-RPC error instead of a tool result: {reply['error']}")
        result = reply["result"]
        content = [WireText(c.get("type", ""), c.get("text", "")) for c in result["content"]]
        return WireResult(content, result.get("structuredContent"), bool(result.get("isError")))

    def _request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request_id = next(self._ids)
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        deadline = time.monotonic() + self._timeout
        while True:
            line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            if not line:
                raise ConnectionError("the server closed its output")
            message = json.loads(line)
            if message.get("id") == request_id:
                return dict(message)

    def _send(self, message: dict[str, Any]) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.write((json.dumps(message) + "\n").encode())
        self._proc.stdin.flush()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            self._lines.put(line)
        self._lines.put(b"")


@contextmanager
def stdio_wire_session(args: Sequence[str], home: Path) -> Iterator[WireClient]:
    """``python -m memcore.mcp ARGS`` and a :class:`WireClient` session to it; its log in
    ``home/server.log``. The server is stopped by closing its input."""
    with (home / "server.log").open("a", encoding="utf-8") as errlog:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memcore.mcp", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
            env=server_env(home),
            cwd=ROOT,
        )
        try:
            yield WireClient(proc)
        finally:
            if proc.stdin is not None:
                proc.stdin.close()
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
