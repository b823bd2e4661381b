"""``memcore index PATH [--watch] [--project-id ID]``: index a project from a shell.

:mod:`memcore.cli.commands` defines the command's arguments (so parsing never loads this package)
and calls :func:`run_index`. The report goes to
stdout as JSON (like the other commands), the progress bar and notes to stderr. With
``--watch`` the command keeps the index current until Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from memcore.memory import Memory
    from memcore.records.code import IndexProgress, IndexReport
    from memcore.settings.options import Settings


def run_index(args: argparse.Namespace, settings: Settings) -> int:
    """Run ``memcore index``; the exit status (errors propagate to ``memcore.cli.commands``).

    Args:
        args: The parsed command line (``path``, ``project_id``, ``watch``,
            ``follow_symlinks``).
        settings: The resolved store settings.

    Raises:
        MemcoreError: The store could not be opened or the path is not a directory.
    """
    from memcore.memory import Memory

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
