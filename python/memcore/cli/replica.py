"""``memcore replica reset``: empty a PostgreSQL node's replica folder, so the next start
builds it again from the database (docs/scale-out.md, "A replica knows its database").

A node refuses a replica that is another database's copy, or holds writes its database
lost; this is one of the ways out its error names (another folder, or starting with
``--replica-rebuild``, are the others). Registered by :mod:`memcore.cli.commands`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from memcore.settings.options import OPTIONS, add_options, resolve

#: What ``replica reset`` reads: where the replica is.
REPLICA_OPTIONS = ("data_dir", "project_root", "database_url", "log_level")


def add_replica_commands(commands: Any) -> None:
    """Add ``replica reset`` to the ``memcore`` parser.

    Args:
        commands: The object ``ArgumentParser.add_subparsers()`` returned.
    """
    replica = commands.add_parser(
        "replica",
        help="manage a PostgreSQL node's local replica (replica reset)",
        description="A PostgreSQL node keeps a local replica of its database.",
    )
    actions = replica.add_subparsers(dest="action", required=True, metavar="ACTION")
    reset = actions.add_parser(
        "reset",
        help="empty a node's replica folder; the next start rebuilds it from the database",
        description="Empty a PostgreSQL node's replica folder: its copy of the database and "
        "its search indexes, which the next start builds again from PostgreSQL (nothing in "
        "PostgreSQL changes). Name the folder with --data-dir, or give --database-url alone "
        "for that database's default folder. Refused while a node uses the folder, and for a "
        "folder that holds a SQLite store rather than a replica.",
    )
    add_options(reset, REPLICA_OPTIONS)
    reset.set_defaults(run=run_reset)


def run_reset(args: argparse.Namespace) -> int:
    """Run ``memcore replica reset``.

    Raises:
        InvalidParameterError: No folder named, or it holds a SQLite store.
        ResourceBusyError: A node has the folder open.
        StorageError: The database cannot be reached (its default folder only).
    """
    from memcore import logs
    from memcore.memory import Memory

    settings = resolve(args, REPLICA_OPTIONS)
    logs.configure(settings.log_level if args.log_level is not None else "warn")
    named = args.data_dir is not None or bool(os.environ.get(OPTIONS["data_dir"].env))
    folder = settings.data_dir if named else None
    removed = Memory.reset_replica(
        folder,
        database_url=settings.database_url,
        mode="local" if settings.project_root is not None else "global",
        project_root=settings.project_root,
    )
    print(json.dumps({"replica": None if folder is None else str(folder), "removed": removed}))
    done = f"removed {len(removed)} path(s)" if removed else "nothing to remove"
    print(f"memcore: {done}; the next start builds the replica from the database", file=sys.stderr)
    return 0
