"""Background work ends before the interpreter does.

memcore runs onnxruntime in Python threads of its own: the model loader builds its session
there, and the vector backfill and the code watchers embed. Those threads are daemons, so
the interpreter does not wait for them: it finalizes, and a thread that then returns from
onnxruntime and takes the GIL back is ended by CPython with ``pthread_exit`` (3.11 to
3.13), a forced unwind through the C++ frames below it. Unwinding out of a ``noexcept``
destructor (pybind11's ``gil_scoped_release``, which takes the GIL back) calls
``std::terminate``: "terminate called without an active exception", SIGABRT, exit code
134 instead of the program's own. (The core's own calls are safe: PyO3 parks a thread
that re-attaches during finalization instead of unwinding it, and the engine's Rust
threads never touch Python and are joined when it closes.)

So whatever owns such a thread registers here (:func:`close_at_exit`, a weak reference:
nothing is kept alive for it), and one ``atexit`` hook closes what is still open, newest
first. ``atexit`` hooks run after the non-daemon threads have ended and before
finalization, while every thread can still take the GIL: a model load in flight is waited
for, the backfill and the watchers stop, the engines close (joining the indexer and a
follower's thread). ``close()`` being idempotent, closing twice is harmless.
"""

from __future__ import annotations

import atexit
import logging
import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

_log = logging.getLogger("memcore")

Owner = TypeVar("Owner")

_lock = threading.Lock()
# Insertion order is registration order; the hook closes the newest first.
_open: dict[int, tuple[weakref.ref[Any], Callable[[Any], object]]] = {}
_hooked = False


def close_at_exit(owner: Owner, close: Callable[[Owner], object]) -> None:
    """Call ``close(owner)`` at interpreter exit if ``owner`` is still alive then.

    Args:
        owner: The object whose threads must end before the interpreter finalizes.
        close: Ends them (idempotent: the owner may have been closed already).
    """
    global _hooked
    key = id(owner)

    def forget(ref: weakref.ref[Any]) -> None:
        with _lock:
            if key in _open and _open[key][0] is ref:
                del _open[key]

    with _lock:
        _open[key] = (weakref.ref(owner, forget), close)
        if not _hooked:
            atexit.register(close_all)
            _hooked = True


def close_all() -> None:
    """Close everything registered and still alive, newest first (the ``atexit`` hook;
    tests call it too)."""
    with _lock:
        entries = list(_open.values())
        _open.clear()
    for ref, close in reversed(entries):
        owner = ref()
        if owner is None:
            continue
        try:
            close(owner)
        except Exception:  # one failed close must not keep the others open
            _log.exception("closing %s at exit failed", type(owner).__name__)
