"""The MCP server (docs/performance.md): cold start to the first ``tools/list`` answer, the
first tool call after the handshake (and how long after the store opened it is answered),
the ``store_memory`` and ``recall`` round trips over stdio including the query/passage
embedding with the real MiniLM model, and HTTP throughput with 8 concurrent clients.

    python benches/bench_mcp.py --json out.json [--quick] [--model-path DIR]

It is also the ``mcp`` area of ``python -m benches`` (see :func:`collect`). Round trips are
timed at the client, as an agent sees them: the MCP SDK's client over a pipe to a server
subprocess. Cold start is timed with raw JSON-RPC lines so that only the server is measured.
Correctness (the stored facts are found again) is checked outside the timed loops.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

if TYPE_CHECKING:
    from benches.context import Context
    from benches.report import Record

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_MINILM = REPO_ROOT.parent / "shared" / "models" / "all-MiniLM-L6-v2-int8"
HTTP_CLIENTS = 8

_SUBJECTS = ("the user", "Alice", "the team", "our customer", "the on-call engineer")
_VERBS = ("prefers", "uses", "dislikes", "is migrating to", "maintains", "reviews")
_OBJECTS = (
    "TypeScript",
    "PostgreSQL",
    "dark mode",
    "the billing service",
    "Kubernetes",
    "weekly reports",
    "the login flow",
    "vim keybindings",
    "Rust",
    "the staging cluster",
)
_PLACES = ("at work", "on weekends", "for side projects", "in Berlin", "since March")


def fact(i: int) -> str:
    """A varied, realistic one-line fact (distinct for every i in the benchmark's range)."""
    s, v, o, p = (
        _SUBJECTS[i % 5],
        _VERBS[(i // 5) % 6],
        _OBJECTS[(i // 30) % 10],
        _PLACES[(i // 300) % 5],
    )
    return f"{s.capitalize()} {v} {o} {p} (note {i})"


def question(i: int) -> str:
    """A distinct query, so the query-embedding cache does not flatter recall."""
    return f"What does {_SUBJECTS[i % 5]} think about {_OBJECTS[(i // 5) % 10]}? ({i})"


@dataclass(frozen=True)
class Latency:
    """Percentiles of one timed loop, in milliseconds."""

    p50: float
    p95: float
    p99: float
    runs: int

    @classmethod
    def of(cls, seconds: list[float]) -> Latency:
        ms = sorted(s * 1e3 for s in seconds)

        def pick(q: float) -> float:
            return round(ms[min(len(ms) - 1, int(q * len(ms)))], 3)

        return cls(
            p50=round(statistics.median(ms), 3), p95=pick(0.95), p99=pick(0.99), runs=len(ms)
        )


def server_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCORE_")}
    env["HF_HUB_OFFLINE"] = "1"
    return env


def model_args(model_path: Path | None) -> list[str]:
    return ["--model", "none"] if model_path is None else ["--model-path", str(model_path)]


# -- cold start ---------------------------------------------------------------------------------

_HANDSHAKE = "\n".join(
    json.dumps(message)
    for message in (
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    )
)


def cold_start_once(args: list[str]) -> float:
    """Seconds from spawning ``python -m memcore.mcp`` to its ``tools/list`` answer."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memcore.mcp", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=REPO_ROOT,
        env=server_env(),
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((_HANDSHAKE + "\n").encode())
    proc.stdin.flush()
    elapsed = None
    for line in proc.stdout:
        reply = json.loads(line)
        if reply.get("id") == 2:
            elapsed = time.perf_counter() - started
            assert len(reply["result"]["tools"]) >= 6, reply
            break
    proc.stdin.close()
    proc.wait(timeout=60)
    if elapsed is None:
        raise RuntimeError("the server closed stdout before answering tools/list")
    return elapsed


@dataclass(frozen=True)
class FirstCall:
    """One start: seconds from spawning to the ``tools/list`` answer, from that answer to
    the first tool call's answer, and from the store opening (the server's log) to it."""

    to_tools_list: float
    first_call: float
    after_store_open: float | None


def first_call_once(args: list[str], tool: str, arguments: dict[str, Any]) -> FirstCall:
    """Start a server, finish the handshake, then call ``tool`` at once (as a client does)."""
    started, started_wall = time.perf_counter(), time.time()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memcore.mcp", *args, "--log-level", "info"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO_ROOT,
        env=server_env(),
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write((_HANDSHAKE + "\n").encode())
    proc.stdin.flush()
    listed = answered = answered_wall = None
    for line in proc.stdout:
        reply = json.loads(line)
        if reply.get("id") == 2:
            listed = time.perf_counter()
            call = {"name": tool, "arguments": arguments}
            message = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call}
            proc.stdin.write((json.dumps(message) + "\n").encode())
            proc.stdin.flush()
        elif reply.get("id") == 3:
            answered, answered_wall = time.perf_counter(), time.time()
            if reply["result"]["isError"]:
                raise RuntimeError(f"the first {tool} failed: {reply['result']}")
            break
    proc.stdin.close()
    log = proc.stderr.read().decode()
    proc.wait(timeout=60)
    if listed is None or answered is None or answered_wall is None:
        raise RuntimeError(f"the server did not answer the first call: {log[-2000:]}")
    opened = _store_open_at(log)
    return FirstCall(
        to_tools_list=listed - started,
        first_call=answered - listed,
        after_store_open=None if opened is None else answered_wall - max(opened, started_wall),
    )


def _store_open_at(log: str) -> float | None:
    """Wall-clock time of the server's "store open" log line, if it logged one."""
    from datetime import datetime

    for line in log.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("msg") == "store open":
            return datetime.fromisoformat(entry["ts"].replace("Z", "+00:00")).timestamp()
    return None


def first_calls(args: list[str], runs: int) -> dict[str, Any]:
    """The first get_status and the first store_memory after the handshake, ``runs`` starts
    each (after one untimed start that creates the store and warms the caches)."""
    first_call_once(args, "get_status", {})
    out: dict[str, Any] = {}
    for tool, arguments in (("get_status", {}), ("store_memory", {"content": fact(1)})):
        samples = [first_call_once(args, tool, arguments) for _ in range(runs)]
        after = [s.after_store_open for s in samples if s.after_store_open is not None]
        out[tool] = {
            "first_call_s": round(statistics.median(s.first_call for s in samples), 3),
            "after_store_open_s": round(statistics.median(after), 3) if after else None,
            "runs": [asdict(s) for s in samples],
        }
    return out


def cold_start(args: list[str], runs: int) -> list[float]:
    cold_start_once(args)  # untimed: creates the store, warms the page cache and .pyc files
    return [cold_start_once(args) for _ in range(runs)]


# -- stdio round trips ---------------------------------------------------------------------------


async def _wait_ready(client: Client, timeout: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = (await client.call_tool("get_status", {})).structured_content
        if status["store"]["status"] == "open" and status["embedding"]["status"] != "loading":
            return dict(status)
        await anyio.sleep(0.05)
    raise RuntimeError("the server did not become ready")


async def _timed(call: Callable[[int], Awaitable[Any]], runs: int, warmup: int) -> list[float]:
    for i in range(warmup):
        await call(-1 - i)
    samples = []
    for i in range(runs):
        started = time.perf_counter()
        result = await call(i)
        samples.append(time.perf_counter() - started)
        if result.is_error:
            raise RuntimeError(str(result.structured_content))
    return samples


async def stdio_round_trips(args: list[str], stores: int, recalls: int) -> dict[str, Any]:
    """p50/p95/p99 of store_memory and recall over stdio, plus the correctness check."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memcore.mcp", *args],
        env=server_env(),
        cwd=str(REPO_ROOT),
    )
    with Path(os.devnull).open("w") as quiet:
        async with Client(stdio_client(params, errlog=quiet), read_timeout_seconds=120) as client:
            status = await _wait_ready(client)

            async def store(i: int) -> Any:
                return await client.call_tool("store_memory", {"content": fact(i % 100_000)})

            async def recall(i: int) -> Any:
                return await client.call_tool("recall", {"query": question(i), "limit": 10})

            store_s = await _timed(store, stores, warmup=20)
            recall_s = await _timed(recall, recalls, warmup=20)
            probe = fact(7)
            found = await client.call_tool("recall", {"query": probe, "limit": 5})
            contents = [r["content"] for r in found.structured_content["results"]]
    if probe not in contents:
        raise RuntimeError(f"recall did not find a stored fact: {contents}")
    return {
        "embedding": status["embedding"],
        "store_memory": asdict(Latency.of(store_s)),
        "recall": asdict(Latency.of(recall_s)),
    }


# -- the same calls without MCP --------------------------------------------------------------------


def in_process(
    data_dir: Path, model_path: Path | None, stores: int, recalls: int
) -> dict[str, Any]:
    """store_memory and recall straight on the facade, for the MCP overhead by difference
    (a loaded machine slows both alike)."""
    from memcore import Memory

    with Memory(
        data_dir, model=None if model_path is None else "minilm", model_path=model_path
    ) as mem:
        if mem.embeddings is not None and not mem.embeddings.wait_ready(120):
            raise RuntimeError(f"model failed to load: {mem.embeddings.error}")
        store_s, recall_s = [], []
        for i in range(stores):
            started = time.perf_counter()
            mem.store_memory(fact(i))
            store_s.append(time.perf_counter() - started)
        for i in range(recalls):
            started = time.perf_counter()
            mem.recall(question(50_000 + i), 10)
            recall_s.append(time.perf_counter() - started)
    return {"store_memory": asdict(Latency.of(store_s)), "recall": asdict(Latency.of(recall_s))}


# -- HTTP throughput -----------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _http_client(url: str, worker: int, calls: int, samples: list[float]) -> None:
    async with (
        httpx2.AsyncClient(timeout=120) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        if worker == 0:
            await _wait_ready(client)
        for i in range(calls):
            if i % 2:
                name, arguments = "recall", {"query": question(worker * 10_000 + i)}
            else:
                name, arguments = "store_memory", {"content": fact(worker * 10_000 + i)}
            started = time.perf_counter()
            result = await client.call_tool(name, arguments)
            samples.append(time.perf_counter() - started)
            if result.is_error:
                raise RuntimeError(str(result.structured_content))


async def http_throughput(args: list[str], data_dir: Path, calls: int) -> dict[str, Any]:
    """Calls per second with HTTP_CLIENTS clients, each alternating store_memory and recall."""
    port = _free_port()
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "memcore.mcp", "--transport", "http", "--port", str(port)),
            *("--data-dir", str(data_dir), "--log-level", "warn", *args),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=REPO_ROOT,
        env=server_env(),
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        for _ in range(600):
            try:
                if httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx2.TransportError:
                await anyio.sleep(0.1)
        async with (
            httpx2.AsyncClient(timeout=120) as http,
            Client(streamable_http_client(url, http_client=http)) as warm,
        ):
            await _wait_ready(warm)
        samples: list[float] = []
        started = time.perf_counter()
        async with anyio.create_task_group() as group:
            for worker in range(HTTP_CLIENTS):
                group.start_soon(_http_client, url, worker, calls, samples)
        wall = time.perf_counter() - started
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    return {
        "clients": HTTP_CLIENTS,
        "calls": len(samples),
        "seconds": round(wall, 3),
        "calls_per_second": round(len(samples) / wall, 1),
        "latency": asdict(Latency.of(samples)),
    }


# -- the whole run -------------------------------------------------------------------------------


def measure(*, quick: bool, model_path: Path | None) -> dict[str, Any]:
    """Every MCP measurement, as plain JSON-ready values."""
    runs = {"cold": 5 if quick else 10, "store": 50 if quick else 500}
    runs["recall"] = runs["store"]
    with tempfile.TemporaryDirectory(prefix="memcore-bench-mcp-") as work:
        base = Path(work)
        args = [*model_args(model_path), "--log-level", "warn"]
        cold = cold_start(["--data-dir", str(base / "cold"), *args], runs["cold"])
        first = first_calls(
            ["--data-dir", str(base / "first"), *model_args(model_path)], runs["cold"]
        )
        stdio = anyio.run(
            stdio_round_trips,
            ["--data-dir", str(base / "stdio"), *args],
            runs["store"],
            runs["recall"],
        )
        direct = in_process(base / "direct", model_path, runs["store"], runs["recall"])
        http = anyio.run(
            http_throughput, model_args(model_path), base / "http", 20 if quick else 100
        )
    return {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
        "model": str(model_path) if model_path else None,
        "cold_start_s": {
            "median": round(statistics.median(cold), 3),
            "min": round(min(cold), 3),
            "runs": [round(s, 3) for s in cold],
        },
        "first_call": first,
        "stdio": stdio,
        "in_process": direct,
        "mcp_overhead_p50_ms": {
            name: round(stdio[name]["p50"] - direct[name]["p50"], 3)
            for name in ("store_memory", "recall")
        },
        "http": http,
    }


def collect(ctx: Context) -> list[Record]:
    """The ``mcp`` area of ``python -m benches``: the three budget rows plus HTTP throughput."""
    from benches.report import Record

    model_path = SHARED_MINILM if (SHARED_MINILM / "model.onnx").is_file() else None
    if model_path is None:
        ctx.note("mcp: ../shared/models/all-MiniLM-L6-v2-int8 is absent; measured text-only")
    result = measure(quick=ctx.settings.quick, model_path=model_path)
    stdio, http, first = result["stdio"], result["http"], result["first_call"]
    store_first = first["store_memory"]
    return [
        Record(
            name="cold start to tools/list",
            group="cold_start",
            unit="s",
            value=result["cold_start_s"]["median"],
            row="cold_start",
            runs=len(result["cold_start_s"]["runs"]),
        ),
        Record(
            name="first tool call after initialize (store_memory), from the store opening",
            group="first_call",
            unit="s",
            value=store_first["after_store_open_s"],
            row="first_call",
            runs=len(store_first["runs"]),
            note=(
                f"from the tools/list answer: store_memory {store_first['first_call_s']} s, "
                f"get_status {first['get_status']['first_call_s']} s"
            ),
        ),
        Record(
            name="MCP stdio store_memory",
            group="mcp_store",
            unit="ms",
            row="mcp_store",
            **stdio["store_memory"],
        ),
        Record(
            name="MCP stdio recall",
            group="mcp_recall",
            unit="ms",
            row="mcp_recall",
            **stdio["recall"],
        ),
        Record(
            name=f"MCP HTTP, {http['clients']} clients",
            group="mcp_http",
            unit="calls/s",
            value=http["calls_per_second"],
            higher_is_better=True,
            runs=http["calls"],
            note="store_memory and recall alternating",
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--quick", action="store_true", help="fewer runs (a smoke test)")
    parser.add_argument(
        "--model-path",
        type=Path,
        default=SHARED_MINILM if (SHARED_MINILM / "model.onnx").is_file() else None,
        help="model directory (default: ../shared/models/all-MiniLM-L6-v2-int8)",
    )
    parser.add_argument(
        "--text-only", action="store_true", help="no embedding model: the MCP layer's own cost"
    )
    args = parser.parse_args(argv)
    result = measure(quick=args.quick, model_path=None if args.text_only else args.model_path)
    text = json.dumps(result, indent=2)
    if args.json:
        args.json.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
