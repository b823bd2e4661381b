"""The automatic path as operators meet it, on real server processes: the store in a
project root (``--project-root`` / ``MEMCORE_PROJECT_ROOT``), the seven ``mcp_memory_*``
metrics on ``/metrics`` and in ``get_status``, the tool-call log line (request id,
namespace, session and turn ids, never content), periodic maintenance
(``--maintenance-interval``) and a ``--fact-extractor`` loaded at start."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import httpx2
import pytest

import memcore
from memcore.errors import StorageError
from memcore.mcp.maintenance import PeriodicMaintenance
from test_mcp_support import (
    REPO_ROOT,
    free_port,
    http_session,
    server_env,
    start_http_server,
    stdio_server,
    stop,
)
from test_mcp_support.raw import (
    GATED_SDK_LAUNCHER,
    SDK_ONLY_LAUNCHER,
    RawServer,
    initialize,
    request,
)

if TYPE_CHECKING:
    from memcore.memory import Memory

TEXT_ONLY = ["--model", "none"]
#: The lifecycle contract's metric names (DESIGN.md 6.1, seed 004 section 13.1).
METRICS = (
    "mcp_memory_before_turn_total",
    "mcp_memory_after_turn_total",
    "mcp_memory_after_turn_duration_ms",
    "mcp_memory_maintenance_total",
    "mcp_memory_compaction_total",
    "mcp_memory_fact_write_total",
    "mcp_memory_idempotency_conflicts_total",
)
SNAPSHOT_KEYS = {name.removeprefix("mcp_memory_") for name in METRICS}
SECRET = "my locker code is 90210"


def _log_lines(log: Path) -> list[dict[str, Any]]:
    lines = []
    for line in log.read_text(encoding="utf-8").splitlines():
        if line.startswith("{"):
            lines.append(json.loads(line))
    return lines


def _wait_for_line(log: Path, message: str, timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists():
            for line in _log_lines(log):
                if line.get("msg") == message:
                    return line
        time.sleep(0.05)
    raise AssertionError(f"no {message!r} line in {log.read_text() if log.exists() else ''}")


# -- the project root ----------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["flag", "variable"])
def test_a_stdio_server_stores_under_the_project_root(tmp_path: Path, how: str) -> None:
    root = tmp_path / "project"
    root.mkdir()
    # The global store's variable gives way to the project, as Memory(mode="local") does.
    extra = {"MEMCORE_DATA_DIR": str(tmp_path / "global")}
    args = [*TEXT_ONLY]
    if how == "flag":
        args += ["--project-root", str(root)]
    else:
        extra["MEMCORE_PROJECT_ROOT"] = str(root)
    with stdio_server(args, server_env(tmp_path, **extra), tmp_path / "server.log") as client:
        client.ok("store_memory", {"content": "The project builds with make"})
        status = client.ok("get_status")
        assert status["store"]["path"] == str(root / ".memcore")
    assert (root / ".memcore" / "memcore.db").is_file()
    assert not (tmp_path / "global").exists()


# -- metrics -------------------------------------------------------------------------------------


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A text-only HTTP server on loopback, logging tool calls (debug); its base URL and log."""
    port = free_port()
    log = tmp_path / "server.log"
    args = [
        *("--data-dir", str(tmp_path / "store"), *TEXT_ONLY, "--tools", "all"),
        *("--log-level", "debug"),
    ]
    proc = start_http_server(args, server_env(tmp_path), log, port)
    yield f"http://127.0.0.1:{port}", log
    assert stop(proc) == 0


def _exposition(base: str) -> str:
    response = httpx2.get(f"{base}/metrics", timeout=30)
    assert response.status_code == 200
    return response.text


def test_metrics_lists_the_seven_lifecycle_metrics_from_the_start(
    http_server: tuple[str, Path],
) -> None:
    base, _ = http_server
    text = _exposition(base)  # before any call
    for name in METRICS:
        kind = "histogram" if name.endswith("_duration_ms") else "counter"
        assert f"# HELP {name} " in text
        assert f"# TYPE {name} {kind}" in text
    for name in ("before_turn", "after_turn", "maintenance"):
        assert f'mcp_memory_{name}_total{{status="ok"}} 0' in text
    for tier in ("L1", "L2", "durable"):
        assert f'mcp_memory_fact_write_total{{tier="{tier}"}} 0' in text
    assert "mcp_memory_compaction_total 0" in text
    assert "mcp_memory_idempotency_conflicts_total 0" in text
    assert 'mcp_memory_after_turn_duration_ms_bucket{le="500.0"} 0' in text
    assert 'mcp_memory_after_turn_duration_ms_bucket{le="+Inf"} 0' in text
    assert re.search(r"^mcp_memory_after_turn_duration_ms_sum 0(\.0)?$", text, re.M)
    assert "mcp_memory_after_turn_duration_ms_count 0" in text
    # Every sample line is well formed: a name, optional labels, a number.
    sample = re.compile(r'^[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? -?[0-9.e+-]+$')
    for line in text.splitlines():
        assert line.startswith("#") or sample.match(line), line


