"""Shared fixtures: a fresh data directory per test, the real test models
from ../shared/models (tests that need one skip with a reason when absent;
the locations live in embeddings_support.models), a throw-away PostgreSQL
cluster for the tests that need one (pg_cluster.py), and the `backend` fixture
that runs a test on SQLite and on a PostgreSQL node (backends.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

import memcore
from backends import NAMES, Backend, DatabasePool
from embeddings_support.models import MINILM_DIR, POTION_DIR, require_model
from pg_cluster import PgCluster, find_bindir, start_cluster

__all__ = ["MINILM_DIR", "POTION_DIR", "require_model", "unit"]


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """An empty data directory for one test."""
    return tmp_path / "store"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "sqlite_only(reason): differs on a PostgreSQL node by design (backends.py)"
    )


@pytest.fixture(params=NAMES)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """The store backend of this run of the test: SQLite, or a node of an empty
    PostgreSQL database from the pool (skipped, with the reason, where PostgreSQL
    is missing, and for cases marked sqlite_only)."""
    if request.param == "sqlite":
        yield Backend("sqlite")
        return
    marker = request.node.get_closest_marker("sqlite_only")
    if marker is not None:
        pytest.skip(f"on a PostgreSQL node: {marker.kwargs['reason']}")
    backend = Backend("postgres", request.getfixturevalue("pg_databases"))
    yield backend
    backend.close()


@pytest.fixture(scope="module", params=NAMES)
def module_backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """`backend` for a store a whole module shares (one the module fills once)."""
    if request.param == "sqlite":
        yield Backend("sqlite")
        return
    backend = Backend("postgres", request.getfixturevalue("pg_databases"))
    yield backend
    backend.close()


@pytest.fixture(scope="session")
def pg_databases(pg_cluster: PgCluster, tmp_path_factory: pytest.TempPathFactory) -> DatabasePool:
    """Databases for the `backend` stores, copied from one that a node migrated once."""
    url = pg_cluster.create_database()
    with memcore.Memory(url, replica_dir=tmp_path_factory.mktemp("template"), model=None):
        pass
    return DatabasePool(pg_cluster, template=url.rsplit("/", 1)[1])


@pytest.fixture
def mem(data_dir: Path, request: pytest.FixtureRequest) -> Iterator[memcore.Memory]:
    """A text-only Memory (no embedding model) on a fresh directory; vectors
    can still be passed explicitly. On both backends when the test asks for
    `backend` (backends.both_backends), else on SQLite."""
    backend = request.getfixturevalue("backend") if "backend" in request.fixturenames else None
    with (backend or Backend("sqlite")).open(data_dir, model=None) as m:
        yield m


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    """One real PostgreSQL server for the whole run, started on first use and
    removed at the end. Without PostgreSQL's programs the tests that use it skip,
    except in CI (`CI=true`), where that is a broken machine, not a choice."""
    bindir = find_bindir()
    if bindir is None:
        reason = (
            "PostgreSQL is not installed (no initdb in $MEMCORE_PG_BINDIR, "
            "/usr/lib/postgresql/*/bin or PATH): apt-get install postgresql"
        )
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    cluster = start_cluster(bindir)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def pg_database(pg_cluster: PgCluster) -> str:
    """The URL of a new, empty database on the shared test cluster."""
    return pg_cluster.create_database()


@pytest.fixture(scope="session")
def _graph_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache of derived model graphs for the whole run: MiniLM's int8 graph is made
    once (about 2 s), as it is once per machine outside the tests."""
    return tmp_path_factory.mktemp("memcore-cache")


@pytest.fixture(autouse=True)
def _isolated_data_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, _graph_cache: Path
) -> None:
    """Never touch the real ~/.local/share/memcore or ~/.cache/memcore from a test."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.delenv("MEMCORE_DATA_DIR", raising=False)
    monkeypatch.setenv("MEMCORE_CACHE_DIR", str(_graph_cache))


def unit(seed: int, dim: int = 8) -> npt.NDArray[np.float32]:
    """A deterministic random unit vector."""
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)
