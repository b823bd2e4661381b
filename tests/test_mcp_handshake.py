"""The handshake answered before the MCP SDK loads (``memcore.mcp.handshake``), in process:
its answers equal the SDK server's own for every handshake protocol version and a range of
clients, what it accepts the SDK accepts, anything else is left to the SDK, and it needs
nothing from the SDK."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from typing import Any, TextIO, cast

import anyio
import anyio.from_thread
import pytest
from mcp.server.stdio import stdio_server
from mcp_types import version as sdk_versions

from memcore.mcp import stdio
from memcore.mcp.dispatch import Caller, Dispatcher
from memcore.mcp.handshake import (
    HAND_OFF,
    HANDSHAKE_PROTOCOL_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    EarlyAnswers,
)
from memcore.mcp.metrics import Metrics
from memcore.mcp.server import build_server
from memcore.tools.groups import load_registry
from memcore.tools.host import StoreHost
from memcore.tools.limits import Limits
from test_mcp_support.raw import initialize, notification, request

CLIENTS: dict[str, dict[str, Any]] = {
    "minimal": {"capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
    "claude-desktop-like": {
        "capabilities": {"roots": {"listChanged": True}, "sampling": {}},
        "clientInfo": {"name": "claude-ai", "version": "0.1.0"},
    },
    "everything": {
        "capabilities": {
            "roots": {"listChanged": False},
            "sampling": {"context": {}, "tools": {}},
            "elicitation": {"form": {}, "url": {}},
            "tasks": {"list": {}, "cancel": {}, "requests": {"sampling": {"createMessage": {}}}},
            "experimental": {"x": {"any": [1, "two"]}},
            "extensions": {"io.example/ext": {}},
            "unknownCapability": 5,
        },
        "clientInfo": {
            "name": "full",
            "version": "2",
            "title": "Full client",
            "description": "Declares everything",
            "websiteUrl": "https://example.com",
        },
    },
}


def _dispatcher(profile: str) -> Dispatcher:
    tools = load_registry().select(profile)
    host = StoreHost(lambda: pytest.fail("the store must not open"))
    return Dispatcher(tools, host, limits=Limits(1 << 20, 1000), metrics=Metrics(), timeout=1)


def _sdk_server(dispatcher: Dispatcher) -> Any:
    # The store is never needed: nothing here calls a tool (the lifespan closes the host,
    # which was never started).
    host = StoreHost(lambda: pytest.fail("the store must not open"))
    caller = Caller(namespace="default", admin=True, principal="test")
    return build_server(dispatcher, host, lambda ctx: caller)


def _number_exact(text: str) -> Any:
    # 1 and 1.0 parse equal in Python; keep the literal so a changed number type shows.
    return json.loads(text, parse_int=lambda s: ("int", s), parse_float=lambda s: ("float", s))


async def _sdk_replies(dispatcher: Dispatcher, lines: list[str], count: int) -> list[str]:
    """What the SDK's own stdio server writes for ``lines`` (its ``count`` first lines)."""
    server = _sdk_server(dispatcher)
    written: list[str] = []
    more = anyio.Event()

    class Out:
        def write(self, text: str) -> int:
            written.append(text)
            if len(written) >= count:
                more.set()
            return len(text)

        def flush(self) -> None:
            pass

    class In:
        def __init__(self) -> None:
            self.lines = list(lines)

        def readline(self) -> str:
            if self.lines:
                return self.lines.pop(0)
            # Held open until the replies are in: the SDK drops requests in flight at EOF.
            anyio.from_thread.run(more.wait)
            return ""

    stdin, stdout = anyio.wrap_file(cast(TextIO, In())), anyio.wrap_file(cast(TextIO, Out()))
    with anyio.fail_after(20):
        async with stdio_server(stdin, stdout) as (read, write):
            await server.run(read, write, server.create_initialization_options())
    return written[:count]


def _early_replies(dispatcher: Dispatcher, lines: list[str]) -> list[str]:
    early = EarlyAnswers(dispatcher.tools)
    replies = []
    for line in lines:
        step = early.step(line)
        assert not step.hand_off, line
        if step.reply is not None:
            replies.append(step.reply)
    return replies


def test_the_versions_are_the_sdks() -> None:
    assert HANDSHAKE_PROTOCOL_VERSIONS == sdk_versions.HANDSHAKE_PROTOCOL_VERSIONS
    assert LATEST_HANDSHAKE_VERSION == sdk_versions.LATEST_HANDSHAKE_VERSION


