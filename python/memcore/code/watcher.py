"""Keep a project's index current: a thread that re-indexes files as they change on disk.

``watchfiles`` reports batches of (change, path). The watcher coalesces them per path and
waits until :data:`DEBOUNCE_SECONDS` pass without a new event, so an editor's save pattern
(write a temporary file and rename it over the original; or delete and re-create) and a
burst such as ``git checkout`` end up as one decision per path, taken on what is on disk
by then: a file that exists is re-indexed if its content changed, a path that is gone is
removed from the index. :meth:`ProjectIndexer.apply_changes` takes that decision, so the
watcher and a full scan can never disagree; a changed ``.gitignore``/``.memoryignore``
or a directory event turns into a full incremental pass.

The thread never takes the process down: an error is logged to stderr (logger
``memcore.code.watcher``) and written to the project status, and the watcher goes on
with the next change.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from pathlib import Path

import watchfiles

from memcore._exit import close_at_exit
from memcore.code.ignore import ALWAYS_SKIPPED, IGNORE_FILE_NAMES
from memcore.code.indexer import ProjectIndexer

logger = logging.getLogger(__name__)

DEBOUNCE_SECONDS = 0.5
"""Quiet time after the last event on any path before the changes are indexed."""

MAX_DELAY_SECONDS = 5.0
"""Changes are indexed at the latest this long after the first of them, even if events
keep coming (a tool rewriting a file every 100 ms must not hold back every other edit)."""

_POLL_MS = 100  # how often the thread wakes up to check the debounce and the stop flag
_STEP_MS = 50  # watchfiles groups events arriving within this gap into one batch
_GROUP_MS = 2000  # and yields a continuous stream of events at least this often


class ProjectWatcher:
    """One project's watcher thread.

    Args:
        indexer: The project's indexer (its lock serialises passes with index_project).
        debounce: Seconds of quiet before pending changes are indexed.
    """

    def __init__(self, indexer: ProjectIndexer, *, debounce: float = DEBOUNCE_SECONDS) -> None:
        self.indexer = indexer
        self._debounce = debounce
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._pending: set[str] = set()
        self._first_event = self._last_event = 0.0
        self._thread = threading.Thread(
            target=self._main,
            name=f"memcore-watch[{indexer.project_id}]",
            # A watcher must never keep the interpreter alive; close() joins it anyway.
            daemon=True,
        )

    @property
    def alive(self) -> bool:
        """Whether the thread is running."""
        return self._thread.is_alive()

    def start(self, timeout: float = 5.0) -> None:
        """Start watching; returns once the OS watch is set up (or ``timeout`` passed).

        Changes made after this returns are seen; changes before it are the caller's
        index pass's business.
        """
        self._thread.start()
        # A pass still embedding when the interpreter ends would abort it (memcore._exit).
        close_at_exit(self, ProjectWatcher.stop)
        self._ready.wait(timeout)

    def stop(self, timeout: float = 5.0) -> bool:
        """Ask the thread to end and wait for it.

        Args:
            timeout: Seconds to wait for a pass in progress to finish.

        Returns:
            True if the thread has ended.
        """
        self._stop.set()
        self.indexer.stop()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        return not self._thread.is_alive()

    # -- thread ----------------------------------------------------------------------------

    def _main(self) -> None:
        try:
            self._watch()
        # BaseException: a panic in the native core arrives as pyo3's PanicException,
        # which is not an Exception; nothing may escape a thread nobody joins on error.
        except BaseException as exc:
            # The root was removed, the OS ran out of watches, ...: nothing more can be
            # seen, so say so where a user looks (stderr and the status) and end.
            logger.exception("watcher of project %s stopped", self.indexer.project_id)
            self._record_error(f"The file watcher stopped: {exc}")
        finally:
            self._ready.set()

    def _watch(self) -> None:
        events = watchfiles.watch(
            self.indexer.root,
            watch_filter=self._watched,
            debounce=_GROUP_MS,
            step=_STEP_MS,
            stop_event=self._stop,
            rust_timeout=_POLL_MS,
            yield_on_timeout=True,
            raise_interrupt=False,
        )
        # closing(): the OS watch is released when the loop ends, not when GC gets to it.
        with contextlib.closing(events):
            for changes in events:
                self._ready.set()
                self._collect(changes, time.monotonic())
                if self._stop.is_set():
                    break

    def _collect(self, changes: set[tuple[watchfiles.Change, str]], now: float) -> None:
        if changes:
            if not self._pending:
                self._first_event = now
            self._pending.update(path for _, path in changes)
            self._last_event = now
        quiet = now - self._last_event >= self._debounce
        if self._pending and (quiet or now - self._first_event >= MAX_DELAY_SECONDS):
            self._flush()

    def _flush(self) -> None:
        paths, self._pending = self._pending, set()
        try:
            report = self.indexer.apply_changes(paths)
        except BaseException as exc:  # see _main
            if self._stop.is_set():
                return  # the store is closing under a pass: nothing to report to
            logger.exception("watcher of project %s failed", self.indexer.project_id)
            self._record_error(f"Re-indexing changed files failed: {exc}")
            return
        logger.debug(
            "project %s: %d file(s) re-indexed, %d removed",
            report.project_id,
            report.files_indexed,
            report.files_removed,
        )

    def _record_error(self, reason: str) -> None:
        try:
            self.indexer.record_status("error", error=reason)
        except Exception:
            logger.debug("cannot record the watcher error", exc_info=True)

    def _watched(self, _change: watchfiles.Change, path: str) -> bool:
        """Drop events in VCS metadata and memcore's own data folder before debouncing.

        A store in ``<root>/.memcore`` (local mode) changes on every write, and the index
        would otherwise watch itself. ``.git/info/exclude`` holds ignore rules, so it stays.
        """
        try:
            rel = Path(path).relative_to(self.indexer.root)
        except ValueError:
            return False
        parts = rel.parts
        if ALWAYS_SKIPPED.intersection(parts):
            return parts == (".git", "info", "exclude")
        if not parts or parts[-1] in IGNORE_FILE_NAMES:
            return True
        # Build output and dependency trees churn during builds; drop their events here
        # rather than let them postpone the debounce of real edits.
        return not self.indexer.rules.is_ignored(rel.as_posix())
