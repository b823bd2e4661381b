"""The records the engine returns are native classes (rust/memcore-py/src/records/) that
behave as the frozen dataclasses they replaced: the same attributes and `to_dict()`, aware
UTC datetimes, equality, `repr`, pickling and copying, and no attribute can be set."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import memcore
from backends import Backend
from memcore import _core
from memcore._time import from_micros, iso, to_micros
from memcore.records.facts import MemoryRecord, Scores, SearchHit

# The public fields in their order (docs/guide.md, "The records"): `to_dict()` follows it.
MEMORY_FIELDS = (
    "id",
    "namespace",
    "content",
    "memory_type",
    "source",
    "confidence",
    "importance",
    "metadata",
    "thread_id",
    "user_id",
    "event_time",
    "created_at",
    "updated_at",
    "accessed_at",
    "valid_from",
    "valid_until",
    "invalidated_at",
    "invalidation_reason",
    "supersedes",
    "superseded_by",
    "expires_at",
    "tier",
)
TIMES = ("event_time", "created_at", "updated_at", "accessed_at", "valid_from")
TIMES += ("valid_until", "invalidated_at", "expires_at")
DIM = 8


def unit(i: int) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[i % DIM] = 1.0
    return v


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[memcore.Memory]:
    with memcore.Memory(tmp_path / "data", model=None) as m:
        yield m


def _stored(mem: memcore.Memory) -> MemoryRecord:
    """A memory whose every optional field is set, then updated and invalidated so the
    times differ from one another."""
    created = mem.store_memory(
        "the content",
        vector=unit(0),
        memory_type="episodic",
        source="explicit",
        confidence=0.75,
        importance=0.25,
        metadata={"z": 1, "a": [1, {"b": None}]},
        thread_id="thread-1",
        user_id="user-1",
        event_time=datetime(2020, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
        expires_at=datetime(2999, 1, 1, tzinfo=UTC),
    ).created
    mem.update_memory(created.id, importance=0.3)
    return mem.invalidate(created.id, "a reason")


def _plain(value: Any) -> Any:
    """What the dataclass records' `to_dict()` made of a field (records/facts.py)."""
    return iso(value) if isinstance(value, datetime) else value


def test_the_public_names_are_the_native_classes() -> None:
    assert memcore.MemoryRecord is _core.MemoryRecord is MemoryRecord
    assert memcore.EntityView is _core.EntityView
    assert MemoryRecord.__module__ == "memcore._core"


def test_every_field_is_an_attribute_and_to_dict_is_json_ready(mem: memcore.Memory) -> None:
    record = _stored(mem)
    assert isinstance(record, MemoryRecord)
    assert record.metadata == {"z": 1, "a": [1, {"b": None}]}
    assert record.invalidation_reason == "a reason"
    assert record.event_time == datetime(2020, 1, 2, 3, 4, 5, 6, tzinfo=UTC)
    for name in TIMES:
        value = getattr(record, name)
        if value is not None:
            assert value.tzinfo is UTC, name
            assert from_micros(to_micros(value, name)) == value, name
    out = record.to_dict()
    assert tuple(out) == MEMORY_FIELDS
    assert out == {name: _plain(getattr(record, name)) for name in MEMORY_FIELDS}
    assert out["event_time"] == "2020-01-02T03:04:05.000006Z"
    assert out["expires_at"] == "2999-01-01T00:00:00Z", "no fraction when there is none"


def test_metadata_is_one_object_and_to_dict_copies_it(mem: memcore.Memory) -> None:
    record = _stored(mem)
    assert record.metadata is record.metadata
    copied = record.to_dict()["metadata"]
    assert copied == record.metadata and copied is not record.metadata
    empty = mem.store_memory("no metadata", vector=unit(1)).created
    assert empty.metadata == {} and empty.to_dict()["metadata"] == {}


def test_a_record_rebuilt_from_its_fields_is_equal(mem: memcore.Memory) -> None:
    record = _stored(mem)
    twin = MemoryRecord(**{name: getattr(record, name) for name in MEMORY_FIELDS})
    assert twin == record
    assert not twin != record  # noqa: SIM202  (`!=` comes from `__eq__`)
    assert twin.to_dict() == record.to_dict()
    assert repr(twin) == repr(record)
    assert repr(record).startswith(f"MemoryRecord(id={record.id!r}, namespace='default'")
    positional = MemoryRecord(*(getattr(record, name) for name in MEMORY_FIELDS))
    assert positional == record


