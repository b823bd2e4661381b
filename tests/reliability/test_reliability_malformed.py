"""Malformed JSON-RPC gets an answer as the JSON-RPC 2.0 spec asks (-32700 parse error,
-32600 invalid request), a log line, and the server serves on: over real stdio (where the
SDK alone dropped such lines without a word) and over real HTTP. A path the operating system
refuses is the caller's INVALID_PARAMETER, not the store's STORAGE_ERROR."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from test_mcp_support import free_port, server_env, start_http_server, stop
from test_mcp_support.raw import RawServer, initialize, notification, request

PARSE_ERROR, INVALID_REQUEST = -32700, -32600
# (line, expected code, expected id): what the issue found unanswered, and the spec's cases.
MALFORMED: list[tuple[str, int, int | None]] = [
    ("not json at all", PARSE_ERROR, None),
    ('{"jsonrpc": "2.0", "id": 11, "method": "ping", "params": {"x": "\\ud800"}}', PARSE_ERROR, 11),
    (
        '{"jsonrpc": "2.0", "id": 12, "method": "ping", "params": {"a": '
        + "[" * 450
        + "]" * 450
        + "}}",
        PARSE_ERROR,
        12,
    ),
    (
        '{"jsonrpc": "2.0", "id": 13, "method": "ping", "params": {"n": ' + "7" * 5000 + "}}",
        PARSE_ERROR,
        None,
    ),
    ('{"jsonrpc": "2.0", "id": 14, "method": "ping"', PARSE_ERROR, None),
    ('{"jsonrpc": "2.0", "id": 15}', INVALID_REQUEST, 15),
    ('{"jsonrpc": "2.0", "id": 16, "method": 5}', INVALID_REQUEST, 16),
    ("[]", INVALID_REQUEST, None),
    ('"a string"', INVALID_REQUEST, None),
    ('{"hello": "world"}', INVALID_REQUEST, None),
]


def _server_args(home: Path) -> list[str]:
    return ["--data-dir", str(home / "store"), "--model", "none", "--tools", "all"]


def _log_entries(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]


def _assert_logged(log: Path, transport: str) -> None:
    rejected = [e for e in _log_entries(log) if e["msg"] == "malformed JSON-RPC message"]
    assert [(e["transport"], e["code"]) for e in rejected] == [
        (transport, code) for _, code, _ in MALFORMED
    ]
    assert all(e["level"] == "warning" and e["bytes"] > 0 for e in rejected)


# -- stdio ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stdio_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("reliability-malformed-stdio")


@pytest.fixture(scope="module")
def raw(stdio_home: Path) -> Iterator[RawServer]:
    command = ["-m", "memcore.mcp", *_server_args(stdio_home)]
    server = RawServer(command, server_env(stdio_home), stdio_home / "server.log")
    yield server
    server.kill()


def test_every_malformed_line_is_answered_and_the_server_serves_on(
    raw: RawServer, stdio_home: Path
) -> None:
    # Sent at once, right at start: the handshake may be answered before the SDK has
    # loaded, and the first malformed line hands everything after it to the SDK phase.
    lines: list[Any] = [initialize(1), notification("notifications/initialized")]
    for number, (line, _, _) in enumerate(MALFORMED):
        lines += [line, request(100 + number, "ping")]
    lines.append(request(99, "tools/call", {"name": "get_status", "arguments": {}}))
    raw.send(*lines)
    replies = raw.replies(2 + 2 * len(MALFORMED))

    answered = {r["id"]: r for r in replies if "result" in r}
    assert set(answered) == {1, 99, *(100 + n for n in range(len(MALFORMED)))}
    errors = sorted(
        ((r["error"]["code"], r["id"]) for r in replies if "error" in r),
        key=lambda pair: (pair[0], -1 if pair[1] is None else pair[1]),
    )
    expected = sorted(
        ((code, request_id) for _, code, request_id in MALFORMED),
        key=lambda pair: (pair[0], -1 if pair[1] is None else pair[1]),
    )
    assert errors == expected
    assert all(r["jsonrpc"] == "2.0" for r in replies)

    # A blank line carries no message: skipped, not answered.
    raw.send("", "   ", request(200, "ping"))
    assert raw.replies(1) == [{"jsonrpc": "2.0", "id": 200, "result": {}}]
    _assert_logged(stdio_home / "server.log", "stdio")


def test_a_lone_malformed_first_line_is_answered_without_more_input(stdio_home: Path) -> None:
    # Nothing follows it (no handshake, stdin left open): the answer must not wait for the
    # client's next line.
    command = ["-m", "memcore.mcp", *_server_args(stdio_home / "lone")]
    server = RawServer(command, server_env(stdio_home), stdio_home / "lone.log")
    try:
        server.send('{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"x": ')
        (reply,) = server.replies(1)
        assert reply["error"]["code"] == PARSE_ERROR and reply["id"] is None
        server.send(initialize(2))
        assert server.replies(1)[0]["id"] == 2
    finally:
        server.kill()


def test_an_impossible_project_path_is_invalid_parameter(raw: RawServer) -> None:
    too_long = "/" + "deep" * 1000  # 4,001 characters: ENAMETOOLONG from the OS
    arguments = {"name": "index_project", "arguments": {"path": too_long}}
    raw.send(request(300, "tools/call", arguments))
    (reply,) = raw.replies(1)
    assert reply["id"] == 300 and reply["result"]["isError"] is True
    error = reply["result"]["structuredContent"]["error"]
    assert error["code"] == "INVALID_PARAMETER"
    assert error["details"]["field"] == "path"
    assert len(error["message"]) < 400  # the path is cut short, not echoed whole


# -- HTTP -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def http_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("reliability-malformed-http")


@pytest.fixture(scope="module")
def http_url(http_home: Path) -> Iterator[str]:
    port = free_port()
    proc = start_http_server(
        _server_args(http_home), server_env(http_home), http_home / "server.log", port
    )
    yield f"http://127.0.0.1:{port}"
    assert stop(proc) == 0


_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def test_every_malformed_body_is_answered_over_http(http_url: str, http_home: Path) -> None:
    for line, code, request_id in MALFORMED:
        response = httpx2.post(
            f"{http_url}/mcp", content=line.encode(), headers=_HEADERS, timeout=30
        )
        assert response.status_code == 400, line[:40]
        assert response.json() == {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {"code": code, "message": response.json()["error"]["message"]},
        }
    _assert_logged(http_home / "server.log", "http")

    # The server serves on, and counts what it refused.
    hello = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "reliability", "version": "1"},
    }
    body = request(1, "initialize", hello)
    response = httpx2.post(f"{http_url}/mcp", json=body, headers=_HEADERS, timeout=30)
    assert response.status_code == 200 and "result" in response.json()
    metrics = httpx2.get(f"{http_url}/metrics", timeout=30).text
    assert f'memcore_http_rejected_total{{reason="malformed"}} {len(MALFORMED)}' in metrics


# -- lone surrogates in a tool call's arguments: INVALID_PARAMETER, not a parse error ---------

# (arguments of store_memory as JSON text, the field the error names)
UNENCODABLE_CALLS = [
    ('{"content": "caf\\udce9 au lait"}', "content"),
    ('{"content": "ok", "metadata": {"source": ["fine", "\\ud800"]}}', "metadata.source[1]"),
    ('{"content": "ok", "metadata": {"\\udfff": 1}}', "metadata['\\udfff']"),
]


def _unencodable_call(request_id: int, arguments: str) -> str:
    return (
        f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", '
        f'"params": {{"name": "store_memory", "arguments": {arguments}}}}}'
    )


def _assert_refused_by_name(reply: dict[str, Any], request_id: int, field: str) -> None:
    assert reply["id"] == request_id and reply["result"]["isError"] is True, reply
    error = reply["result"]["structuredContent"]["error"]
    assert error["code"] == "INVALID_PARAMETER", error
    assert error["details"] == {"field": field}, error
    assert error["message"].startswith(f"{field} is not valid Unicode: it holds a lone surrogate")


def test_a_lone_surrogate_in_arguments_is_refused_by_name_over_stdio(
    raw: RawServer, stdio_home: Path
) -> None:
    # `raw` has long loaded the SDK: its screen repairs the line for the SDK to read.
    for n, (arguments, field) in enumerate(UNENCODABLE_CALLS):
        raw.send(_unencodable_call(400 + n, arguments))
        _assert_refused_by_name(raw.replies(1)[0], 400 + n, field)
    # Right at start, answered before the SDK has loaded (handshake): the same answer.
    command = ["-m", "memcore.mcp", *_server_args(stdio_home / "early")]
    early = RawServer(command, server_env(stdio_home), stdio_home / "early.log")
    try:
        calls = [_unencodable_call(500 + n, a) for n, (a, _) in enumerate(UNENCODABLE_CALLS)]
        early.send(initialize(1), notification("notifications/initialized"), *calls)
        replies = {r["id"]: r for r in early.replies(1 + len(calls))}
        for n, (_, field) in enumerate(UNENCODABLE_CALLS):
            _assert_refused_by_name(replies[500 + n], 500 + n, field)
        for attempt in range(200):  # get_status answers while the store opens: no counts
            early.send(request(10 + attempt, "tools/call", {"name": "get_status"}))
            counts = early.replies(1)[0]["result"]["structuredContent"]["counts"]
            if counts is not None:
                break
            time.sleep(0.05)
        assert counts == {"memories": 0}, "nothing was stored"
    finally:
        early.kill()


def test_a_lone_surrogate_in_arguments_is_refused_by_name_over_http(http_url: str) -> None:
    hello = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "reliability", "version": "1"},
    }
    response = httpx2.post(
        f"{http_url}/mcp", json=request(1, "initialize", hello), headers=_HEADERS, timeout=30
    )
    headers = {**_HEADERS, "mcp-session-id": response.headers["mcp-session-id"]}
    httpx2.post(
        f"{http_url}/mcp",
        json=notification("notifications/initialized"),
        headers=headers,
        timeout=30,
    )
    for n, (arguments, field) in enumerate(UNENCODABLE_CALLS):
        body = _unencodable_call(600 + n, arguments).encode()
        response = httpx2.post(f"{http_url}/mcp", content=body, headers=headers, timeout=30)
        assert response.status_code == 200, response.text
        _assert_refused_by_name(response.json(), 600 + n, field)
