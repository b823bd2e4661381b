"""Facts: store, get, update, delete and list memories; every field of a memory
(docs/guide.md) survives the trip; embeddings never come back out."""

from __future__ import annotations

import json
import re
import sqlite3
import time
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import memcore
from backends import Backend, both_backends, sqlite_only
from conftest import unit
from memcore import Memory, MemoryNotFoundError, MemoryRecord, StoreResult

pytestmark = both_backends

ID_PATTERN = re.compile(r"^mem_[0-9A-HJKMNP-TV-Z]{26}$")
ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$")
TIME_FIELDS = (
    "event_time",
    "created_at",
    "updated_at",
    "accessed_at",
    "valid_from",
    "valid_until",
    "invalidated_at",
    "expires_at",
)


def without_access(record: MemoryRecord) -> dict[str, Any]:
    """A record's fields minus `accessed_at`, which every get moves."""
    fields = record.to_dict()
    del fields["accessed_at"]
    return fields


def tick() -> None:
    """Let the microsecond clock move on, so before/after comparisons are strict."""
    time.sleep(0.002)


# -- store and get ------------------------------------------------------------------


def test_store_returns_the_record_with_the_design_defaults(mem: Memory) -> None:
    before = datetime.now(UTC)
    result = mem.store_memory("User prefers TypeScript")
    after = datetime.now(UTC)

    assert isinstance(result, StoreResult)
    m = result.created
    assert result.id == m.id
    assert ID_PATTERN.match(m.id), m.id
    assert (m.namespace, m.content) == ("default", "User prefers TypeScript")
    assert (m.memory_type, m.source) == ("semantic", "extracted")
    assert (m.confidence, m.importance) == (1.0, 0.5)
    assert m.metadata == {}
    assert (m.thread_id, m.user_id, m.event_time, m.expires_at) == (None, None, None, None)
    assert before <= m.created_at <= after
    assert m.created_at == m.updated_at == m.accessed_at == m.valid_from
    assert (m.valid_until, m.invalidated_at, m.invalidation_reason) == (None, None, None)
    assert (m.supersedes, m.superseded_by) == (None, None)
    assert m.created_at.tzinfo is not None and m.created_at.utcoffset() == timedelta(0)
    assert result.similar == [] and result.action_required is None
    assert m.is_valid


def test_get_returns_what_was_stored(mem: Memory) -> None:
    stored = mem.store_memory("The deploy key lives in the vault", thread_id="t1").created
    got = mem.get_memory(stored.id)
    assert without_access(got) == without_access(stored)


def test_store_result_to_dict_has_the_mcp_shape(mem: Memory) -> None:
    result = mem.store_memory("Prod runs on Postgres 16")
    out = result.to_dict()
    assert set(out) == {"id", "created", "similar", "action_required", "embedding"}
    assert out["embedding"] == "none", "a text-only store keeps no vectors"
    assert out["id"] == result.id == out["created"]["id"]
    assert out["similar"] == [] and out["action_required"] is None
    json.dumps(out)


