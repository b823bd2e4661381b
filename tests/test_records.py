"""Records built from the engine's dicts: every raw field lands on the attribute of its
name, and a record built without `__init__` is the same value a normal one is."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest

from memcore._time import to_micros
from memcore.records.facts import MemoryRecord, Scores, SearchHit, builder

CREATED = 1_700_000_000_000_000
EVERY_TIME_DIFFERS = {
    "event_time": CREATED - 5,
    "created_at": CREATED,
    "updated_at": CREATED + 1,
    "accessed_at": CREATED + 2,
    "valid_from": CREATED - 1,
    "valid_until": CREATED + 3,
    "invalidated_at": CREATED + 4,
    "expires_at": CREATED + 6,
}


def raw_memory(**overrides: Any) -> dict[str, Any]:
    """A dict as the engine returns it, each field holding a value no other field has."""
    raw: dict[str, Any] = {
        "id": "mem_01M88Q802TTADSNHT3NQ8RP81Q",
        "namespace": "ns-a",
        "content": "the content",
        "memory_type": "episodic",
        "source": "explicit",
        "confidence": 0.75,
        "importance": 0.25,
        "metadata": '{"k": 1}',
        "thread_id": "thread-1",
        "user_id": "user-1",
        "invalidation_reason": "a reason",
        "supersedes": "mem_01M88Q802TTADSNHT3NQ8RP81A",
        "superseded_by": "mem_01M88Q802TTADSNHT3NQ8RP81B",
        **EVERY_TIME_DIFFERS,
    }
    raw.update(overrides)
    return raw


def test_every_raw_field_lands_on_its_own_attribute() -> None:
    raw = raw_memory()
    record = MemoryRecord.from_core(raw)
    for f in dataclasses.fields(MemoryRecord):
        value = getattr(record, f.name)
        if f.name in EVERY_TIME_DIFFERS:
            assert to_micros(value, f.name) == raw[f.name], f.name
        elif f.name == "metadata":
            assert value == {"k": 1}
        else:
            assert value == raw[f.name], f.name


def test_a_record_built_from_core_equals_one_built_by_init() -> None:
    record = MemoryRecord.from_core(raw_memory())
    twin = MemoryRecord(**{f.name: getattr(record, f.name) for f in dataclasses.fields(record)})
    assert record == twin
    assert record.to_dict() == twin.to_dict()
    assert repr(record) == repr(twin)
    assert pickle.loads(pickle.dumps(record)) == record
    assert copy.deepcopy(record) == record


def test_a_record_built_from_core_is_frozen() -> None:
    record = MemoryRecord.from_core(raw_memory())
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.content = "changed"  # type: ignore[misc]
    assert dataclasses.replace(record, content="changed").content == "changed"


def test_open_times_and_empty_metadata_convert_to_none_and_empty() -> None:
    raw = raw_memory(metadata="{}", event_time=None, valid_until=None, expires_at=None)
    record = MemoryRecord.from_core(raw)
    assert record.metadata == {}
    assert (record.event_time, record.valid_until, record.expires_at) == (None, None, None)


def test_a_hit_carries_its_memory_and_scores() -> None:
    raw = raw_memory(scores={"vector": 0.9, "bm25": None, "ppr": 0.1, "fused": 1.5})
    hit = SearchHit.from_core(raw, "hybrid")
    assert hit.memory == MemoryRecord.from_core(raw)
    assert hit.scores == Scores(vector=0.9, bm25=None, ppr=0.1, fused=1.5)
    assert hit.relevance_score == 0.75


def test_building_with_the_wrong_number_of_values_raises() -> None:
    build = builder(Scores)
    with pytest.raises(TypeError, match="fused"):
        build(0.9, None, 0.1)
    with pytest.raises(TypeError):
        build(0.9, None, 0.1, 1.5, "extra")


def test_a_builder_sets_every_field_by_position() -> None:
    built = builder(Scores)(0.9, None, 0.1, 1.5)
    assert built == Scores(vector=0.9, bm25=None, ppr=0.1, fused=1.5)
    assert builder(Scores) is builder(Scores), "made once per class"
