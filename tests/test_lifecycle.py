"""The turn lifecycle for thin clients: memory_before_turn (facts + context within the
input budget), memory_after_turn (exactly once, RESOURCE_BUSY while in flight),
memory_run_maintenance and memory_list_dir_with_abstract (which also lists code projects)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import memcore
from backends import Backend, both_backends, sqlite_only
from memcore._facade import lifecycle
from memcore._time import iso

pytestmark = both_backends

estimate = memcore._core.Engine.estimate_tokens


def _outcome(result: Mapping[str, Any]) -> tuple[bool, bool]:
    return result["ok"], result["created"]


def _user(text: str) -> list[dict[str, object]]:
    return [{"role": "user", "content": [{"type": "input_text", "text": text}]}]


# -- memory_before_turn ----------------------------------------------------------------------


def test_before_turn_prepends_facts_and_past_context(mem: memcore.Memory) -> None:
    fact = mem.store_memory("The staging database is Postgres 16 on port 5433").id
    mem.store_memory("The user likes short answers")
    mem.memory_after_turn(
        "s1", "t1", "migrate the staging database", [{"role": "assistant", "content": "done"}]
    )
    current = [{"role": "system", "content": "You are helpful."}, *_user("staging database?")]
    out = mem.memory_before_turn("s2", "t1", current, max_input_tok=8000)
    block = out["input_items"][0]
    assert block["role"] == "system" and out["input_items"][1:] == current
    assert fact in out["recall_fact_ids"]
    assert "## Relevant facts\n- The staging database is Postgres 16" in block["content"]
    assert "User: migrate the staging database" in block["content"]
    assert out["recall_turns"] == [{"session_id": "s1", "turn_id": "t1"}]
    # The memory item, and the whole input it heads (each item costs 4 on top of its text).
    assert out["memory_token_count"] == estimate(block["content"]) + 4
    assert out["context_token_count"] == sum(
        estimate(lifecycle.item_text(i)) + 4 for i in out["input_items"]
    )
    assert out["compacted"] is False
    # Its own session's turns are never recalled.
    own = mem.memory_before_turn("s1", "t2", "staging database?")
    assert "migrate the staging database" not in own["input_items"][0]["content"]


@pytest.mark.parametrize("budget", [16, 40, 120, 400])
def test_before_turn_stays_within_its_budget(mem: memcore.Memory, budget: int) -> None:
    for i in range(20):
        mem.store_memory(f"deployment fact {i}: the pipeline runs " + "nightly " * i)
        mem.record_turn(f"s{i}", f"deployment question {i} " + "about the pipeline " * 30)
    out = mem.memory_before_turn("now", "t", "deployment pipeline", memory_budget=budget)
    assert out["memory_token_count"] <= budget + 4
    assert (out["memory_token_count"] > 0) == (budget >= 40)
    # A small model: the block yields to the input's room, and the whole still fits.
    text = "deployment pipeline " * 50
    tight = mem.memory_before_turn("now", "t", text, max_input_tok=800)
    assert tight["memory_token_count"] <= 800 * 0.8 - 256
    assert tight["context_token_count"] <= 800


def test_before_turn_without_room_or_memories_passes_the_input_through(
    mem: memcore.Memory,
) -> None:
    mem.store_memory("a fact about deployment")
    full = mem.memory_before_turn("s", "t", "deployment", max_input_tok=5)
    empty = mem.memory_before_turn("s", "t", "nothing matches this")
    for out in (full, empty):
        assert out == {
            "input_items": [{"role": "user", "content": out["input_items"][0]["content"]}],
            "recall_fact_ids": [],
            "recall_turns": [],
            "context_token_count": out["context_token_count"],
            "memory_token_count": 0,
            "compacted": out["compacted"],
        }
    assert not empty["compacted"] and full["compacted"], "5 tokens hold no memory block"
    with pytest.raises(memcore.InvalidParameterError, match="current_input"):
        mem.memory_before_turn("s", "t", {"role": "user"})  # type: ignore[arg-type]
    with pytest.raises(memcore.InvalidParameterError, match="session_id"):
        mem.memory_before_turn("", "t", "x")


def test_before_turn_looks_up_the_documents_of_the_session(
    mem: memcore.Memory, tmp_path: Path
) -> None:
    (tmp_path / "auth.py").write_text("x")
    mem.record_turn(
        "s1",
        "fix the login bug",
        procedures=[{"tool": "EDIT", "documents": [tmp_path / "auth.py"]}],
    )
    out = mem.memory_before_turn(
        "s2", "t", "why are sessions short?", documents=[tmp_path / "auth.py"]
    )
    assert "shared document" in out["input_items"][0]["content"]


# -- memory_after_turn -----------------------------------------------------------------------


def test_after_turn_records_the_turn_with_its_tool_calls(mem: memcore.Memory) -> None:
    inputs = [
        {"role": "system", "content": "## Relevant facts\n- injected"},
        *_user("earlier question"),
        {"role": "assistant", "content": "earlier answer"},
        *_user("list the files"),
    ]
    outputs = [
        {"type": "function_call", "name": "functions.shell", "arguments": '{"cmd": "ls"}'},
        {"type": "tool_use", "name": "read-file", "input": {"path": "a.txt"}},
        {"role": "assistant", "content": [{"type": "output_text", "text": "a.txt and b.txt"}]},
    ]
    assert _outcome(mem.memory_after_turn("s", "t", inputs, outputs)) == (True, True)
    turn = mem.get_turn("s", "t")
    assert turn.user_text == "list the files" and turn.agent_text == "a.txt and b.txt"
    assert [(p.tool, p.args) for p in turn.procedures] == [
        ("FUNCTIONS_SHELL", {"cmd": "ls"}),
        ("READ_FILE", {"path": "a.txt"}),
    ]
    assert _outcome(mem.memory_after_turn("s", "t", inputs, outputs)) == (True, False)
    assert len(mem.list_turns("s")) == 1


def test_after_turn_records_anthropic_tool_use_parts(mem: memcore.Memory) -> None:
    outputs = [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading it."},
                {"type": "tool_use", "id": "tu_1", "name": "read_file", "input": {"path": "a"}},
            ],
        },
        {"type": "web_search_call", "action": {"query": "memcore"}},
    ]
    mem.memory_after_turn("s", "t", "look at a", outputs)
    turn = mem.get_turn("s", "t")
    assert turn.agent_text == "Reading it."
    assert [(p.tool, p.args) for p in turn.procedures] == [
        ("READ_FILE", {"path": "a"}),
        ("WEB_SEARCH_CALL", {"query": "memcore"}),
    ]


def test_after_turn_truncates_instead_of_losing_the_turn(mem: memcore.Memory) -> None:
    huge = "é" * 80_000  # 160,000 bytes: over the core's limit on a turn's text
    assert mem.memory_after_turn("s", "t", huge, huge)["created"]
    turn = mem.get_turn("s", "t")
    assert len(turn.user_text.encode()) <= 100_000 and turn.user_text.endswith("[truncated]")
    with pytest.raises(memcore.InvalidParameterError, match="no user message"):
        mem.memory_after_turn("s", "t2", [{"role": "assistant", "content": "hi"}], "x")


def test_after_turn_is_exactly_once_under_concurrent_duplicates(mem: memcore.Memory) -> None:
    start = threading.Barrier(8)
    outcomes: list[object] = []
    lock = threading.Lock()

    def submit() -> None:
        start.wait()
        try:
            result: object = mem.memory_after_turn("s", "t", "hello", "hi")
        except memcore.ResourceBusyError as exc:
            result = exc
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=submit) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    created = [o for o in outcomes if isinstance(o, dict) and _outcome(o) == (True, True)]
    others = [o for o in outcomes if o not in created]
    assert len(created) == 1
    assert all(
        isinstance(o, memcore.ResourceBusyError) or _outcome(o) == (True, False)  # type: ignore[arg-type]
        for o in others
    )
    assert [t.turn_id for t in mem.list_turns("s")] == ["t"]


@pytest.fixture
def gated(
    backend: Backend, data_dir: Path
) -> Iterator[tuple[memcore.Memory, threading.Event, threading.Event]]:
    """A Memory whose embedding function, once ready, waits for `release`; `entered` is
    set when a call is waiting, so a test can act while a turn is being processed."""
    entered, release = threading.Event(), threading.Event()

    def embedder(texts: list[str]) -> np.ndarray:
        if texts != ["memcore dimension probe"]:
            entered.set()
            release.wait(30)
        rows = np.zeros((len(texts), 8), dtype=np.float32)
        rows[:, 1] = 1.0
        return rows

    with backend.open(data_dir, embedder=embedder) as mem:
        try:
            assert mem.embeddings is not None and mem.embeddings.wait_ready(30)
            yield mem, entered, release
        finally:
            release.set()


def test_a_duplicate_while_the_turn_is_in_flight_gets_resource_busy(
    gated: tuple[memcore.Memory, threading.Event, threading.Event],
) -> None:
    mem, entered, release = gated
    first: list[object] = []
    worker = threading.Thread(
        target=lambda: first.append(mem.memory_after_turn("s", "t", "hello", "hi"))
    )
    worker.start()
    assert entered.wait(30), "the first call is embedding the user text"
    for _ in range(3):
        with pytest.raises(memcore.ResourceBusyError, match="being recorded") as info:
            mem.memory_after_turn("s", "t", "hello", "hi")
        assert info.value.code == "RESOURCE_BUSY"
        assert info.value.details == {"session_id": "s", "turn_id": "t", "retryable": True}
    release.set()
    worker.join(30)
    assert [_outcome(o) for o in first] == [(True, True)]  # type: ignore[arg-type]
    # The retry after the first finished is answered by the stored turn, once.
    assert _outcome(mem.memory_after_turn("s", "t", "hello", "hi")) == (True, False)
    assert [t.turn_id for t in mem.list_turns("s")] == ["t"]
    # Another turn of the session is never blocked by it.
    assert mem.memory_after_turn("s", "t2", "hello", "hi")["created"]


# -- maintenance and the overview ------------------------------------------------------------


def test_run_maintenance_returns_counters_and_archives(mem: memcore.Memory) -> None:
    old = datetime.now(UTC) - timedelta(days=40)
    mem.record_turn("ancient", "an old question about login", at=old)
    mem.record_turn("recent", "a new question about login")
    report = mem.memory_run_maintenance(archive_after_days=30, force_compact=True)
    assert report["ok"] and report["conversations_archived"] == 1
    assert set(report) >= {"memories_expired", "versions_deduplicated", "tombstones_dropped"}
    found = mem.retrieve_context("question about login")
    assert [i.turn.conversation_id for i in found.items] == ["recent"]
    with pytest.raises(memcore.InvalidParameterError, match="archive_after_days"):
        mem.memory_run_maintenance(archive_after_days=-1)


def test_list_dir_with_abstract(mem: memcore.Memory, data_dir: Path) -> None:
    mem.store_memory("deploys happen on fridays", thread_id="ops")
    mem.record_turn("conv-a", "fix the login bug")
    mem.record_turn("conv-a", "and the login page")
    mem.record_turn("other-ns-conv", "secret plans", namespace="tenant-b")
    listing = mem.memory_list_dir_with_abstract()["summaries"]
    paths = [s["path"] for s in listing]
    assert paths[0] == "/default"
    assert {"/default/threads/ops", "/default/conversations/conv-a"} <= set(paths)
    assert not any(p.startswith("/tenant-b") for p in paths), "namespace-restricted"
    conv = next(s for s in listing if s["path"] == "/default/conversations/conv-a")
    assert conv["kind"] == "conversation" and conv["count"] == 2
    assert 'first request: "fix the login bug"' in conv["abstract"] and "login" in conv["abstract"]
    assert conv["updated_at"].endswith("Z")
    only = mem.memory_list_dir_with_abstract("/default/conversations/")["summaries"]
    assert [s["path"] for s in only] == ["/default/conversations/conv-a"]
    assert mem.memory_list_dir_with_abstract("/default/conv")["summaries"] == []
    everything = mem.memory_list_dir_with_abstract(depth=1, all_namespaces=True)["summaries"]
    assert {s["path"] for s in everything} == {"/default", "/tenant-b"}
    assert len(mem.memory_list_dir_with_abstract(limit=1)["summaries"]) == 1
    with pytest.raises(memcore.InvalidParameterError, match="limit"):
        mem.memory_list_dir_with_abstract(limit=5000)


def _project(root: Path) -> Path:
    files = {
        "app/auth.py": "class Auth:\n    def login(self, user):\n        return user.token\n",
        "app/authTokens.py": "def refresh(token):\n    return token\n",
        "lib/parse.rs": "pub fn parse_header(line: &str) -> &str {\n    line\n}\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_list_dir_lists_code_projects(mem: memcore.Memory, tmp_path: Path) -> None:
    root = _project(tmp_path / "web")
    mem.store_memory("deploys happen on fridays", thread_id="ops")
    mem.index_project(root, project_id="web")
    status = mem.get_index_status("web")
    listing = mem.memory_list_dir_with_abstract()["summaries"]
    assert [s["path"] for s in listing] == [
        "/default",
        "/default/threads/ops",
        "/default/projects/web",
    ]
    assert listing[0]["abstract"].endswith("; 1 code project")
    project = listing[2]
    assert (project["kind"], project["count"]) == ("project", status.total_chunks)
    assert project["updated_at"] == iso(status.completed_at)
    assert project["abstract"] == (
        f"3 files, {status.total_chunks} chunks; languages: python 2, rust 1; "
        f"top terms: app, auth, parse, tokens; root: {root.resolve()}"
    )
    only = mem.memory_list_dir_with_abstract("/default/projects")["summaries"]
    assert [s["path"] for s in only] == ["/default/projects/web"]
    shallow = mem.memory_list_dir_with_abstract(depth=1)["summaries"]
    assert [s["path"] for s in shallow] == ["/default"]

    mem.delete_project("web")
    after = mem.memory_list_dir_with_abstract()["summaries"]
    assert [s["path"] for s in after] == ["/default", "/default/threads/ops"]
    assert "code project" not in after[0]["abstract"]


def test_a_namespace_holding_only_projects_is_listed(mem: memcore.Memory, tmp_path: Path) -> None:
    mem.index_project(_project(tmp_path / "p"), project_id="p", namespace="team/a")
    listing = mem.memory_list_dir_with_abstract(namespace="team/a")["summaries"]
    assert [(s["path"], s["kind"], s["count"]) for s in listing] == [
        ("/team/a", "namespace", 0),
        (
            "/team/a/projects/p",
            "project",
            mem.get_index_status("p", namespace="team/a").total_chunks,
        ),
    ]
    assert listing[0]["abstract"] == "0 memories, 0 entities, 0 conversations; 1 code project"
    assert listing[0]["updated_at"] == listing[1]["updated_at"]
    assert mem.memory_list_dir_with_abstract()["summaries"] == []  # the default namespace is empty


def _read(url: str, content: str) -> list[dict[str, object]]:
    return [{"tool": "READ", "documents": [{"path": url, "content": content}]}]


def test_maintenance_keeps_duplicate_version_contents_once(mem: memcore.Memory) -> None:
    url = "https://example.org/notes"
    for i, text in enumerate(["draft A", "draft B", "draft A"]):  # back to A: version 3
        mem.record_turn(f"c{i}", "read the notes", procedures=_read(url, text))
        mem.record_turn(f"o{i}", "read the notes", procedures=_read(url, text), namespace="other")
    before = mem.get_document_history(url).versions
    assert [v.version for v in before] == [1, 2, 3]
    assert before[2].content_hash == before[0].content_hash and all(v.has_content for v in before)

    report = mem.memory_run_maintenance()
    assert report["versions_deduplicated"] == 1
    after = mem.get_document_history(url).versions
    # Every version stays in the history; only the repeated content is dropped.
    assert [(v.version, v.content_hash) for v in after] == [
        (v.version, v.content_hash) for v in before
    ]
    assert [v.has_content for v in after] == [True, True, False]
    assert mem.get_document_content(after[0].id) == "draft A"
    assert mem.get_document_content(after[1].id) == "draft B"
    assert mem.memory_run_maintenance()["versions_deduplicated"] == 0
    # Maintenance of one namespace leaves the others alone.
    theirs = mem.get_document_history(url, namespace="other").versions
    assert all(v.has_content for v in theirs)
    assert mem.memory_run_maintenance(namespace="other")["versions_deduplicated"] == 1


@sqlite_only(
    "reads on a node record no access times, so a retrieval hit does not keep a "
    "conversation from being archived"
)
def test_a_recent_retrieval_hit_keeps_an_old_conversation(mem: memcore.Memory) -> None:
    old = datetime.now(UTC) - timedelta(days=40)
    mem.record_turn("rotation", "rotate api keys", "with the vault cli", at=old)
    mem.record_turn("party", "pizza toppings on friday", at=old)
    surfaced = mem.retrieve_context("rotate api keys", conversation_id="today")
    assert [i.turn.conversation_id for i in surfaced.items] == ["rotation"]

    report = mem.memory_run_maintenance(archive_after_days=30)
    assert report["conversations_archived"] == 1  # the party only: rotation was just used
    listing = {s["path"]: s["abstract"] for s in mem.memory_list_dir_with_abstract()["summaries"]}
    assert "(archived)" in listing["/default/conversations/party"]
    assert "(archived)" not in listing["/default/conversations/rotation"]
    assert mem.retrieve_context("pizza toppings").items == []
    found = mem.retrieve_context("rotate api keys", conversation_id="today")
    assert [i.turn.conversation_id for i in found.items] == ["rotation"]
    assert mem.memory_run_maintenance(archive_after_days=30)["conversations_archived"] == 0
