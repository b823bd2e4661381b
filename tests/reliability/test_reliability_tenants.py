"""Per-tenant limits over real HTTP: a tenant flooding the server with sessions or requests
spends only its own caps (the oldest idle session ends for a new one; an empty request
bucket answers 429 with Retry-After) while another tenant is served as ever."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx2
import pytest

from memcore.mcp.tenancy import TokenBucket
from memcore.settings.tokens import add_token
from test_mcp_support import free_port, http_session, server_env, start_http_server, stop

MAX_SESSIONS = 4
FLOOD = 12  # initialize requests from one tenant, never closed
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "flood", "version": "1"},
    },
}


class Server:
    def __init__(self, base: str, tokens: dict[str, tuple[str, str]]) -> None:
        self.base, self.tokens = base, tokens  # tenant -> (token, token id)

    def post(self, tenant: str, body: dict[str, Any], **headers: str) -> httpx2.Response:
        auth = {"authorization": f"Bearer {self.tokens[tenant][0]}"}
        return httpx2.post(
            f"{self.base}/mcp", json=body, headers={**HEADERS, **auth, **headers}, timeout=30
        )

    def metric(self, name: str, tenant: str) -> int:
        text = httpx2.get(f"{self.base}/metrics", timeout=30).text
        found = re.search(rf'^{name}{{tenant="{self.tokens[tenant][1]}"}} (\d+)$', text, re.M)
        assert found, text
        return int(found.group(1))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("reliability-tenants")
    auth_file = home / "tokens.json"
    tokens = {}
    for tenant in ("flooder", "bystander", "busy"):
        token, entry = add_token(auth_file, tenant)
        tokens[tenant] = (token, entry.id)
    port = free_port()
    args = [
        *("--data-dir", str(home / "store"), "--model", "none", "--tools", "core"),
        *("--auth-file", str(auth_file), "--max-sessions-per-token", str(MAX_SESSIONS)),
        # One request a second after a burst of 40: the flood below fits in the burst, and
        # the rate test drains it whatever the machine's speed.
        *("--rate-limit", "1", "--rate-burst", "40"),
    ]
    proc = start_http_server(args, server_env(home), home / "server.log", port)
    yield Server(f"http://127.0.0.1:{port}", tokens)
    assert stop(proc) == 0


def _call(server: Server, tenant: str, session: str) -> httpx2.Response:
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
    call["params"] = {"name": "get_status", "arguments": {}}
    return server.post(tenant, call, **{"mcp-session-id": session})


def test_a_session_flood_stays_within_the_tenants_cap(server: Server) -> None:
    opened = []
    for _ in range(FLOOD):
        response = server.post("flooder", INITIALIZE)
        assert response.status_code == 200, response.text
        opened.append(response.headers["mcp-session-id"])
    assert len(set(opened)) == FLOOD

    assert server.metric("memcore_http_sessions", "flooder") == MAX_SESSIONS
    assert server.metric("memcore_http_sessions_evicted_total", "flooder") == FLOOD - MAX_SESSIONS
    # The oldest idle sessions were ended, the newest still serve.
    assert _call(server, "flooder", opened[0]).status_code == 404
    assert _call(server, "flooder", opened[-1]).status_code == 200

    # The other tenant opens a session and works as if nothing happened.
    with http_session(f"{server.base}/mcp", server.tokens["bystander"][0], mode="legacy") as b:
        assert b.ok("store_memory", {"content": "bystanders are served"})["id"]
        assert server.metric("memcore_http_sessions", "bystander") == 1
    assert server.metric("memcore_http_sessions", "flooder") == MAX_SESSIONS


def test_a_tenant_over_its_rate_gets_429_and_another_is_served(server: Server) -> None:
    refused = None
    for _ in range(200):
        response = server.post("flooder", INITIALIZE)
        if response.status_code == 429:
            refused = response
            break
        assert response.status_code == 200
    assert refused is not None, "the bucket never ran dry"
    assert int(refused.headers["retry-after"]) >= 1
    assert refused.json()["error"]["code"] == "RESOURCE_BUSY"
    assert server.metric("memcore_http_rate_limited_total", "flooder") >= 1
    assert server.metric("memcore_http_sessions", "flooder") <= MAX_SESSIONS

    # Meanwhile the bystander's bucket is its own.
    response = server.post("bystander", INITIALIZE)
    assert response.status_code == 200
    assert _call(server, "bystander", response.headers["mcp-session-id"]).status_code == 200


def test_a_tenant_whose_sessions_are_all_busy_gets_429(server: Server) -> None:
    sessions = [server.post("busy", INITIALIZE).headers["mcp-session-id"] for _ in range(4)]
    token = server.tokens["busy"][0]
    headers = {"accept": "text/event-stream", "authorization": f"Bearer {token}"}
    with ExitStack() as streams, httpx2.Client(timeout=30) as http:
        # An open event stream keeps its session busy: none may be ended for a new one.
        for session in sessions:
            stream = http.stream(
                "GET", f"{server.base}/mcp", headers={**headers, "mcp-session-id": session}
            )
            assert streams.enter_context(stream).status_code == 200
        refused = server.post("busy", INITIALIZE)
        assert refused.status_code == 429
        assert refused.json()["error"]["code"] == "RESOURCE_BUSY"
        assert refused.headers["retry-after"] == "1"
    # Once the streams are closed the sessions are idle again, and the oldest gives way.
    deadline = time.monotonic() + 30
    while (response := server.post("busy", INITIALIZE)).status_code == 429:
        assert time.monotonic() < deadline, response.text
        time.sleep(0.2)
    assert response.status_code == 200
    assert server.metric("memcore_http_sessions", "busy") == MAX_SESSIONS


def test_the_bucket_refills_at_its_rate_up_to_its_burst() -> None:
    bucket = TokenBucket(rate=2.0, burst=3, now=100.0)
    assert [bucket.take(100.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.take(100.0) == pytest.approx(0.5)  # one request every half second
    assert bucket.take(100.5) == 0.0
    assert bucket.take(100.5) == pytest.approx(0.5)
    # A long pause refills to the burst, never beyond.
    assert [bucket.take(1000.0) for _ in range(4)][:3] == [0.0, 0.0, 0.0]
    assert bucket.take(1000.0) > 0.0


@pytest.fixture(scope="module")
def short_idle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("reliability-idle")
    auth_file = home / "tokens.json"
    token, entry = add_token(auth_file, "sleeper")
    port = free_port()
    args = [
        *("--data-dir", str(home / "store"), "--model", "none", "--tools", "core"),
        *("--auth-file", str(auth_file), "--session-idle-timeout", "1"),
    ]
    proc = start_http_server(args, server_env(home), home / "server.log", port)
    yield Server(f"http://127.0.0.1:{port}", {"sleeper": (token, entry.id)})
    assert stop(proc) == 0


def test_an_idle_session_ends_and_is_no_longer_counted(short_idle: Server) -> None:
    session = short_idle.post("sleeper", INITIALIZE).headers["mcp-session-id"]
    assert short_idle.metric("memcore_http_sessions", "sleeper") == 1
    # Waiting longer than the timeout only ever makes the outcome surer.
    deadline = time.monotonic() + 30
    while short_idle.metric("memcore_http_sessions", "sleeper") and time.monotonic() < deadline:
        time.sleep(0.5)
    assert short_idle.metric("memcore_http_sessions", "sleeper") == 0
    assert _call(short_idle, "sleeper", session).status_code == 404
