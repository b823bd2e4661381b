"""Namespaces are isolation boundaries: no read or write by id crosses one,
whether the namespace comes per call or from `Memory(namespace=...)`.
`thread_id` filters listings inside a namespace."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from backends import Backend, both_backends
from memcore import Memory, MemoryNotFoundError, MemoryRecord

pytestmark = both_backends


def ids(records: list[MemoryRecord]) -> list[str]:
    return [r.id for r in records]


def every_record(mem: Memory, namespace: str) -> list[dict[str, Any]]:
    return [r.to_dict() for r in mem.list_memories(limit=1000, namespace=namespace)]


@pytest.fixture
def two(mem: Memory) -> dict[str, str]:
    """One memory in "alice" and one in "bob", stored with per-call namespaces."""
    return {
        "alice": mem.store_memory("Alice's secret", namespace="alice").id,
        "bob": mem.store_memory("Bob's secret", namespace="bob").id,
    }


@pytest.fixture
def alice(backend: Backend, data_dir: Path) -> Iterator[Memory]:
    """A Memory whose default namespace is "alice"."""
    with backend.open(data_dir, model=None, namespace="alice") as m:
        yield m


# -- per-call namespace -----------------------------------------------------------------


def test_records_carry_their_namespace(mem: Memory, two: dict[str, str]) -> None:
    assert mem.get_memory(two["alice"], namespace="alice").namespace == "alice"
    assert mem.get_memory(two["bob"], namespace="bob").namespace == "bob"


def test_get_never_crosses_a_namespace(mem: Memory, two: dict[str, str]) -> None:
    for namespace in ("bob", "default", "ALICE", "alice "):
        with pytest.raises(MemoryNotFoundError):
            mem.get_memory(two["alice"], namespace=namespace)
    with pytest.raises(MemoryNotFoundError):
        mem.get_memory(two["alice"])  # instance default is "default"


def test_listings_never_cross_a_namespace(mem: Memory, two: dict[str, str]) -> None:
    default = mem.store_memory("default's fact").id
    for namespace, expected in (("alice", two["alice"]), ("bob", two["bob"])):
        assert ids(mem.list_memories(namespace=namespace)) == [expected]
        assert ids(mem.list_recent_memories(namespace=namespace)) == [expected]
        assert ids(mem.get_valid(namespace=namespace)) == [expected]
        assert ids(mem.get_valid_at("2999-01-01T00:00:00Z", namespace=namespace)) == [expected]
        assert ids(mem.list_memories(as_of="2999-01-01T00:00:00Z", namespace=namespace)) == [
            expected
        ]
    assert ids(mem.list_memories()) == [default]
    assert ids(mem.get_valid()) == [default]
    assert mem.list_memories(namespace="carol") == []


def test_update_never_crosses_a_namespace(mem: Memory, two: dict[str, str]) -> None:
    before = every_record(mem, "alice")
    with pytest.raises(MemoryNotFoundError):
        mem.update_memory(two["alice"], content="hijacked", namespace="bob")
    with pytest.raises(MemoryNotFoundError):
        mem.update_memory(two["alice"], importance=0.0)
    assert every_record(mem, "alice") == before
    assert mem.update_memory(two["alice"], importance=0.1, namespace="alice").importance == 0.1


def test_delete_never_crosses_a_namespace(mem: Memory, two: dict[str, str]) -> None:
    with pytest.raises(MemoryNotFoundError):
        mem.delete_memory(two["alice"], namespace="bob")
    with pytest.raises(MemoryNotFoundError):
        mem.delete_memory(two["alice"])
    assert ids(mem.list_memories(namespace="alice")) == [two["alice"]]
    mem.delete_memory(two["alice"], namespace="alice")
    assert mem.list_memories(namespace="alice") == []
    assert ids(mem.list_memories(namespace="bob")) == [two["bob"]]


def test_invalidate_never_crosses_a_namespace(mem: Memory, two: dict[str, str]) -> None:
    before = every_record(mem, "alice")
    with pytest.raises(MemoryNotFoundError):
        mem.invalidate(two["alice"], "from bob", namespace="bob")
    assert every_record(mem, "alice") == before
    assert ids(mem.get_valid(namespace="alice")) == [two["alice"]]


def test_supersede_never_crosses_a_namespace(mem: Memory, two: dict[str, str]) -> None:
    before = every_record(mem, "alice") + every_record(mem, "bob")
    for namespace in ("alice", "bob", "default"):
        with pytest.raises(MemoryNotFoundError):
            mem.supersede_memory(two["alice"], two["bob"], namespace=namespace)
        with pytest.raises(MemoryNotFoundError):
            mem.supersede_memory(two["bob"], two["alice"], namespace=namespace)
    assert every_record(mem, "alice") + every_record(mem, "bob") == before


def test_counts_are_per_namespace(mem: Memory, two: dict[str, str]) -> None:
    mem.store_memory("mine")
    assert mem.status()["counts"]["memories"] == 1


# -- instance namespace ------------------------------------------------------------------


def test_instance_namespace_is_the_default_of_every_call(alice: Memory) -> None:
    assert alice.namespace == "alice"
    m = alice.store_memory("stored without naming a namespace").created
    assert m.namespace == "alice"
    assert alice.get_memory(m.id).id == m.id
    assert ids(alice.list_memories()) == [m.id]
    assert ids(alice.get_valid()) == [m.id]
    assert alice.status()["counts"]["memories"] == 1
    assert alice.list_memories(namespace="default") == []
    with pytest.raises(MemoryNotFoundError):
        alice.get_memory(m.id, namespace="default")


def test_per_call_namespace_overrides_the_instance_one(alice: Memory) -> None:
    mine = alice.store_memory("alice's").id
    theirs = alice.store_memory("bob's", namespace="bob").id
    assert ids(alice.list_memories()) == [mine]
    assert ids(alice.list_memories(namespace="bob")) == [theirs]
    with pytest.raises(MemoryNotFoundError):
        alice.get_memory(theirs)
    with pytest.raises(MemoryNotFoundError):
        alice.invalidate(theirs)
    with pytest.raises(MemoryNotFoundError):
        alice.delete_memory(theirs)
    with pytest.raises(MemoryNotFoundError):
        alice.supersede_memory(mine, theirs)
    alice.invalidate(theirs, namespace="bob")
    assert alice.get_valid(namespace="bob") == []
    assert ids(alice.get_valid()) == [mine]


def test_two_instances_on_one_store_see_only_their_namespace(
    backend: Backend, data_dir: Path
) -> None:
    with backend.open(data_dir, model=None, namespace="alice") as a:
        alice_id = a.store_memory("alice's fact").id
    with backend.open(data_dir, model=None, namespace="bob") as b:
        bob_id = b.store_memory("bob's fact").id
        assert ids(b.list_memories()) == [bob_id]
        with pytest.raises(MemoryNotFoundError):
            b.get_memory(alice_id)
    with backend.open(data_dir, model=None) as default:
        assert default.list_memories() == []
        assert ids(default.list_memories(namespace="alice")) == [alice_id]


# -- thread_id --------------------------------------------------------------------------

Listing = Callable[..., list[MemoryRecord]]


@pytest.mark.parametrize(
    "listing",
    [
        lambda m, **kw: m.list_memories(**kw),
        lambda m, **kw: m.list_recent_memories(**kw),
        lambda m, **kw: m.get_valid(**kw),
        lambda m, **kw: m.get_valid_at("2999-01-01T00:00:00Z", **kw),
    ],
    ids=["list_memories", "list_recent_memories", "get_valid", "get_valid_at"],
)
def test_thread_id_filters_every_listing(mem: Memory, listing: Listing) -> None:
    t1 = [mem.store_memory(f"t1 fact {i}", thread_id="t1").id for i in range(3)]
    t2 = mem.store_memory("t2 fact", thread_id="t2").id
    untagged = mem.store_memory("no thread").id
    other_ns = mem.store_memory("t1 elsewhere", thread_id="t1", namespace="other").id

    assert ids(listing(mem, thread_id="t1")) == t1[::-1]
    assert ids(listing(mem, thread_id="t2")) == [t2]
    assert listing(mem, thread_id="t3") == []
    assert set(ids(listing(mem))) == {*t1, t2, untagged}
    assert ids(listing(mem, thread_id="t1", namespace="other")) == [other_ns]


def test_thread_filter_combines_with_validity(mem: Memory) -> None:
    a = mem.store_memory("a", thread_id="t").id
    b = mem.store_memory("b", thread_id="t").id
    mem.store_memory("c", thread_id="u")
    mem.invalidate(a)
    assert ids(mem.get_valid(thread_id="t")) == [b]
    assert ids(mem.list_memories(thread_id="t")) == [b, a]
