"""Many Python threads in one engine at once: nothing lost, nothing raised,
counts add up; engine calls release the GIL; closing under load is clean."""

from __future__ import annotations

import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from backends import Backend, both_backends
from memcore import Memory, StorageError

THREADS = 8
OPS_PER_THREAD = 200
# One cycle of 20 operations: 10 stores, 3 updates, 4 gets, 2 listings, 1 invalidation.
CYCLE = [
    "store", "store", "update", "get", "store", "list", "store", "update", "get", "store",
    "invalidate", "store", "get", "store", "update", "store", "list", "store", "get", "store",
]  # fmt: skip
STORES_PER_THREAD = OPS_PER_THREAD // len(CYCLE) * CYCLE.count("store")
INVALIDATIONS_PER_THREAD = OPS_PER_THREAD // len(CYCLE) * CYCLE.count("invalidate")


@dataclass
class Worker:
    """One thread's view: what the engine acknowledged, and what went wrong."""

    name: str
    content: dict[str, str] = field(default_factory=dict)  # id -> latest acknowledged content
    invalidated: set[str] = field(default_factory=set)
    ops: int = 0
    errors: list[BaseException] = field(default_factory=list)

    def run(self, mem: Memory, start: threading.Barrier) -> None:
        rng = random.Random(self.name)
        start.wait()
        try:
            for i in range(OPS_PER_THREAD):
                self.step(mem, rng, CYCLE[i % len(CYCLE)], i)
                self.ops += 1
        except BaseException as exc:  # reported by the test, not lost in the thread
            self.errors.append(exc)

    def step(self, mem: Memory, rng: random.Random, op: str, i: int) -> None:
        if op == "store":
            text = f"{self.name} fact {i}"
            self.content[mem.store_memory(text, thread_id=self.name).id] = text
        elif op == "update":
            target = rng.choice(list(self.content))
            text = f"{self.name} fact {i} (updated)"
            assert mem.update_memory(target, content=text).content == text
            self.content[target] = text
        elif op == "get":
            target = rng.choice(list(self.content))
            assert mem.get_memory(target).content == self.content[target]  # read your writes
        elif op == "list":
            page = mem.list_memories(limit=10, thread_id=self.name)
            assert [m.content for m in page] == [self.content[m.id] for m in page], (
                "a listing shows this thread's latest writes"
            )
        elif op == "invalidate":
            target = rng.choice(sorted(set(self.content) - self.invalidated))
            mem.invalidate(target, "worker")
            self.invalidated.add(target)


