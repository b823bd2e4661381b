"""The store's health: check the truth and the indexes, repair the indexes, back up.

SQLite is the only durable truth; the search indexes are derived from it. `check` says
whether either is damaged, `repair` rebuilds the indexes from the database (`repair_store`
for a closed store that will not open), and `backup` copies the database while writers go
on, so an operator never copies a live store by hand. A PostgreSQL node's replica is a
copy of its database, kept in a folder of that database's own (`default_replica_dir`);
`reset_replica` empties one so the next open builds it again from the database.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from memcore import _core
from memcore._facade.base import FacadeBase
from memcore.config import resolve_data_dir
from memcore.errors import invalid
from memcore.records.store import BackupReport, RepairReport, StoreCheck


class StoreHealthAPI(FacadeBase):
    """Check, repair and back up the whole store (every namespace)."""

    def check(self) -> StoreCheck:
        """Check the database and the search indexes against each other.

        Runs SQLite's `PRAGMA integrity_check` (reads every page: seconds on a large
        store), then compares each derived index (catalog, BM25, HNSW) with the rows:
        counts, and document keys looked up (every key up to 2,000, else an even sample).
        Pending index work is flushed first, so a healthy writer reports no problem.

        Returns:
            The report; `ok` is False when a problem was found, each with its fix.
        """
        return self._engine.check()

    def repair(self) -> RepairReport:
        """Rebuild the search indexes from the database (SQLite is the truth).

        Writes wait until it is done; searches keep working. A store that cannot even
        be opened is repaired with `Memory.repair_store` (the ``memcore repair`` command).

        Raises:
            StorageError: The instance is read-only or closed.
        """
        return self._engine.repair()

    def backup(self, dest: str | os.PathLike[str]) -> BackupReport:
        """Copy the database to `dest` with SQLite's online backup API.

        The copy is one consistent snapshot, taken while this or another process goes
        on writing: every write acknowledged before the call is in it. It is a single
        file (no write-ahead log) that opens as a store; the search indexes rebuild from
        it on the first open. To restore, stop memcore, copy it over the store's
        ``memcore.db`` and delete ``memcore.db-wal``, ``memcore.db-shm`` (the old file's log:
        left there, it would be replayed onto the copy) and the ``index`` folder.

        Args:
            dest: A new file path, or an existing directory (receives ``memcore.db``,
                which makes the directory a data directory of its own).

        Raises:
            InvalidParameterError: The destination file exists (a backup never overwrites).
            StorageError: The copy could not be written.
        """
        return self._engine.backup(str(Path(dest)))

    @staticmethod
    def repair_store(path: str | os.PathLike[str], *, accept_empty: bool = False) -> RepairReport:
        """Rebuild the search indexes of the closed store at `path` from its database.

        For a store that will not open: an index folder that cannot be read, or that the
        database does not explain, is removed and rebuilt once the database checks sound. A
        damaged database is refused with the fix (restore a backup) unless `accept_empty`:
        then a write-ahead log damaged in the middle is cut at the damage (a copy kept as
        ``memcore.db-wal.damaged-<time>``), a database that is unreadable or disagrees
        with its operation log is kept aside as ``memcore.db.damaged-<time>``, and the store
        starts from what remains (empty when nothing does).

        Args:
            path: The data directory.
            accept_empty: Start over without the damaged database's records.

        Raises:
            StorageError: The database is damaged and `accept_empty` is False.
            ResourceBusyError: Another process has the store open for writing.
            NotFoundError: There is no store at `path`.
        """
        return _core.repair_store(str(Path(path)), accept_empty=accept_empty)

    @staticmethod
    def reset_replica(
        replica_dir: str | os.PathLike[str] | None = None,
        *,
        database_url: str | None = None,
        mode: Literal["global", "local"] = "global",
        project_root: str | os.PathLike[str] | None = None,
    ) -> list[str]:
        """Empty a PostgreSQL node's replica folder (``memcore replica reset``): its copy
        of the database and its search indexes go, and the next open builds them again
        from the database. Only a replica is emptied, never a SQLite store (its own truth).

        Args:
            replica_dir: The replica folder; None: the default folder of `database_url`'s
                database (``replica/<identity>`` in the data directory).
            database_url: The database whose default replica folder to empty.
            mode, project_root: Where the data directory is, as for ``Memory``.

        Returns:
            The paths removed (empty when the folder held no replica).

        Raises:
            InvalidParameterError: Neither argument, or the folder is a SQLite store.
            ResourceBusyError: A node (or another process) has the folder open.
            StorageError: The database cannot be reached (default folder only).
        """
        if replica_dir is None:
            if database_url is None:
                raise invalid(
                    "replica_dir",
                    "Name the replica: its folder, or the database_url whose default "
                    "replica folder to empty.",
                )
            replica_dir, _ = default_replica_dir(database_url, mode, project_root)
        return _core.reset_replica(str(Path(replica_dir)))


def default_replica_dir(
    database_url: str,
    mode: Literal["global", "local"] = "global",
    project_root: str | os.PathLike[str] | None = None,
) -> tuple[Path, Path | None]:
    """The default replica folder of a node of the database at `database_url`, and the
    project root in local mode: ``replica/<identity>`` inside the data directory, the
    identity read from the database (docs/scale-out.md, "A replica knows its database"),
    so no two databases ever share a replica folder.

    Raises:
        StorageError: The database cannot be reached.
    """
    base, root = resolve_data_dir(None, mode, project_root)
    return base / "replica" / _core.database_key(database_url), root