def test_records_pickle_and_copy(mem: memcore.Memory) -> None:
    record = _stored(mem)
    for clone in (
        pickle.loads(pickle.dumps(record)),
        copy.copy(record),
        copy.deepcopy(record),
    ):
        assert type(clone) is MemoryRecord
        assert clone == record and clone.to_dict() == record.to_dict()
    deep = copy.deepcopy(record)
    assert deep.metadata is not record.metadata


def test_equality_needs_the_same_class_and_every_field(mem: memcore.Memory) -> None:
    record = _stored(mem)
    fields = {name: getattr(record, name) for name in MEMORY_FIELDS}
    assert MemoryRecord(**{**fields, "content": "other"}) != record
    assert MemoryRecord(**{**fields, "metadata": {}}) != record
    assert record != record.to_dict()
    assert Scores(0.5, None, None, 1.0) == Scores(vector=0.5, bm25=None, ppr=None, fused=1.0)
    assert Scores(0.5, None, None, 1.0) != Scores(0.5, 0.1, None, 1.0)
    # Hashable as a frozen dataclass was: by its fields, unless one is a dict.
    assert hash(Scores(0.5, None, None, 1.0)) == hash(Scores(0.5, None, None, 1.0))
    with pytest.raises(TypeError):
        hash(record)


def test_records_are_frozen(mem: memcore.Memory) -> None:
    record = _stored(mem)
    with pytest.raises(AttributeError):
        record.content = "changed"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        record.extra = 1  # type: ignore[attr-defined]
    assert record.content == "the content"


