"""``memcore index PATH [--watch] [--project-id ID]``: index a project from a shell.

Registered by :mod:`memcore.cli` through :func:`add_index_command`. The report goes to
stdout as JSON (like the other commands), the progress bar and notes to stderr. With
``--watch`` the command keeps the index current until Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from memcore.code.records import IndexProgress, IndexReport
from memcore.settings import STORE_OPTIONS, Settings, add_options, resolve

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from memcore.memory import Memory


def add_index_command(commands: Any) -> argparse.ArgumentParser:
    """Add the ``index`` subcommand to the ``memcore`` parser.

    Args:
        commands: The object ``ArgumentParser.add_subparsers()`` returned.

    Returns:
        The subcommand's parser (its ``run`` default is :func:`run_index`).
    """
    parser: argparse.ArgumentParser = commands.add_parser(
        "index",
        help="index a project's source code for search_code (JSON report)",
        description="Index the source files of PATH incrementally: only new or changed "
        "files are chunked and embedded; deleted files leave the index.",
    )
    parser.add_argument("path", help="the project directory")
    parser.add_argument("--project-id", help="the project's id (default: folder name + hash)")
    parser.add_argument("--watch", action="store_true", help="keep the index current until Ctrl-C")
    parser.add_argument(
        "--follow-symlinks", action="store_true", help="follow links that stay inside PATH"
    )
    add_options(parser, STORE_OPTIONS)
    parser.set_defaults(run=run_index)
    return parser


def run_index(args: argparse.Namespace) -> int:
    """Run ``memcore index``; the exit status (errors propagate to ``memcore.cli.main``).

    Raises:
        SettingsError: A setting is invalid.
        MemcoreError: The store could not be opened or the path is not a directory.
    """
    from memcore.memory import Memory

    settings = _settings(args)
    with Memory(**settings.memory_kwargs()) as memory:
        _wait_for_model(memory, settings.timeout)
        with _progress_bar() as (bar, task):

            def advance(p: IndexProgress) -> None:
                bar.update(task, completed=p.done, total=p.total or None, path=p.path or "")

            report = memory.index_project(
                args.path,
                args.project_id,
                watch=args.watch,
                progress=advance,
                follow_symlinks=args.follow_symlinks,
                embed_wait=settings.timeout,
            )
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
        _note(_summary(report))
        if args.watch:
            _note(f"watching {report.root} for changes; press Ctrl-C to stop")
            _wait_for_interrupt()
    return 0


def _settings(args: argparse.Namespace) -> Settings:
    from memcore.mcp import logs

    settings = resolve(args, STORE_OPTIONS)
    explicit = args.log_level is not None or "MEMCORE_LOG_LEVEL" in os.environ
    # Quiet unless asked, like the other commands: a progress bar and warnings only.
    logs.configure(settings.log_level if explicit else "warn")
    return settings


def _wait_for_model(memory: Memory, timeout: float) -> None:
    service = memory.embeddings
    if service is None or service.status != "loading":
        return
    from rich.console import Console

    with Console(stderr=True).status(f"loading embedding model {service.model_id}…"):
        service.wait_ready(timeout)


@contextmanager
def _progress_bar() -> Iterator[tuple[Progress, TaskID]]:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    console = Console(stderr=True)
    columns = (
        TextColumn("indexing"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[path]}", style="dim"),
    )
    with Progress(
        *columns, console=console, transient=True, disable=not console.is_terminal
    ) as bar:
        yield bar, bar.add_task("indexing", total=None, path="scanning…")


def _wait_for_interrupt() -> None:
    try:
        threading.Event().wait()  # the watcher thread does the work
    except KeyboardInterrupt:
        _note("stopped watching")


def _summary(report: IndexReport) -> str:
    text = (
        f"{report.project_id}: {report.files_indexed} file(s) indexed, "
        f"{report.files_unchanged} unchanged, {report.files_removed} removed, "
        f"{report.total_chunks} chunks in {report.seconds:.1f} s"
    )
    return text + (f" ({report.note})" if report.note else "")


def _note(message: str) -> None:
    print(f"memcore: {message}", file=sys.stderr)
