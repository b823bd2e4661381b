"""Closing and reopening: everything is found again, the lock is released by
close and by the context manager, a closed Memory refuses work, and status()
has the documented shape."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import memcore
from backends import Backend, both_backends, sqlite_only
from conftest import unit
from memcore import InvalidParameterError, Memory, ResourceBusyError, StorageError

pytestmark = both_backends


def everything(mem: Memory, namespace: str | None = None) -> list[dict[str, Any]]:
    return [r.to_dict() for r in mem.list_memories(limit=1000, namespace=namespace)]


def populate(mem: Memory) -> dict[str, str]:
    """Records in every state, with every field set somewhere."""
    made = {
        "full": mem.store_memory(
            "Ana leads the data team",
            memory_type="episodic",
            source="explicit",
            confidence=0.8,
            importance=0.7,
            metadata={"nested": {"list": [1, 2, {"ü": "ß"}]}, "emoji": "🚀"},
            thread_id="conv-1",
            user_id="user-1",
            event_time="2024-02-29T12:34:56.789012Z",
            valid_from="2024-01-01T00:00:00Z",
            expires_at="2090-01-01T00:00:00Z",
            vector=unit(1, 8),
        ).id,
        "invalidated": mem.store_memory("Ben is on leave", vector=unit(2, 8)).id,
        "old": mem.store_memory("HQ is in Paris").id,
        "new": mem.store_memory("HQ is in Lyon").id,
        "updated": mem.store_memory("draft", vector=unit(3, 8)).id,
        "deleted": mem.store_memory("to be deleted").id,
        "other": mem.store_memory("in another namespace", namespace="other").id,
    }
    mem.invalidate(made["invalidated"], "back from leave")
    mem.supersede_memory(made["old"], made["new"])
    mem.update_memory(made["updated"], content="final", vector=unit(4, 8), importance=0.1)
    mem.get_memory(made["full"])  # moves accessed_at
    mem.delete_memory(made["deleted"])
    return made


def test_reopen_finds_everything_again(backend: Backend, data_dir: Path) -> None:
    with backend.open(data_dir, model=None) as mem:
        made = populate(mem)
        before = everything(mem)
        before_other = everything(mem, "other")
        valid_before = [r.id for r in mem.get_valid()]
        past = [r.id for r in mem.get_valid_at("2024-06-01T00:00:00Z")]
        status_before = mem.status()

    with backend.open(data_dir, model=None) as mem:
        assert everything(mem) == before
        assert everything(mem, "other") == before_other
        assert [r.id for r in mem.get_valid()] == valid_before
        assert [r.id for r in mem.get_valid_at("2024-06-01T00:00:00Z")] == past == [made["full"]]
        assert mem.status()["counts"] == status_before["counts"] == {"memories": 5}
        assert mem.status()["store"] == status_before["store"]
        with pytest.raises(memcore.MemoryNotFoundError):
            mem.get_memory(made["deleted"])
        old, new = mem.get_memory(made["old"]), mem.get_memory(made["new"])
        assert (old.superseded_by, new.supersedes) == (made["new"], made["old"])
        # The vector dimension fixed before closing still holds.
        with pytest.raises(InvalidParameterError, match="8-dimensional"):
            mem.store_memory("four dims", vector=unit(5, 4))
        mem.store_memory("eight dims", vector=unit(6, 8))
        after = everything(mem)
    if backend.on_postgres:  # a new node, built from PostgreSQL alone, holds the same
        with backend.open(data_dir.parent / "new-node", node_of=data_dir, model=None) as node:
            assert everything(node) == after
            assert everything(node, "other") == before_other


def test_ids_made_after_reopening_sort_after_older_ones(backend: Backend, data_dir: Path) -> None:
    with backend.open(data_dir, model=None) as mem:
        first = [mem.store_memory(f"first {i}").id for i in range(3)]
    # Ids order by millisecond first; within one millisecond only one engine's
    # ids are ordered (see the report on rust/memcore/src/ids.rs), so let one pass.
    time.sleep(0.002)
    with backend.open(data_dir, model=None) as mem:
        later = mem.store_memory("later").id
        assert first[-1] < later
        assert [m.id for m in mem.list_memories()] == [later, *first[::-1]]


def test_full_durability_round_trips(backend: Backend, data_dir: Path) -> None:
    with backend.open(data_dir, model=None, durability="full") as mem:
        m = mem.store_memory("fsynced").id
    with backend.open(data_dir, model=None) as mem:
        assert mem.get_memory(m).content == "fsynced"


@sqlite_only("a node always writes its replica: read_only is refused by name")
def test_a_read_only_reopen_sees_everything(backend: Backend, data_dir: Path) -> None:
    with backend.open(data_dir, model=None) as mem:
        populate(mem)
        before = everything(mem)
    with backend.open(data_dir, model=None, read_only=True) as reader:
        assert everything(reader) == before
        assert reader.status()["store"]["read_only"] is True


# -- the lock and the context manager ------------------------------------------------------


def test_the_context_manager_releases_the_lock(backend: Backend, data_dir: Path) -> None:
    with backend.open(data_dir, model=None) as first:
        first.store_memory("held")
        if backend.name == "sqlite":
            # Writers share a SQLite store; one that must be alone waits its turn.
            with backend.open(data_dir, model=None) as beside:
                assert [m.content for m in beside.list_memories()] == ["held"]
            with pytest.raises(ResourceBusyError, match="other processes"):
                memcore._core.Engine(str(data_dir), shared=False)
        else:
            with pytest.raises(ResourceBusyError, match=f"pid {os.getpid()}"):
                backend.open(data_dir, model=None)  # a node's replica has one writer
    with backend.open(data_dir, model=None) as second:
        assert [m.content for m in second.list_memories()] == ["held"]
    if backend.name == "sqlite":
        memcore._core.Engine(str(data_dir), shared=False).close()  # released


def test_the_context_manager_closes_on_an_exception(backend: Backend, data_dir: Path) -> None:
    with pytest.raises(RuntimeError, match="boom"), backend.open(data_dir, model=None) as mem:
        mem.store_memory("before the exception")
        raise RuntimeError("boom")
    with pytest.raises(StorageError, match="closed"):
        mem.list_memories()
    with backend.open(data_dir, model=None) as again:
        assert [m.content for m in again.list_memories()] == ["before the exception"]


def test_close_releases_the_lock_and_is_idempotent(backend: Backend, data_dir: Path) -> None:
    mem = backend.open(data_dir, model=None)
    mem.close()
    mem.close()
    with backend.open(data_dir, model=None):
        pass


CALLS_AFTER_CLOSE: dict[str, Callable[[Memory, str], object]] = {
    "store_memory": lambda m, i: m.store_memory("too late"),
    "get_memory": lambda m, i: m.get_memory(i),
    "update_memory": lambda m, i: m.update_memory(i, content="too late"),
    "delete_memory": lambda m, i: m.delete_memory(i),
    "list_memories": lambda m, i: m.list_memories(),
    "list_recent_memories": lambda m, i: m.list_recent_memories(),
    "get_valid": lambda m, i: m.get_valid(),
    "get_valid_at": lambda m, i: m.get_valid_at("2024-01-01T00:00:00Z"),
    "invalidate": lambda m, i: m.invalidate(i),
    "supersede_memory": lambda m, i: m.supersede_memory(i, i + "x"),
    "status": lambda m, i: m.status(),
}


def test_operations_after_close_raise_storage_error(backend: Backend, data_dir: Path) -> None:
    mem = backend.open(data_dir, model=None)
    target = mem.store_memory("kept").id
    mem.close()
    for name, call in CALLS_AFTER_CLOSE.items():
        with pytest.raises(StorageError, match="closed") as info:
            call(mem, target)
        assert type(info.value).code == "STORAGE_ERROR", name
        assert "open a new Memory" in str(info.value), name
    with backend.open(data_dir, model=None) as again:
        assert [m.content for m in again.list_memories()] == ["kept"]


# -- status() ----------------------------------------------------------------------------


def test_status_shape(mem: Memory, data_dir: Path) -> None:
    mem.store_memory("one")
    mem.store_memory("two")
    mem.store_memory("elsewhere", namespace="other")
    status = mem.status()
    json.dumps(status)
    assert set(status) == {"version", "store", "counts", "embedding"}
    assert status["version"] == memcore.__version__
    assert isinstance(status["version"], str) and status["version"]

    store = status["store"]
    assert Path(store["path"]) == data_dir.resolve() == mem.path
    assert isinstance(store["schema_version"], int) and store["schema_version"] >= 1
    assert store["read_only"] is False
    assert store["created_at"] is not None

    assert status["counts"] == {"memories": 2}  # this instance's namespace only
    assert status["embedding"] == {"status": "disabled", "model": None, "dim": None, "error": None}


def test_status_created_at_is_iso_8601(mem: Memory) -> None:
    created = mem.status()["store"]["created_at"]
    assert isinstance(created, str) and created.endswith("Z")
    assert datetime.fromisoformat(created) <= datetime.now(UTC)


def test_status_created_at_survives_reopening(backend: Backend, data_dir: Path) -> None:
    with backend.open(data_dir, model=None) as mem:
        created = mem.status()["store"]["created_at"]
    with backend.open(data_dir, model=None) as mem:
        assert mem.status()["store"]["created_at"] == created
    if backend.on_postgres:  # the store's age, not the replica's: the same on a new node
        with backend.open(data_dir.parent / "new-node", node_of=data_dir, model=None) as node:
            assert node.status()["store"]["created_at"] == created
