"""The MCP server over streamable HTTP on loopback: bearer tokens mapped to namespaces,
tenants that cannot see or touch each other's data, body-size limits, /healthz, /metrics,
concurrent clients, and content kept out of the logs. One server serves the module."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from anyio.from_thread import start_blocking_portal
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from memcore.settings.tokens import add_token, load
from test_mcp_support import (
    ALL_TOOLS,
    CORE_TOOLS,
    REPO_ROOT,
    SyncClient,
    free_port,
    http_session,
    payload_of,
    server_env,
    start_http_server,
    stop,
)

EXTRA = [
    "get_memory",
    "update_memory",
    "delete_memory",
    "list_memories",
    "reset_all_memory",
    "open_nodes",
    "record_turn",
    "read_document",
    "memory_after_turn",
    "memory_list_dir_with_abstract",
    "index_project",
]
PROFILE = ",".join(["core", *EXTRA])
BODY_LIMIT = 65_536
SECRET = "the vault code is 7431"


class Server:
    """The module's server: its URL, its tokens and its log."""

    def __init__(self, url: str, tokens: dict[str, str], log: Path) -> None:
        self.url, self.tokens, self.log = url, tokens, log

    @property
    def base(self) -> str:
        return self.url.removesuffix("/mcp")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("mcp-http")
    auth_file = home / "tokens.json"
    tokens = {
        "alice": add_token(auth_file, "alice")[0],
        "bob": add_token(auth_file, "bob")[0],
        "admin": add_token(auth_file, "ops", admin=True, label="operator")[0],
    }
    port = free_port()
    args = [
        *("--data-dir", str(home / "store"), "--model", "none", "--tools", PROFILE),
        *("--auth-file", str(auth_file), "--max-request-bytes", str(BODY_LIMIT)),
    ]
    log = home / "server.log"
    proc = start_http_server(args, server_env(home), log, port)
    yield Server(f"http://127.0.0.1:{port}/mcp", tokens, log)
    assert stop(proc) == 0


@pytest.fixture
def alice(server: Server) -> Iterator[SyncClient]:
    with http_session(server.url, server.tokens["alice"]) as client:
        yield client


@pytest.fixture
def bob(server: Server) -> Iterator[SyncClient]:
    with http_session(server.url, server.tokens["bob"], mode="legacy") as client:
        yield client


def _post(server: Server, body: bytes | dict[str, Any], **headers: str) -> httpx2.Response:
    base = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    if isinstance(body, dict):
        return httpx2.post(server.url, json=body, headers={**base, **headers}, timeout=30)
    return httpx2.post(server.url, content=body, headers={**base, **headers}, timeout=30)


_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}


# -- tokens ------------------------------------------------------------------------------------


def test_tokens_are_stored_as_hashes(server: Server) -> None:
    stored = (Path(server.log).parent / "tokens.json").read_text()
    for token in server.tokens.values():
        assert token.startswith("mct_") and token not in stored
    entries = load(Path(server.log).parent / "tokens.json")
    assert [(e.namespace, e.admin) for e in entries] == [
        ("alice", False),
        ("bob", False),
        ("ops", True),
    ]


