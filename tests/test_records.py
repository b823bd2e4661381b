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
        fields |= {"memory_type": "semantic", "source": "explicit"}
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


def test_graph_records_keep_their_shapes(mem: memcore.Memory) -> None:
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
