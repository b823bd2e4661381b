"""Read throughput over HTTP: one PostgreSQL node against two, each an MCP server
(``python -m memcore.mcp --transport http --database-url …``), the same client sessions
calling recall and search_memories for a fixed time, spread evenly over the nodes.

A node answers /healthz before its replica is built and indexed (the store opens in the
background), so each node is first left until its process has gone idle: otherwise the
second node's bootstrap would be timed as part of the load.

The clients are asyncio sessions of the official SDK in this process; on a machine with
few cores they, the servers and PostgreSQL share the same CPUs, which the report says.
"""

from __future__ import annotations

import os
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from benches.reliability.client import start_http_server

_QUERIES = ("harbour lantern", "granite orchid", "meteor violin", "glacier saffron", "copper")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time the process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _wait_idle(pid: int, timeout: float = 1_800.0) -> None:
    """Until the process used under 5% of a core over two seconds (built and indexed)."""
    deadline = time.monotonic() + timeout
    before = _cpu_seconds(pid)
    while time.monotonic() < deadline:
        time.sleep(2.0)
        now = _cpu_seconds(pid)
        if now - before < 0.1:
            return
        before = now
    raise RuntimeError(f"node {pid} still busy after {timeout:.0f} s")


async def _touch(url: str) -> None:
    """One call, so the node opens its store (in the background until asked)."""
    async with (
        httpx2.AsyncClient(timeout=600) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        await client.call_tool("search_memories", {"query": _QUERIES[0]})


@contextmanager
def _server(url: str, home: Path) -> Any:
    """One node serving MCP over HTTP; yields its /mcp URL once it answers and is idle."""
    home.mkdir(parents=True, exist_ok=True)
    args = ["--database-url", url, "--data-dir", str(home / "replica")]
    args += ["--model", "none", "--tools", "core"]
    proc, base = start_http_server(args, home, home / "server.log", timeout=600)
    try:
        anyio.run(_touch, f"{base}/mcp")
        _wait_idle(proc.pid)
        yield f"{base}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=60)


async def _load(urls: list[str], clients: int, seconds: float) -> dict[str, Any]:
    counts = {"calls": 0, "errors": 0}
    deadline = time.monotonic() + seconds

    async def session(number: int) -> None:
        url = urls[number % len(urls)]
        async with (
            httpx2.AsyncClient(timeout=120) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            i = number
            while time.monotonic() < deadline:
                query = _QUERIES[i % len(_QUERIES)]
                name = "recall" if i % 2 else "search_memories"
                result = await client.call_tool(name, {"query": query})
                counts["calls"] += 1
                counts["errors"] += int(result.is_error)
                i += 1

    started = time.monotonic()
    async with anyio.create_task_group() as group:
        for number in range(clients):
            group.start_soon(session, number)
    elapsed = time.monotonic() - started
    return {**counts, "seconds": elapsed, "calls_per_second": counts["calls"] / elapsed}


def throughput(url: str, work: Path, clients: int, seconds: float) -> dict[str, Any]:
    """Calls per second with every session on one node, then spread over two: after a
    warm-up on both, three rounds of each in turn (the machine's load drifts; turns
    share the drift), each `seconds / 3` long; the median round of each is reported."""
    with ExitStack() as stack:
        first = stack.enter_context(_server(url, work / "node1"))
        second = stack.enter_context(_server(url, work / "node2"))
        anyio.run(_load, [first, second], clients, min(3.0, seconds))
        rounds: dict[str, list[dict[str, Any]]] = {"one_node": [], "two_nodes": []}
        for _ in range(3):
            rounds["one_node"].append(anyio.run(_load, [first], clients, seconds / 3))
            rounds["two_nodes"].append(anyio.run(_load, [first, second], clients, seconds / 3))
    out: dict[str, Any] = {"clients": clients, "rounds": rounds}
    for key, done in rounds.items():
        ranked = sorted(done, key=lambda r: float(r["calls_per_second"]))
        out[key] = ranked[len(ranked) // 2]
    return out
