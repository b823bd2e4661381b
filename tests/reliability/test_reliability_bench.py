"""The reliability run itself (``python -m benches.reliability``) must always end with counts:
a connection that dies under the HTTP load is counted as a transport error, not raised out
of the run, and the long run can be done in pieces (``--tools``, ``--resume``), each tool
recorded with the commit and date it ran on and merged into what earlier sittings wrote."""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path
from typing import Any

import anyio
from benches.reliability import load, results
from benches.reliability.__main__ import main

from test_mcp_support import free_port, server_env, start_http_server


def test_load_counts_a_dropped_server_and_finishes(tmp_path: Path) -> None:
    # The server dies (kill -9) in the middle of the load: the SDK's client raises the
    # transport failure out of its task group, around ``call_tool``; the run must count it
    # and end at its deadline with the calls made before.
    port = free_port()
    args = ["--data-dir", str(tmp_path / "store"), "--model", "none", "--tools", "core"]
    server = start_http_server(args, server_env(tmp_path), tmp_path / "server.log", port)
    killer = threading.Timer(1.5, lambda: server.send_signal(signal.SIGKILL))
    killer.start()
    try:
        counts = anyio.run(load._load, f"http://127.0.0.1:{port}/mcp", 4.0, 2, server.pid)
    finally:
        killer.cancel()
        server.kill()
        server.wait()
    assert counts["calls"] > 0
    assert counts["transport_errors"] >= 2, counts  # both clients lost their session
    assert counts["samples"] and all(s["error"] for s in counts["samples"])
    assert counts["seconds"] >= 4.0


def test_results_merge_per_tool_with_commit_and_date(tmp_path: Path) -> None:
    first = results.Recorder(tmp_path, mode="long")
    first.tool_order(["a_tool", "b_tool"])
    first.tool(_tally("a_tool", 10_000))
    # A later sitting fuzzes the other tool and runs the kills: a_tool keeps its result.
    later = results.Recorder(tmp_path, mode="custom")
    assert later.fuzz_cases("a_tool") == 10_000
    assert later.fuzz_cases("b_tool") == 0
    later.tool(_tally("b_tool", 40))
    later.phase(
        "kills", {"rounds": 3, "acknowledged": 9, "lost": 0, "unfindable": 0, "integrity_ok": True}
    )
    data = json.loads((tmp_path / "reliability.json").read_text())
    per_tool = data["fuzz"]["per_tool"]
    assert [per_tool[t]["cases"] for t in ("a_tool", "b_tool")] == [10_000, 40]
    assert per_tool["a_tool"]["mode"] == "long" and per_tool["b_tool"]["mode"] == "custom"
    assert all(per_tool[t]["commit"] and per_tool[t]["date"] for t in per_tool)
    assert data["kills"]["rounds"] == 3 and data["kills"]["commit"]
    report = (tmp_path / "reliability.md").read_text()
    assert "| `a_tool` | 10,000 | yes |" in report
    assert "| `b_tool` | 40 | no |" in report
    assert "1 tools at 10,000" in report


def test_resume_fuzzes_only_the_tools_short_of_the_plan(tmp_path: Path) -> None:
    out = tmp_path / "out"
    common = ["--phases", "fuzz", "--fuzz-cases", "8", "--out", str(out)]
    assert main([*common, "--tools", "get_status"]) == 0
    first = json.loads((out / "reliability.json").read_text())["fuzz"]["per_tool"]
    assert list(first) == ["get_status"] and first["get_status"]["cases"] == 8

    assert main([*common, "--tools", "get_status,get_memory", "--resume", "--jobs", "2"]) == 0
    second = json.loads((out / "reliability.json").read_text())["fuzz"]["per_tool"]
    assert second["get_status"] == first["get_status"]  # already at the plan: not rerun
    assert second["get_memory"]["cases"] == 8
    assert second["get_memory"]["server_alive_after"] is True


def _tally(tool: str, cases: int) -> dict[str, Any]:
    return {
        "tool": tool,
        "cases": cases,
        "outcomes": {"INVALID_PARAMETER": cases},
        "violations": [],
        "seconds": 1.0,
        "server_alive_after": True,
    }