@pytest.mark.parametrize("client", sorted(CLIENTS))
@pytest.mark.parametrize(
    "version", [*HANDSHAKE_PROTOCOL_VERSIONS, "2026-07-28", "1999-01-01", "not a version"]
)
def test_the_early_answers_are_the_sdks(version: str, client: str) -> None:
    dispatcher = _dispatcher("all")
    params = {"protocolVersion": version, **CLIENTS[client]}
    lines = [
        json.dumps(m) + "\n"
        for m in (
            request(0, "initialize", params),
            notification("notifications/initialized"),
            request(1, "tools/list"),
            request("two", "ping"),
            request(3, "tools/list", {"cursor": "ignored", "_meta": {"progressToken": 7}}),
            request(4, "ping", {}),
        )
    ]
    early = _early_replies(dispatcher, lines)
    sdk = anyio.run(_sdk_replies, dispatcher, lines, len(early))
    sdk_by_id = {json.loads(line)["id"]: _number_exact(line) for line in sdk}
    early_by_id = {json.loads(line)["id"]: _number_exact(line) for line in early}
    assert list(early_by_id) == [0, 1, "two", 3, 4]
    assert early_by_id == sdk_by_id
    # The initialize reply is byte for byte the SDK's (the fields are in the SDK's order).
    assert early[0] == sdk[0] and sdk[0].endswith("}\n")
    negotiated = version if version in HANDSHAKE_PROTOCOL_VERSIONS else "2025-11-25"
    assert json.loads(early[0])["result"]["protocolVersion"] == negotiated


@pytest.mark.parametrize(
    "params",
    [
        None,
        {},
        {"protocolVersion": 2025, **CLIENTS["minimal"]},
        {"protocolVersion": "2025-11-25", "capabilities": {}},
        {"protocolVersion": "2025-11-25", "capabilities": [], "clientInfo": {"name": "c"}},
        {"protocolVersion": "2025-11-25", **CLIENTS["minimal"], "_meta": {"progressToken": 1}},
        {"protocolVersion": "2025-11-25", **CLIENTS["minimal"], "extra": True},
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {"sampling": None},
            "clientInfo": {"name": "c", "version": "1"},
        },
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {"roots": {"listChanged": "yes"}},
            "clientInfo": {"name": "c", "version": "1"},
        },
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {"form": {"x": 1}}},
            "clientInfo": {"name": "c", "version": "1"},
        },
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1", "icons": [{"src": "x.png"}]},
        },
    ],
)
def test_an_initialize_not_certainly_valid_is_left_to_the_sdk(params: Any) -> None:
    step = EarlyAnswers([]).step(json.dumps(request(1, "initialize", params)))
    assert step == HAND_OFF


@pytest.mark.parametrize(
    "message",
    [
        request(1, "tools/list"),  # before initialize: the SDK refuses it
        request(1, "ping"),  # the first request decides the protocol era
        request(1, "server/discover", {"_meta": {"io.modelcontextprotocol/protocolVersion": 1}}),
        {"jsonrpc": "2.0", "id": 1.5, "method": "initialize", "params": {}},
        {**initialize(), "jsonrpc": "1.0"},
        {**initialize(), "extra": 1},
        {**initialize(), "id": True},
        {**initialize(), "id": None},
        {**initialize(), "id": "\ud800"},  # not writable back as UTF-8
        {**initialize(), "id": 2**64},
    ],
)
def test_a_first_request_other_than_a_clean_initialize_goes_to_the_sdk(
    message: dict[str, Any],
) -> None:
    assert EarlyAnswers([]).step(json.dumps(message)) == HAND_OFF


@pytest.mark.parametrize(
    "message",
    [
        request(2, "tools/call", {"name": 5, "arguments": {}}),
        request(2, "tools/call", {"name": "get_status", "arguments": []}),
        request(2, "tools/call", {"name": "get_status", "task": {}}),
        request(2, "tools/call", {"name": "x", "_meta": {"io.modelcontextprotocol/y": 1}}),
        request(2, "tools/list", {"cursor": 5}),
        request(2, "tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": "x"}}),
        request(2, "ping", {"cursor": "x"}),
        request(2, "initialize", initialize()["params"]),
        request(2, "resources/list"),
    ],
)
def test_after_initialize_only_tools_list_ping_and_clean_calls_are_taken(
    message: dict[str, Any],
) -> None:
    early = EarlyAnswers([])
    assert early.step(json.dumps(initialize())).reply is not None
    assert early.step(json.dumps(message)) == HAND_OFF


