"""Recording the interaction log: turns as context managers and in one call,
read-wrapped versioning with provenance, staleness and volatility, atomicity, exactly-once turn ids,
the coding-agent scenario across conversations, and a project that moves."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import memcore
from backends import Backend, both_backends

pytestmark = both_backends


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "auth.py").write_text("def check(token):\n    return True\n")
    (root / "src" / "session.py").write_text("TTL = 60\n")
    (root / "CHANGELOG.md").write_text("# Changes\n")
    return root


@pytest.fixture
def local(backend: Backend, project: Path) -> Iterator[memcore.Memory]:
    with backend.open(mode="local", project_root=project, model=None) as m:
        yield m


def _edit(project: Path, path: str, text: str) -> None:
    (project / path).write_text(text)


def test_a_turn_records_reads_edits_and_the_answer(local: memcore.Memory, project: Path) -> None:
    conv = local.conversation("conv-1")
    with conv.turn(user="fix the login bug", turn_id="t-1") as turn:
        before = turn.read_document("src/auth.py")
        _edit(project, "src/auth.py", "def check(token):\n    return token.valid\n")
        (after,) = turn.procedure("EDIT", args={"path": "src/auth.py"}, documents=["src/auth.py"])
        turn.procedure("bash", args="pytest -q")
        turn.agent("Fixed the token check")
    assert (before.version, before.provenance, before.changed) == (1, "external", False)
    assert (after.version, after.previous_version, after.provenance) == (2, 1, "agent")
    assert after.changed and after.versions_since_seen == 1
    result = turn.result
    assert result.created and not result.embedded  # text-only store: BM25 + documents
    stored = local.get_turn("conv-1", "t-1")
    assert stored == result.turn
    assert [p.tool for p in stored.procedures] == ["READ", "EDIT", "BASH"]
    assert stored.procedures[2].args == "pytest -q" and stored.procedures[1].args == {
        "path": "src/auth.py"
    }
    assert [v.version for p in stored.procedures for v in p.documents] == [1, 2]
    assert stored.agent_text == "Fixed the token check"
    history = local.get_document_history("src/auth.py")
    assert [(v.version, v.provenance) for v in history.versions] == [(1, "external"), (2, "agent")]
    assert [t.tool for t in history.latest.touched_by] == ["EDIT"]
    assert history.familiarity == 1
    assert json.loads(json.dumps(result.to_dict()))["turn"]["turn_id"] == "t-1"


def test_nothing_is_recorded_when_the_turn_body_raises(local: memcore.Memory) -> None:
    conv = local.conversation("c")
    with pytest.raises(RuntimeError, match="tool crashed"), conv.turn(user="do it") as turn:
        turn.read_document("src/auth.py")
        turn.agent("half an answer")
        raise RuntimeError("tool crashed")
    assert local.list_turns("c") == []
    with pytest.raises(memcore.NotFoundError):
        local.get_document_history("src/auth.py")
    with pytest.raises(memcore.InvalidParameterError, match="discarded"):
        turn.read_document("src/auth.py")
    # A failing commit (the core refuses a tool name) writes nothing either.
    with pytest.raises(memcore.InvalidParameterError, match="Tool name"), conv.turn("x") as turn:
        turn.read_document("src/auth.py")
        turn.procedure("rm -rf /")
    assert local.list_turns("c") == []


def test_turn_ids_are_exactly_once(local: memcore.Memory) -> None:
    first = local.record_turn("c", "hello there", "hi", turn_id="t1")
    again = local.record_turn("c", "a different text", "ignored", turn_id="t1")
    assert first.created and not again.created
    assert again.turn == first.turn and again.turn.user_text == "hello there"
    generated = {local.record_turn("c", f"message {i}").turn_id for i in range(3)}
    assert len(generated) == 3
    assert [t.turn_index for t in local.list_turns("c")] == [0, 1, 2, 3]
    with local.conversation("c") as conv, conv.turn(user="once more", turn_id="t1") as turn:
        turn.read_document("src/auth.py")
    assert not turn.result.created and turn.result.turn.procedures == []


def test_one_call_record_turn_with_procedures(local: memcore.Memory, project: Path) -> None:
    old = (project / "src/auth.py").read_text()
    _edit(project, "src/auth.py", "patched\n")
    result = local.record_turn(
        "c1",
        "fix the login bug",
        "patched auth.py",
        procedures=[
            # Read before the edit: its content is passed, the file now holds the edit.
            {"tool": "READ", "documents": [{"path": "src/auth.py", "content": old}]},
            {"tool": "str_replace", "args": {"old": "True"}, "documents": ["src/auth.py"]},
            {"tool": "WEB_SEARCH", "args": {"q": "jwt expiry"}, "at": "2026-01-01T00:00:00Z"},
            {"tool": "GREP", "documents": [{"path": "src/session.py", "content_hash": "abc"}]},
        ],
        turn_id="t1",
    )
    procs = result.turn.procedures
    assert [p.tool for p in procs] == ["READ", "STR_REPLACE", "WEB_SEARCH", "GREP"]
    assert [(d.version, d.provenance) for p in procs for d in p.documents] == [
        (1, "external"),
        (2, "agent"),
        (1, "external"),
    ]
    assert procs[2].created_at.year == 2026 and procs[2].created_at.month == 1
    with pytest.raises(memcore.InvalidParameterError, match=r"procedures\[0\]"):
        local.record_turn("c1", "x", procedures=[{"tool": "READ", "document": ["typo"]}])
    with pytest.raises(memcore.InvalidParameterError, match="JSON"):
        local.record_turn("c1", "x", procedures=[{"tool": "BASH", "args": {1, 2}}])
    with pytest.raises(memcore.NotFoundError):
        local.record_turn("c1", "x", procedures=[{"tool": "READ", "documents": ["no/such.py"]}])
    assert len(local.list_turns("c1")) == 1


def test_writes_flag_overrides_the_tool_default(local: memcore.Memory, project: Path) -> None:
    with local.conversation("c") as conv, conv.turn(user="format the code") as turn:
        turn.read_document("src/session.py")
        _edit(project, "src/session.py", "TTL = 60  # seconds\n")
        (formatted,) = turn.procedure(
            "BASH", args="black .", documents=["src/session.py"], writes=True
        )
        _edit(project, "src/session.py", "TTL = 90\n")
        (seen,) = turn.procedure("EDIT", documents=["src/session.py"], writes=False)
    assert formatted.provenance == "agent" and seen.provenance == "external"


def test_staleness_after_an_external_change(local: memcore.Memory, project: Path) -> None:
    with local.conversation("conv-1") as conv, conv.turn(user="tune the session ttl") as turn:
        turn.read_document("src/session.py")
        _edit(project, "src/session.py", "TTL = 120\n")
        turn.procedure("EDIT", documents=["src/session.py"])
    # Someone edits the file outside the agent; a later read sees a new external version.
    _edit(project, "src/session.py", "TTL = 300  # ops changed this\n")
    with local.conversation("conv-2") as conv, conv.turn(user="what is the ttl") as turn:
        read = turn.read_document("src/session.py")
    assert (read.version, read.previous_version, read.changed) == (3, 2, True)
    assert read.provenance == "external" and read.familiarity == 1
    history = local.get_document_history("src/session.py")
    assert [v.provenance for v in history.versions] == ["external", "agent", "external"]
    # The first conversation's turn now reports that the file changed since it saw it.
    context = local.retrieve_context("session ttl", conversation_id="conv-9")
    item = next(i for i in context.items if i.turn.conversation_id == "conv-1")
    assert {(d.version.version, d.staleness, d.external_since) for d in item.changed_documents} == {
        (1, 2, 1),
        (2, 1, 1),
    }
    assert item.staleness_penalty < 1.0
    assert "src/session.py is now v3" in item.text and "1 external" in item.text
    # The same conversation reading again learns how far the file moved since it looked.
    _edit(project, "src/session.py", "TTL = 301\n")
    with local.conversation("conv-1") as conv, conv.turn(user="check the ttl again") as turn:
        again = turn.read_document("src/session.py")
    assert (again.version, again.versions_since_seen) == (4, 2)


def test_coding_agent_scenario_across_three_conversations(
    local: memcore.Memory, project: Path
) -> None:
    with local.conversation("conv-1") as conv, conv.turn(user="fix the login bug") as turn:
        turn.read_document("src/auth.py")
        _edit(project, "src/auth.py", "def check(token):\n    return token.expiry > now()\n")
        turn.procedure("EDIT", args={"path": "src/auth.py"}, documents=["src/auth.py"])
        turn.agent("The token check ignored expiry; it compares it with now() now.")
    with local.conversation("conv-2") as conv, conv.turn(user="write the release notes") as turn:
        turn.read_document("CHANGELOG.md")
        _edit(project, "CHANGELOG.md", "# Changes\n- fixes\n")
        turn.procedure("WRITE", documents=["CHANGELOG.md"])
        turn.agent("Added the release notes.")
    with local.conversation("conv-3") as conv:
        with conv.turn(user="why do users get logged out so early?") as turn:
            turn.read_document("./src/../src/auth.py")  # another spelling of the same file
            context = turn.retrieve_context()
            turn.agent("Sessions expire when the token does.")
        # No words in common with conversation 1: the shared file connects them.
        assert [i.turn.conversation_id for i in context.items] == ["conv-1"]
        item = context.items[0]
        assert item.shared_documents == ["src/auth.py"] and item.search_score is None
        assert "shared document src/auth.py" in context.text
        assert "EDIT src/auth.py (v2, by the agent)" in context.text
        assert "The token check ignored expiry" in context.text
        # Its own turns are never returned, even when they match best.
        own = conv.retrieve_context("why do users get logged out so early?")
        assert all(i.turn.conversation_id != "conv-3" for i in own.items)
        assert conv.documents == ["src/auth.py"]
    history = local.get_document_history("src/auth.py")
    assert history.familiarity == 2
    assert {t.conversation_id for v in history.versions for t in v.touched_by} == {
        "conv-1",
        "conv-3",
    }


def test_a_reopened_conversation_remembers_its_documents(
    project: Path, local: memcore.Memory
) -> None:
    with local.conversation("c") as conv, conv.turn(user="read auth") as turn:
        turn.read_document("src/auth.py")
    assert local.conversation("c").documents == ["src/auth.py"]
    assert [t.user_text for t in local.conversation("c").turns()] == ["read auth"]


def test_the_project_moves_and_local_memory_still_works(
    backend: Backend, project: Path, tmp_path: Path
) -> None:
    with (
        backend.open(mode="local", project_root=project, model=None) as m,
        m.conversation("c1").turn(user="fix the login bug") as turn,
    ):
        turn.read_document("src/auth.py")
        _edit(project, "src/auth.py", "def check(token):\n    return token.ok\n")
        turn.procedure("EDIT", documents=["src/auth.py"])
    moved = tmp_path / "elsewhere" / "renamed-project"
    shutil.copytree(project, moved, symlinks=True)
    shutil.rmtree(project)
    with backend.open(mode="local", project_root=moved, model=None) as m:
        assert m.path == backend.store_dir(moved / ".memcore")
        history = m.get_document_history(moved / "src" / "auth.py")
        assert [v.version for v in history.versions] == [1, 2]
        # The file is unchanged since the agent's edit: the same version, not a new one.
        same = m.read_document("src/auth.py", conversation_id="c1")
        assert (same.version, same.changed, same.versions_since_seen) == (2, False, 0)
        context = m.retrieve_context("", conversation_id="c2", documents=["src/auth.py"])
        assert [i.turn.conversation_id for i in context.items] == ["c1"]


def test_user_turns_stay_searchable_after_reopen(backend: Backend, data_dir: Path) -> None:
    with backend.open(data_dir, model=None) as m:
        m.record_turn("c1", "fix the login bug")
        assert len(m.retrieve_context("login bug").items) == 1
    with backend.open(data_dir, model=None) as m:
        assert len(m.retrieve_context("login bug").items) == 1


def test_turn_misuse_is_reported(local: memcore.Memory) -> None:
    conv = local.conversation("c")
    with pytest.raises(memcore.InvalidParameterError):
        conv.turn(user="  ")
    with pytest.raises(memcore.InvalidParameterError):
        local.conversation("")
    turn = conv.turn(user="hello")
    with pytest.raises(memcore.InvalidParameterError, match="not been committed"):
        _ = turn.result
    turn.commit()
    with pytest.raises(memcore.InvalidParameterError, match="already committed"):
        turn.commit()
    with pytest.raises(memcore.InvalidParameterError, match="writes"):
        conv.turn(user="x").procedure("EDIT", writes="yes")  # type: ignore[arg-type]


def test_volatility_is_versions_per_day(mem: memcore.Memory) -> None:
    start = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
    spec, notes = "https://example.org/spec", "https://example.org/notes"
    timeline = [
        (spec, 0, "v1"),
        (spec, 1, "v2"),
        (spec, 4, "v3"),
        (notes, 0, "a"),
        (notes, 0.25, "b"),
    ]
    for n, (url, days, text) in enumerate(timeline):
        read = [{"tool": "READ", "documents": [{"path": url, "content": text}]}]
        mem.record_turn(f"c{n}", f"read {url}", procedures=read, at=start + timedelta(days=days))
    history = mem.get_document_history(spec)
    assert [v.created_at for v in history.versions] == [
        start,
        start + timedelta(days=1),
        start + timedelta(days=4),
    ]
    assert history.volatility == pytest.approx(3 / 4)  # three versions over four days
    # Versions within one day count as one day.
    assert mem.get_document_history(notes).volatility == pytest.approx(2.0)
    # Each past turn's document signal carries the same value, next to its staleness.
    context = mem.retrieve_context("", documents=[spec], conversation_id="now")
    signals = {
        d.version.version: d for item in context.items for p in item.procedures for d in p.documents
    }
    assert sorted(signals) == [1, 2, 3]
    assert {v: s.volatility for v, s in signals.items()} == pytest.approx(
        {1: 0.75, 2: 0.75, 3: 0.75}
    )
    assert {v: s.staleness for v, s in signals.items()} == {1: 2, 2: 1, 3: 0}
