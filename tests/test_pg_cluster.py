"""The PostgreSQL test harness itself: a real server, one empty database per
test, and nothing left behind once the cluster is stopped."""

from __future__ import annotations

import socket

import pytest

from pg_cluster import PgCluster, find_bindir, start_cluster


def test_each_test_gets_its_own_empty_database(pg_cluster: PgCluster, pg_database: str) -> None:
    name = pg_database.rsplit("/", 1)[1]
    pg_cluster.psql(name, "CREATE TABLE probe (x int); INSERT INTO probe VALUES (7)")
    assert pg_cluster.psql(name, "SELECT x FROM probe").strip() == "7"
    other = pg_cluster.create_database().rsplit("/", 1)[1]
    assert other != name
    tables = pg_cluster.psql(other, "SELECT count(*) FROM pg_tables WHERE tablename = 'probe'")
    assert tables.strip() == "0"


def test_the_server_listens_only_on_loopback(pg_cluster: PgCluster) -> None:
    assert pg_cluster.psql("postgres", "SHOW listen_addresses").strip() == "127.0.0.1"
    assert pg_cluster.psql("postgres", "SELECT current_user").strip() == "postgres"


def test_stop_removes_the_server_and_its_folder(pg_cluster: PgCluster) -> None:
    # A second cluster of our own: the session's one stays up for the other tests.
    bindir = find_bindir()
    assert bindir is not None  # pg_cluster would have skipped otherwise
    cluster = start_cluster(bindir)
    assert cluster.psql("postgres", "SELECT 1").strip() == "1"
    cluster.stop()
    assert not cluster.root.exists()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", cluster.port), timeout=5).close()