@pytest.mark.parametrize("authorization", [None, "Bearer mct_not-a-token", "Basic abc"])
def test_requests_without_a_valid_token_get_401(server: Server, authorization: str | None) -> None:
    headers = {"authorization": authorization} if authorization else {}
    response = _post(server, _INITIALIZE, **headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert response.json()["error"]["code"] == "UNAUTHORIZED"


def test_the_sdk_client_without_a_token_cannot_connect(server: Server) -> None:
    with pytest.raises(ExceptionGroup) as refused, http_session(server.url, None):
        pass
    assert refused.group_contains(MCPError, depth=None)


#: Tools only admin callers may call: a tenant's tools/list leaves them out.
ADMIN_ONLY = {"index_project", "reset_all_memory"}


def test_tools_list_follows_the_profile_and_the_callers_rights(
    server: Server, alice: SyncClient
) -> None:
    chosen = {*CORE_TOOLS, *EXTRA}
    assert chosen >= ADMIN_ONLY
    with http_session(server.url, server.tokens["admin"]) as admin:
        assert admin.tool_names() == [name for name in ALL_TOOLS if name in chosen]
    # A tenant is not offered what it would be refused (it is still refused if it asks).
    assert alice.tool_names() == [name for name in ALL_TOOLS if name in chosen - ADMIN_ONLY]


# -- tenants -----------------------------------------------------------------------------------


def test_tenants_cannot_read_or_change_each_others_memories(
    alice: SyncClient, bob: SyncClient
) -> None:
    mine = alice.ok("store_memory", {"content": f"Alice says {SECRET}"})
    assert mine["created"]["namespace"] == "alice"
    theirs = bob.ok("store_memory", {"content": "Bob keeps bees"})
    assert theirs["created"]["namespace"] == "bob"

    assert bob.ok("search_memories", {"query": "vault code"})["memories"] == []
    assert bob.ok("recall", {"query": "vault code alice"})["results"] == []
    assert bob.ok("list_memories", {"limit": 500})["memories"][0]["content"] == "Bob keeps bees"
    alice_id = mine["id"]
    for tool, arguments in [
        ("get_memory", {"memory_id": alice_id}),
        ("update_memory", {"memory_id": alice_id, "content": "overwritten"}),
        ("delete_memory", {"memory_id": alice_id}),
        ("invalidate", {"memory_id": alice_id}),
        ("supersede_memory", {"old_memory_id": alice_id, "new_memory_id": theirs["id"]}),
    ]:
        assert bob.error(tool, arguments)["code"] == "MEMORY_NOT_FOUND", tool

    assert alice.ok("get_memory", {"memory_id": alice_id})["content"] == f"Alice says {SECRET}"
    found = alice.ok("search_memories", {"query": "vault code"})["memories"]
    assert [m["id"] for m in found] == [alice_id]
    assert alice.ok("get_status")["namespace"] == "alice"
    assert "path" not in alice.ok("get_status")["store"]


def test_tenants_have_their_own_graph_and_log(alice: SyncClient, bob: SyncClient) -> None:
    request = {
        "entities": [
            {
                "name": name,
                "entityType": "Person",
                "observations": [f"{name} guards the vault"],
                "relations": [{"targetEntity": other, "relationType": "knows"}],
            }
            for name, other in (("Mallory", "Trent"), ("Trent", "Mallory"))
        ],
        "threadId": "secrets",
    }
    assert alice.ok("save_memory", request)["quality_score"] == 0.75  # one relation each
    assert bob.ok("search_nodes", {"query": "guards the vault"})["entities"] == []
    assert bob.ok("open_nodes", {"names": ["Mallory"]})["entities"] == []
    assert bob.error("get_related", {"entityName": "Mallory"})["code"] == "NOT_FOUND"
    turn = {"session_id": "s", "turn_id": "t", "input_items": SECRET, "output_items": "ok"}
    assert alice.ok("memory_after_turn", turn)["created"] is True
    assert bob.ok("memory_after_turn", turn)["created"] is True  # bob's own session "s"
    listing = bob.ok("memory_list_dir_with_abstract", {"depth": 8})
    assert all(s["path"].startswith("/bob") for s in listing["summaries"])


def test_tenants_cannot_reach_the_servers_files_or_other_projects(
    alice: SyncClient, tmp_path: Path
) -> None:
    secret = tmp_path / "server-secret.txt"
    secret.write_text(SECRET)
    error = alice.error("index_project", {"path": str(tmp_path)})
    assert error["code"] == "UNAUTHORIZED" and "admin" in error["message"]
    error = alice.error("read_document", {"path": str(secret), "include_content": True})
    assert (error["code"], error["details"]) == ("UNAUTHORIZED", {"field": "path"})
    sent = alice.ok("read_document", {"path": str(secret), "content": "what alice has"})
    assert "content" not in sent and sent["size"] == len("what alice has")
    turn = {
        "conversation_id": "c",
        "user_text": "read it",
        "procedures": [{"tool": "READ", "documents": [str(secret)]}],
    }
    error = alice.error("record_turn", turn)
    assert error["details"] == {"field": "procedures[0].documents[0]"}
    turn = {"session_id": "s", "turn_id": "t", "input_items": "x", "output_items": "y"}
    for tool, arguments in (
        ("memory_after_turn", turn),
        ("memory_list_dir_with_abstract", {}),
    ):
        error = alice.error(tool, {**arguments, "project": "bob"})
        assert (error["code"], error["details"]) == ("UNAUTHORIZED", {"field": "project"}), tool
    mine = {"project": "alice", "all_namespaces": True}
    assert alice.error("memory_list_dir_with_abstract", mine)["code"] == "UNAUTHORIZED"


def test_a_session_cannot_be_used_with_another_tenants_token(server: Server) -> None:
    opened = _post(server, _INITIALIZE, authorization=f"Bearer {server.tokens['alice']}")
    assert opened.status_code == 200
    session = opened.headers["mcp-session-id"]
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "list_memories", "arguments": {}},
    }
    stolen = _post(
        server,
        call,
        authorization=f"Bearer {server.tokens['bob']}",
        **{"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"},
    )
    assert stolen.status_code == 404


