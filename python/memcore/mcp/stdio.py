"""The stdio transport: the handshake answered while the MCP SDK loads, then the SDK's own
``stdio_server`` for the rest of the session.

Importing the SDK takes about a second, so :func:`serve` answers the handshake with
``handshake.EarlyAnswers`` and runs well-formed tool calls through the ``Dispatcher`` (which
needs no SDK) while it loads, so a first call waits for the store at most, not for the
import. The store and the model open first and the SDK is imported after them (or at once
when a line needs it): on two cores the three compete for the interpreter, and a client's
first tool call needs the store and the model, never the SDK. It stops at the first line
that needs the SDK, or the first line read once the SDK has loaded. The lines the SDK
must still see (``initialize`` among them) are then replayed to ``stdio_server`` ahead of
the rest of stdin, and the SDK's own reply to the ``initialize`` answered early is dropped:
the client gets one answer per request, the one the SDK alone would have given.

Handed streams, ``stdio_server`` leaves fds 0 and 1 alone: ``wire`` claims them as it would
have, for the whole session. Lines the SDK cannot read, which it would drop without a word,
are answered with a JSON-RPC error before it sees them (``malformed``).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import os
import queue
import signal
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any, Protocol, TextIO, cast

import anyio
import anyio.abc
import anyio.to_thread

from memcore.errors import MemcoreError
from memcore.mcp import wire
from memcore.mcp.dispatch import Caller, Dispatcher
from memcore.mcp.handshake import HAND_OFF, EarlyAnswers, tool_call_reply
from memcore.tools.host import StoreHost

_log = logging.getLogger("memcore.mcp")

#: Longest a signalled server waits for its store to close before exiting anyway.
_CLOSE_SECONDS = 60.0

#: Longest the SDK's import waits for the store and the model to open first. Opening them
#: takes a few tenths of a second (benches/bench_mcp.py); a model downloading from the hub
#: or a large store reopening takes longer, and the SDK then loads beside them.
_SDK_DEFER_SECONDS = 3.0


async def serve(dispatcher: Dispatcher, host: StoreHost, caller: Caller) -> None:
    """Serve MCP on stdin and stdout until the input ends or SIGTERM/SIGINT arrives; the
    store opens at once, before the SDK is imported, and is closed on the way out."""
    early = EarlyAnswers(dispatcher.tools)
    with wire.claimed() as (reader, writer):
        sdk = SdkLoader()
        try:
            async with anyio.create_task_group() as group:
                # Signal handling is installed before the store's and the SDK's threads
                # start: its own imports are then done, and a stop at any point closes the
                # store.
                await group.start(_stop_on_signal, group.cancel_scope, host)
                host.start()
                sdk.start_after(host, _SDK_DEFER_SECONDS)
                replay = await _answer_early(early, reader, writer, sdk, dispatcher, caller)
                await sdk.wait()
                await _serve_with_sdk(
                    dispatcher, host, caller, _Replay(replay, reader), writer, early
                )
                group.cancel_scope.cancel()
        finally:
            # The SDK server's lifespan closes the store; this covers a stop before it ran.
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(host.close)


def import_sdk() -> None:
    """Import the SDK modules the server needs (tests replace this to hold the SDK back)."""
    importlib.import_module("mcp.server.stdio")
    importlib.import_module("memcore.mcp.server")


class SdkLoader:
    """Imports the SDK once, in a daemon thread."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self._error: Exception | None = None
        self._started = False
        # Guards `_started` and `_answering` (tool calls being answered before the
        # import, which a deferred import waits for).
        self._lock = threading.Condition()
        self._answering = 0

    def start(self) -> None:
        """Begin the import now, unless it has begun (idempotent)."""
        with self._lock:
            if self._started:
                return
            self._started = True
        threading.Thread(target=self._load, name="memcore-import-sdk", daemon=True).start()

    def start_after(self, host: StoreHost, limit: float) -> None:
        """Begin the import once the store is open and its model loaded (or failed), or
        after ``limit`` seconds, whichever comes first: a model still downloading must not
        keep the SDK, and what only it answers, waiting."""

        def wait_then_start() -> None:
            deadline = time.monotonic() + limit
            try:
                embeddings = host.wait_blocking(limit).embeddings
                if embeddings is not None:
                    embeddings.wait_ready(max(0.0, deadline - time.monotonic()))
            except MemcoreError:
                pass  # the store failed to open: every tool answers with that error
            finally:
                # A first call that waited for the model runs the moment it is ready; an
                # import beside it would take the interpreter from it (28 ms on two cores).
                with self._lock:
                    left = max(0.0, deadline - time.monotonic())
                    self._lock.wait_for(lambda: self._answering == 0, left)
                self.start()

        threading.Thread(target=wait_then_start, name="memcore-sdk-after", daemon=True).start()

    @contextlib.contextmanager
    def answering(self) -> Iterator[None]:
        """While a tool call is answered before the import: an import waiting for the store
        and the model (:meth:`start_after`) also waits for the call to be answered."""
        with self._lock:
            self._answering += 1
        try:
            yield
        finally:
            with self._lock:
                self._answering -= 1
                self._lock.notify_all()

    @property
    def done(self) -> bool:
        """Whether the import has finished, successfully or not."""
        return self._done.is_set()

    async def wait(self) -> None:
        """Until the SDK is imported (starting the import if it has not started).

        Raises:
            Exception: What the import raised.
        """
        self.start()
        await anyio.to_thread.run_sync(self._done.wait, abandon_on_cancel=True)
        if self._error is not None:
            raise self._error

    def _load(self) -> None:
        started = time.perf_counter()
        try:
            import_sdk()
        except Exception as exc:  # raised again by wait(), in the serving task
            self._error = exc
        else:
            seconds = round(time.perf_counter() - started, 3)
            _log.debug("MCP SDK imported", extra={"fields": {"seconds": seconds}})
        finally:
            self._done.set()


