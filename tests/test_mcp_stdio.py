"""The MCP server over stdio, driven by the MCP SDK's client: tool listings per profile, the
store → search → supersede → search round trip (text-only and with the real MiniLM model),
every error code a tool can return, schema rejections, and answers before the model is
ready. One text-only server serves the module; the other cases start their own."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import memcore
from test_mcp_support import (
    ALL_TOOLS,
    CORE_TOOLS,
    GATED_LAUNCHER,
    MINILM_DIR,
    POTION_DIR,
    REPO_ROOT,
    SyncClient,
    server_env,
    stdio_server,
)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcp-stdio")


@pytest.fixture(scope="module")
def store_dir(home: Path) -> Path:
    return home / "store"


@pytest.fixture(scope="module")
def server(home: Path, store_dir: Path) -> Iterator[SyncClient]:
    """A text-only server with every tool, shared by the module."""
    args = ["--data-dir", str(store_dir), "--model", "none", "--tools", "all"]
    with stdio_server(args, server_env(home), home / "server.log") as client:
        yield client


def _contents(payload: dict[str, Any], key: str = "memories") -> list[str]:
    return [m["content"] for m in payload[key]]


# -- listings and profiles --------------------------------------------------------------------


def test_every_tool_is_listed_with_a_complete_schema(server: SyncClient) -> None:
    tools = server.tools()
    assert list(tools) == ALL_TOOLS
    for tool in tools.values():
        schema = tool.input_schema
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        assert set(schema.get("required", [])) <= set(schema["properties"])
        for prop in schema["properties"].values():
            assert prop["description"] and "type" in prop
        assert len(tool.description or "") > 80
        assert tool.annotations is not None
    store = tools["store_memory"].input_schema
    assert store["required"] == ["content"]
    assert store["properties"]["source"]["enum"] == ["explicit", "extracted", "conversation"]
    assert store["properties"]["source"]["default"] == "extracted"
    assert store["properties"]["confidence"] == {
        "type": "number",
        "description": store["properties"]["confidence"]["description"],
        "minimum": 0,
        "maximum": 1,
        "default": 1.0,
    }
    limit = tools["search_memories"].input_schema["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 20, 5)
    recent = tools["list_recent_memories"].input_schema["properties"]["limit"]
    assert (recent["minimum"], recent["maximum"], recent["default"]) == (1, 50, 10)
    assert tools["search"].input_schema["properties"]["limit"]["maximum"] == 50
    assert tools["reset_all_memory"].input_schema["required"] == ["confirm"]
    assert tools["get_status"].annotations.read_only_hint is True
    assert tools["delete_memory"].annotations.destructive_hint is True


def test_an_unknown_tool_in_the_profile_fails_at_start(home: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "memcore.mcp", "--tools", "core,save_memroy", "--model", "none"],
        env=server_env(home),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    assert "Unknown tool or group in --tools: save_memroy" in result.stderr
    assert result.stdout == ""


# -- round trip -------------------------------------------------------------------------------


def test_store_search_supersede_search(server: SyncClient) -> None:
    old = server.ok("store_memory", {"content": "User lives in Seattle", "source": "explicit"})
    assert set(old) == {"id", "created", "similar", "action_required", "embedding"}
    assert old["id"].startswith("mem_") and old["created"]["id"] == old["id"]
    assert old["created"]["source"] == "explicit" and old["created"]["confidence"] == 1.0
    new = server.ok("store_memory", {"content": "User moved to Austin", "confidence": 0.9})

    found = server.ok("search_memories", {"query": "where does the user live", "limit": 3})
    assert {"User lives in Seattle", "User moved to Austin"} <= set(_contents(found))
    assert all(0 <= m["relevance_score"] <= 1 for m in found["memories"])

    result = server.ok("supersede_memory", {"old_memory_id": old["id"], "new_memory_id": new["id"]})
    assert result == {
        "success": True,
        "message": f"Memory {old['id']} marked as superseded by {new['id']}",
    }
    after = server.ok("search_memories", {"query": "where does the user live"})
    assert "User lives in Seattle" not in _contents(after)
    assert "User moved to Austin" in _contents(after)

    stored = server.ok("get_memory", {"memory_id": old["id"]})
    assert stored["superseded_by"] == new["id"] and "valid_until" in stored
    history = server.ok("get_valid_at", {"timestamp": old["created"]["created_at"]})
    assert "User lives in Seattle" in _contents(history)
    recent = server.ok("list_recent_memories", {"limit": 50})
    assert "User lives in Seattle" not in _contents(recent)


def test_facts_and_temporal_tools(server: SyncClient) -> None:
    made = server.ok(
        "store_memory",
        {
            "content": "Deploys happen on Tuesdays",
            "memory_type": "procedural",
            "thread_id": "ops",
            "metadata": {"team": "infra"},
        },
    )
    memory_id = made["id"]
    updated = server.ok("update_memory", {"memory_id": memory_id, "content": "Deploys are Wed"})
    assert updated["content"] == "Deploys are Wed" and updated["metadata"] == {"team": "infra"}
    listed = server.ok("list_memories", {"limit": 1, "thread_id": "ops"})
    assert _contents(listed) == ["Deploys are Wed"] and listed["next_offset"] is None
    texts = server.ok("search_text", {"query": "deploys", "thread_id": "ops"})
    assert [r["kind"] for r in texts["results"]] == ["memory"]
    assert set(texts["results"][0]["scores"]) == {"vector", "bm25", "ppr", "fused"}

    gone = server.ok("invalidate", {"memory_id": memory_id, "reason": "process changed"})
    assert gone["success"] and gone["memory"]["invalidation_reason"] == "process changed"
    assert memory_id not in [m["id"] for m in server.ok("get_valid", {"limit": 500})["memories"]]
    assert server.ok("search_text", {"query": "deploys", "thread_id": "ops"})["results"] == []
    past = server.ok(
        "search_text",
        {"query": "deploys", "thread_id": "ops", "as_of": updated["updated_at"]},
    )
    assert [r["id"] for r in past["results"]] == [memory_id]

    assert server.ok("delete_memory", {"memory_id": memory_id})["success"] is True
    assert server.error("get_memory", {"memory_id": memory_id})["code"] == "MEMORY_NOT_FOUND"


def test_recall_spreads_across_threads_when_asked(server: SyncClient) -> None:
    for text, thread in (
        ("kiwi kiwi: kiwi harvest notes", "orchard"),
        ("kiwi kiwi: kiwi prices", "orchard"),
        ("A kiwi smoothie recipe with oats and a banana", "kitchen"),
    ):
        server.ok("store_memory", {"content": text, "thread_id": thread})

    def threads(**extra: int) -> list[str]:
        found = server.ok("recall", {"query": "kiwi", **extra})["results"]
        return [r["thread_id"] for r in found]

    assert threads() == ["orchard", "orchard", "kitchen"]
    assert threads(max_per_thread=1) == ["orchard", "kitchen", "orchard"]


def test_status_reports_store_counts_and_embeddings(server: SyncClient) -> None:
    status = server.ok("get_status")
    assert status["version"] == memcore.__version__
    assert status["store"]["status"] == "open" and status["namespace"] == "default"
    assert status["counts"]["memories"] >= 1
    assert status["embedding"]["status"] == "disabled"


# -- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "field", "words"),
    [
        ("store_memory", {"content": "x", "colour": "red"}, "colour", "Unknown field 'colour'"),
        ("store_memory", {}, "content", "Missing required field 'content'"),
        ("store_memory", {"content": 42}, "content", "must be a string"),
        ("store_memory", {"content": "x", "confidence": 1.5}, "confidence", "from 0 to 1"),
        ("store_memory", {"content": "x", "source": "rumour"}, "source", "one of: explicit"),
        ("store_memory", {"content": "x", "metadata": [1]}, "metadata", "must be an object"),
        ("store_memory", {"content": "x", "thread_id": None}, "thread_id", "must be a string"),
        ("search_memories", {"query": "x", "limit": 21}, "limit", "from 1 to 20"),
        ("search_memories", {"query": "x", "limit": "5"}, "limit", "must be an integer"),
        ("recall", {"query": "x", "limit": 51}, "limit", "from 1 to 50"),
        ("recall", {"query": "x", "max_per_thread": 0}, "max_per_thread", "from 1 to 50"),
        ("list_recent_memories", {"limit": 0}, "limit", "from 1 to 50"),
        ("get_valid_at", {"timestamp": "last tuesday"}, "timestamp", "not a valid time"),
        ("reset_all_memory", {"confirm": False}, "confirm", "must be true"),
        ("supersede_memory", {"old_memory_id": "mem_a"}, "new_memory_id", "Missing required"),
        ("no_such_tool", {}, "name", "Unknown tool 'no_such_tool'"),
    ],
)
def test_bad_arguments_are_invalid_parameter_naming_the_field(
    server: SyncClient, tool: str, arguments: dict[str, Any], field: str, words: str
) -> None:
    error = server.error(tool, arguments)
    assert error["code"] == "INVALID_PARAMETER"
    assert error["details"]["field"] == field
    assert words in error["message"]


def test_a_missing_memory_is_memory_not_found(server: SyncClient) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("get_memory", {"memory_id": "mem_00000000000000000000000000"}),
        ("delete_memory", {"memory_id": "mem_00000000000000000000000000"}),
        ("invalidate", {"memory_id": "mem_00000000000000000000000000"}),
        ("update_memory", {"memory_id": "mem_00000000000000000000000000", "importance": 1}),
    ]
    for tool, arguments in calls:
        assert server.error(tool, arguments)["code"] == "MEMORY_NOT_FOUND", tool


def test_oversized_arguments_are_payload_too_large(server: SyncClient) -> None:
    items = server.error("store_memory", {"content": "x", "metadata": {"tags": [0] * 1001}})
    assert items["code"] == "PAYLOAD_TOO_LARGE"
    assert items["details"] == {"field": "metadata.tags", "limit": 1000}
    content = server.error("store_memory", {"content": "word " * 30_000})
    assert content["code"] == "PAYLOAD_TOO_LARGE"
    whole = server.error("store_memory", {"content": "x" * 1_100_000})
    assert whole["code"] == "PAYLOAD_TOO_LARGE" and whole["details"]["field"] == "arguments"


def test_vector_search_without_a_model_is_embedding_error(server: SyncClient) -> None:
    assert server.error("search", {"query": "anything"})["code"] == "EMBEDDING_ERROR"
    # Hybrid recall falls back to keywords instead.
    assert "results" in server.ok("recall", {"query": "anything"})


def test_a_second_server_writes_beside_the_first(
    server: SyncClient, home: Path, store_dir: Path
) -> None:
    """Two agent windows, two servers on one store: both work (tests/test_mcp_many_servers.py
    has the rest)."""
    server.ok("store_memory", {"content": "Written in the first window"})
    args = ["--data-dir", str(store_dir), "--model", "none", "--timeout", "20"]
    with stdio_server(args, server_env(home), home / "second.log") as second:
        assert second.tool_names() == CORE_TOOLS
        assert second.ok("get_status")["store"]["status"] == "open"
        second.ok("store_memory", {"content": "Written in the second window"})
        found = second.ok("search_memories", {"query": "Written in the first window"})
        assert "Written in the first window" in [m["content"] for m in found["memories"]]


def test_a_server_beside_a_sole_writer_gets_resource_busy_from_every_tool(
    home: Path, tmp_path: Path
) -> None:
    """A store held by a process that must be its only writer (a PostgreSQL node's replica,
    an older memcore): every tool says so."""
    store = tmp_path / "sole"
    sole = memcore._core.Engine(str(store), shared=False)
    try:
        args = ["--data-dir", str(store), "--model", "none", "--timeout", "20"]
        with stdio_server(args, server_env(home), home / "busy.log") as second:
            # No --tools: the default profile is core, listed although the store is not.
            assert second.tool_names() == CORE_TOOLS
            error = second.error("store_memory", {"content": "x"})
            assert error["code"] == "RESOURCE_BUSY" and "pid" in error["message"]
            status = second.ok("get_status")
            assert status["store"]["status"] == "error"
            assert status["store"]["error"]["code"] == "RESOURCE_BUSY"
    finally:
        sole.close()


def test_a_read_only_server_reads_and_refuses_writes(
    server: SyncClient, home: Path, store_dir: Path
) -> None:
    server.ok("store_memory", {"content": "Visible to a reader beside the writer"})
    args = ["--data-dir", str(store_dir), "--model", "none", "--read-only", "--tools", "all"]
    with stdio_server(args, server_env(home), home / "ro.log") as reader:
        error = reader.error("store_memory", {"content": "x"})
        assert error["code"] == "STORAGE_ERROR" and "read-only" in error["message"]
        assert reader.error("reset_all_memory", {"confirm": True})["code"] == "STORAGE_ERROR"
        found = reader.ok("search_text", {"query": "reader beside the writer"})
        assert found["results"][0]["content"] == "Visible to a reader beside the writer"


def test_another_models_store_is_dimension_mismatch(home: Path) -> None:
    if not (POTION_DIR / "model.onnx").is_file() or not (MINILM_DIR / "model.onnx").is_file():
        pytest.skip("the shared test models are not available")
    store = home / "potion-store"
    with memcore.Memory(store, model_path=POTION_DIR) as potion:
        assert potion.embeddings is not None and potion.embeddings.wait_ready(60)
    args = ["--data-dir", str(store), "--model-path", str(MINILM_DIR)]
    with stdio_server(args, server_env(home), home / "mismatch.log") as client:
        error = client.error("store_memory", {"content": "x"})
        assert error["code"] == "DIMENSION_MISMATCH"
        assert "database has 256d vectors, configured model produces 384d" in error["message"]
        assert client.ok("get_status")["store"]["error"]["code"] == "DIMENSION_MISMATCH"


# -- the real model, and answers before it is ready --------------------------------------------


def _wait_ready(client: SyncClient) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        embedding = client.ok("get_status")["embedding"]
        if embedding["status"] != "loading":
            return dict(embedding)
        time.sleep(0.05)
    raise AssertionError("the model did not load within 60 s")


def test_answers_before_the_model_is_ready_then_round_trips_with_minilm(home: Path) -> None:
    if not (MINILM_DIR / "model.onnx").is_file():
        pytest.skip(f"test model not found at {MINILM_DIR}")
    gate = home / "model-gate"
    args = ["--data-dir", str(home / "minilm-store"), "--model-path", str(MINILM_DIR)]
    args += ["--embedding-wait", "0.1"]
    launcher = ["-c", GATED_LAUNCHER, str(gate)]
    with stdio_server(args, server_env(home), home / "minilm.log", launcher=launcher) as client:
        assert client.tool_names() == CORE_TOOLS
        loading = client.ok("get_status")["embedding"]
        assert loading["status"] == "loading"
        # Stored anyway, without its vector: found by keywords now, by meaning later.
        early = client.ok("store_memory", {"content": "The user plays the cello on Sundays"})
        assert early["embedding"] == "pending"
        for tool, key in (("search_memories", "memories"), ("recall", "results")):
            found = client.ok(tool, {"query": "cello"})
            assert found["degraded"] == "keywords only: embedding model loading"
            assert _contents(found, key) == ["The user plays the cello on Sundays"]
        gate.touch()
        ready = _wait_ready(client)
        assert (ready["status"], ready["dim"]) == ("ready", 384)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            found = client.ok("search_memories", {"query": "which instrument does the user play?"})
            if _contents(found)[:1] == ["The user plays the cello on Sundays"]:
                break
            time.sleep(0.1)
        else:
            raise AssertionError("the pending memory was never embedded")

        old = client.ok("store_memory", {"content": "The user's favourite colour is blue"})
        assert old["similar"] == [] and old["action_required"] is None
        new = client.ok("store_memory", {"content": "The user's favourite colour is green"})
        assert [m["id"] for m in new["similar"]] == [old["id"]]
        call = f'supersede_memory("{old["id"]}", "{new["id"]}")'
        assert call in new["action_required"]
        client.ok("supersede_memory", {"old_memory_id": old["id"], "new_memory_id": new["id"]})
        found = client.ok("search_memories", {"query": "which colour does the user like?"})
        assert _contents(found)[0] == "The user's favourite colour is green"
        assert "The user's favourite colour is blue" not in _contents(found)
        recalled = client.ok("recall", {"query": "favourite colour", "include_invalid": True})
        assert {r["content"] for r in recalled["results"]} >= {
            "The user's favourite colour is green",
            "The user's favourite colour is blue",
        }


def test_exiting_while_the_model_loads_is_clean(home: Path) -> None:
    """stdin closes right after the handshake, while onnxruntime still builds its session:
    the embedding service's close waits for the loader, so the process exits 0 instead of
    being aborted inside onnxruntime."""
    if not (MINILM_DIR / "model.onnx").is_file():
        pytest.skip(f"test model not found at {MINILM_DIR}")
    handshake = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    args = ["--data-dir", str(home / "exit-store"), "--model-path", str(MINILM_DIR)]
    result = subprocess.run(
        [sys.executable, "-m", "memcore.mcp", *args],
        input="".join(json.dumps(m) + "\n" for m in handshake),
        env=server_env(home),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert result.returncode == 0, result.stderr
    assert "terminate" not in result.stderr
    # The SDK drops requests still in flight at end of input; initialize was answered.
    replies = [json.loads(line) for line in result.stdout.splitlines()]
    assert replies[0]["id"] == 1 and "result" in replies[0]


def test_errors_say_which_field_and_limit(server: SyncClient, tmp_path: Path) -> None:
    huge = "x" * 900_000  # under the request limit (1 MiB), over the content limit
    error = server.error("store_memory", {"content": huge})
    assert error["code"] == "PAYLOAD_TOO_LARGE"
    assert error["details"] == {"field": "content", "limit": 100_000, "size": 900_000}
    missing = tmp_path / "no-such-project"
    error = server.error("index_project", {"path": str(missing)})
    assert error["code"] == "INVALID_PARAMETER"
    assert error["details"] == {"field": "path", "path": str(missing)}
