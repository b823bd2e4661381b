"""`Memory("postgresql://…")`: two nodes on one PostgreSQL database (docs/scale-out.md).

Each `Memory` keeps its own replica and follows the database's log, so a write on one is
read and searched on the other once it waited for that write's seq.
"""

from __future__ import annotations

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