def test_a_wrong_field_value_is_refused() -> None:
    with pytest.raises(TypeError):
        Scores("high", None, None, 1.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Scores(0.5, None, None)  # type: ignore[call-arg]


def test_times_at_the_edges_of_the_calendar_match_the_facade() -> None:
    for moment in (
        datetime(1, 1, 1, tzinfo=UTC),
        datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
        datetime(2000, 2, 29, 12, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
    ):
        record = _core.CompactReport(True, 0, False)
        assert record.to_dict() == {
            "vectors_rebuilt": True,
            "tombstones_dropped": 0,
            "text_merged": False,
        }
        fields = dict.fromkeys(MEMORY_FIELDS)
        fields |= dict.fromkeys(("created_at", "updated_at", "accessed_at"), moment)
        fields |= {"valid_from": moment, "metadata": {}, "confidence": 1.0, "importance": 0.5}
        fields |= {"id": "m", "namespace": "n", "content": "c"}
        fields |= {"memory_type": "semantic", "source": "explicit", "tier": "durable"}
        built = MemoryRecord(**fields)
        assert built.created_at == moment and built.created_at.tzinfo is UTC
        assert built.to_dict()["created_at"] == iso(moment)


def test_a_hit_is_its_memory_plus_scores(mem: memcore.Memory) -> None:
    stored = mem.store_memory("kettle descaling schedule", vector=unit(2)).created
    hit = mem.recall("kettle", vector=unit(2), limit=1)[0]
    assert isinstance(hit, SearchHit) and isinstance(hit.scores, Scores)
    assert hit.memory.id == stored.id
    expected = round(min(1.0, max(0.0, (hit.scores.fused + 3.0) / 6.0)), 4)
    assert hit.relevance_score == expected
    out = hit.to_dict()
    assert tuple(out) == (*MEMORY_FIELDS, "scores", "relevance_score")
    assert out["scores"] == {
        "vector": hit.scores.vector,
        "bm25": hit.scores.bm25,
        "ppr": hit.scores.ppr,
        "fused": hit.scores.fused,
    }
    by_vector = mem.search(vector=unit(2), limit=1)[0]
    assert by_vector.relevance_score == round(by_vector.scores.vector or 0.0, 4)
    by_text = mem.search_text("kettle", limit=1)[0]
    bm25 = by_text.scores.bm25 or 0.0
    assert by_text.relevance_score == round(bm25 / (1.0 + bm25), 4)
    assert pickle.loads(pickle.dumps(hit)) == hit


def _alice_and_bob(mem: memcore.Memory) -> None:
    """Two people of thread t1 who know each other (Alice knows Bob, Bob reports to her)."""
    mem.save_memory(
        [
            {
                "name": "Alice",
                "entityType": "Person",
                "observations": ["Works at ACME on the billing system"],
                "relations": [{"targetEntity": "Bob", "relationType": "knows"}],
            },
            {
                "name": "Bob",
                "entityType": "Person",
                "observations": ["Maintains the payment gateway"],
                "relations": [{"targetEntity": "Alice", "relationType": "reports_to"}],
            },
        ],
        thread_id="t1",
    )


def test_graph_records_keep_their_shapes(mem: memcore.Memory) -> None:
    _alice_and_bob(mem)
    view = mem.get_entity("Alice")
    assert isinstance(view, memcore.EntityView) and view.name == "Alice"
    out = view.to_dict()
    entity_keys = tuple(view.entity.to_dict())
    assert tuple(out) == (*entity_keys, "observations", "observation_count", "relations")
    assert out["created_at"] == iso(view.entity.created_at)
    relation = next(r for r in view.relations if r.relation_type == "knows")
    assert (relation.from_name, relation.to_name) == ("Alice", "Bob")
    as_dict = relation.to_dict()
    assert (as_dict["from"], as_dict["to"]) == ("Alice", "Bob")
    assert "from_name" not in as_dict
    assert out["observations"] == [o.to_dict() for o in view.observations]
    assert view.observations[0].is_current
    assert view.observations is view.observations, "one list, as a dataclass field"
    for clone in (pickle.loads(pickle.dumps(view)), copy.deepcopy(view)):
        assert clone == view and clone.to_dict() == out
    related = mem.get_related("Alice", depth=1, direction="out")[0]
    assert related.name == "Bob" and related.via == relation
    assert tuple(related.to_dict())[-3:] == ("depth", "via", "parent")


def test_a_graph_page_is_native_and_knows_where_the_next_one_starts(
    mem: memcore.Memory,
) -> None:
    mem.create_entities([{"name": f"E{i}", "entityType": "Thing"} for i in range(3)])
    first = mem.read_graph(limit=2)
    assert isinstance(first, memcore.GraphPage)
    assert (first.offset, first.next_offset, first.total_entities) == (0, 2, 3)
    last = mem.read_graph(limit=2, offset=first.next_offset or 0, summary=True)
    assert (last.offset, last.next_offset, last.summary) == (2, None, True)
    out = first.to_dict()
    assert tuple(out) == first.__match_args__
    assert out["entities"] == [v.to_dict() for v in first.entities]
    assert pickle.loads(pickle.dumps(first)) == first
    view = mem.open_nodes(["E0", "E2"])
    assert isinstance(view, memcore.GraphView)
    assert sorted(v.name for v in view.entities) == ["E0", "E2"]
    assert view.to_dict() == {"entities": [v.to_dict() for v in view.entities], "relations": []}


# -- the interaction log, code search and store health ----------------------------------


def _roundtrips(record: Any) -> None:
    """Equal to its pickled, copied and deep-copied selves, with the same `to_dict()`;
    built again from its fields (`__match_args__`, positional) it is equal too."""
    for clone in (pickle.loads(pickle.dumps(record)), copy.copy(record), copy.deepcopy(record)):
        assert type(clone) is type(record)
        assert clone == record and clone.to_dict() == record.to_dict()
    fields = [getattr(record, name) for name in type(record).__match_args__]
    assert type(record)(*fields) == record
    assert repr(record).startswith(f"{type(record).__name__}(")
    assert tuple(record.to_dict()) == type(record).__match_args__
    with pytest.raises(AttributeError):
        setattr(record, type(record).__match_args__[0], None)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "auth.py").write_text("def check(token):\n    return True\n")
    return root


def test_the_interaction_log_records_are_native(project: Path) -> None:
    from memcore.records import conversation as records

    for name in ("TurnRecord", "ProcedureRecord", "DocumentVersion", "VersionTouch"):
        assert getattr(memcore, name) is getattr(_core, name) is getattr(records, name)
    with memcore.Memory(mode="local", project_root=project, model=None) as mem:
        at = datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC)
        mem.record_turn(
            "c1",
            "fix the login bug",
            "patched",
            procedures=[
                {"tool": "READ", "documents": ["src/auth.py"]},
                {"tool": "bash", "args": {"cmd": "pytest", "n": [1, 2]}},
            ],
            turn_id="t1",
            at=at,
        )
        (project / "src" / "auth.py").write_text("changed on disk\n")
        result = mem.record_turn(
            "c2", "review auth", procedures=[{"tool": "READ", "documents": ["src/auth.py"]}]
        )
        turn = mem.get_turn("c1", "t1")
        history = mem.get_document_history("src/auth.py")
        context = mem.retrieve_context("login bug", conversation_id="c3")
        listed = mem.list_turns("c1")

    assert isinstance(result, memcore.TurnResult) and isinstance(result.turn, _core.TurnRecord)
    assert result.to_dict()["turn"] == result.turn.to_dict()
    assert isinstance(turn, memcore.TurnRecord) and turn.created_at == at
    assert turn.created_at.tzinfo is UTC
    out = turn.to_dict()
    assert out["created_at"] == "2026-01-02T03:04:05.000006Z"
    read, bash = turn.procedures
    assert bash.args == {"cmd": "pytest", "n": [1, 2]}, "arguments read parsed"
    assert out["procedures"][1]["args"] == bash.args and out["procedures"][1]["documents"] == []
    assert out["procedures"][0]["documents"] == [v.to_dict() for v in read.documents]
    version = read.documents[0]
    assert isinstance(version, memcore.DocumentVersion)
    assert (version.path, version.version, version.touched_by) == ("src/auth.py", 1, [])
    assert version.created_in_turn == turn.id
    assert [t.turn_id for t in listed] == ["t1"] and listed[0].procedures == []
    for record in (turn, read, version, history, history.latest, context):
        _roundtrips(record)

    assert isinstance(history, memcore.DocumentHistory)
    assert history.latest is history.versions[-1], "the list's own record"
    first = history.versions[0]
    (touch,) = first.touched_by
    assert isinstance(touch, memcore.VersionTouch)
    assert (touch.conversation_id, touch.turn_id, touch.tool) == ("c1", "t1", "READ")
    assert history.to_dict()["versions"][0]["touched_by"] == [touch.to_dict()]
    _roundtrips(touch)

    assert isinstance(context, memcore.ContextResult)
    (item,) = [i for i in context.items if i.turn.conversation_id == "c1"]
    assert isinstance(item, memcore.ContextItem) and isinstance(item.shared_documents, list)
    assert item.turn.procedures == [], "a context item's turn comes without procedures"
    procedure = item.procedures[0]
    assert isinstance(procedure, memcore.ContextProcedure)
    signal = procedure.documents[0]
    assert isinstance(signal, memcore.DocumentSignal)
    assert (signal.version.version, signal.latest_version, signal.staleness) == (1, 2, 1)
    assert signal.changed_since and item.changed_documents == [signal]
    assert item.to_dict()["procedures"][0]["documents"][0]["version"] == signal.version.to_dict()
    assert context.to_dict()["items"] == [i.to_dict() for i in context.items]
    for record in (item, procedure, signal):
        _roundtrips(record)


