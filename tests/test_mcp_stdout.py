"""The stdio server's stdout writer: replies are written whole, in order, flushed one by
one, drained on close, and a client that went away ends the session with the pipe's error
instead of hanging the server."""

from __future__ import annotations

import threading

import anyio
import pytest

from memcore.mcp.stdio import LineWriter


class Recorder:
    """A pipe end that records what reached the client, flush by flush."""

    def __init__(self, *, hold: threading.Event | None = None) -> None:
        self.buffer: list[str] = []
        self.delivered: list[str] = []
        self._hold = hold

    def write(self, text: str) -> int:
        if self._hold is not None:
            self._hold.wait(10)
        self.buffer.append(text)
        return len(text)

    def flush(self) -> None:
        self.delivered.append("".join(self.buffer))
        self.buffer.clear()


class ClosedPipe:
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:  # pragma: no cover - write fails first
        pass


def test_replies_reach_the_pipe_in_order_each_flushed_and_close_drains_them() -> None:
    out = Recorder()
    writer = LineWriter(out)

    async def send() -> None:
        for i in range(500):
            await writer.write(f'{{"id":{i}}}\n')
            await writer.flush()

    anyio.run(send)
    writer.close()
    assert out.delivered == [f'{{"id":{i}}}\n' for i in range(500)]
    writer.close()  # idempotent


def test_a_client_that_stops_reading_holds_the_writer_back_without_losing_replies() -> None:
    hold = threading.Event()
    out = Recorder(hold=hold)
    writer = LineWriter(out)
    total = LineWriter.QUEUE_LIMIT * 3
    queued_while_held: list[int] = []

    async def send() -> None:
        async with anyio.create_task_group() as group:

            async def release_later() -> None:
                await anyio.sleep(0.3)
                queued_while_held.append(written)
                hold.set()

            group.start_soon(release_later)
            written = 0
            for i in range(total):
                await writer.write(f"{i}\n")
                written = i + 1

    anyio.run(send)
    writer.close()
    # The queue's worth, plus the one the thread holds and the one waiting to be queued.
    assert queued_while_held[0] <= LineWriter.QUEUE_LIMIT + 2
    assert out.delivered == [f"{i}\n" for i in range(total)]


def test_a_closed_pipe_surfaces_on_the_next_write() -> None:
    writer = LineWriter(ClosedPipe())

    async def send() -> None:
        await writer.write("first\n")
        for _ in range(200):
            await anyio.sleep(0.01)
            await writer.write("next\n")

    with pytest.raises(BrokenPipeError):
        anyio.run(send)
    writer.close()