def test_http_tool_calls_log_their_json_rpc_id(http_server: tuple[str, Path]) -> None:
    base, log = http_server
    with http_session(f"{base}/mcp", None) as client:
        client.ok("get_status")
    calls = [line for line in _log_lines(log) if line.get("msg") == "tool call"]
    assert calls and calls[-1]["tool"] == "get_status"
    assert isinstance(calls[-1]["request_id"], int)  # the SDK client's JSON-RPC id


def test_get_status_has_the_lifecycle_metrics_and_settings(tmp_path: Path) -> None:
    args = [*TEXT_ONLY, "--data-dir", str(tmp_path / "store"), "--tools", "all"]
    args += ["--recent-context-items", "12", "--l2-retention-days", "9"]
    log = tmp_path / "server.log"
    with stdio_server(args, server_env(tmp_path), log) as client:
        client.ok("memory_run_maintenance")
        status = client.ok("get_status")
    # Periodic maintenance is off unless asked for: clients call memory_run_maintenance.
    start = next(line for line in _log_lines(log) if line["msg"] == "memcore MCP server starting")
    assert start["maintenance_interval"] == 0 and start["recent_context_items"] == 12
    assert "periodic maintenance" not in log.read_text(encoding="utf-8")
    metrics = status["lifecycle_metrics"]
    assert set(metrics) == SNAPSHOT_KEYS
    assert set(metrics["fact_write_total"]) == {"L1", "L2", "durable"}
    assert {"buckets", "sum", "count"} == set(metrics["after_turn_duration_ms"])
    settings = status["lifecycle_settings"]
    assert (settings["recent_context_items"], settings["l2_retention_days"]) == (12, 9)
    assert settings["compact_threshold"] == 0.8


def test_get_status_has_zero_metrics_when_the_store_is_not_open(tmp_path: Path) -> None:
    store = tmp_path / "store"
    args = [*TEXT_ONLY, "--data-dir", str(store), "--timeout", "20"]
    # A sole writer holds the store: this server's never opens (RESOURCE_BUSY).
    log = tmp_path / "server.log"
    sole = memcore._core.Engine(str(store), shared=False)
    try:
        with stdio_server(args, server_env(tmp_path), log) as client:
            status = client.ok("get_status")
    finally:
        sole.close()
    assert status["store"]["status"] == "error"
    metrics = status["lifecycle_metrics"]
    assert set(metrics) == SNAPSHOT_KEYS and metrics["compaction_total"] == 0
    assert metrics["fact_write_total"] == {"L1": 0, "L2": 0, "durable": 0}
    assert status["lifecycle_settings"] is None


# -- logs ----------------------------------------------------------------------------------------


def _turn_call(request_id: int | str, turn_id: str) -> dict[str, Any]:
    arguments = {
        "session_id": "sess-7",
        "turn_id": turn_id,
        "input_items": [{"role": "user", "content": SECRET}],
        "output_items": [{"role": "assistant", "content": f"Noted: {SECRET}"}],
    }
    return request(request_id, "tools/call", {"name": "memory_after_turn", "arguments": arguments})


@pytest.mark.parametrize("path", ["early", "sdk"])
def test_a_hook_calls_log_line_has_its_ids_and_no_content(tmp_path: Path, path: str) -> None:
    """The JSON-RPC id reaches the log line whether memcore answers the call before the SDK
    has loaded (held back by a gate) or the SDK does (early answers switched off)."""
    log = tmp_path / "server.log"
    args = ["--data-dir", str(tmp_path / "store"), *TEXT_ONLY, "--tools", "all"]
    args += ["--log-level", "info"]
    gate = tmp_path / "sdk-gate"
    if path == "early":
        command = ["-c", GATED_SDK_LAUNCHER, str(gate), *args]
    else:
        command = ["-c", SDK_ONLY_LAUNCHER, *args]
    server = RawServer(command, server_env(tmp_path), log)
    try:
        server.send(
            initialize(1),
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            _turn_call("turn-req-42", "t-1"),
            request(43, "tools/call", {"name": "memory_run_maintenance", "arguments": {}}),
            request(44, "tools/call", {"name": "store_memory", "arguments": {"content": SECRET}}),
        )
        replies = {reply["id"]: reply for reply in server.replies(4)}
        assert replies[43]["result"]["isError"] is False
        assert replies[44]["result"]["isError"] is False
        gate.touch()
        status, _ = server.finish()
        assert status == 0
    finally:
        gate.touch()
        server.kill()
    calls = {line["tool"]: line for line in _log_lines(log) if line.get("msg") == "tool call"}
    after = calls["memory_after_turn"]
    assert after["request_id"] == "turn-req-42"
    assert (after["namespace"], after["session_id"], after["turn_id"]) == (
        "default",
        "sess-7",
        "t-1",
    )
    assert after["level"] == "info" and isinstance(after["ms"], int | float)
    assert after["status"]  # ok once the lead's hook lands; an error code logs as well
    # A hook's success is logged at INFO for operators; other successes stay at DEBUG.
    maintenance = calls["memory_run_maintenance"]
    assert (maintenance["status"], maintenance["level"], maintenance["request_id"]) == (
        "ok",
        "info",
        43,
    )
    assert "store_memory" not in calls
    text = log.read_text(encoding="utf-8")
    assert SECRET not in text and "locker" not in text


