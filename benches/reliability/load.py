"""HTTP load: clients storing and recalling through one text-only HTTP server for a fixed
time; every call must succeed, and the server must still be healthy afterwards.

A transport failure (a connection closed or reset while a call was in flight, a session
that could not be opened or closed) is counted, with its kind and when it happened, and
the client opens a new session and goes on: the run always ends with counts. The SDK's
client raises such a failure out of its own task group (an ``ExceptionGroup`` from the
``async with``, not from ``call_tool``), so it is caught around the whole session. The
server's memory is sampled during the run and its log is kept beside the results, so a
dropped connection can be told apart from a server that died or grew.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from benches.reliability.client import start_http_server

#: Transport failures kept with their details (the count is always complete).
_SAMPLES = 20


def run(
    home: Path, *, seconds: float, clients: int, keep_log: Path | None = None
) -> dict[str, Any]:
    """``clients`` sessions calling store_memory and recall in turn for ``seconds``; the
    server's log is copied to ``keep_log`` when given."""
    home.mkdir(parents=True)
    args = ["--data-dir", str(home / "store"), "--model", "none", "--tools", "core"]
    log_path = home / "server.log"
    server, base = start_http_server(args, home, log_path)
    try:
        counts = anyio.run(_load, f"{base}/mcp", seconds, clients, server.pid)
        healthy = _healthy(base)
        alive = server.poll() is None
    finally:
        server.terminate()
        server.wait(timeout=60)
    if keep_log is not None:
        keep_log.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(log_path, keep_log)
    calls = counts["calls"]
    return {
        "clients": clients,
        "seconds": counts["seconds"],
        "calls": calls,
        "calls_per_second": calls / counts["seconds"] if counts["seconds"] else 0.0,
        "errors": counts["errors"],
        "protocol_errors": counts["protocol_errors"],
        "transport_errors": counts["transport_errors"],
        "transport_error_samples": counts["samples"],
        "sessions_opened": counts["sessions"],
        "server_alive_after": alive,
        "healthy_after": healthy,
        "server_rss_mb": counts["rss_mb"],
        "server_log_errors": _log_errors(log_path),
        "exit_status": server.returncode,
    }


async def _load(url: str, seconds: float, clients: int, pid: int) -> dict[str, Any]:
    counts: dict[str, Any] = {
        "calls": 0,
        "errors": 0,
        "protocol_errors": 0,
        "transport_errors": 0,
        "sessions": 0,
        "samples": [],
    }
    started = time.monotonic()
    deadline = started + seconds
    rss: list[float] = []

    async def session(number: int, made: list[int]) -> None:
        """One session until the deadline; ``made[0]`` is the worker's next call number,
        ``made[1]`` the calls of this session."""
        async with (
            httpx2.AsyncClient(timeout=120) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            counts["sessions"] += 1
            while time.monotonic() < deadline:
                i = made[0]
                if i % 2:
                    name, arguments = "recall", {"query": f"worker {number} fact {i - 1}"}
                else:
                    name, arguments = "store_memory", {"content": f"worker {number} fact {i}"}
                made[0] += 1
                made[1] += 1
                counts["calls"] += 1  # counted before the call: one that dies is a call too
                try:
                    result = await client.call_tool(name, arguments)
                except Exception:  # an MCP error reply (the transport's failures skip this)
                    counts["protocol_errors"] += 1
                else:
                    counts["errors"] += int(result.is_error)

    async def worker(number: int) -> None:
        made = [0, 0]
        while time.monotonic() < deadline:
            made[1] = 0
            try:
                await session(number, made)
            except Exception as exc:  # the transport failed: count it, open a new session
                counts["transport_errors"] += 1
                if len(counts["samples"]) < _SAMPLES:
                    counts["samples"].append(
                        {
                            "worker": number,
                            "at_second": round(time.monotonic() - started, 1),
                            "after_deadline": time.monotonic() >= deadline,
                            "calls_in_session": made[1],
                            "error": _describe(exc),
                        }
                    )
                await anyio.sleep(0.1)

    async def sample_memory() -> None:
        while time.monotonic() < deadline:
            rss.append(_rss_mb(pid))
            await anyio.sleep(min(5.0, max(0.1, deadline - time.monotonic())))

    async with anyio.create_task_group() as group:
        group.start_soon(sample_memory)
        for number in range(clients):
            group.start_soon(worker, number)
    rss.append(_rss_mb(pid))
    seen = [r for r in rss if r > 0]
    counts["rss_mb"] = {
        "start": seen[0] if seen else None,
        "max": max(seen) if seen else None,
        "end": seen[-1] if seen else None,
    }
    return {**counts, "seconds": time.monotonic() - started}


def _describe(exc: BaseException) -> str:
    """The innermost exceptions of a (nested) exception group, by type and message."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(inner) for inner in exc.exceptions)
    return f"{type(exc).__module__}.{type(exc).__name__}: {exc}"[:300]


def _rss_mb(pid: int) -> float:
    """The process's resident memory in MB (0.0 once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return 0.0


def _log_errors(log: Path) -> int:
    """Lines of the server's JSON log at level error or worse."""
    text = log.read_text(errors="replace") if log.exists() else ""
    levels = ('"level": "error"', '"level": "critical"', '"level":"error"', '"level":"critical"')
    return sum(1 for line in text.splitlines() if any(k in line.lower() for k in levels))


def _healthy(base: str) -> bool:
    try:
        return httpx2.get(f"{base}/healthz", timeout=10).status_code == 200
    except httpx2.TransportError:
        return False