def test_every_field_round_trips(mem: Memory) -> None:
    event = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)
    valid_from = datetime(2024, 1, 1, tzinfo=UTC)
    expires = datetime(2099, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
    metadata = {"source_url": "https://example.com", "tags": ["a", "b"], "score": 0.25}
    stored = mem.store_memory(
        "Met Ana at the Lisbon offsite",
        memory_type="episodic",
        source="explicit",
        confidence=0.75,
        importance=0.9,
        metadata=metadata,
        thread_id="conv-42",
        user_id="user-7",
        event_time=event,
        valid_from=valid_from,
        expires_at=expires,
    ).created
    for record in (stored, mem.get_memory(stored.id), mem.list_memories()[0]):
        assert record.content == "Met Ana at the Lisbon offsite"
        assert (record.memory_type, record.source) == ("episodic", "explicit")
        assert (record.confidence, record.importance) == (0.75, 0.9)
        assert record.metadata == metadata
        assert (record.thread_id, record.user_id) == ("conv-42", "user-7")
        assert record.event_time == event
        assert record.valid_from == valid_from
        assert record.expires_at == expires
        assert record.valid_until is None
    assert stored.created_at > valid_from  # valid time and transaction time are separate


def test_every_memory_type_and_source_is_accepted(mem: Memory) -> None:
    for memory_type in ("episodic", "semantic", "procedural"):
        for source in ("explicit", "extracted"):
            m = mem.store_memory("x marks the spot", memory_type=memory_type, source=source)
            got = mem.get_memory(m.id)
            assert (got.memory_type, got.source) == (memory_type, source)


@pytest.mark.parametrize(
    "metadata",
    [
        {"a": 1},
        [1, "two", None, 3.5, False],
        {"deep": {"x": [{"y": [1, {"z": True}]}], "empty": {}, "none": None}},
        {"名前": "東京タワー 🗼", "emoji": "😀👍", "rtl": "مرحبا", "nul-free": "tab\tnewline\n"},
        "just a string",
        42,
        -3.25,
        True,
        [],
        {},
    ],
    ids=[
        "dict",
        "list",
        "nested",
        "unicode",
        "string",
        "int",
        "float",
        "bool",
        "empty-list",
        "empty-dict",
    ],
)
def test_metadata_round_trips_arbitrary_json(mem: Memory, metadata: Any) -> None:
    m = mem.store_memory("fact with metadata", metadata=metadata).created
    assert m.metadata == metadata
    assert mem.get_memory(m.id).metadata == metadata
    assert mem.list_memories()[0].metadata == metadata
    assert json.loads(json.dumps(m.to_dict()))["metadata"] == metadata


def test_unicode_content_and_tags_round_trip(mem: Memory) -> None:
    content = "Ünïcödé: 日本語のテキスト, emoji 🧠, combining é, math ∑x²"
    m = mem.store_memory(content, thread_id="スレッド-1", user_id="usér").created
    got = mem.get_memory(m.id)
    assert (got.content, got.thread_id, got.user_id) == (content, "スレッド-1", "usér")
    assert mem.list_memories(thread_id="スレッド-1")[0].id == m.id


def test_time_inputs_in_any_form_store_the_same_instant(mem: Memory) -> None:
    instant = datetime(2023, 3, 4, 5, 6, 7, tzinfo=UTC)
    forms: list[Any] = [
        instant,
        instant.replace(tzinfo=None),  # naive = UTC
        instant.astimezone(timezone(timedelta(hours=-5))),
        "2023-03-04T05:06:07Z",
        "2023-03-04T07:06:07+02:00",
        instant.timestamp(),
        int(instant.timestamp()),
    ]
    for form in forms:
        m = mem.store_memory("an event", event_time=form).created
        assert m.event_time == instant, form
        assert mem.get_memory(m.id).event_time == instant, form


def test_event_time_before_the_epoch_round_trips(mem: Memory) -> None:
    moon = datetime(1969, 7, 20, 20, 17, 40, tzinfo=UTC)
    m = mem.store_memory("Apollo 11 landed", memory_type="episodic", event_time=moon).created
    assert mem.get_memory(m.id).event_time == moon


def test_ttl_sets_expires_at_from_now(mem: Memory) -> None:
    before = datetime.now(UTC)
    m = mem.store_memory("temporary", ttl=3600).created
    after = datetime.now(UTC)
    assert m.expires_at is not None
    assert before + timedelta(hours=1) <= m.expires_at <= after + timedelta(hours=1)
    d = mem.store_memory("temporary too", ttl=timedelta(days=2)).created
    assert d.expires_at is not None
    assert abs(d.expires_at - d.created_at - timedelta(days=2)) < timedelta(seconds=5)
    assert mem.get_memory(m.id).expires_at == m.expires_at


# -- embeddings ------------------------------------------------------------------------


def test_embeddings_never_appear_in_records(mem: Memory) -> None:
    vector = unit(1, 8)
    m = mem.store_memory("with a vector", vector=vector).created
    for record in (m, mem.get_memory(m.id), *mem.list_memories(), *mem.get_valid()):
        out = record.to_dict()
        assert not any("embed" in k or "vector" in k for k in out)
        assert not any(isinstance(v, np.ndarray | list) for k, v in out.items() if k != "metadata")
        assert not hasattr(record, "embedding")
    stored = mem.store_memory("x", vector=unit(2, 8)).to_dict()
    # The result says whether the vector is stored, never what it is.
    assert stored.pop("embedding") == "stored"
    assert "embed" not in json.dumps(stored)


def test_embedding_is_stored_as_normalised_little_endian_f32(
    backend: Backend, data_dir: Path
) -> None:
    raw = np.array([3.0, 4.0, 0.0, 0.0], dtype=np.float32)  # norm 5
    with backend.open(data_dir, model=None) as mem:
        with_vector = mem.store_memory("with a vector", vector=raw).id
        text_only = mem.store_memory("text only").id
    db = sqlite3.connect(f"file:{data_dir / 'memcore.db'}?mode=ro", uri=True)
    try:
        rows = dict(db.execute("SELECT id, embedding FROM memories").fetchall())
    finally:
        db.close()
    assert rows[text_only] is None
    blob = rows[with_vector]
    assert len(blob) == 16
    assert np.frombuffer(blob, dtype="<f4").tolist() == pytest.approx([0.6, 0.8, 0.0, 0.0])
    if backend.on_postgres:  # the truth holds the very bytes of the node's replica
        truth = backend.query(data_dir, "SELECT id, encode(embedding, 'hex') FROM memcore.memories")
        assert sorted(truth) == sorted([[text_only, ""], [with_vector, blob.hex()]])


# -- update ----------------------------------------------------------------------------


def test_update_changes_content_and_moves_updated_at_only(mem: Memory) -> None:
    old = mem.store_memory("User prefers tabs", vector=unit(1, 8)).created
    tick()
    new = mem.update_memory(old.id, content="User prefers spaces", vector=unit(2, 8))
    assert new.id == old.id
    assert new.content == "User prefers spaces"
    assert new.created_at == old.created_at
    assert new.valid_from == old.valid_from
    assert new.updated_at > old.updated_at
    got = mem.get_memory(old.id)
    assert got.content == "User prefers spaces" and got.updated_at == new.updated_at
    assert [m.content for m in mem.list_memories()] == ["User prefers spaces"]


def test_update_of_other_fields_keeps_the_content(mem: Memory) -> None:
    old = mem.store_memory("Standup is at 9:30", thread_id="t1", metadata={"v": 1}).created
    tick()
    new = mem.update_memory(
        old.id,
        memory_type="procedural",
        source="explicit",
        confidence=0.5,
        importance=1.0,
        metadata={"v": 2, "tags": ["meetings"]},
        thread_id="t2",
        user_id="u1",
        event_time="2025-01-02T03:04:05Z",
        expires_at="2098-01-01T00:00:00Z",
    )
    assert new.content == old.content
    assert (new.memory_type, new.source, new.confidence, new.importance) == (
        "procedural",
        "explicit",
        0.5,
        1.0,
    )
    assert new.metadata == {"v": 2, "tags": ["meetings"]}
    assert (new.thread_id, new.user_id) == ("t2", "u1")
    assert new.event_time == datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert new.expires_at == datetime(2098, 1, 1, tzinfo=UTC)
    assert new.updated_at > old.updated_at and new.created_at == old.created_at
    assert without_access(mem.get_memory(old.id)) == without_access(new)


def test_update_leaves_unnamed_fields_alone(mem: Memory) -> None:
    old = mem.store_memory(
        "Cafeteria closes at 3", thread_id="t1", user_id="u1", metadata={"k": "v"}
    ).created
    new = mem.update_memory(old.id, importance=0.9)
    assert (new.thread_id, new.user_id, new.metadata) == ("t1", "u1", {"k": "v"})
    assert (new.memory_type, new.source, new.confidence) == (
        old.memory_type,
        old.source,
        old.confidence,
    )


def test_update_metadata_to_none_clears_it(mem: Memory) -> None:
    m = mem.store_memory("has metadata", metadata={"a": 1}).created
    assert mem.update_memory(m.id, metadata=None).metadata is None
    assert mem.get_memory(m.id).metadata is None


# -- get records access -----------------------------------------------------------------


@sqlite_only("reads on a node record no access times (each would be a shared write)")
def test_get_records_accessed_at(mem: Memory) -> None:
    m = mem.store_memory("The wifi password is on the fridge").created
    tick()
    first = mem.get_memory(m.id)
    assert first.accessed_at > m.accessed_at
    assert first.updated_at == m.updated_at  # reading is not an update
    tick()
    second = mem.get_memory(m.id)
    assert second.accessed_at > first.accessed_at
    # Persisted, not just returned: a listing (which does not touch) sees it.
    assert mem.list_memories()[0].accessed_at == second.accessed_at


def test_listing_does_not_touch_accessed_at(mem: Memory) -> None:
    m = mem.store_memory("listed, not read").created
    tick()
    mem.list_memories()
    mem.get_valid()
    assert mem.list_memories()[0].accessed_at == m.accessed_at


# -- delete ----------------------------------------------------------------------------


def test_delete_then_get_raises_memory_not_found(mem: Memory) -> None:
    keep = mem.store_memory("keep me").id
    gone = mem.store_memory("delete me").id
    mem.delete_memory(gone)
    with pytest.raises(MemoryNotFoundError) as info:
        mem.get_memory(gone)
    assert info.value.details == {"id": gone}
    assert [m.id for m in mem.list_memories()] == [keep]
    assert mem.status()["counts"]["memories"] == 1
    with pytest.raises(MemoryNotFoundError):
        mem.delete_memory(gone)
    with pytest.raises(MemoryNotFoundError):
        mem.update_memory(gone, importance=0.1)


def test_delete_is_hard_not_historical(mem: Memory) -> None:
    m = mem.store_memory("will vanish").created
    mem.delete_memory(m.id)
    assert mem.get_valid_at(m.created_at) == []
    assert mem.list_memories() == []


# -- listing ---------------------------------------------------------------------------


def test_list_is_newest_first_with_limit_and_offset(mem: Memory) -> None:
    ids = [mem.store_memory(f"fact number {i}").id for i in range(25)]
    assert ids == sorted(ids), "ids sort in creation order"
    assert len(set(ids)) == 25
    newest_first = ids[::-1]

    assert [m.id for m in mem.list_memories()] == newest_first[:20]  # default limit 20
    assert [m.id for m in mem.list_memories(limit=10)] == newest_first[:10]
    assert [m.id for m in mem.list_memories(limit=10, offset=10)] == newest_first[10:20]
    assert [m.id for m in mem.list_memories(limit=10, offset=20)] == newest_first[20:]
    assert mem.list_memories(limit=10, offset=25) == []
    assert [m.id for m in mem.list_memories(limit=1000)] == newest_first

    created = [m.created_at for m in mem.list_memories(limit=1000)]
    assert created == sorted(created, reverse=True)


def test_list_memories_shows_every_state_by_default(mem: Memory) -> None:
    plain = mem.store_memory("plain").id
    invalid = mem.store_memory("invalidated").id
    old = mem.store_memory("old").id
    new = mem.store_memory("new").id
    mem.invalidate(invalid, "wrong")
    mem.supersede_memory(old, new)
    assert {m.id for m in mem.list_memories()} == {plain, invalid, old, new}
    assert {m.id for m in mem.list_memories(valid_only=True)} == {plain, new}


def test_list_recent_memories_returns_the_newest_valid_ones(mem: Memory) -> None:
    ids = [mem.store_memory(f"recent {i}").id for i in range(14)]
    assert [m.id for m in mem.list_recent_memories()] == ids[::-1][:10]  # default limit 10
    assert [m.id for m in mem.list_recent_memories(limit=3)] == ids[::-1][:3]

    mem.invalidate(ids[-1])
    mem.supersede_memory(ids[-2], ids[0])
    recent = [m.id for m in mem.list_recent_memories(limit=3)]
    assert recent == [ids[-3], ids[-4], ids[-5]]


def test_list_recent_memories_filters_by_thread(mem: Memory) -> None:
    a = mem.store_memory("in a", thread_id="a").id
    mem.store_memory("in b", thread_id="b")
    assert [m.id for m in mem.list_recent_memories(thread_id="a")] == [a]


# -- to_dict ---------------------------------------------------------------------------


def test_to_dict_is_json_serialisable_with_iso_z_times(mem: Memory) -> None:
    old = mem.store_memory(
        "everything set",
        event_time=datetime(2024, 1, 1, 12, 0, 0, 500, tzinfo=UTC),
        valid_from=datetime(2024, 1, 1, tzinfo=timezone(timedelta(hours=3))),
        ttl=60,
        metadata={"k": ["v"]},
    ).id
    new = mem.store_memory("replacement").id
    result = mem.supersede_memory(old, new)
    record = mem.get_memory(old)

    out = json.loads(json.dumps(record.to_dict()))
    assert set(out) == set(type(record).__match_args__)
    for name in TIME_FIELDS:
        assert isinstance(out[name], str) and ISO_Z.match(out[name]), (name, out[name])
        assert datetime.fromisoformat(out[name]) == getattr(record, name)
    assert out["valid_from"] == "2023-12-31T21:00:00Z"
    assert out["event_time"] == "2024-01-01T12:00:00.000500Z"

    dumped = json.loads(json.dumps(result.to_dict()))
    assert dumped["success"] is True
    assert dumped["old"]["superseded_by"] == new and dumped["new"]["supersedes"] == old


def test_unset_times_are_null_in_to_dict(mem: Memory) -> None:
    out = mem.store_memory("bare").created.to_dict()
    for name in ("event_time", "valid_until", "invalidated_at", "expires_at"):
        assert out[name] is None


def test_records_are_frozen(mem: Memory) -> None:
    m = mem.store_memory("immutable").created
    with pytest.raises(AttributeError):
        m.content = "changed"  # type: ignore[misc]
    assert isinstance(m, memcore.MemoryRecord)
