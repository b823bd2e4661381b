"""The automatic path over stdio with the official MCP SDK and the real model: a thin
client that only calls memory_before_turn and memory_after_turn gets facts captured and
found again, its long session compacted to fit, maintenance, and the counters in
get_status (docs/guide.md, "The automatic path")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from test_mcp_support import MINILM_DIR, SyncClient, server_env, stdio_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SyncClient]:
    if not (MINILM_DIR / "model.onnx").is_file():
        pytest.skip(f"test model not found at {MINILM_DIR}")
    home = tmp_path_factory.mktemp("mcp-automatic")
    args = ["--data-dir", str(home / "store"), "--model-path", str(MINILM_DIR)]
    args += ["--tools", "all", "--embedding-wait", "30"]
    with stdio_server(args, server_env(home), home / "server.log") as client:
        yield client


def _turn(session: str, turn: str, text: str) -> dict[str, Any]:
    return {
        "session_id": session,
        "turn_id": turn,
        "input_items": [{"role": "user", "content": text}],
        "output_items": [{"role": "assistant", "content": "Got it."}],
    }


def test_a_thin_client_gets_its_facts_captured_and_recalled(server: SyncClient) -> None:
    first = server.ok("memory_after_turn", _turn("a", "1", "I live in Seattle. Thanks!"))
    assert [f["content"] for f in first["captured"]] == ["User lives in Seattle"]
    assert first["skipped"] == [{"text": "Thanks!", "reason": "thanks"}]
    moved = server.ok(
        "memory_after_turn",
        _turn("b", "1", "Big news: I moved to Austin last month. Can you find me a dentist?"),
    )
    fact = moved["captured"][0]
    assert "Austin" in fact["content"] and fact["supersedes"] == first["captured"][0]["id"]
    assert {"text": "Can you find me a dentist?", "reason": "question"} in moved["skipped"]
    # The repeat of a turn is answered with the first result and stores nothing.
    again = server.ok("memory_after_turn", _turn("b", "1", "anything"))
    assert again["created"] is False and again["captured"] == moved["captured"]
    # A new session is told where the user lives now, and not where they used to.
    prepared = server.ok(
        "memory_before_turn",
        {
            "session_id": "c",
            "turn_id": "1",
            "current_input": [{"role": "user", "content": "Which city do I live in?"}],
        },
    )
    block = prepared["input_items"][0]["content"]
    assert "Austin" in block and "Seattle" not in block.split("## Relevant context")[0]
    assert fact["id"] in prepared["recall_fact_ids"]


def test_a_long_session_is_compacted_over_stdio(server: SyncClient) -> None:
    items: list[dict[str, Any]] = []
    for i in range(500):
        role = "user" if i % 2 == 0 else "assistant"
        items.append({"role": role, "content": f"Message {i} about the release checklist. " * 8})
    prepared = server.ok(
        "memory_before_turn",
        {"session_id": "long", "turn_id": "t", "current_input": items, "max_input_tok": 16_000},
    )
    assert prepared["compacted"] is True
    assert prepared["context_token_count"] <= 16_000
    assert prepared["input_items"][-30:] == items[-30:]
    assert any("[memcore digest]" in str(i["content"]) for i in prepared["input_items"][:2])


def test_maintenance_and_counters_over_stdio(server: SyncClient) -> None:
    server.ok("memory_after_turn", _turn("m", "1", "Tonight I'm at the gym."))
    report = server.ok("memory_run_maintenance", {})
    assert report["ok"] is True
    assert {"summaries_refreshed", "turn_claims_pruned", "log_entries_compacted"} <= set(report)
    metrics = server.ok("get_status")["lifecycle_metrics"]
    assert metrics["fact_write_total"]["L1"] >= 1
    assert metrics["after_turn_total"]["ok"] >= 1
    assert metrics["maintenance_total"]["ok"] >= 1


def test_store_memory_takes_a_tier(server: SyncClient) -> None:
    stored = server.ok("store_memory", {"content": "User is in Lisbon this week", "tier": "L2"})
    assert stored["created"]["tier"] == "L2" and stored["created"]["expires_at"]
    assert stored["embedding"] == "stored"
    bad = server.error("store_memory", {"content": "x", "tier": "forever"})
    assert bad["code"] == "INVALID_PARAMETER"
