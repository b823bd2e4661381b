"""HTTP load: clients storing and recalling through one text-only HTTP server for a fixed
time; every call must succeed, and the server must still be healthy afterwards."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from benches.reliability.client import ROOT, server_env


def run(home: Path, *, seconds: float, clients: int) -> dict[str, Any]:
    """``clients`` sessions calling store_memory and recall in turn for ``seconds``."""
    home.mkdir(parents=True)
    port = _free_port()
    args = ["--transport", "http", "--port", str(port), "--data-dir", str(home / "store")]
    args += ["--model", "none", "--tools", "core"]
    with (home / "server.log").open("a") as log:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "memcore.mcp",
                "--transport",
                "http",
                "--port",
                str(port),
                *args,
            ],
            env=server_env(home),
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(base, server)
        counts = anyio.run(_load, f"{base}/mcp", seconds, clients)
        healthy = httpx2.get(f"{base}/healthz", timeout=10).status_code == 200
    finally:
        server.terminate()
        server.wait(timeout=60)
    calls = counts["calls"]
    return {
        "clients": clients,
        "seconds": counts["seconds"],
        "calls": calls,
        "calls_per_second": calls / counts["seconds"] if counts["seconds"] else 0.0,
        "errors": counts["errors"],
        "protocol_errors": counts["protocol_errors"],
        "healthy_after": healthy,
        "exit_status": server.returncode,
    }


async def _load(url: str, seconds: float, clients: int) -> dict[str, Any]:
    counts = {"calls": 0, "errors": 0, "protocol_errors": 0}
    started = time.monotonic()
    deadline = started + seconds

    async def worker(number: int) -> None:
        async with (
            httpx2.AsyncClient(timeout=120) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            i = 0
            while time.monotonic() < deadline:
                if i % 2:
                    name, arguments = "recall", {"query": f"worker {number} fact {i - 1}"}
                else:
                    name, arguments = "store_memory", {"content": f"worker {number} fact {i}"}
                try:
                    result = await client.call_tool(name, arguments)
                except Exception:
                    counts["protocol_errors"] += 1
                else:
                    counts["errors"] += int(result.is_error)
                counts["calls"] += 1
                i += 1

    async with anyio.create_task_group() as group:
        for number in range(clients):
            group.start_soon(worker, number)
    return {**counts, "seconds": time.monotonic() - started}


def _wait_healthy(base: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited with {server.returncode}")
        try:
            if httpx2.get(f"{base}/healthz", timeout=1).status_code == 200:
                return
        except httpx2.TransportError:
            pass
        time.sleep(0.05)
    raise RuntimeError("the server did not become healthy within 60 s")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
