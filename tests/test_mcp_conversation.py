"""The conversation tool group over stdio: turns recorded once per turn_id, the read preview
that records nothing, document histories, retrieve_context finding a past turn through a
shared file, and the thin-client lifecycle (before/after turn exactly once, also under
concurrent retries; maintenance; the directory listing; project as namespace). One
text-only server serves the module; every test uses its own conversations and files."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from test_mcp_support import SyncClient, payload_of, server_env, stdio_server


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("project")
    (root / "auth.py").write_text("def check_token(token):\n    return token == 'ok'\n")
    (root / "README.md").write_text("# Project\n")
    return root


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SyncClient]:
    home = tmp_path_factory.mktemp("mcp-conversation")
    args = ["--data-dir", str(home / "store"), "--model", "none", "--tools", "all"]
    with stdio_server(args, server_env(home), home / "server.log") as client:
        yield client


def _turn(conversation: str, turn: str, user: str, *procedures: dict[str, Any]) -> dict[str, Any]:
    return {
        "conversation_id": conversation,
        "turn_id": turn,
        "user_text": user,
        "agent_text": f"done: {user}",
        "procedures": list(procedures),
    }


def test_record_turn_is_idempotent_by_turn_id(server: SyncClient, project: Path) -> None:
    auth = str(project / "auth.py")
    first = server.ok(
        "record_turn",
        _turn(
            "idem",
            "t1",
            "fix the login bug",
            {"tool": "READ", "documents": [auth]},
            {"tool": "edit", "args": {"line": 2}, "documents": [{"path": auth, "content": "x"}]},
        ),
    )
    assert (first["created"], first["turn_index"], first["embedded"]) == (True, 0, False)
    read, edit = first["procedures"]
    assert (read["tool"], read["documents"][0]["provenance"]) == ("READ", "external")
    assert (edit["tool"], edit["documents"][0]["provenance"]) == ("EDIT", "agent")
    assert edit["documents"][0]["version"] == read["documents"][0]["version"] + 1

    again = server.ok("record_turn", _turn("idem", "t1", "fix the login bug"))
    assert again["created"] is False and again["procedures"] == first["procedures"]
    listing = server.ok("memory_list_dir_with_abstract", {"session_id": "idem"})
    assert [(s["path"], s["count"]) for s in listing["summaries"]] == [
        ("/default/conversations/idem", 1)
    ]
    error = server.error(
        "record_turn", {"conversation_id": "idem", "user_text": "x", "procedures": [{}]}
    )
    assert (
        error["code"] == "INVALID_PARAMETER" and error["details"]["field"] == "procedures[0].tool"
    )


def test_read_document_is_a_preview(server: SyncClient, project: Path) -> None:
    readme = str(project / "README.md")
    preview = server.ok("read_document", {"path": readme, "include_content": True})
    assert preview["content"] == "# Project\n" and preview["content_truncated"] is False
    assert (preview["version"], preview["previous_version"], preview["changed"]) == (1, None, False)
    # Nothing was recorded: the document has no history until a turn touches it.
    assert server.error("get_document_history", {"path": readme})["code"] == "NOT_FOUND"
    server.ok(
        "record_turn",
        _turn("docs", "t1", "read the readme", {"tool": "READ", "documents": [readme]}),
    )
    (project / "README.md").write_text("# Project\n\nChanged outside.\n")
    seen = server.ok("read_document", {"path": readme, "conversation_id": "docs"})
    assert (seen["version"], seen["changed"], seen["versions_since_seen"]) == (2, True, 1)
    assert "content" not in seen
    history = server.ok("get_document_history", {"path": readme})
    assert [v["version"] for v in history["versions"]] == [1]
    assert history["versions"][0]["touched_by"][0]["turn_id"] == "t1"
    assert history["familiarity"] == 1


def test_retrieve_context_finds_a_past_turn_by_a_shared_document(
    server: SyncClient, project: Path
) -> None:
    auth = str(project / "auth.py")
    server.ok(
        "record_turn",
        _turn(
            "ctx-1",
            "t1",
            "the session cookie expires too early",
            {"tool": "READ", "documents": [auth]},
        ),
    )
    server.ok("record_turn", _turn("ctx-2", "t1", "write release notes"))
    context = server.ok(
        "retrieve_context",
        {
            "query": "rename the helper function",
            "conversation_id": "ctx-3",
            "documents": [auth],
            "token_budget": 400,
        },
    )
    by_turn = {(i["conversation_id"], i["turn_id"]): i for i in context["items"]}
    item = by_turn[("ctx-1", "t1")]
    assert auth in item["shared_documents"]
    assert item["procedures"][0]["documents"][0]["path"] == auth
    assert "the session cookie expires too early" in context["text"]
    assert 0 < context["token_count"] <= 400
    # The current conversation is never returned.
    own = server.ok(
        "retrieve_context", {"query": "", "conversation_id": "ctx-1", "documents": [auth]}
    )
    assert all(i["conversation_id"] != "ctx-1" for i in own["items"])
    error = server.error("retrieve_context", {"query": "  "})
    assert error["code"] == "INVALID_PARAMETER"


def test_before_and_after_turn(server: SyncClient) -> None:
    server.ok("store_memory", {"content": "The user deploys with Kubernetes"})
    prepared = server.ok(
        "memory_before_turn",
        {
            "session_id": "life",
            "turn_id": "t1",
            "current_input": [{"role": "user", "content": "how do I deploy with Kubernetes?"}],
            "base_instructions": "You are a helpful assistant.",
        },
    )
    memory_item, user_item = prepared["input_items"]
    assert memory_item["role"] == "system" and "Kubernetes" in memory_item["content"]
    assert user_item == {"role": "user", "content": "how do I deploy with Kubernetes?"}
    assert len(prepared["recall_fact_ids"]) >= 1 and prepared["context_token_count"] > 0

    after = {
        "session_id": "life",
        "turn_id": "t1",
        "input_items": prepared["input_items"],
        "output_items": [{"role": "assistant", "content": "Use kubectl apply."}],
    }
    # Concurrent retries of one turn: it is stored once; the others are told it exists
    # (created false) or that it is being stored right now (RESOURCE_BUSY).
    with ThreadPoolExecutor(4) as pool:
        results = [
            payload_of(r)
            for r in pool.map(lambda _: server.call("memory_after_turn", after), range(4))
        ]
    created = [r for r in results if r.get("created") is True]
    assert len(created) == 1, results
    for r in results:
        assert r.get("ok") is True or r["error"]["code"] == "RESOURCE_BUSY", r
    again = server.ok("memory_after_turn", after)
    assert (again["ok"], again["created"]) == (True, False)
    assert again["captured"] == created[0]["captured"], "the first call's result"
    listing = server.ok("memory_list_dir_with_abstract", {"session_id": "life"})
    assert listing["summaries"][0]["count"] == 1 and listing["summaries"][0]["has_overview"]

    maintenance = server.ok("memory_run_maintenance", {"session_id": "life"})
    assert maintenance["ok"] is True and "memories_expired" in maintenance


def test_project_selects_the_namespace_over_stdio(server: SyncClient) -> None:
    turn = {
        "project": "tenant-b",
        "session_id": "s",
        "turn_id": "t",
        "input_items": "a question for tenant b",
        "output_items": "an answer",
    }
    assert server.ok("memory_after_turn", turn)["created"] is True
    theirs = server.ok("memory_list_dir_with_abstract", {"project": "tenant-b", "depth": 8})
    assert "/tenant-b/conversations/s" in [s["path"] for s in theirs["summaries"]]
    ours = server.ok("memory_list_dir_with_abstract", {"depth": 8})
    assert all(s["path"].startswith("/default") for s in ours["summaries"])
    everyone = server.ok("memory_list_dir_with_abstract", {"all_namespaces": True, "depth": 1})
    assert {"/default", "/tenant-b"} <= {s["path"] for s in everyone["summaries"]}


def test_relative_paths_given_with_content_stay_as_given(server: SyncClient) -> None:
    # The server runs in the repository folder; a relative path the agent sends with its
    # content names a file of the agent's workspace, not of the server's working directory.
    doc = {"path": "./src/../src/billing.py", "content": "RATE = 3\n"}
    first = server.ok(
        "record_turn",
        _turn("rel", "t1", "raise the rate", {"tool": "EDIT", "documents": [doc]}),
    )
    recorded = first["procedures"][0]["documents"][0]
    assert recorded["path"] == "src/billing.py"
    history = server.ok("get_document_history", {"path": "src/billing.py"})
    assert [v["version"] for v in history["versions"]] == [recorded["version"]]
    hashed = {"path": "src/billing.py", "content_hash": "ab" * 32}
    second = server.ok(
        "record_turn", _turn("rel", "t2", "check it", {"tool": "READ", "documents": [hashed]})
    )
    assert second["procedures"][0]["documents"][0]["path"] == "src/billing.py"
    preview = server.ok("read_document", {"path": "src/billing.py", "content": "RATE = 3\n"})
    assert (preview["path"], preview["changed"]) == ("src/billing.py", True)