# -- periodic maintenance ------------------------------------------------------------------------


def test_periodic_maintenance_runs_and_the_server_exits_cleanly(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    args = ["--data-dir", str(tmp_path / "store"), *TEXT_ONLY, "--maintenance-interval", "0.2"]
    command = ["-m", "memcore.mcp", *args]
    server = RawServer(command, server_env(tmp_path), log)
    try:
        server.send(initialize(1), {"jsonrpc": "2.0", "method": "notifications/initialized"})
        server.replies(1)
        run = _wait_for_line(log, "periodic maintenance")
        assert (run["status"], run["namespace"], run["level"]) == ("ok", "default", "info")
        assert isinstance(run["ms"], int | float) and "memories_expired" in run
        _wait_for_line(log, "periodic maintenance")  # and again, on schedule
        server.send(request(2, "tools/call", {"name": "get_status", "arguments": {}}))
        (status,) = server.replies(1)
        assert status["result"]["isError"] is False
        code, rest = server.finish()
        assert (code, rest) == (0, [])
    finally:
        server.kill()
    lines = _log_lines(log)
    assert [line["msg"] for line in lines][-2:] == ["store closed", "memcore MCP server stopped"]
    assert not [line for line in lines if line["level"] == "error" or "exc" in line]
    start = next(line for line in lines if line["msg"] == "memcore MCP server starting")
    assert start["maintenance_interval"] == 0.2


def test_periodic_maintenance_stops_with_an_http_server(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    args = ["--data-dir", str(tmp_path / "store"), *TEXT_ONLY, "--maintenance-interval", "0.2"]
    proc = start_http_server(args, server_env(tmp_path), log, free_port())
    try:
        _wait_for_line(log, "periodic maintenance")
    finally:
        assert stop(proc) == 0
    messages = [line["msg"] for line in _log_lines(log)]
    assert messages[-2:] == ["store closed", "memcore MCP server stopped"]


class _FlakyStore:
    """Stands in for Memory: maintenance fails twice (an error, then a bug), then works."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def memory_run_maintenance(self, *, namespace: str | None = None) -> dict[str, Any]:
        self.calls.append(str(namespace))
        if len(self.calls) == 1:
            raise StorageError("disk I/O error")
        if len(self.calls) == 2:
            raise RuntimeError("a bug")
        return {"ok": True, "memories_expired": 2, "detail": ["never logged"]}


def test_a_failed_maintenance_run_is_logged_and_the_next_comes_on_schedule(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = _FlakyStore()
    caplog.set_level(logging.INFO, logger="memcore.mcp.maintenance")
    runner = PeriodicMaintenance(cast("Memory", store), 0.02, lambda: ["default"])
    try:
        deadline = time.monotonic() + 30
        while len(store.calls) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        runner.close()
    assert store.calls[:3] == ["default"] * 3
    calls = len(store.calls)
    time.sleep(0.1)
    assert len(store.calls) == calls  # stopped
    runs = [r for r in caplog.records if r.name == "memcore.mcp.maintenance"]
    failed = [r for r in runs if r.getMessage() == "periodic maintenance failed"]
    assert [r.__dict__["fields"]["status"] for r in failed[:2]] == ["STORAGE_ERROR"] * 2
    done = next(r for r in runs if r.getMessage() == "periodic maintenance").__dict__["fields"]
    assert done == {"namespace": "default", "status": "ok", "ms": done["ms"], "memories_expired": 2}


# -- the fact extractor --------------------------------------------------------------------------


def test_a_fact_extractor_is_loaded_from_the_python_path(tmp_path: Path) -> None:
    folder = tmp_path / "extractors"
    folder.mkdir()
    (folder / "team_facts.py").write_text(
        "print('loading team_facts')\n"
        "def extract(items):\n"
        "    return [{'content': 'User works on the billing team', 'tier': 'durable'}]\n",
        encoding="utf-8",
    )
    env = server_env(tmp_path, PYTHONPATH=str(folder))
    log = tmp_path / "server.log"
    args = [*TEXT_ONLY, "--data-dir", str(tmp_path / "store"), "--fact-extractor"]
    with stdio_server([*args, "team_facts:extract"], env, log) as client:
        assert client.ok("get_status")["store"]["status"] in ("opening", "open")
    start = next(line for line in _log_lines(log) if line["msg"] == "memcore MCP server starting")
    assert (start["fact_extractor"], start["fact_extractor_timeout"]) == ("team_facts:extract", 10)

    refused = subprocess.run(
        [sys.executable, "-m", "memcore.mcp", *args, "team_facts:missing"],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert refused.returncode == 2 and refused.stdout == ""
    assert "Invalid --fact-extractor 'team_facts:missing'" in refused.stderr
    assert "module 'team_facts' has no attribute 'missing'" in refused.stderr