@both_backends
def test_many_threads_store_update_list_and_get_at_once(mem: Memory) -> None:
    start = threading.Barrier(THREADS)
    workers = [Worker(f"w{k}") for k in range(THREADS)]
    threads = [threading.Thread(target=w.run, args=(mem, start)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
        assert not t.is_alive()

    for w in workers:
        assert w.errors == [], (w.name, w.errors)
        assert w.ops == OPS_PER_THREAD
        assert len(w.content) == STORES_PER_THREAD

    acknowledged = {i: text for w in workers for i, text in w.content.items()}
    assert len(acknowledged) == THREADS * STORES_PER_THREAD  # ids never collide
    everything = mem.list_memories(limit=1000)
    assert {m.id: m.content for m in everything} == acknowledged
    assert mem.status()["counts"]["memories"] == len(acknowledged)
    created = [m.created_at for m in everything]
    assert created == sorted(created, reverse=True)

    invalidated = {i for w in workers for i in w.invalidated}
    assert len(invalidated) == THREADS * INVALIDATIONS_PER_THREAD
    valid = {m.id for m in mem.get_valid(limit=1000)}
    assert valid == set(acknowledged) - invalidated
    for w in workers:
        mine = mem.list_memories(limit=1000, thread_id=w.name)
        assert {m.id: m.content for m in mine} == w.content


# -- the GIL is released during engine calls --------------------------------------------

# Holds SQLite's write lock on the store from another process (one SQLite library
# per process, so the lock is real), until told to let go.
HOLD_WRITE_LOCK = r"""
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline()
db.execute("ROLLBACK")
db.close()
"""

BLOCKED_CALLS: dict[str, Callable[[Memory, str], object]] = {
    "store": lambda m, i: m.store_memory("waits for the write lock"),
    "get": lambda m, i: m.get_memory(i),  # a writable get records accessed_at
    "update": lambda m, i: m.update_memory(i, importance=0.9),
    "delete": lambda m, i: m.delete_memory(i),
}


@pytest.mark.parametrize("call", BLOCKED_CALLS.values(), ids=BLOCKED_CALLS.keys())
def test_engine_calls_release_the_gil(
    mem: Memory, data_dir: Path, call: Callable[[Memory, str], object]
) -> None:
    """An engine call blocked on SQLite's write lock (the engine waits up to 5 s)
    must let Python run meanwhile: this thread counts, reads and then releases
    the lock. Were the GIL held, nothing here could run until the engine gave
    up, and the call would fail with 'database is locked'."""
    target = mem.store_memory("target").id
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_WRITE_LOCK, str(data_dir / "memcore.db")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    outcome: dict[str, object] = {}

    def blocked() -> None:
        began = time.monotonic()
        try:
            outcome["result"] = call(mem, target)
        except BaseException as exc:
            outcome["error"] = exc
        outcome["seconds"] = time.monotonic() - began

    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "locked"
        worker = threading.Thread(target=blocked)
        worker.start()
        time.sleep(0.3)
        assert worker.is_alive(), f"the call did not wait for the lock: {outcome}"
        counted = 0
        until = time.monotonic() + 0.1
        while time.monotonic() < until:
            counted += 1
        assert counted > 1000
        assert [m.id for m in mem.list_memories()] == [target]  # readers are not blocked
        holder.stdin.write("\n")
        holder.stdin.flush()
        worker.join(30)
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.communicate(timeout=30)
    assert "error" not in outcome, outcome["error"]
    assert isinstance(outcome["seconds"], float) and outcome["seconds"] >= 0.2


# -- close under load --------------------------------------------------------------------


def test_close_while_threads_are_writing(backend: Backend, data_dir: Path) -> None:
    mem = backend.open(data_dir, model=None)
    acknowledged: list[list[str]] = [[] for _ in range(4)]
    unexpected: list[BaseException] = []
    running = threading.Barrier(5)

    def write(mine: list[str]) -> None:
        running.wait()
        try:
            while True:
                mine.append(mem.store_memory(f"write {len(mine)}").id)
        except StorageError as exc:
            if "closed" not in str(exc):
                unexpected.append(exc)
        except BaseException as exc:
            unexpected.append(exc)

    threads = [threading.Thread(target=write, args=(a,)) for a in acknowledged]
    for t in threads:
        t.start()
    running.wait()
    deadline = time.monotonic() + 30
    while not all(acknowledged) and time.monotonic() < deadline:
        time.sleep(0.005)  # until every writer has had a write acknowledged
    time.sleep(0.05)
    mem.close()
    for t in threads:
        t.join(30)
        assert not t.is_alive()
    assert unexpected == []
    written = {i for mine in acknowledged for i in mine}
    assert all(acknowledged) and len(written) == sum(map(len, acknowledged))
    with backend.open(data_dir, model=None) as again:
        assert all_ids(again) == written  # every acknowledged write, and nothing else
    if backend.on_postgres:  # and so does PostgreSQL, the truth a new node is built from
        with backend.open(data_dir.parent / "new-node", node_of=data_dir, model=None) as node:
            assert all_ids(node) == written


def all_ids(mem: Memory) -> set[str]:
    """Every id of the default namespace, page by page."""
    found: set[str] = set()
    while page := mem.list_memories(limit=1000, offset=len(found)):
        found.update(m.id for m in page)
    return found
