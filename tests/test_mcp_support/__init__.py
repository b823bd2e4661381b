"""Driving a real ``memcore.mcp`` server from tests: a subprocess over stdio or HTTP, talked
to with the MCP SDK's own client, wrapped in a synchronous facade (one event loop in a
background thread per client) so tests read as plain calls."""

from __future__ import annotations

import json
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
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

# ../shared/models is optional: MINILM_DIR falls back to the model the install carries.
from embeddings_support.models import MINILM_DIR as MINILM_DIR
from embeddings_support.models import POTION_DIR as POTION_DIR

REPO_ROOT = Path(__file__).resolve().parents[2]
#: Every tool by group, in listing order (search_nodes, open_nodes and add_observations are
#: the graph group's and also the legacy group's).
GROUP_TOOLS = {
    "facts": [
        "store_memory",
        "get_memory",
        "update_memory",
        "delete_memory",
        "list_memories",
        "list_recent_memories",
        "supersede_memory",
        "search_memories",
    ],
    "search": ["search", "search_text", "recall"],
    "temporal": ["get_valid", "get_valid_at", "invalidate"],
    "graph": [
        "save_memory",
        "add_observations",
        "get_observation_history",
        "get_analytics",
        "search_nodes",
        "open_nodes",
        "query_nodes",
        "find_relation_path",
        "get_related",
        "detect_communities",
        "create_entity",
        "create_relation",
    ],
    "legacy": [
        "create_entities",
        "create_relations",
        "delete_entities",
        "delete_observations",
        "delete_relations",
        "read_graph",
    ],
    "conversation": [
        "record_turn",
        "read_document",
        "get_document_history",
        "retrieve_context",
        "memory_before_turn",
        "memory_after_turn",
        "memory_run_maintenance",
        "memory_list_dir_with_abstract",
    ],
    "code": ["index_project", "search_code", "get_index_status", "list_projects", "delete_project"],
    "admin": ["get_status", "check_store", "reset_all_memory"],
}
ALL_TOOLS = [name for names in GROUP_TOOLS.values() for name in names]
#: The legacy group as selected: the reference server's nine, in listing order.
LEGACY_TOOLS = ["add_observations", "search_nodes", "open_nodes", *GROUP_TOOLS["legacy"]]
CORE_TOOLS = [
    "store_memory",
    "supersede_memory",
    "search_memories",
    "recall",
    "invalidate",
    "save_memory",
    "search_nodes",
    "get_related",
    "retrieve_context",
    "get_status",
]

# Runs the server with the model loader held until a gate file appears, so a test can
# look at the server while the model is (still) loading, deterministically.
GATED_LAUNCHER = """
import pathlib, sys, time
import memcore.embeddings.service as service
gate, real = pathlib.Path(sys.argv[1]), service.load
def gated(plan):
    while not gate.exists():
        time.sleep(0.02)
    return real(plan)
service.load = gated
from memcore.mcp.main import main
sys.exit(main(sys.argv[2:]))
"""


