"""A PostgreSQL node never serves another database's memories (docs/scale-out.md, "A
replica knows its database").

The scenario of the report: a node with the default replica folder writes to database A;
A is dropped and created again empty (or the URL names another database); the node opens
it again. Before, it served A's memories and refused every write with a misleading
ResourceBusyError. Now the default folder is the database's own, a replica named
explicitly is refused with StorageError naming both databases and the fixes
(`memcore replica reset`, `replica_rebuild=True`), and a running node that reconnects
to another database stops serving.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

import memcore
from memcore.errors import InvalidParameterError, ResourceBusyError, StorageError
from pg_cluster import PgCluster, find_bindir, start_cluster

VECTOR = [1.0, 0.0, 0.0, 0.0]


def _name(url: str) -> str:
    return url.rsplit("/", 1)[1]


def _recreate(cluster: PgCluster, url: str, *, force: bool = False) -> None:
    """Drop the database and create an empty one under the same name."""
    name = _name(url)
    cluster.psql("postgres", f"DROP DATABASE {name}" + (" WITH (FORCE)" if force else ""))
    cluster.psql("postgres", f"CREATE DATABASE {name}")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memcore.cli", *args], capture_output=True, text=True, timeout=120
    )


def test_the_default_replica_folder_is_the_databases_own(
    pg_cluster: PgCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCORE_DATA_DIR", str(tmp_path))
    url_a, url_b = pg_cluster.create_database(), pg_cluster.create_database()
    with memcore.Memory(url_a, model=None) as a, memcore.Memory(url_b, model=None) as b:
        assert a.path.parent == b.path.parent == tmp_path / "replica"
        assert a.path != b.path
        a.store_memory("the zebra of database A", vector=VECTOR)
        assert b.search_text("zebra") == []
        # A second node of A on this machine without a folder of its own: refused, as a
        # second writer of a SQLite store is.
        with pytest.raises(ResourceBusyError, match="its own replica_dir"):
            memcore.Memory(url_a, model=None)

    # The report's case: A dropped and created again, the default folder, the same URL.
    _recreate(pg_cluster, url_a)
    with memcore.Memory(url_a, model=None) as again:
        assert again.search_text("zebra") == [], "nothing of the dropped database served"
        again.store_memory("the okapi of the new database", vector=VECTOR)  # no ResourceBusy
        assert [h.memory.content for h in again.search_text("okapi")] == [
            "the okapi of the new database"
        ]


def test_a_named_replica_of_a_dropped_database_is_refused_until_reset_or_rebuilt(
    pg_cluster: PgCluster, tmp_path: Path
) -> None:
    url = pg_cluster.create_database()
    replica = tmp_path / "replica"
    with memcore.Memory(url, replica_dir=replica, model=None) as node:
        node.store_memory("the zebra of database A", vector=VECTOR)
    _recreate(pg_cluster, url)

    with pytest.raises(StorageError) as refused:
        memcore.Memory(url, replica_dir=replica, model=None)
    message = str(refused.value)
    assert refused.value.code == "STORAGE_ERROR"
    assert message.count("memcore id") == 2, "both databases named"
    for fix in ("another replica folder", "memcore replica reset", "replica_rebuild=True"):
        assert fix in message, message

    # Opting in: rebuilt from the database, which is empty.
    with memcore.Memory(url, replica_dir=replica, model=None, replica_rebuild=True) as node:
        assert node.search_text("zebra") == []
        node.store_memory("the okapi", vector=VECTOR)

    # The command resets a replica a node is not using; the next open rebuilds it.
    _recreate(pg_cluster, url)
    reset = cli("replica", "reset", "--data-dir", str(replica))
    assert reset.returncode == 0, reset.stderr
    assert str(replica / "memcore.db") in json.loads(reset.stdout)["removed"]
    with memcore.Memory(url, replica_dir=replica, model=None) as node:
        assert node.search_text("okapi") == []


def test_a_replica_of_a_database_on_another_cluster_is_refused(
    pg_cluster: PgCluster, tmp_path: Path
) -> None:
    bindir = find_bindir()
    assert bindir is not None
    url = pg_cluster.create_database()
    replica = tmp_path / "replica"
    with memcore.Memory(url, replica_dir=replica, model=None) as node:
        node.store_memory("the zebra of cluster one", vector=VECTOR)
    other = start_cluster(bindir)
    try:
        assert other.port != pg_cluster.port
        other.psql("postgres", f"CREATE DATABASE {_name(url)}")
        other_url = other.url(_name(url))
        with pytest.raises(StorageError, match="system identifier"):
            memcore.Memory(other_url, replica_dir=replica, model=None)
        assert memcore._core.database_key(other_url) != memcore._core.database_key(url)
    finally:
        other.stop()


def test_a_running_node_whose_database_is_replaced_stops_serving(
    pg_cluster: PgCluster, tmp_path: Path
) -> None:
    url = pg_cluster.create_database()
    with memcore.Memory(url, replica_dir=tmp_path / "replica", model=None) as node:
        node.store_memory("the zebra of database A", vector=VECTOR)
        _recreate(pg_cluster, url, force=True)
        deadline = time.monotonic() + 30
        while True:
            try:
                node.search_text("zebra")
            except StorageError as exc:
                assert "now reaches" in str(exc)
                break
            assert time.monotonic() < deadline, "the node kept serving the dropped database"
            time.sleep(0.05)
        with pytest.raises(StorageError):
            node.store_memory("after the swap", vector=VECTOR)


def test_replica_reset_needs_a_replica_and_never_touches_a_sqlite_store(
    pg_database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMCORE_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    nothing = cli("replica", "reset")
    assert nothing.returncode == 1 and "INVALID_PARAMETER" in nothing.stderr, nothing.stderr

    store = tmp_path / "sqlite"
    with memcore.Memory(store, model=None) as mem:
        mem.store_memory("precious")
    refused = cli("replica", "reset", "--data-dir", str(store))
    assert refused.returncode == 1 and "INVALID_PARAMETER" in refused.stderr, refused.stderr
    assert (store / "memcore.db").exists()
    with pytest.raises(InvalidParameterError):
        memcore.Memory.reset_replica(store)

    # --database-url alone: that database's default folder.
    with memcore.Memory(pg_database, model=None) as node:
        node.store_memory("in the default folder", vector=VECTOR)
        default = node.path
    done = cli("replica", "reset", "--database-url", pg_database)
    assert done.returncode == 0, done.stderr
    assert str(default / "memcore.db") in json.loads(done.stdout)["removed"]
    assert not (default / "memcore.db").exists()
