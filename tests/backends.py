"""The two store backends the conformance tests run on (docs/scale-out.md).

A test that takes the `backend` fixture (conftest.py) runs twice, `[sqlite]` and
`[postgres]`, and opens its stores with `backend.open(path, ...)` instead of
`Memory(path, ...)`: on SQLite `path` is the data directory, as always; on PostgreSQL
it is the node's replica folder, and the store's truth is a database of the session's
throw-away cluster. One path is one store: opening the same path again reopens the same
database (a restart of the node), another path gets a database of its own.

A module whose tests use the plain `mem` fixture opts in with
`pytestmark = both_backends`: `mem` is then opened on each backend. A case whose
behaviour legitimately differs on a node (the node-only rules in docs/scale-out.md)
keeps running on SQLite and is marked `@sqlite_only("why")`; its postgres run is
skipped with that reason.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from memcore import Memory, _core
from pg_cluster import PgCluster

#: The backends' parameter ids, in the order tests run on them.
NAMES = ("sqlite", "postgres")

#: The `meta` rows that stay on a node: its text index's analyser.
NODE_META = "SELECT key FROM meta WHERE key = 'text_analyzer'"

#: Opt a module (`pytestmark = both_backends`) or a test into both backends.
both_backends = pytest.mark.usefixtures("backend")


def sqlite_only(reason: str) -> pytest.MarkDecorator:
    """Run this case on SQLite only; on a PostgreSQL node it is skipped with `reason`,
    which must say which node-only rule makes the difference."""
    return pytest.mark.sqlite_only(reason=reason)


class DatabasePool:
    """Databases of the session's cluster, each holding memcore's schema, handed to one
    test at a time. A fresh one is a copy of `template` (CREATE DATABASE … TEMPLATE,
    cheaper than migrating an empty one); a used one is emptied (every row but the schema's
    version deleted) and handed out again. Dropping it instead would cost a
    checkpoint, seconds on this machine, and keeping them all, gigabytes of disk."""

    def __init__(self, cluster: PgCluster, template: str) -> None:
        self.cluster = cluster
        self.template = template
        self._free: list[str] = []

    def take(self) -> str:
        """The URL of an empty database for one store."""
        return self._free.pop() if self._free else self.cluster.create_database(self.template)

    def give_back(self, url: str) -> None:
        """Empty the database (every node on it closed) and keep it for the next test."""
        name = url.rsplit("/", 1)[1]
        # DELETE, not TRUNCATE: a test leaves a handful of rows, and TRUNCATE makes new
        # files for every table and index (a second per test here). One transaction:
        # the foreign keys are checked at its end, so the order of the tables is free.
        self.cluster.psql(
            name,
            "DO $$ DECLARE t text; BEGIN FOR t IN SELECT tablename FROM pg_tables "
            "WHERE schemaname = 'memcore' AND tablename <> 'schema_version' LOOP "
            "EXECUTE format('DELETE FROM memcore.%I', t); END LOOP; END $$",
        )
        self._free.append(url)


@dataclass
class Backend:
    """Opens `Memory` on one backend; `pool` is None for SQLite."""

    name: str
    pool: DatabasePool | None = None
    _databases: dict[str, str] = field(default_factory=dict, repr=False)
    _engines: list[_core.Engine] = field(default_factory=list, repr=False)

    @property
    def on_postgres(self) -> bool:
        return self.pool is not None

    def open(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        node_of: str | os.PathLike[str] | None = None,
        **options: Any,
    ) -> Memory:
        """`Memory(path, **options)` on this backend. On PostgreSQL, `path` (or, in
        local mode, the project's own folder) is the replica and names the database;
        `node_of` names another store's path: this is then another node of that store."""
        if self.pool is None:
            assert node_of is None, "a SQLite store has one node"
            return Memory(path, **options)
        if path is None:
            # Local mode: the replica goes in the project's .memcore folder, wherever the
            # project is (a project that moved keeps its store).
            return Memory(self.database("local mode"), **options)
        store = node_of if node_of is not None else path
        return Memory(self.database(str(Path(store).resolve())), replica_dir=path, **options)

    def engine(
        self,
        path: str | os.PathLike[str],
        *,
        node_of: str | os.PathLike[str] | None = None,
        **options: Any,
    ) -> _core.Engine:
        """The native engine (`_core.Engine(path, **options)`) on this backend, closed
        with the test. On PostgreSQL, `node_of` names another store's path: the engine is
        then a second node of that store's database, its replica at `path`."""
        if self.pool is None:
            assert node_of is None, "a SQLite store has one node"
            engine = _core.Engine(path, **options)
        else:
            url = self.database(str(Path(node_of if node_of is not None else path).resolve()))
            engine = _core.Engine(path, database_url=url, **options)
        self._engines.append(engine)
        return engine

    def cli_store(self, path: Path) -> list[str]:
        """The `memcore` command's options that open the store at `path`."""
        if self.pool is None:
            return ["--data-dir", str(path)]
        return ["--database-url", self.database(str(path.resolve())), "--data-dir", str(path)]

    def query(self, path: str | os.PathLike[str], sql: str) -> list[list[str]]:
        """Rows of `sql` run by psql in the PostgreSQL database of the store at `path`
        (its truth, not the replica), as text fields; NULL reads as ""."""
        assert self.pool is not None, "only a PostgreSQL store has a database"
        name = self.database(str(Path(path).resolve())).rsplit("/", 1)[1]
        out = self.pool.cluster.psql(name, sql)
        return [line.split("|") for line in out.splitlines()]

    def store_dir(self, data_dir: Path) -> Path:
        """Where a store opened on `data_dir` keeps its files: on PostgreSQL without a
        replica_dir (local mode), the replica is its database's own folder inside it,
        ``replica/<identity>``."""
        if not self.on_postgres:
            return data_dir
        return data_dir / "replica" / _core.database_key(self.database("local mode"))

    def _check_truth(self, replica: Path, url: str) -> None:
        """Every table of a closed node's replica holds as many rows as PostgreSQL's:
        each write of the test reached the truth, whatever the test itself checked.
        The one row a node keeps to itself is its text analyser (`meta`), a setting of
        its own text index."""
        assert self.pool is not None
        if not (replica / "memcore.db").exists():
            return  # local mode: the replica is inside the project
        cluster, name = self.pool.cluster, url.rsplit("/", 1)[1]
        tables = cluster.psql(
            name,
            "SELECT tablename FROM pg_tables WHERE schemaname = 'memcore' "
            "AND tablename NOT IN ('schema_version', 'log', 'log_heads') ORDER BY 1",
        ).split()
        counts = " UNION ALL ".join(f"SELECT '{t}', count(*) FROM memcore.{t}" for t in tables)
        truth = dict(line.split("|") for line in cluster.psql(name, counts).splitlines())
        db = sqlite3.connect(f"file:{replica / 'memcore.db'}?mode=ro", uri=True)
        try:
            local = {t: str(db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in tables}
            local["meta"] = str(int(local["meta"]) - len(db.execute(NODE_META).fetchall()))
        finally:
            db.close()
        assert local == truth, f"the replica {replica} and PostgreSQL differ: {local} vs {truth}"

    def database(self, key: str) -> str:
        """The database URL of the store `key` names, taken from the pool on first use."""
        assert self.pool is not None
        if key not in self._databases:
            self._databases[key] = self.pool.take()
        return self._databases[key]

    def close(self) -> None:
        """Close the engines it opened and hand this test's databases back (its `Memory`
        stores are closed by now)."""
        for engine in self._engines:
            engine.close()
        self._engines.clear()
        if self.pool is not None:
            for key, url in self._databases.items():
                self._check_truth(Path(key), url)
                self.pool.give_back(url)
        self._databases.clear()