def test_an_empty_history_has_no_latest_version() -> None:
    empty = _core.DocumentHistory("a.py", [], 0.0, 0)
    with pytest.raises(IndexError):
        _ = empty.latest


def test_code_hits_are_native(tmp_path: Path) -> None:
    from memcore.records import code as records

    assert memcore.CodeHit is _core.CodeHit is records.CodeHit
    root = tmp_path / "proj"
    root.mkdir()
    body = "\n".join(f"    total += len('{i:>60}')" for i in range(400))
    (root / "slug.py").write_text(f"def slugify(text):\n    total = 0\n{body}\n    return text\n")
    with memcore.Memory(tmp_path / "data", model=None) as mem:
        mem.index_project(root)
        # A long function is stored in windows; its first one starts at the def.
        hit = next(h for h in mem.search_code("slugify", limit=10) if h.start_line == 1)
    assert isinstance(hit, memcore.CodeHit) and isinstance(hit.scores, Scores)
    assert hit.file_path == "slug.py" and hit.name == "slugify"
    assert hit.relevance_score == round(min(1.0, max(0.0, (hit.scores.fused + 3.0) / 6.0)), 4)
    # The snippet is the chunk's own lines (no indexing header), cut after 2,000 characters.
    assert hit.snippet.startswith("def slugify(text):")
    kept = hit.snippet.split("\n")
    assert kept[-1] == f"… ({hit.end_line - hit.start_line + 1 - (len(kept) - 1)} more lines)"
    assert len(hit.snippet) < 2_100
    assert hit.to_dict()["scores"] == hit.scores.to_dict()
    _roundtrips(hit)


