"""``memcore check``, ``memcore repair`` and ``memcore backup``: the store's health from a shell.

Registered by :mod:`memcore.cli.commands` through :func:`add_store_commands`. Reports go to
stdout as JSON (like the other commands), notes to stderr. ``check`` exits 1 when it found a
problem, so scripts and cron jobs can act on it. No embedding model is loaded by any of them.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from memcore.errors import NotFoundError, ResourceBusyError
from memcore.settings.options import STORE_OPTIONS, Settings, add_options, resolve

if TYPE_CHECKING:
    from memcore.memory import Memory

EXIT_PROBLEMS = 1
#: The database file inside a data directory.
DB_FILE = "memcore.db"


def add_store_commands(commands: Any) -> None:
    """Add ``check``, ``repair`` and ``backup`` to the ``memcore`` parser.

    Args:
        commands: The object ``ArgumentParser.add_subparsers()`` returned.
    """
    check = commands.add_parser(
        "check",
        help="check the database and the search indexes (JSON; exit 1 on problems)",
        description="Run SQLite's integrity check on the database and compare each search "
        "index with the stored records (counts and looked-up documents). Every problem comes "
        "with its fix. Works beside a running server (read-only).",
    )
    add_options(check, STORE_OPTIONS)
    check.set_defaults(run=run_check)

    repair = commands.add_parser(
        "repair",
        help="rebuild the search indexes from the database (JSON)",
        description="Rebuild the search indexes (BM25, vectors) from the database, the only "
        "truth; nothing stored is lost. Needs the store closed (stop the server first). A "
        "damaged database is refused with the fix, unless --accept-empty.",
    )
    repair.add_argument(
        "--accept-empty",
        action="store_true",
        help="cut a damaged write-ahead log at the damage (a copy kept as "
        "memcore.db-wal.damaged-TIME), set a damaged database aside (kept as "
        "memcore.db.damaged-TIME) and start from what remains, possibly empty",
    )
    add_options(repair, STORE_OPTIONS)
    repair.set_defaults(run=run_repair)

    backup = commands.add_parser(
        "backup",
        help="copy the database safely, even while a server writes (JSON)",
        description="Copy the database with SQLite's online backup API into one consistent "
        "file that opens as a store. Safe while another process writes: never copy a live "
        "store's files by hand. To restore: stop memcore, copy the backup over memcore.db "
        "and delete memcore.db-wal, memcore.db-shm and the index folder beside it.",
    )
    backup.add_argument("dest", help="a new file, or an existing directory (gets memcore.db)")
    add_options(backup, STORE_OPTIONS)
    backup.set_defaults(run=run_backup)


def run_check(args: argparse.Namespace) -> int:
    """Run ``memcore check``; 1 when a problem was found."""
    with _store(_settings(args)) as memory:
        report = memory.check()
    _print(report.to_dict())
    for problem in report.problems:
        _note(f"{problem.area}: {problem.message} Fix: {problem.fix}")
    return 0 if report.ok else EXIT_PROBLEMS


def run_repair(args: argparse.Namespace) -> int:
    """Run ``memcore repair``.

    Raises:
        StorageError: The database is damaged (without ``--accept-empty``).
        ResourceBusyError: A server has the store open.
    """
    from memcore.memory import Memory

    settings = _settings(args)
    report = Memory.repair_store(settings.data_dir, accept_empty=args.accept_empty)
    _print(report.to_dict())
    if report.log_set_aside is not None:
        _note(
            "the write-ahead log was damaged: the writes before the damage were kept, a copy "
            f"of the damaged log is {report.log_set_aside}"
        )
    if report.lost_writes:
        _note(
            f"{report.lost_writes} write(s) were lost with the damage; the store keeps every "
            "record that remained"
        )
    if report.database_set_aside is not None:
        _note(f"the damaged database was kept as {report.database_set_aside}")
    _note(f"search indexes rebuilt: {report.documents} documents")
    return 0


def run_backup(args: argparse.Namespace) -> int:
    """Run ``memcore backup DEST``."""
    with _store(_settings(args)) as memory:
        report = memory.backup(args.dest)
    _print(report.to_dict())
    return 0


def _settings(args: argparse.Namespace) -> Settings:
    from memcore import logs

    settings = resolve(args, STORE_OPTIONS)
    logs.configure(settings.log_level if args.log_level is not None else "warn")
    # Neither command embeds anything: no model is loaded.
    return replace(settings, model=None, model_path=None)


@contextmanager
def _store(settings: Settings) -> Iterator[Memory]:
    """The existing store (never a new, empty one), read-only when another process (a
    running server) writes it.

    Raises:
        NotFoundError: There is no store in the data directory.
    """
    from memcore.memory import Memory

    if not (settings.data_dir / DB_FILE).exists():
        raise NotFoundError(
            f"No memcore store in {settings.data_dir} (no {DB_FILE}); pass --data-dir DIR "
            "or set MEMCORE_DATA_DIR."
        )
    try:
        memory = Memory(**settings.memory_kwargs())
    except ResourceBusyError:
        _note("the store is in use by another process; reading it read-only")
        memory = Memory(**replace(settings, read_only=True).memory_kwargs())
    with memory:
        yield memory


def _print(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


def _note(message: str) -> None:
    print(f"memcore: {message}", file=sys.stderr)