async def _answer_early(
    early: EarlyAnswers,
    reader: TextIO,
    writer: TextIO,
    sdk: SdkLoader,
    dispatcher: Dispatcher,
    caller: Caller,
) -> list[str]:
    """Answer what ``early`` can until a line needs the SDK, the SDK has loaded or the
    input ends; the lines read that the SDK must still read, in order.

    Tool calls run here one at a time (the SDK runs them concurrently): the first calls of
    a session are answered without waiting for the SDK's import."""
    replay: list[str] = []
    while not sdk.done:
        # Abandoned if a signal cancels the wait: nothing interrupts the blocked read, and
        # the process exits without it.
        line = await anyio.to_thread.run_sync(reader.readline, abandon_on_cancel=True)
        if not line:
            break
        step = HAND_OFF if sdk.done else early.step(line)
        if step.call is not None:
            with sdk.answering():
                answering = caller.answering(step.call.request_id)
                outcome = await dispatcher.call(step.call.name, step.call.arguments, answering)
                reply = tool_call_reply(step.call.request_id, outcome)
                await anyio.to_thread.run_sync(_write, writer, reply)
        if step.reply is not None:
            await anyio.to_thread.run_sync(_write, writer, step.reply)
        if step.replay:
            replay.append(line)
        if step.hand_off:
            break
    return replay


async def _serve_with_sdk(
    dispatcher: Dispatcher,
    host: StoreHost,
    caller: Caller,
    stdin: _Replay,
    stdout: TextIO,
    early: EarlyAnswers,
) -> None:
    from mcp.server.stdio import stdio_server

    from memcore.mcp.server import build_server

    # The SDK's request context carries the JSON-RPC id, for the call's log line.
    server = build_server(dispatcher, host, lambda ctx: caller.answering(ctx.request_id))
    write_to = LineWriter(_DropReply(stdout, early))
    # AsyncFile only calls readline on stdin; the SDK only writes and flushes stdout.
    read_from = anyio.wrap_file(cast(TextIO, _Screened(stdin, write_to)))
    try:
        async with stdio_server(read_from, cast(Any, write_to)) as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        # Replies still queued go out before the store closes and the process ends.
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(write_to.close)