def server_env(home: Path, **extra: str) -> dict[str, str]:
    """A clean environment for a server: no MEMCORE_* from the caller, no network."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("MEMCORE_") and key not in ("XDG_DATA_HOME",)
    }
    env.update(
        {
            "HOME": str(home),
            "XDG_DATA_HOME": str(home / "xdg-data"),
            "HF_HUB_OFFLINE": "1",
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update(extra)
    return env


class SyncClient:
    """An MCP client session driven from synchronous test code."""

    def __init__(self, portal: BlockingPortal, client: Client) -> None:
        self.portal = portal
        self.client = client

    def tool_names(self) -> list[str]:
        return [tool.name for tool in self.portal.call(self.client.list_tools).tools]

    def tools(self) -> dict[str, Any]:
        listing = self.portal.call(self.client.list_tools)
        return {tool.name: tool for tool in listing.tools}

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
        result: CallToolResult = self.portal.call(self.client.call_tool, name, arguments or {})
        return result

    def ok(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """The result object of a call that must succeed."""
        result = self.call(name, arguments)
        payload = payload_of(result)
        assert not result.is_error, payload
        return payload

    def rejected(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """The whole result object of a call that must fail: ``error`` and any fields the
        tool's contract adds to a failure (save_memory's ``validation_errors``)."""
        result = self.call(name, arguments)
        payload = payload_of(result)
        assert result.is_error, payload
        assert set(payload["error"]) == {"code", "message", "details"}, payload
        return payload

    def error(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """The ``error`` object of a call that must fail as a tool result."""
        result = self.call(name, arguments)
        payload = payload_of(result)
        assert result.is_error, payload
        assert set(payload) == {"error"}, payload
        assert set(payload["error"]) == {"code", "message", "details"}, payload
        return dict(payload["error"])


def payload_of(result: CallToolResult) -> dict[str, Any]:
    """The JSON object of a result; the text and the structured content must agree."""
    assert len(result.content) == 1 and result.content[0].type == "text"
    payload = json.loads(result.content[0].text)
    assert result.structured_content == payload
    assert_no_vectors(payload)
    return dict(payload)


def assert_no_vectors(value: Any) -> None:
    """Embeddings never appear in a response: no list under an embedding-like key and no
    long list of numbers anywhere (``scores.vector`` is one number, ``get_status`` has an
    ``embedding`` section: both fine)."""
    if isinstance(value, dict):
        for key in {"embedding", "embeddings", "vector", "vectors"} & set(value):
            assert not isinstance(value[key], list), key
        for item in value.values():
            assert_no_vectors(item)
    elif isinstance(value, list):
        assert not (len(value) >= 16 and all(isinstance(v, float) for v in value)), value
        for item in value:
            assert_no_vectors(item)


@contextmanager
def stdio_server(
    args: Sequence[str],
    env: dict[str, str],
    log: Path,
    *,
    launcher: Sequence[str] = (),
    mode: str = "auto",
) -> Iterator[SyncClient]:
    """A server subprocess (``python -m memcore.mcp ARGS``) and a client session to it
    (``mode="legacy"``: the ``initialize`` handshake; by default the SDK's 2026-era probe)."""
    command = [*launcher] if launcher else ["-m", "memcore.mcp"]
    params = StdioServerParameters(
        command=sys.executable, args=[*command, *args], env=env, cwd=str(REPO_ROOT)
    )
    with ExitStack() as stack:
        # The child's stderr goes to a log file: clean test output, inspectable logs.
        errlog = stack.enter_context(log.open("a", encoding="utf-8"))
        portal = stack.enter_context(start_blocking_portal("asyncio"))
        client = Client(stdio_client(params, errlog=errlog), mode=mode, read_timeout_seconds=60)
        yield SyncClient(portal, stack.enter_context(portal.wrap_async_context_manager(client)))


@contextmanager
def http_session(url: str, token: str | None, *, mode: str = "auto") -> Iterator[SyncClient]:
    """A client session to an HTTP server, with a bearer token if given."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with start_blocking_portal("asyncio") as portal:
        http = portal.wrap_async_context_manager(httpx2.AsyncClient(headers=headers, timeout=30))
        with http as client_http:
            transport = streamable_http_client(url, http_client=client_http)
            client = Client(transport, mode=mode, read_timeout_seconds=60)
            with portal.wrap_async_context_manager(client) as session:
                yield SyncClient(portal, session)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_http_server(args: Sequence[str], env: dict[str, str], log: Path, port: int) -> Any:
    """Start ``python -m memcore.mcp --transport http`` and wait until /healthz answers."""
    out = log.open("a", encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "memcore.mcp", "--transport", "http", "--port", str(port), *args],
        env=env,
        cwd=str(REPO_ROOT),
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=out,
    )
    out.close()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}: {log.read_text()}")
        try:
            if httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc
        except httpx2.TransportError:
            pass
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("server did not answer /healthz within 60 s")


def stop(proc: Any) -> int:
    """Stop a server subprocess with SIGTERM (as docker stop does); its exit status."""
    proc.terminate()
    try:
        return int(proc.wait(timeout=30))
    except subprocess.TimeoutExpired:
        proc.kill()
        return int(proc.wait())
