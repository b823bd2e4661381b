"""Valid time: invalidation, supersession, `as_of` reads, valid_from in the
past or future, and expiry. Errors in temporal operations write nothing."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from backends import both_backends
from memcore import InvalidParameterError, Memory, MemoryNotFoundError, MemoryRecord
from memcore._time import iso
from memcore.tools.groups import load_registry
from test_mcp_support.in_process import run_tool

pytestmark = both_backends

US = timedelta(microseconds=1)


def ids(records: list[MemoryRecord]) -> list[str]:
    return [r.id for r in records]


def snapshot(mem: Memory) -> list[dict[str, Any]]:
    """Every record of the default namespace, every field (listing does not touch)."""
    return [r.to_dict() for r in mem.list_memories(limit=1000)]


def tick() -> None:
    """Let the microsecond clock move on, so before/after comparisons are strict."""
    time.sleep(0.002)


@pytest.fixture
def eastern_local_time() -> Iterator[None]:
    """Run with a local time zone far from UTC, so 'naive means UTC' is tested,
    not assumed because the machine happens to run on UTC."""
    saved = os.environ.get("TZ")
    os.environ["TZ"] = "America/New_York"
    time.tzset()
    try:
        yield
    finally:
        if saved is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = saved
        time.tzset()


# -- defaults -------------------------------------------------------------------------


def test_valid_from_defaults_to_created_at_and_interval_is_open(mem: Memory) -> None:
    m = mem.store_memory("The office moved to Berlin").created
    assert m.valid_from == m.created_at
    assert m.valid_until is None and m.invalidated_at is None
    assert ids(mem.get_valid()) == [m.id]
    assert ids(mem.get_valid_at(m.created_at)) == [m.id]
    assert mem.get_valid_at(m.created_at - US) == []


# -- invalidate -----------------------------------------------------------------------


def test_invalidate_closes_validity_and_keeps_history(mem: Memory) -> None:
    m = mem.store_memory("Alice is on the platform team").created
    keep = mem.store_memory("Bob is on the search team").id
    tick()
    out = mem.invalidate(m.id, reason="Alice moved to infra")

    assert out.valid_until is not None and out.invalidated_at is not None
    assert out.valid_until == out.invalidated_at
    assert out.valid_until > m.created_at
    assert out.invalidation_reason == "Alice moved to infra"
    assert out.updated_at == out.invalidated_at and out.created_at == m.created_at
    assert out.content == m.content and not out.is_valid
    got = mem.get_memory(m.id)
    assert (got.valid_until, got.invalidated_at, got.invalidation_reason) == (
        out.valid_until,
        out.invalidated_at,
        "Alice moved to infra",
    )

    assert ids(mem.get_valid()) == [keep]
    assert ids(mem.list_recent_memories()) == [keep]
    assert m.id in ids(mem.list_memories())  # soft delete: still listed
    before = out.valid_until - US
    assert m.id in ids(mem.get_valid_at(before))
    assert m.id in ids(mem.list_memories(as_of=before))
    assert m.id not in ids(mem.get_valid_at(out.valid_until))
    assert m.id not in ids(mem.list_memories(as_of=out.valid_until + timedelta(days=1)))


def test_invalidate_without_reason(mem: Memory) -> None:
    m = mem.invalidate(mem.store_memory("no reason given").id)
    assert m.invalidation_reason is None and m.valid_until is not None


def test_re_invalidating_errors_and_changes_nothing(mem: Memory) -> None:
    m = mem.store_memory("once is enough").id
    mem.invalidate(m, "first")
    before = snapshot(mem)
    with pytest.raises(InvalidParameterError, match="already invalid") as info:
        mem.invalidate(m, "second")
    assert info.value.details["field"] == "id"
    assert snapshot(mem) == before
    assert mem.get_memory(m).invalidation_reason == "first"


def test_re_invalidating_a_future_dated_memory_errors(mem: Memory) -> None:
    m = mem.store_memory("from next century", valid_from="2100-01-01T00:00:00Z").id
    mem.invalidate(m, "first")
    before = snapshot(mem)
    with pytest.raises(InvalidParameterError):
        mem.invalidate(m, "second")
    assert snapshot(mem) == before


# -- supersede ------------------------------------------------------------------------


def test_supersede_links_both_ways_and_closes_the_old_interval(mem: Memory) -> None:
    old = mem.store_memory("User lives in Paris").created
    tick()
    new = mem.store_memory("User lives in Lyon").created
    tick()
    result = mem.supersede_memory(old.id, new.id)

    assert result.success is True
    assert old.id in result.message and new.id in result.message
    assert result.old.superseded_by == new.id and result.new.supersedes == old.id
    assert result.old.valid_until == new.valid_from
    assert result.old.invalidated_at is not None and result.old.invalidated_at > new.created_at
    assert result.new.valid_until is None and result.new.superseded_by is None

    got_old, got_new = mem.get_memory(old.id), mem.get_memory(new.id)
    assert (got_old.superseded_by, got_old.valid_until) == (new.id, new.valid_from)
    assert got_new.supersedes == old.id and got_new.valid_until is None
    assert (got_old.supersedes, got_new.superseded_by) == (None, None)
    assert got_old.updated_at > old.updated_at and got_new.updated_at > new.updated_at

    assert ids(mem.get_valid()) == [new.id]
    assert ids(mem.get_valid_at(new.valid_from - US)) == [old.id]
    assert ids(mem.get_valid_at(new.valid_from)) == [new.id]
    assert ids(mem.list_memories(as_of=new.valid_from - US)) == [old.id]
    assert ids(mem.list_memories(as_of=datetime.now(UTC))) == [new.id]
    assert set(ids(mem.list_memories())) == {old.id, new.id}


def test_supersede_closes_at_the_new_memorys_valid_from_not_now(mem: Memory) -> None:
    old = mem.store_memory("CEO is Ana", valid_from="2020-01-01T00:00:00Z").id
    new = mem.store_memory("CEO is Ben", valid_from="2023-06-01T00:00:00Z").id
    result = mem.supersede_memory(old, new)
    handover = datetime(2023, 6, 1, tzinfo=UTC)
    assert result.old.valid_until == handover

    assert ids(mem.get_valid_at("2019-12-31T23:59:59Z")) == []
    assert ids(mem.get_valid_at("2021-01-01T00:00:00Z")) == [old]
    assert ids(mem.get_valid_at(handover - US)) == [old]
    assert ids(mem.get_valid_at(handover)) == [new]
    assert ids(mem.get_valid_at("2024-01-01T00:00:00Z")) == [new]
    assert ids(mem.get_valid()) == [new]


def test_a_chain_of_supersessions_shows_each_version_in_its_time(mem: Memory) -> None:
    v1 = mem.store_memory("v1", valid_from="2020-01-01T00:00:00Z").id
    v2 = mem.store_memory("v2", valid_from="2021-01-01T00:00:00Z").id
    v3 = mem.store_memory("v3", valid_from="2022-01-01T00:00:00Z").id
    mem.supersede_memory(v1, v2)
    mem.supersede_memory(v2, v3)
    assert ids(mem.get_valid_at("2020-06-01T00:00:00Z")) == [v1]
    assert ids(mem.get_valid_at("2021-06-01T00:00:00Z")) == [v2]
    assert ids(mem.get_valid_at("2022-06-01T00:00:00Z")) == [v3]
    assert ids(mem.get_valid()) == [v3]
    middle = mem.get_memory(v2)
    assert (middle.supersedes, middle.superseded_by) == (v1, v3)


def test_superseding_an_already_superseded_memory_errors(mem: Memory) -> None:
    old, new, other = (mem.store_memory(t).id for t in ("old", "new", "other"))
    mem.supersede_memory(old, new)
    before = snapshot(mem)
    with pytest.raises(InvalidParameterError, match=f"already superseded by {new}") as info:
        mem.supersede_memory(old, other)
    assert info.value.details["field"] == "old_memory_id"
    assert snapshot(mem) == before
    assert mem.get_memory(other).supersedes is None


def test_superseding_with_a_superseded_memory_errors(mem: Memory) -> None:
    a, b, c = (mem.store_memory(t).id for t in ("a", "b", "c"))
    mem.supersede_memory(b, c)
    before = snapshot(mem)
    with pytest.raises(InvalidParameterError, match=f"supersede with {c}"):
        mem.supersede_memory(a, b)
    with pytest.raises(InvalidParameterError):
        mem.supersede_memory(c, b)  # would make a cycle
    assert snapshot(mem) == before


def test_self_supersede_errors(mem: Memory) -> None:
    m = mem.store_memory("me, myself").id
    before = snapshot(mem)
    with pytest.raises(InvalidParameterError, match="cannot supersede itself"):
        mem.supersede_memory(m, m)
    assert snapshot(mem) == before


def test_invalidating_a_superseded_memory_errors_naming_its_successor(mem: Memory) -> None:
    old, new = mem.store_memory("old").id, mem.store_memory("new").id
    mem.supersede_memory(old, new)
    before = snapshot(mem)
    with pytest.raises(InvalidParameterError, match=f"superseded by {new}"):
        mem.invalidate(old)
    assert snapshot(mem) == before


def assert_links_mutual(mem: Memory) -> None:
    """For every link old.superseded_by == new, new.supersedes == old."""
    records = {r.id: r for r in mem.list_memories(limit=1000)}
    for r in records.values():
        if r.superseded_by is not None:
            assert records[r.superseded_by].supersedes == r.id, (r.id, r.superseded_by)
        if r.supersedes is not None:
            assert records[r.supersedes].superseded_by == r.id, (r.id, r.supersedes)


def test_a_second_predecessor_does_not_break_the_first_link(mem: Memory) -> None:
    a, b, c = (mem.store_memory(t).id for t in ("a", "b", "c"))
    mem.supersede_memory(a, c)
    with contextlib.suppress(InvalidParameterError):
        mem.supersede_memory(b, c)  # refusing a second predecessor is a fine answer
    assert_links_mutual(mem)


def test_unknown_ids_in_temporal_operations(mem: Memory) -> None:
    real = mem.store_memory("real").id
    missing = "mem_01ZZZZZZZZZZZZZZZZZZZZZZZZ"
    before = snapshot(mem)
    with pytest.raises(MemoryNotFoundError) as info:
        mem.invalidate(missing)
    assert info.value.details == {"id": missing}
    with pytest.raises(MemoryNotFoundError) as info:
        mem.supersede_memory(real, missing)
    assert info.value.details == {"id": missing}
    with pytest.raises(MemoryNotFoundError) as info:
        mem.supersede_memory(missing, real)
    assert info.value.details == {"id": missing}
    assert snapshot(mem) == before


# -- as_of in every form --------------------------------------------------------------

START = datetime(2021, 3, 4, 5, 6, 7, tzinfo=UTC)


def as_of_forms(instant: datetime) -> list[Any]:
    """The same instant as ISO 8601 (Z and offset), aware and naive datetimes, epoch seconds."""
    plus_two = instant.astimezone(timezone(timedelta(hours=2)))
    forms: list[Any] = [
        instant.isoformat().replace("+00:00", "Z"),
        plus_two.isoformat(),
        instant,
        plus_two,
        instant.replace(tzinfo=None),  # naive = UTC
        instant.timestamp(),
    ]
    if instant.microsecond == 0:
        forms.append(int(instant.timestamp()))
    return forms


@pytest.mark.usefixtures("eastern_local_time")
def test_get_valid_at_accepts_iso_datetimes_and_epoch_seconds(mem: Memory) -> None:
    m = mem.store_memory("started in 2021", valid_from=START).id
    for form in as_of_forms(START):
        assert ids(mem.get_valid_at(form)) == [m], form
        assert ids(mem.list_memories(as_of=form)) == [m], form
    for form in as_of_forms(START - timedelta(seconds=1)):
        assert mem.get_valid_at(form) == [], form
        assert mem.list_memories(as_of=form) == [], form


@pytest.mark.usefixtures("eastern_local_time")
def test_naive_valid_from_is_utc(mem: Memory) -> None:
    m = mem.store_memory("naive start", valid_from=datetime(2021, 3, 4, 5, 6, 7)).created
    assert m.valid_from == START


def test_get_valid_at_respects_limit_offset_and_thread(mem: Memory) -> None:
    made = [mem.store_memory(f"f{i}", valid_from=START, thread_id=f"t{i % 2}").id for i in range(6)]
    at = START + timedelta(days=1)
    assert ids(mem.get_valid_at(at, limit=2)) == made[::-1][:2]
    assert ids(mem.get_valid_at(at, limit=2, offset=2)) == made[::-1][2:4]
    assert ids(mem.get_valid_at(at, thread_id="t1")) == [made[5], made[3], made[1]]


# -- as_of on every listing ------------------------------------------------------------


def superseded_pair(mem: Memory) -> tuple[MemoryRecord, MemoryRecord, datetime]:
    """An old fact replaced by a new one, and an instant when only the old one held."""
    old = mem.store_memory("The standup is at 9:00", thread_id="team").created
    tick()
    new = mem.store_memory("The standup is at 9:30", thread_id="team").created
    mem.supersede_memory(old.id, new.id)
    return old, new, new.valid_from - US


@pytest.mark.usefixtures("eastern_local_time")
def test_get_valid_and_recent_listings_take_as_of_in_every_form(mem: Memory) -> None:
    m = mem.store_memory("started in 2021", valid_from=START).id
    for form in as_of_forms(START):
        assert ids(mem.get_valid(as_of=form)) == [m], form
        assert ids(mem.list_recent_memories(as_of=form)) == [m], form
    for form in as_of_forms(START - timedelta(seconds=1)):
        assert mem.get_valid(as_of=form) == [], form
        assert mem.list_recent_memories(as_of=form) == [], form


def test_listings_as_of_see_what_held_then(mem: Memory) -> None:
    old, new, before = superseded_pair(mem)
    assert ids(mem.get_valid()) == ids(mem.list_recent_memories()) == [new.id]
    assert ids(mem.get_valid(as_of=before)) == [old.id]
    assert ids(mem.get_valid(as_of=before)) == ids(mem.get_valid_at(before))
    assert ids(mem.list_recent_memories(as_of=before, thread_id="team")) == [old.id]
    assert mem.list_recent_memories(as_of=before, thread_id="other") == []
    assert ids(mem.get_valid(as_of=new.valid_from)) == [new.id]
    # An instant takes the place of valid_only ("valid now") in the full listing too.
    assert ids(mem.list_memories(as_of=before, valid_only=True)) == [old.id]


def test_listing_as_of_rejects_a_time_it_cannot_read(mem: Memory) -> None:
    for listing in (mem.get_valid, mem.list_recent_memories, mem.list_memories):
        with pytest.raises(InvalidParameterError) as caught:
            listing(as_of="last tuesday")
        assert caught.value.details == {"field": "as_of"}


def test_mcp_listing_tools_pass_as_of(mem: Memory) -> None:
    old, new, before = superseded_pair(mem)
    then = {"as_of": iso(before)}
    for tool in ("get_valid", "list_recent_memories", "list_memories"):
        schema = load_registry().get(tool)
        assert schema is not None and "as_of" in schema.input_schema["properties"], tool
        found = run_tool(mem, tool, then)["memories"]
        assert [m["id"] for m in found] == [old.id], tool
    now = run_tool(mem, "get_valid")["memories"]
    assert [m["id"] for m in now] == [new.id]
    assert [m["id"] for m in run_tool(mem, "list_recent_memories")["memories"]] == [new.id]
    # as_of takes the place of valid_only over MCP as in Python.
    paged = run_tool(mem, "list_memories", {"valid_only": True, **then})["memories"]
    assert [m["id"] for m in paged] == [old.id]


# -- valid_from in the past or the future ---------------------------------------------


def test_past_valid_from_is_visible_at_that_earlier_time(mem: Memory) -> None:
    past = mem.store_memory("Joined the company", valid_from="2019-09-01T00:00:00Z").created
    now_only = mem.store_memory("Learned just now").created
    assert past.valid_from == datetime(2019, 9, 1, tzinfo=UTC)
    assert past.created_at > past.valid_from
    assert ids(mem.get_valid_at("2020-01-01T00:00:00Z")) == [past.id]
    assert mem.get_valid_at("2019-08-31T23:59:59Z") == []
    assert set(ids(mem.get_valid())) == {past.id, now_only.id}


def test_future_valid_from_is_not_valid_yet(mem: Memory) -> None:
    m = mem.store_memory("Office closes for renovation", valid_from="2099-01-01T00:00:00Z").id
    assert mem.get_valid() == [] and mem.list_recent_memories() == []
    assert ids(mem.get_valid_at("2099-06-01T00:00:00Z")) == [m]
    assert ids(mem.list_memories()) == [m]
    assert not mem.get_memory(m).is_valid


# -- expiry ---------------------------------------------------------------------------


def test_expiry_hides_a_memory_once_passed(mem: Memory) -> None:
    short = mem.store_memory("Parking spot 12 is free today", ttl=0.2).created
    durable = mem.store_memory("Parking is in the basement").id
    assert short.expires_at is not None
    # Valid until it expires (asked as of a time, so a slow machine cannot make this flaky).
    before_expiry = mem.get_valid_at(short.expires_at - US)
    assert set(ids(before_expiry)) == {short.id, durable}
    wait_until(short.expires_at)
    assert ids(mem.get_valid()) == [durable]
    assert ids(mem.list_recent_memories()) == [durable]
    # Expired is not deleted: the full listing still has it.
    assert short.id in ids(mem.list_memories())
    assert not mem.get_memory(short.id).is_valid


def test_expires_at_bounds_as_of_reads(mem: Memory) -> None:
    m = mem.store_memory(
        "Promo code SPRING", valid_from="2030-03-01T00:00:00Z", expires_at="2030-06-01T00:00:00Z"
    ).id
    assert ids(mem.get_valid_at("2030-05-31T23:59:59Z")) == [m]
    assert mem.get_valid_at("2030-06-01T00:00:00Z") == []
    assert mem.get_valid_at("2031-01-01T00:00:00Z") == []
    assert mem.get_valid_at("2030-02-28T00:00:00Z") == []


def test_ttl_expiry_in_as_of_reads(mem: Memory) -> None:
    m = mem.store_memory("valid for an hour", ttl=timedelta(hours=1)).created
    assert m.expires_at is not None
    assert ids(mem.get_valid_at(m.created_at + timedelta(minutes=59))) == [m.id]
    assert mem.get_valid_at(m.created_at + timedelta(hours=2)) == []


def test_update_can_set_an_expiry(mem: Memory) -> None:
    m = mem.store_memory("until further notice").created
    mem.update_memory(m.id, expires_at=m.created_at + timedelta(seconds=5))
    assert ids(mem.get_valid_at(m.created_at + timedelta(seconds=4))) == [m.id]
    assert mem.get_valid_at(m.created_at + timedelta(seconds=6)) == []


# -- nothing is written on any error ----------------------------------------------------

FailingOp = Callable[[Memory, dict[str, str]], object]

FAILING_OPS: dict[str, FailingOp] = {
    "invalidate-twice": lambda m, i: m.invalidate(i["invalid"], "again"),
    "invalidate-superseded": lambda m, i: m.invalidate(i["old"]),
    "invalidate-unknown": lambda m, i: m.invalidate("mem_01AAAAAAAAAAAAAAAAAAAAAAAA"),
    "supersede-self": lambda m, i: m.supersede_memory(i["plain"], i["plain"]),
    "supersede-again": lambda m, i: m.supersede_memory(i["old"], i["plain"]),
    "supersede-with-superseded": lambda m, i: m.supersede_memory(i["plain"], i["old"]),
    "supersede-unknown-new": lambda m, i: m.supersede_memory(i["plain"], "mem_nope"),
    "supersede-unknown-old": lambda m, i: m.supersede_memory("mem_nope", i["plain"]),
    "supersede-other-namespace": lambda m, i: m.supersede_memory(i["plain"], i["elsewhere"]),
    "get-valid-at-bad-time": lambda m, i: m.get_valid_at("not a time"),
    "list-bad-as-of": lambda m, i: m.list_memories(as_of="2021-02-30T00:00:00Z"),
}


def test_failed_temporal_operations_write_nothing(mem: Memory) -> None:
    made = {name: mem.store_memory(name).id for name in ("plain", "invalid", "old", "new")}
    made["elsewhere"] = mem.store_memory("elsewhere", namespace="other").id
    mem.invalidate(made["invalid"], "first")
    mem.supersede_memory(made["old"], made["new"])
    before, count = snapshot(mem), mem.status()["counts"]["memories"]
    other_before = [r.to_dict() for r in mem.list_memories(namespace="other")]

    # One store for every case (opening stores is the slow part); each case
    # must leave it exactly as it was, so the next starts from the same state.
    for name, op in FAILING_OPS.items():
        with pytest.raises((InvalidParameterError, MemoryNotFoundError)):
            op(mem, made)
        assert snapshot(mem) == before, name
        assert mem.status()["counts"]["memories"] == count, name
        assert [r.to_dict() for r in mem.list_memories(namespace="other")] == other_before, name


def wait_until(instant: datetime) -> None:
    """Sleep until the wall clock has passed `instant` (bounded)."""
    deadline = time.monotonic() + 10
    while datetime.now(UTC) <= instant and time.monotonic() < deadline:
        time.sleep(0.02)
    assert datetime.now(UTC) > instant
