"""Periodic maintenance in the server (``--maintenance-interval``; off by default, as
clients call ``memory_run_maintenance`` themselves).

Once the store is open, a daemon thread runs ``Memory.memory_run_maintenance`` for each
namespace the server serves every interval, on a fixed schedule (a slow run skips the
slots it overran, it does not shift the rest). Each run is one log line with its counts.
A failure is logged (the facade counts it in ``mcp_memory_maintenance_total``) and the
next run comes on schedule: maintenance never takes the server down. The thread is a store
attachment, so it stops, finishing a run in flight, before the store closes (stdio EOF, a
signal, HTTP shutdown).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from memcore.errors import MemcoreError, StorageError
from memcore.settings.options import NamespaceRange, Settings
from memcore.settings.tokens import load
from memcore.tools.host import StoreHost

if TYPE_CHECKING:
    from memcore.memory import Memory

_log = logging.getLogger("memcore.mcp.maintenance")

#: Longest close() waits for a run in flight before the store closes anyway.
STOP_SECONDS = 60.0
#: BaseExceptions that end the thread instead of one run (a panic is a run's failure).
_PROPAGATED = (KeyboardInterrupt, SystemExit, GeneratorExit)

Namespaces = Callable[[], Sequence[str]]
"""The namespaces to maintain, asked before each round (tokens may be added meanwhile)."""


def served_namespaces(settings: Settings) -> Namespaces:
    """What a server maintains: ``--namespace``, or over HTTP with a token file the
    namespaces of its tokens (read each round); on a PostgreSQL node only those it serves."""
    served = (
        None if settings.namespace_range is None else NamespaceRange.parse(settings.namespace_range)
    )

    def namespaces() -> list[str]:
        names = {settings.namespace}
        if settings.transport == "http" and settings.auth_file is not None:
            names = {entry.namespace for entry in load(settings.auth_file)}
        if settings.namespaces is not None:
            names &= set(settings.namespaces)
        if served is not None:
            names = {name for name in names if name in served}
        return sorted(names)

    return namespaces


def schedule(host: StoreHost, interval: float, namespaces: Namespaces) -> None:
    """Run maintenance every ``interval`` seconds once ``host``'s store is open."""

    def start(memory: Memory) -> None:
        host.attachment("maintenance", lambda: PeriodicMaintenance(memory, interval, namespaces))

    host.when_open(start)


class PeriodicMaintenance:
    """The maintenance thread of one open store."""

    def __init__(self, memory: Memory, interval: float, namespaces: Namespaces) -> None:
        if not (interval > 0 and math.isfinite(interval)):
            raise ValueError(f"interval must be a positive number of seconds, got {interval!r}")
        self._memory = memory
        self._interval = interval
        self._namespaces = namespaces
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="memcore-maintenance", daemon=True)
        self._thread.start()
        _log.info("periodic maintenance on", extra={"fields": {"interval_seconds": self._interval}})

    def close(self) -> None:
        """Stop; a run in flight finishes first (at most :data:`STOP_SECONDS`)."""
        self._stop.set()
        self._thread.join(STOP_SECONDS)
        if self._thread.is_alive():
            _log.warning("a maintenance run was still going when the store closed")

    def _loop(self) -> None:
        next_run = time.monotonic() + self._interval
        while not self._stop.wait(max(0.0, next_run - time.monotonic())):
            try:
                chosen = list(self._namespaces())
            except Exception:
                _log.exception("periodic maintenance could not list its namespaces")
                chosen = []
            for namespace in chosen:
                if self._stop.is_set():
                    return
                self._run(namespace)
            # The next slot still ahead: a run longer than the interval skips, never piles up.
            now = time.monotonic()
            next_run += self._interval * max(1, math.ceil((now - next_run) / self._interval))

    def _run(self, namespace: str) -> None:
        started = time.perf_counter()
        fields: dict[str, Any] = {"namespace": namespace}
        try:
            result = self._memory.memory_run_maintenance(namespace=namespace)
        except MemcoreError as exc:
            fields.update(status=type(exc).code, error=str(exc), ms=_ms(started))
            _log.warning("periodic maintenance failed", extra={"fields": fields})
        except Exception:
            fields.update(status=StorageError.code, ms=_ms(started))
            _log.exception("periodic maintenance failed", extra={"fields": fields})
        except BaseException as exc:
            # A Rust panic (pyo3's PanicException) costs this run only.
            if isinstance(exc, _PROPAGATED):
                raise
            fields.update(status=StorageError.code, ms=_ms(started))
            _log.exception("periodic maintenance failed", extra={"fields": fields})
        else:
            fields.update(status="ok", ms=_ms(started))
            fields.update({k: v for k, v in _counts(result).items() if k not in fields})
            _log.info("periodic maintenance", extra={"fields": fields})


def _counts(result: Any) -> dict[str, int | float | bool]:
    """The scalar counters of a maintenance result (what it did, never content)."""
    if not isinstance(result, dict):
        return {}
    return {
        str(key): value
        for key, value in result.items()
        if key != "ok" and isinstance(value, int | float | bool)
    }


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1e3, 3)
