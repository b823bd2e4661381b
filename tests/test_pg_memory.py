"""`Memory("postgresql://…")`: two nodes on one PostgreSQL database (docs/scale-out.md).

Each `Memory` keeps its own replica and follows the database's log, so a write on one is
read and searched on the other once it waited for that write's seq.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import memcore
from memcore.errors import InvalidParameterError, ResourceBusyError


def _node(url: str, replica: Path) -> memcore.Memory:
    return memcore.Memory(url, replica_dir=replica, model=None)


def test_a_write_on_one_node_is_read_on_another_after_its_seq(
    pg_database: str, tmp_path: Path
) -> None:
    with _node(pg_database, tmp_path / "a") as a, _node(pg_database, tmp_path / "b") as b:
        assert a.on_postgres and b.on_postgres
        zebra = a.store_memory("The zebra crossed the road", vector=[1.0, 0.0, 0.0, 0.0])
        seq = a.last_write_seq()
        assert seq == 1
        assert a.last_write_seq() is None, "taken by the first call"
        assert b.wait_for_seq(seq) == seq
        assert b.get_memory(zebra.id).content == "The zebra crossed the road"
        assert [h.memory.id for h in b.search_text("zebra")] == [zebra.id]
        hits = b.recall("zebra", vector=[1.0, 0.0, 0.0, 0.0])
        assert hits[0].memory.id == zebra.id

        b.delete_memory(zebra.id)
        seq = b.last_write_seq()
        assert seq == 2
        a.wait_for_seq(seq, timeout=30)
        assert a.search_text("zebra") == []


def test_waiting_past_the_head_fails_with_resource_busy(pg_database: str, tmp_path: Path) -> None:
    with _node(pg_database, tmp_path / "a") as a:
        a.store_memory("only one write")
        with pytest.raises(ResourceBusyError, match="min_seq 9"):
            a.wait_for_seq(9, timeout=0.05)


def test_a_sqlite_store_has_no_log_position(tmp_path: Path) -> None:
    with memcore.Memory(tmp_path / "store", model=None) as mem:
        assert not mem.on_postgres
        mem.store_memory("a local fact")
        assert mem.last_write_seq() is None
        assert mem.wait_for_seq(5) == 5, "every acknowledged write is already here"
    with pytest.raises(InvalidParameterError, match="PostgreSQL node"):
        memcore.Memory(tmp_path / "other", model=None, replica_dir=tmp_path / "r")


def test_a_node_refuses_namespaces_it_does_not_serve(pg_database: str, tmp_path: Path) -> None:
    with memcore.Memory(
        pg_database, replica_dir=tmp_path / "a", model=None, namespaces=["tenant-a"]
    ) as a:
        with pytest.raises(InvalidParameterError, match="does not serve"):
            a.store_memory("not mine", namespace="tenant-b")
        a.store_memory("mine", namespace="tenant-a")
        assert a.last_write_seq() == 1


def test_two_nodes_writing_one_namespace_at_once_never_refuse_a_write(
    pg_database: str, tmp_path: Path
) -> None:
    """Each node's write prepared while the other node's write of the same namespace
    was not yet applied is refused by PostgreSQL's check; the facade runs it again,
    namespace locked first, so every call succeeds and the log stays one gapless order."""
    threads_per_node, writes_each = 2, 12
    with _node(pg_database, tmp_path / "a") as a, _node(pg_database, tmp_path / "b") as b:
        start = threading.Barrier(2 * threads_per_node)
        failures: list[BaseException] = []
        seqs: list[int] = []
        lock = threading.Lock()

        def write(node: memcore.Memory, name: str) -> None:
            start.wait()
            for i in range(writes_each):
                try:
                    node.store_memory(f"{name} noted fact {i}", vector=[1.0, float(i), 0.0, 1.0])
                    seq = node.last_write_seq()
                except BaseException as exc:  # every failure is the finding
                    with lock:
                        failures.append(exc)
                    continue
                assert seq is not None
                with lock:
                    seqs.append(seq)

        threads = [
            threading.Thread(target=write, args=(node, f"{label}{k}"))
            for label, node in (("a", a), ("b", b))
            for k in range(threads_per_node)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

        assert failures == []
        total = 2 * threads_per_node * writes_each
        assert sorted(seqs) == list(range(1, total + 1)), "one log entry per write, no gap"
        for node in (a, b):
            assert node.wait_for_seq(total, timeout=30) == total
        on_a = {(m.id, m.content) for m in a.list_memories(limit=1000)}
        on_b = {(m.id, m.content) for m in b.list_memories(limit=1000)}
        assert len(on_a) == total
        assert on_a == on_b
