"""The stdio server answers the handshake before the MCP SDK has loaded, then hands the
session to the SDK without a client noticing: the SDK's import is held back by a gate file
(``GATED_SDK_LAUNCHER``), so what is answered while the gate is closed was answered early,
deterministically. Driven with the SDK's own client in handshake mode and with raw lines
(each request answered exactly once, in the SDK's words)."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from test_mcp_support import CORE_TOOLS, server_env, stdio_server
from test_mcp_support.raw import (
    GATED_SDK_LAUNCHER,
    SDK_ONLY_LAUNCHER,
    RawServer,
    initialize,
    notification,
    request,
)

ARGS = ["--model", "none", "--log-level", "debug"]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture
def gate(home: Path) -> Path:
    return home / "sdk-gate"


@pytest.fixture
def gated(home: Path, gate: Path) -> Iterator[RawServer]:
    """A server whose SDK stays unloaded until the test creates ``gate``."""
    command = ["-c", GATED_SDK_LAUNCHER, str(gate), "--data-dir", str(home / "store"), *ARGS]
    server = RawServer(command, server_env(home), home / "server.log")
    yield server
    server.kill()


def _sdk_loaded(log: Path, timeout: float = 120.0) -> None:
    """Until the server logged the SDK's import: opening the gate only lets the import
    start, and on a loaded machine it takes seconds, during which the early path still
    answers."""
    deadline = time.monotonic() + timeout
    while "MCP SDK imported" not in (log.read_text() if log.exists() else ""):
        assert time.monotonic() < deadline, "the SDK did not finish importing"
        time.sleep(0.05)


def _by_id(replies: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    ids = [reply["id"] for reply in replies]
    assert len(ids) == len(set(ids)), f"a request was answered twice: {ids}"
    return {reply["id"]: reply for reply in replies}


# ping exists only in the handshake era, which this client speaks (mode="legacy").
@pytest.mark.filterwarnings("ignore:ping is removed:mcp.shared.exceptions.MCPDeprecationWarning")
def test_the_sdk_client_gets_the_handshake_and_tools_before_the_sdk_loads(
    home: Path, gate: Path
) -> None:
    args = ["--data-dir", str(home / "store"), *ARGS]
    launcher = ["-c", GATED_SDK_LAUNCHER, str(gate)]
    with stdio_server(
        args, server_env(home), home / "server.log", launcher=launcher, mode="legacy"
    ) as client:
        early_tools = client.tools()
        assert list(early_tools) == CORE_TOOLS
        client.portal.call(client.client.send_ping)
        gate.touch()  # all of the above was answered without the SDK
        _sdk_loaded(home / "server.log")
        status = client.ok("get_status")
        assert status["store"]["status"] in ("opening", "open")
        assert client.tools() == early_tools  # now the SDK's answer: the same
    log = (home / "server.log").read_text()
    assert "MCP SDK imported" in log
    assert "initialize reply differs" not in log  # the SDK's own reply, dropped, was equal


def test_pipelined_requests_are_each_answered_once(gated: RawServer, gate: Path) -> None:
    gated.send(
        initialize(1),
        notification("notifications/initialized"),
        request(2, "tools/list"),
        request(3, "ping"),
        request(4, "tools/call", {"name": "no_such_tool", "arguments": {}}),
        request(5, "tools/list"),
        request(6, "ping"),
    )
    early = _by_id(gated.replies(6))
    assert set(early) == {1, 2, 3, 4, 5, 6}
    assert early[1]["result"]["serverInfo"]["name"] == "memcore"
    assert [t["name"] for t in early[2]["result"]["tools"]] == CORE_TOOLS
    assert early[3]["result"] == {}
    # memcore runs the tool call itself: no need to wait for the SDK.
    assert early[4]["result"]["isError"] is True
    assert early[4]["result"]["structuredContent"]["error"]["code"] == "INVALID_PARAMETER"
    assert early[5]["result"] == early[2]["result"] and early[6]["result"] == {}
    gate.touch()
    gated.send(request(7, "tools/list"))
    assert _by_id(gated.replies(1))[7]["result"] == early[2]["result"]
    status, rest = gated.finish()
    assert (status, rest) == (0, [])  # in particular, no second answer to initialize


def test_tool_calls_right_after_initialize_are_answered_before_the_sdk_loads(
    gated: RawServer, gate: Path
) -> None:
    # The issue this answers: the first tool call waited about a second for the SDK's
    # import, even get_status. Now it waits at most for the store.
    gated.send(
        initialize(7),
        request(8, "tools/call", {"name": "get_status", "arguments": {}}),
        request(9, "tools/call", {"name": "store_memory", "arguments": {"content": "early"}}),
        request(10, "tools/call", {"name": "recall", "arguments": {"query": "early"}}),
    )
    replies = _by_id(gated.replies(4))  # the SDK is still held back by the gate
    assert replies[8]["result"]["isError"] is False
    assert replies[8]["result"]["structuredContent"]["store"]["status"] in ("opening", "open")
    stored = replies[9]["result"]["structuredContent"]
    assert replies[9]["result"]["isError"] is False and stored["id"].startswith("mem_")
    recalled = replies[10]["result"]["structuredContent"]
    assert [r["id"] for r in recalled["results"]] == [stored["id"]]
    assert recalled["degraded"] == "keywords only: no embedding model"
    gate.touch()
    # The SDK's session saw the initialize answered early, so it serves the rest.
    gated.send(notification("notifications/initialized"), request(11, "tools/list"))
    assert gated.replies(1)[0]["id"] == 11
    assert gated.finish() == (0, [])


def test_a_malformed_first_line_is_answered_once_the_sdk_has_loaded(
    gated: RawServer, gate: Path
) -> None:
    # A line that is not JSON-RPC is due an error that the transport gives once the SDK has
    # loaded (see memcore.mcp.malformed): the early answers stop there, and the SDK answers
    # the handshake after it, each request once.
    gated.send("this is not json", "[1, 2]", initialize(1), request(2, "tools/list"))
    assert gated.silent_for(0.5)
    gate.touch()
    replies = gated.replies(4)
    errors = [r for r in replies if "error" in r]
    assert sorted(r["error"]["code"] for r in errors) == [-32700, -32600]
    assert all(r["id"] is None for r in errors)
    answered = _by_id([r for r in replies if "result" in r])
    assert set(answered) == {1, 2}
    assert gated.finish() == (0, [])


def test_a_first_request_other_than_initialize_is_the_sdks(gated: RawServer, gate: Path) -> None:
    gated.send(request(1, "tools/list"), initialize(2))
    assert gated.silent_for(0.5)
    gate.touch()
    replies = _by_id(gated.replies(2))
    # The SDK refuses a request before the handshake, as it always has.
    assert replies[1]["error"]["code"] == -32602 and "result" in replies[2]
    assert gated.finish() == (0, [])


def test_answers_are_the_same_without_the_early_path(home: Path, gate: Path) -> None:
    session = [
        initialize(1, version="2024-11-05"),
        notification("notifications/initialized"),
        request(2, "tools/list"),
        request("p", "ping"),
        "not json",
        request(3, "tools/call", {"name": "search", "arguments": {"query": 5}}),
        request(4, "tools/list", {"cursor": "x"}),
        request(
            6,
            "tools/call",
            {"name": "search_text", "arguments": {"query": "x"}, "_meta": {"progressToken": 1}},
        ),
        request(5, "resources/list"),
    ]
    answers = []
    for launcher in (["-c", SDK_ONLY_LAUNCHER], ["-c", GATED_SDK_LAUNCHER, str(gate)]):
        command = [*launcher, "--data-dir", str(home / "store"), *ARGS, "--tools", "all"]
        server = RawServer(command, server_env(home), home / "server.log")
        try:
            server.send(*session)
            first = server.replies(3)  # with the gate: the early answers
            gate.touch()
            # The rest, and the parse error (id null) for "not json".
            answers.append(_by_id(first + server.replies(5)))
            assert server.finish() == (0, [])
        finally:
            server.kill()
    sdk_only, early = answers
    assert set(early) == {None, 1, 2, "p", 3, 4, 5, 6}
    assert early == sdk_only


def test_a_signal_before_the_sdk_loads_stops_the_server(gated: RawServer, home: Path) -> None:
    gated.send(initialize(1))
    assert gated.replies(1)[0]["id"] == 1
    gated.proc.send_signal(signal.SIGTERM)
    assert gated.proc.wait(timeout=20) == 0
    assert "memcore MCP server stopped" in (home / "server.log").read_text()


# Prints to stdout and runs a child that writes to it, in the handshake and in a tool call.
STRAY_OUTPUT_LAUNCHER = """
import subprocess, sys
from memcore.mcp import dispatch, handshake
def stray(where):
    print("stray print", where, flush=True)
    subprocess.run(["echo", "stray child", where], check=True)
step, call = handshake.EarlyAnswers.step, dispatch.Dispatcher.call
def noisy_step(self, line):
    stray("early")
    return step(self, line)
async def noisy_call(self, *args):
    stray("call")
    return await call(self, *args)
handshake.EarlyAnswers.step, dispatch.Dispatcher.call = noisy_step, noisy_call
from memcore.mcp.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_stray_output_never_reaches_the_wire(home: Path) -> None:
    command = ["-c", STRAY_OUTPUT_LAUNCHER, "--data-dir", str(home / "store"), *ARGS]
    server = RawServer(command, server_env(home), home / "server.log")
    try:
        server.send(initialize(1), request(2, "tools/list"))
        server.send(request(3, "tools/call", {"name": "get_status", "arguments": {}}))
        replies = _by_id(server.replies(3))  # each line parses as JSON-RPC
        assert set(replies) == {1, 2, 3}
        assert server.finish() == (0, [])
    finally:
        server.kill()
    log = (home / "server.log").read_text()
    for text in ("stray print early", "stray child early", "stray print call", "stray child call"):
        assert text in log  # diverted to stderr