@pytest.mark.parametrize(
    ("params", "arguments"),
    [
        ({"name": "get_status", "arguments": {}}, {}),
        ({"name": "recall"}, None),
        ({"name": "recall", "arguments": {"query": "x"}, "_meta": {"progressToken": 7}}, None),
    ],
)
def test_a_clean_tool_call_after_initialize_is_run_early(
    params: dict[str, Any], arguments: dict[str, Any] | None
) -> None:
    early = EarlyAnswers([])
    early.step(json.dumps(initialize()))
    step = early.step(json.dumps(request("c", "tools/call", params)))
    assert (step.reply, step.replay, step.hand_off) == (None, False, False)
    assert step.call is not None
    assert (step.call.request_id, step.call.name) == ("c", params["name"])
    assert step.call.arguments == params.get("arguments")


@pytest.mark.parametrize(
    "line", ["", "   ", '{"jsonrpc": "2.0", "id": 5, "result": {}}', '{"method": "x/y"}']
)
def test_blank_lines_and_responses_are_passed_on_unanswered(line: str) -> None:
    # The SDK skips a blank line and matches a response to nothing, as it would after the
    # handshake; the handshake itself is still answered at once.
    early = EarlyAnswers([])
    step = early.step(line)
    assert (step.reply, step.replay, step.hand_off) == (None, True, False)
    assert early.step(json.dumps(initialize())).reply is not None
    assert early.step(line) == step


@pytest.mark.parametrize(
    "line",
    ["not json", "[1, 2]", '{"jsonrpc": "2.0", "id": NaN}', '{"jsonrpc":"2.0","id":5}', "{}"],
)
def test_malformed_lines_are_handed_to_the_sdk_phase(line: str) -> None:
    # Each is due a JSON-RPC error (parse error, invalid request), written by the transport
    # once the SDK has loaded; answering anything after it early would reorder nothing, but
    # the client waits for that error, so the early answers end.
    assert EarlyAnswers([]).step(line) == HAND_OFF


def test_notifications_are_passed_on_and_answers_keep_their_ids() -> None:
    early = EarlyAnswers(load_registry().select("core"))
    first = early.step(json.dumps(initialize("a-string-id")))
    assert first.replay and first.reply is not None
    assert json.loads(first.reply)["id"] == "a-string-id" and early.initialize_id == "a-string-id"
    note = early.step(json.dumps(notification("notifications/initialized")))
    assert (note.reply, note.replay, note.hand_off) == (None, True, False)
    listing = early.step(json.dumps(request(2**40, "tools/list")))
    assert not listing.replay and listing.reply is not None
    assert json.loads(listing.reply)["id"] == 2**40


def test_the_early_answers_need_nothing_from_the_sdk() -> None:
    probe = (
        "import sys, json\n"
        "from memcore.mcp import main, stdio\n"
        "from memcore.mcp.handshake import EarlyAnswers\n"
        "early = EarlyAnswers(main.load_registry().select('all'))\n"
        "init = {'protocolVersion': '2025-11-25', 'capabilities': {},"
        " 'clientInfo': {'name': 'c', 'version': '1'}}\n"
        "assert early.step(json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': 'initialize',"
        " 'params': init})).reply\n"
        'assert early.step(\'{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}\').reply\n'
        "print(sorted(n for n in sys.modules if n.split('.')[0] in"
        " ('mcp', 'mcp_types', 'pydantic', 'pydantic_core', 'starlette', 'httpx2')))"
    )
    found = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert found.stdout.strip() == "[]"


def test_only_the_sdks_reply_to_the_early_initialize_is_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    early = EarlyAnswers([])
    early.step(json.dumps(initialize(1)))
    out = io.StringIO()
    sdk_stdout = stdio._DropReply(out, early)
    same = json.dumps({"jsonrpc": "2.0", "id": 1, "result": early.initialize_result})
    other_id = json.dumps({"jsonrpc": "2.0", "id": "1", "result": {}})
    for line in (other_id, same, same):
        sdk_stdout.write(line + "\n")
    assert out.getvalue().splitlines() == [other_id, same]
    assert not caplog.records

    # An SDK whose answer differs (an upgrade changed the handshake) is logged, still once.
    early = EarlyAnswers([])
    early.step(json.dumps(initialize("init")))
    sdk_stdout = stdio._DropReply(io.StringIO(), early)
    sdk_stdout.write(json.dumps({"jsonrpc": "2.0", "id": "init", "result": {"x": 1}}) + "\n")
    (record,) = caplog.records
    assert record.levelname == "WARNING" and "differs" in record.getMessage()
