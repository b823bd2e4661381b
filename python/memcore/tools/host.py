"""The store the tools run against. The MCP server opens it in a background thread, so
it can answer ``initialize`` and ``tools/list`` at once, and the tool calls that need it
await it; a ``memcore`` command hands it a store it opened itself.

A store that fails to open (another process holds it, the model does not match, the path
is unusable) does not stop the server: the failure is logged and every tool that needs the
store answers with it, since an MCP client shows a tool error to the user and the model but
hides the stderr of a server that exited. ``get_status`` reports it too.

Helpers that must stop before the store closes (the background index passes of the code
tools, periodic maintenance) attach themselves with :meth:`StoreHost.attachment`; those that
start with the store register with :meth:`StoreHost.when_open`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar, cast

import anyio.to_thread

from memcore.errors import MemcoreError, ResourceBusyError, StorageError
from memcore.facade import TurnMetrics, TurnMetricsSnapshot

if TYPE_CHECKING:
    from memcore.memory import Memory

StoreState = Literal["opening", "open", "error", "closed"]

# Named as before the host left memcore/mcp/: operators filter the server's log by it.
_log = logging.getLogger("memcore.mcp.store")


class Attachment(Protocol):
    """Something that lives as long as the store and must stop before it closes."""

    def close(self) -> None:
        """Stop; called once, before the store closes."""


A = TypeVar("A", bound=Attachment)


class StoreHost:
    """Owns the one ``Memory`` of the process."""

    def __init__(self, open_memory: Callable[[], Memory]) -> None:
        self._open_memory = open_memory
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._memory: Memory | None = None
        self._error: MemcoreError | None = None
        self._closed = False
        self._closed_event = threading.Event()
        self._thread: threading.Thread | None = None
        self._attachments: dict[str, Attachment] = {}
        self._on_open: list[Callable[[Memory], None]] = []

    def start(self) -> None:
        """Begin opening in a daemon thread (a hung open must not keep the process alive);
        nothing once the host is closed."""
        with self._lock:
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(
                    target=self._open, name="memcore-open-store", daemon=True
                )
                self._thread.start()

    @property
    def state(self) -> StoreState:
        """``opening``, ``open``, ``error`` or ``closed``."""
        if self._closed:
            return "closed"
        if not self._done.is_set():
            return "opening"
        return "open" if self._memory is not None else "error"

    @property
    def error(self) -> MemcoreError | None:
        """Why opening failed, once it has."""
        return self._error

    def memory(self) -> Memory:
        """The open store.

        Raises:
            MemcoreError: Opening failed (that error), is still under way (RESOURCE_BUSY),
                or the server is shutting down (STORAGE_ERROR).
        """
        if self._closed:
            raise StorageError("The server is shutting down.")
        if self._memory is not None:
            return self._memory
        if self._error is not None:
            raise self._error
        raise ResourceBusyError("The store is still opening; retry in a moment.")

    async def wait(self, timeout: float) -> Memory:
        """The open store, waiting up to ``timeout`` seconds for it without blocking the loop.

        Raises:
            MemcoreError: As :meth:`memory`, after the wait.
        """
        if not self._done.is_set():
            self.start()
            await anyio.to_thread.run_sync(self._done.wait, timeout, abandon_on_cancel=True)
        return self.memory()

    def wait_blocking(self, timeout: float) -> Memory:
        """:meth:`wait` for synchronous callers (the CLI)."""
        self.start()
        self._done.wait(timeout)
        return self.memory()

    def turn_metrics(self) -> TurnMetricsSnapshot:
        """The automatic path's counters: the open store's, zeros until it is open."""
        if self._memory is not None:
            try:
                return self.memory().turn_metrics()
            except MemcoreError:
                pass  # closed meanwhile
        return TurnMetrics().snapshot()

    def when_open(self, hook: Callable[[Memory], None]) -> None:
        """Run ``hook`` with the store once it has opened, in the opening thread (never if
        opening fails). Register before :meth:`start`; a hook's failure is logged."""
        with self._lock:
            self._on_open.append(hook)

    def attachment(self, key: str, factory: Callable[[], A]) -> A:
        """The helper registered under ``key``, made by ``factory`` on first use.

        Raises:
            StorageError: The server is shutting down.
        """
        with self._lock:
            if self._closed:
                raise StorageError("The server is shutting down.")
            found = self._attachments.get(key)
            if found is None:
                found = self._attachments[key] = factory()
            return cast(A, found)

    def close(self) -> None:
        """Stop the attachments, then close the store once opening has finished
        (idempotent). The embedding service's own close waits for a model still loading,
        so exiting now cannot abort the process inside onnxruntime."""
        with self._lock:
            # Never started (the server stopped before opening it): nothing to wait
            # for, and start() does nothing from now on.
            if self._thread is None:
                self._closed = True
                self._closed_event.set()
                return
        self._done.wait()
        with self._lock:
            self._closed = True
            memory, self._memory = self._memory, None
            attachments = list(self._attachments.values())
            self._attachments.clear()
        for helper in attachments:
            try:
                helper.close()
            except Exception:  # one helper's failure must not keep the store open
                _log.exception("a store helper failed to stop")
        if memory is not None:
            memory.close()
            _log.info("store closed")
        self._closed_event.set()

    def wait_closed(self, timeout: float) -> bool:
        """Block until :meth:`close` has finished; whether it did within ``timeout``."""
        return self._closed_event.wait(timeout)

    def _open(self) -> None:
        try:
            memory = self._open_memory()
        except MemcoreError as exc:
            self._error = exc
            _log.error(
                "store failed to open",
                extra={"fields": {"code": type(exc).code, "error": str(exc)}},
            )
        except Exception as exc:
            self._error = StorageError(f"The store could not be opened: {type(exc).__name__}")
            _log.exception("store failed to open")
        else:
            self._memory = memory
            _log.info("store open", extra={"fields": {"path": str(memory.path)}})
            # Before the open is announced: close() waits for it, so it also stops what a
            # hook attached.
            for hook in list(self._on_open):
                try:
                    hook(memory)
                except Exception:
                    _log.exception("a store helper failed to start")
        finally:
            self._done.set()
