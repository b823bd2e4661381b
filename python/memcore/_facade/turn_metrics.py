"""Counters of the automatic path (the lifecycle contract's seven metrics), kept by the
facade so that a Python program and the server read the same numbers: the server renders
them on ``/metrics`` under their ``mcp_memory_*`` names and puts them in ``get_status``.

Counts are per process (a Prometheus counter per server); calls refused by the server
before they reach the facade (a schema error) are counted by its per-tool metrics instead.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypedDict

from memcore._facade.tiers import TIERS as TIERS
from memcore.errors import MemcoreError, StorageError

#: after_turn latency buckets, in milliseconds (the contract's SLO is p95 <= 500 ms).
DURATION_BUCKETS_MS: tuple[float, ...] = (
    1.0,
    2.5,
    5.0,
    10.0,
    25.0,
    50.0,
    100.0,
    250.0,
    500.0,
    1000.0,
    2500.0,
    5000.0,
    10000.0,
)


class DurationSnapshot(TypedDict):
    """A histogram: cumulative counts per upper bound (ms), the sum and the count."""

    buckets: list[tuple[float, int]]
    sum: float
    count: int


class TurnMetricsSnapshot(TypedDict):
    """The seven metrics at one moment (names without the ``mcp_memory_`` prefix)."""

    before_turn_total: dict[str, int]
    after_turn_total: dict[str, int]
    after_turn_duration_ms: DurationSnapshot
    maintenance_total: dict[str, int]
    compaction_total: int
    fact_write_total: dict[str, int]
    idempotency_conflicts_total: int


class TurnMetrics:
    """Thread-safe counters; every Memory has one (``Memory.turn_metrics()`` reads it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: dict[str, defaultdict[str, int]] = {
            "before_turn": defaultdict(int),
            "after_turn": defaultdict(int),
            "maintenance": defaultdict(int),
        }
        self._duration = [0] * len(DURATION_BUCKETS_MS)
        self._duration_sum = 0.0
        self._duration_count = 0
        self._compactions = 0
        self._fact_writes: dict[str, int] = dict.fromkeys(TIERS, 0)
        self._conflicts = 0

    def call(self, hook: str, status: str) -> None:
        """One call of `hook` (before_turn, after_turn, maintenance) ended with `status`
        (``ok`` or the error code)."""
        with self._lock:
            self._calls[hook][status] += 1

    @contextmanager
    def counting(self, hook: str) -> Iterator[None]:
        """Count one call of `hook` with the status it ends with (``ok``, else the error's
        code; an unexpected exception counts as STORAGE_ERROR, as the server reports it);
        after_turn's duration goes to its histogram too."""
        started = time.perf_counter()
        status = "ok"
        try:
            yield
        except MemcoreError as exc:
            status = type(exc).code
            raise
        except BaseException:
            status = StorageError.code
            raise
        finally:
            self.call(hook, status)
            if hook == "after_turn":
                self.after_turn_took((time.perf_counter() - started) * 1e3)

    def after_turn_took(self, milliseconds: float) -> None:
        """How long one memory_after_turn took."""
        with self._lock:
            self._duration_sum += milliseconds
            self._duration_count += 1
            for i, bound in enumerate(DURATION_BUCKETS_MS):
                if milliseconds <= bound:
                    self._duration[i] += 1

    def compacted(self) -> None:
        """memory_before_turn replaced older items by a digest."""
        with self._lock:
            self._compactions += 1

    def fact_written(self, tier: str) -> None:
        """A captured fact was stored with `tier`."""
        with self._lock:
            self._fact_writes[tier] = self._fact_writes.get(tier, 0) + 1

    def conflict(self) -> None:
        """A memory_after_turn repeated a turn already recorded or being recorded."""
        with self._lock:
            self._conflicts += 1

    def snapshot(self) -> TurnMetricsSnapshot:
        """The counters now."""
        with self._lock:
            return {
                "before_turn_total": dict(self._calls["before_turn"]),
                "after_turn_total": dict(self._calls["after_turn"]),
                "after_turn_duration_ms": {
                    "buckets": list(zip(DURATION_BUCKETS_MS, self._duration, strict=True)),
                    "sum": self._duration_sum,
                    "count": self._duration_count,
                },
                "maintenance_total": dict(self._calls["maintenance"]),
                "compaction_total": self._compactions,
                "fact_write_total": dict(self._fact_writes),
                "idempotency_conflicts_total": self._conflicts,
            }


def as_plain(snapshot: TurnMetricsSnapshot) -> dict[str, Any]:
    """The snapshot as JSON-ready values (buckets as ``{"le": ms, "count": n}``)."""
    duration = snapshot["after_turn_duration_ms"]
    return {
        **snapshot,
        "after_turn_duration_ms": {
            "buckets": [{"le": le, "count": n} for le, n in duration["buckets"]],
            "sum": duration["sum"],
            "count": duration["count"],
        },
    }