@pytest.mark.parametrize(
    ("params", "field"),
    [({"name": "get_status", "arguments": [1, 2]}, "arguments"), ({"name": 7}, "name")],
)
def test_a_malformed_call_envelope_is_a_tool_error(
    server: Server, params: dict[str, Any], field: str
) -> None:
    # The SDK would answer these with a JSON-RPC protocol error; the model must see ours.
    auth = {"authorization": f"Bearer {server.tokens['alice']}"}
    session = _post(server, _INITIALIZE, **auth).headers["mcp-session-id"]
    headers = {**auth, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
    result = _post(server, call, **headers).json()["result"]
    assert result["isError"] is True
    error = result["structuredContent"]["error"]
    assert (error["code"], error["details"]) == ("INVALID_PARAMETER", {"field": field})


def test_store_wide_tools_need_an_admin_token(server: Server, alice: SyncClient) -> None:
    alice.ok("store_memory", {"content": "kept through a refused reset"})
    error = alice.error("reset_all_memory", {"confirm": True})
    assert error["code"] == "UNAUTHORIZED"
    assert alice.ok("get_status")["counts"]["memories"] >= 1


# -- limits, health, metrics, logs ---------------------------------------------------------------


def test_a_body_over_the_limit_is_413_payload_too_large(server: Server) -> None:
    response = _post(server, b"{" + b" " * BODY_LIMIT + b"}")
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"


def test_too_many_items_is_payload_too_large(alice: SyncClient) -> None:
    error = alice.error("store_memory", {"content": "x", "metadata": {"ids": list(range(1001))}})
    assert error["code"] == "PAYLOAD_TOO_LARGE"


def test_healthz(server: Server) -> None:
    response = httpx2.get(f"{server.base}/healthz", timeout=10)
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "store": "open"}


def test_metrics_count_calls_by_tool_and_status(server: Server, alice: SyncClient) -> None:
    alice.ok("store_memory", {"content": "counted"})
    alice.error("get_memory", {"memory_id": "mem_missing"})
    _post(server, _INITIALIZE)
    text = httpx2.get(f"{server.base}/metrics", timeout=10).text
    assert re.search(r'memcore_tool_calls_total\{tool="store_memory",status="ok"\} [1-9]', text)
    assert 'memcore_tool_calls_total{tool="get_memory",status="MEMORY_NOT_FOUND"}' in text
    assert "# TYPE memcore_tool_call_duration_seconds histogram" in text
    assert 'memcore_tool_call_duration_seconds_bucket{tool="store_memory",le="+Inf"}' in text
    assert 'memcore_tool_call_duration_seconds_count{tool="store_memory"}' in text
    assert re.search(r'memcore_http_rejected_total\{reason="unauthorized"\} [1-9]', text)
    assert "memcore_store_open 1.0" in text


def test_concurrent_clients(server: Server) -> None:
    async def one(worker: int) -> list[bool]:
        headers = {"Authorization": f"Bearer {server.tokens['bob']}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            transport = streamable_http_client(server.url, http_client=http)
            async with Client(transport) as client:
                outcomes = []
                for i in range(10):
                    stored = await client.call_tool(
                        "store_memory", {"content": f"worker {worker} fact {i}"}
                    )
                    found = await client.call_tool("recall", {"query": f"worker {worker}"})
                    outcomes += [not stored.is_error, not found.is_error]
                return outcomes

    async def everyone() -> list[bool]:
        results: list[bool] = []

        async def run(worker: int) -> None:
            results.extend(await one(worker))

        async with anyio.create_task_group() as group:
            for worker in range(8):
                group.start_soon(run, worker)
        return results

    with start_blocking_portal("asyncio") as portal:
        results = portal.call(everyone)
    assert len(results) == 160 and all(results)
    with http_session(server.url, server.tokens["bob"]) as bob:
        listed = bob.ok("list_memories", {"limit": 500})["memories"]
        assert sum(m["content"].startswith("worker ") for m in listed) == 80


def test_memory_content_never_reaches_the_log(server: Server, alice: SyncClient) -> None:
    alice.ok("search_memories", {"query": SECRET})
    alice.error("store_memory", {"content": SECRET, "bogus": True})
    log = server.log.read_text()
    assert '"tool": "store_memory"' in log  # the failed call was logged ...
    assert SECRET not in log  # ... without what was said
    for token in server.tokens.values():
        assert token not in log


def test_a_public_bind_without_tokens_is_refused(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "memcore.mcp", "--transport", "http", "--host", "0.0.0.0"],
        env=server_env(tmp_path),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    assert "Refusing to serve HTTP on 0.0.0.0 without bearer tokens" in result.stderr


def test_zz_admin_reset_wipes_every_namespace(server: Server, alice: SyncClient) -> None:
    # Named to run last in the module: it empties the shared server's store.
    assert alice.ok("get_status")["counts"]["memories"] >= 1
    with http_session(server.url, server.tokens["admin"]) as admin:
        assert admin.ok("reset_all_memory", {"confirm": True})["success"] is True
        assert "path" in admin.ok("get_status")["store"]
    assert alice.ok("get_status")["counts"]["memories"] == 0
    result = alice.call("search_memories", {"query": "vault"})
    assert payload_of(result)["memories"] == []
