"""stdin and stdout as the protocol's wire, claimed for the duration of a stdio session.

The wire moves to private descriptors, and fds 0 and 1 then read the null device and write
to stderr, so stray output (a child process, a ``print``, a library writing to stdout)
cannot corrupt the protocol. This is what the SDK's ``stdio_server`` does when it opens the
streams itself; it does not when handed them, as ``stdio`` hands it its own.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Callable, Iterator
from typing import BinaryIO, Literal, TextIO

if sys.platform != "win32":
    import fcntl


@contextlib.contextmanager
def claimed() -> Iterator[tuple[TextIO, TextIO]]:
    """The protocol's input and output as UTF-8 text (undecodable input replaced, as the
    SDK reads it), with fds 0 and 1 diverted until the block ends."""
    wire_in, restore_in = _claim(0, sys.stdin, "rb", _null_input)
    try:
        wire_out, restore_out = _claim(1, sys.stdout, "wb", _stderr_copy)
        try:
            yield (
                _Unowned(wire_in, encoding="utf-8", errors="replace"),
                _Unowned(wire_out, encoding="utf-8"),
            )
        finally:
            restore_out()
    finally:
        restore_in()


class _Unowned(io.TextIOWrapper):
    """A text layer whose close leaves the binary stream open (as the SDK's own: closing
    it at garbage collection would close the process's stdout)."""

    def close(self) -> None:
        with contextlib.suppress(ValueError):
            self.detach()


def _claim(
    fd: int, stream: TextIO, mode: Literal["rb", "wb"], diversion: Callable[[], int]
) -> tuple[BinaryIO, Callable[[], None]]:
    """``fd``'s wire on a private descriptor, with ``fd`` pointed at ``diversion()``, and a
    function restoring ``fd``; ``stream``'s own buffer where that cannot be done (Windows,
    a replaced ``sys`` stream, a failing ``dup``)."""
    in_place = stream.buffer
    try:
        if sys.platform == "win32" or stream.fileno() != fd:
            return in_place, _nothing
        private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    except (AttributeError, OSError, ValueError):
        return in_place, _nothing
    try:
        target = diversion()
        try:
            os.dup2(target, fd)
        finally:
            os.close(target)
    except OSError:
        os.close(private)
        return in_place, _nothing

    def restore() -> None:
        os.dup2(private, fd)

    # Never closed: a worker thread may still be blocked reading it when serving ends.
    return os.fdopen(private, mode, closefd=False), restore


def _null_input() -> int:
    return os.open(os.devnull, os.O_RDONLY)


def _stderr_copy() -> int:
    return os.dup(2)


def _nothing() -> None:
    pass