class LineWriter:
    """The SDK's stdout: messages are written and flushed by one writer thread.

    ``anyio.wrap_file`` sends the SDK's ``write`` and then its ``flush`` through a worker
    thread and back, one after the other, so a reply reached the client only after the
    second hop (about 0.4 ms per reply on two busy cores). Here ``write`` only queues the
    text and the thread writes and flushes it at once; ``flush`` has nothing left to do.
    The event loop never waits on the pipe, except to hold back a client that stopped
    reading once :data:`QUEUE_LIMIT` replies are waiting.
    """

    QUEUE_LIMIT = 64

    def __init__(self, out: _Writable) -> None:
        self._out = out
        self._queue: queue.Queue[str | None] = queue.Queue(self.QUEUE_LIMIT)
        self._error: OSError | None = None
        self._thread = threading.Thread(target=self._drain, name="memcore-stdout", daemon=True)
        self._thread.start()

    async def write(self, text: str) -> int:
        """Queue ``text``; raises the error that ended an earlier write (a closed pipe)."""
        if self._error is not None:
            raise self._error
        try:
            self._queue.put_nowait(text)
        except queue.Full:
            await anyio.to_thread.run_sync(self._queue.put, text, abandon_on_cancel=True)
        return len(text)

    def put(self, text: str) -> None:
        """Queue ``text`` from a thread outside the event loop (blocking while full)."""
        if self._error is None:
            self._queue.put(text)

    async def flush(self) -> None:
        """Nothing to do: the writer thread flushes after every message."""

    def close(self, timeout: float = _CLOSE_SECONDS) -> None:
        """Write what is queued, then stop the thread (blocking; idempotent)."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join(timeout)

    def _drain(self) -> None:
        while (text := self._queue.get()) is not None:
            if self._error is not None:
                continue  # the reader is gone: drop the rest, keep draining
            try:
                self._out.write(text)
                self._out.flush()
            except OSError as exc:
                self._error = exc


class _Screened:
    """The SDK's stdin without the lines it cannot read: those are answered here with a
    JSON-RPC error (``malformed``), where the SDK would drop them without a word, or handed
    on repaired (a tool call whose arguments hold a lone surrogate). Blank
    lines carry no message and are skipped. A malformed line read while the SDK was still
    loading ends the early answers (``handshake``): it is replayed here as soon as the SDK
    has loaded, without waiting for the client's next line.
    """

    def __init__(self, lines: _Replay, replies: LineWriter) -> None:
        from memcore.mcp import malformed  # imports the SDK's types: loaded by now

        self._lines, self._replies, self._malformed = lines, replies, malformed

    def readline(self) -> str:
        while line := self._lines.readline():
            if not line.strip():
                continue
            rejection = self._malformed.screen(line)
            if rejection is None:
                return line
            if isinstance(rejection, self._malformed.Repaired):
                return rejection.text + "\n"
            self._malformed.log_rejection(rejection, "stdio", len(line.encode(errors="replace")))
            self._replies.put(rejection.reply_line())
        return line


class _Replay:
    """The SDK's stdin: the lines read before it ran, then the rest of the input."""

    def __init__(self, lines: Iterable[str], rest: TextIO) -> None:
        self._lines = deque(lines)
        self._rest = rest

    def readline(self) -> str:
        return self._lines.popleft() if self._lines else self._rest.readline()


class _Writable(Protocol):
    def write(self, text: str) -> int: ...
    def flush(self) -> None: ...


class _DropReply:
    """The SDK's stdout, without its reply to the ``initialize`` answered early.

    The SDK writes one message per call, and that reply is the first it writes
    (``initialize`` is handled inline, before the lines replayed after it), so only lines
    written before it are parsed. A reply that differs from the early one (an SDK upgrade
    changed the handshake) is logged: the handshake tests catch that before a release.
    """

    def __init__(self, out: TextIO, early: EarlyAnswers) -> None:
        self._out = out
        self._early = early
        self._pending = early.initialize_id is not None

    def write(self, text: str) -> int:
        if self._pending and self._is_initialize_reply(text):
            self._pending = False
            return len(text)
        return self._out.write(text)

    def flush(self) -> None:
        self._out.flush()

    def _is_initialize_reply(self, text: str) -> bool:
        try:
            message = json.loads(text)
        except ValueError:
            return False
        wanted = self._early.initialize_id
        if not (
            isinstance(message, dict)
            and "method" not in message
            and type(message.get("id")) is type(wanted)
            and message.get("id") == wanted
        ):
            return False
        result = message.get("result")
        if result != self._early.initialize_result:
            seen = {"error": message.get("error")} if result is None else {"keys": sorted(result)}
            _log.warning(
                "the SDK's initialize reply differs from the one sent while it loaded",
                extra={"fields": seen},
            )
        return True


def _write(writer: TextIO, text: str) -> None:
    writer.write(text)
    writer.flush()


async def _stop_on_signal(
    scope: anyio.CancelScope,
    host: StoreHost,
    *,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    # SIGTERM (docker stop) and SIGINT end the server through the same path as EOF, so the
    # store is closed cleanly. The stdin reader is a thread blocked in a read that
    # cancellation cannot interrupt, so once the store is closed the process exits without
    # waiting for the client to close stdin.
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        task_status.started()
        async for _ in signals:
            threading.Thread(target=_exit_once_closed, args=(host,), daemon=True).start()
            scope.cancel()
            return


def _exit_once_closed(host: StoreHost) -> None:
    if host.wait_closed(_CLOSE_SECONDS):
        _log.info("memcore MCP server stopped")
    logging.shutdown()
    os._exit(0)