def test_store_health_reports_are_native(backend: Backend, tmp_path: Path) -> None:
    from memcore.records import store as records

    with backend.open(tmp_path / "data", model=None) as mem:
        mem.store_memory("a fact to check", vector=unit(0))
        check = mem.check()
        backup = mem.backup(tmp_path / "copy.db")
        repair = mem.repair()
    assert type(check) is _core.StoreCheck is records.StoreCheck
    assert check.ok and check.integrity == ["ok"] and check.problems == []
    assert {i.index for i in check.indexes} == {"catalog", "text", "vectors"}
    assert check.to_dict()["indexes"] == [i.to_dict() for i in check.indexes]
    assert isinstance(backup, records.BackupReport) and backup.path == str(tmp_path / "copy.db")
    assert backup.bytes > 0 and backup.last_seq >= 1
    assert isinstance(repair, records.RepairReport) and repair.database_set_aside is None
    problem = records.CheckProblem("text", "a message", "a fix")
    assert problem.to_dict() == {"area": "text", "message": "a message", "fix": "a fix"}
    for record in (check, check.indexes[0], backup, repair, problem):
        _roundtrips(record)


def test_analytics_are_native_with_the_contracts_camel_case_keys(mem: memcore.Memory) -> None:
    from memcore.records import graph as records

    assert memcore.Analytics is _core.Analytics is records.Analytics
    for name in ("RecentChange", "ImportantEntity", "ConnectedEntity", "OrphanedEntity"):
        assert getattr(records, name) is getattr(_core, name)
    _alice_and_bob(mem)
    mem.create_entity("Carol", "Person", ["Nobody links here"], thread_id="t1")
    report = mem.get_analytics("t1")
    assert isinstance(report, memcore.Analytics)
    change = report.recent_changes[0]
    assert isinstance(change, records.RecentChange) and change.last_modified.tzinfo is UTC
    assert change.to_dict() == {
        "entityName": change.entity_name,
        "entityType": "Person",
        "lastModified": iso(change.last_modified),
        "changeType": "created",
    }
    connected = next(c for c in report.most_connected if c.entity_name == "Alice")
    assert connected.connected_to == ["Bob"] and isinstance(connected.connected_to, list)
    assert connected.to_dict()["connectedTo"] == ["Bob"]
    orphan = next(o for o in report.orphaned_entities if o.entity_name == "Carol")
    assert orphan.to_dict() == {
        "entityName": "Carol",
        "entityType": "Person",
        "reason": "no_relations",
    }
    out = report.to_dict()
    assert tuple(out) == report.__match_args__
    assert out["top_important"] == [e.to_dict() for e in report.top_important]
    for record in (report, change, connected, orphan, report.top_important[0]):
        for clone in (pickle.loads(pickle.dumps(record)), copy.deepcopy(record)):
            assert clone == record and clone.to_dict() == record.to_dict()
        assert repr(record).startswith(f"{type(record).__name__}(")


def test_maintenance_counters_come_from_a_native_report(mem: memcore.Memory) -> None:
    report = mem.memory_run_maintenance(force_compact=True)
    assert report == {
        "ok": True,
        "memories_expired": 0,
        "versions_deduplicated": 0,
        "conversations_archived": 0,
        "summaries_refreshed": 0,
        "turn_claims_pruned": 0,
        "log_entries_compacted": 0,
        "vectors_rebuilt": report["vectors_rebuilt"],
        "tombstones_dropped": 0,
        "text_merged": report["text_merged"],
    }
    native = _core.MaintenanceReport(1, 2, 3, 4, 5, 6, True, 7, False)
    _roundtrips(native)


def test_a_snippet_is_the_chunks_tail_cut_at_a_line() -> None:
    from memcore.records.code import SNIPPET_MAX_CHARS, snippet_of

    assert SNIPPET_MAX_CHARS == 2000
    assert snippet_of("# header\na\nb", 2) == "a\nb"
    assert snippet_of("a\nb", 5) == "a\nb"
    assert snippet_of("h\n", 0) == "" == snippet_of("h\nx", -1)
    # Characters are counted as Python counts them: "ééé" is 3, not 6 bytes.
    assert snippet_of("h\nab\nééé", 2, max_chars=6) == "ab\nééé"
    assert snippet_of("h\nabc\ndef\nghi", 3, max_chars=5) == "abc\n… (2 more lines)"
    # The first line is kept however long it is.
    assert snippet_of("h\nabcdefgh\nx", 2, max_chars=3) == "abcdefgh\n… (1 more lines)"
