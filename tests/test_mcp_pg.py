"""Reading one's writes across MCP servers on one PostgreSQL database (docs/scale-out.md):
each write tool's result carries ``seq``, and a read tool on another server, given it as
``min_seq``, sees the write. Real servers over stdio with the MCP SDK's client; a real
PostgreSQL. The same tools on a SQLite store: no ``seq``, and ``min_seq`` never waits."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from test_mcp_support import SyncClient, server_env, stdio_server

#: What a read waits for its min_seq here: long enough for a follower on a busy machine,
#: short enough for the test of a seq that never comes.
WAIT = "3"


def _server(stack: ExitStack, home: Path, *extra: str) -> SyncClient:
    home.mkdir(parents=True, exist_ok=True)
    args = ["--data-dir", str(home / "data"), "--model", "none", "--tools", "all", *extra]
    return stack.enter_context(stdio_server(args, server_env(home), home / "server.log"))


@pytest.fixture
def two_nodes(pg_database: str, tmp_path: Path) -> Iterator[tuple[SyncClient, SyncClient]]:
    node = ("--database-url", pg_database, "--min-seq-wait", WAIT)
    with ExitStack() as stack:
        yield _server(stack, tmp_path / "a", *node), _server(stack, tmp_path / "b", *node)


def test_a_write_on_one_server_is_read_on_the_other_at_its_seq(
    two_nodes: tuple[SyncClient, SyncClient],
) -> None:
    a, b = two_nodes
    stored = a.ok("store_memory", {"content": "The zebra crossed the road"})
    seq = stored["seq"]
    assert isinstance(seq, int) and seq >= 1
    zebra = stored["id"]

    found = b.ok("search_text", {"query": "zebra", "min_seq": seq})
    assert [hit["id"] for hit in found["results"]] == [zebra]
    recalled = b.ok("recall", {"query": "zebra", "min_seq": seq})
    assert recalled["results"][0]["id"] == zebra
    assert b.ok("get_memory", {"memory_id": zebra, "min_seq": seq})["id"] == zebra

    saved = b.ok("create_entity", {"name": "Zoe", "entityType": "Person"})
    assert saved["seq"] > seq, "the namespace's next position, taken on the other server"
    nodes = a.ok("search_nodes", {"query": "Zoe", "min_seq": saved["seq"]})
    assert "Zoe" in str(nodes)

    deleted = b.ok("delete_memory", {"memory_id": zebra})
    assert deleted["seq"] > saved["seq"]
    gone = a.error("get_memory", {"memory_id": zebra, "min_seq": deleted["seq"]})
    assert gone["code"] == "MEMORY_NOT_FOUND"


def test_two_servers_writing_one_namespace_at_once_refuse_no_write(
    two_nodes: tuple[SyncClient, SyncClient],
) -> None:
    """Two server processes: each write another server overtook runs again, lock first,
    so every call succeeds and the seqs returned are the namespace's one gapless order."""
    a, b = two_nodes
    each, writers = 15, 4
    seqs: dict[str, list[int]] = {}

    def write(name: str, client: SyncClient) -> None:
        seqs[name] = []
        for i in range(each):
            seqs[name].append(client.ok("store_memory", {"content": f"{name} fact {i}"})["seq"])

    threads = [
        threading.Thread(target=write, args=(f"{label}{k}", client))
        for k in range(writers // 2)
        for label, client in (("a", a), ("b", b))
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(seq for each_seqs in seqs.values() for seq in each_seqs) == list(
        range(1, writers * each + 1)
    )
    assert all(s == sorted(s) for s in seqs.values())
    head = writers * each
    for client in (a, b):
        listed = client.ok("list_memories", {"limit": 100, "min_seq": head})
        assert len(listed["memories"]) == head


def test_a_seq_the_server_has_not_applied_is_resource_busy_and_the_server_lives(
    two_nodes: tuple[SyncClient, SyncClient],
) -> None:
    a, b = two_nodes
    seq = a.ok("store_memory", {"content": "a fact from before"})["seq"]
    error = b.error("recall", {"query": "fact", "min_seq": seq + 1000})
    assert error["code"] == "RESOURCE_BUSY"
    assert f"min_seq {seq + 1000}" in error["message"]
    assert "retry, or read from the node that took the write" in error["message"]
    # Nothing broke: the same server answers the next call, at the seq it does hold.
    assert b.ok("recall", {"query": "fact", "min_seq": seq})["results"]
    assert b.ok("get_status")


def test_min_seq_is_a_non_negative_integer(two_nodes: tuple[SyncClient, SyncClient]) -> None:
    a, _ = two_nodes
    for bad in (-1, "3", 1.5):
        assert a.error("recall", {"query": "x", "min_seq": bad})["code"] == "INVALID_PARAMETER"


def test_on_sqlite_writes_have_no_seq_and_min_seq_never_waits(tmp_path: Path) -> None:
    with ExitStack() as stack:
        single = _server(stack, tmp_path)
        stored = single.ok("store_memory", {"content": "The zebra crossed the road"})
        assert "seq" not in stored
        assert "seq" not in single.ok("create_entity", {"name": "Zoe", "entityType": "Person"})
        # Every acknowledged write is in the one store: any min_seq is already applied.
        found = single.ok("search_text", {"query": "zebra", "min_seq": 10**9})
        assert len(found["results"]) == 1
        assert single.ok("search_nodes", {"query": "Zoe", "min_seq": 0})


def test_every_read_tool_takes_min_seq_and_every_write_tool_describes_seq(
    tmp_path: Path,
) -> None:
    with ExitStack() as stack:
        tools = _server(stack, tmp_path).tools()
    for name in ("recall", "search_memories", "get_memory", "search_nodes", "read_graph"):
        prop = tools[name].input_schema["properties"]["min_seq"]
        assert prop["type"] == "integer" and prop["minimum"] == 0, name
        assert "min_seq" in tools[name].description
    for name in ("store_memory", "update_memory", "save_memory", "record_turn"):
        assert "min_seq" not in tools[name].input_schema["properties"], name
        assert "seq" in tools[name].description
    # Store-wide tools and get_status order nothing per namespace.
    for name in ("get_status", "check_store", "reset_all_memory"):
        assert "min_seq" not in tools[name].input_schema.get("properties", {}), name
