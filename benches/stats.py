"""Timing loops and percentiles.

Every loop warms up first (page cache, lazy index loads, CPU caches), then times each call
on its own so the tail is visible, not just the mean. Python's cyclic GC is paused inside a
timed loop: its pauses land on whichever call happens to allocate, adding noise that is
neither memcore's nor a peer's, and all systems are timed under the same rule.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

# Wall-clock bound of any one timed loop, set by the runner (None: unbounded). A module-level
# default, so that area modules written elsewhere get the same bound without passing it.
_loop_budget_s: float | None = None


def set_loop_budget(seconds: float | None) -> None:
    """Bound every later `time_calls` loop that does not pass its own `max_seconds`."""
    global _loop_budget_s
    _loop_budget_s = seconds


@dataclass(frozen=True)
class Timings:
    """Per-call latencies of one timed loop, in milliseconds."""

    samples_ms: np.ndarray

    def percentile(self, q: float) -> float:
        return float(np.percentile(self.samples_ms, q))

    @property
    def p50(self) -> float:
        return self.percentile(50)

    @property
    def p95(self) -> float:
        return self.percentile(95)

    @property
    def p99(self) -> float:
        return self.percentile(99)

    @property
    def runs(self) -> int:
        return int(self.samples_ms.size)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for a timed section, then collect once."""
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
        gc.collect()


def time_calls(
    op: Callable[[int], object],
    *,
    warmup: int,
    runs: int,
    max_seconds: float | None = None,
    min_runs: int = 20,
) -> Timings:
    """Time `op(i)` for i in range(runs) after `warmup` untimed calls.

    The index lets a caller cycle through a query set so that runs are not one cached
    repeat; results are discarded here, so correctness is checked by the caller outside.
    `max_seconds` bounds a slow operation's loop (after at least `min_runs` calls), so one
    row far off its target cannot stretch the whole run; the record's `runs` says how many.
    """
    budget = _loop_budget_s if max_seconds is None else max_seconds
    limit_ns = None if budget is None else int(budget * 1e9)
    clock = time.perf_counter_ns
    started = clock()
    for i in range(warmup):
        op(i)
        if limit_ns is not None and clock() - started > limit_ns // 10:
            break  # a slow op is warm after a few calls; keep the budget for timed ones
    samples = np.empty(runs, dtype=np.float64)
    done = 0
    with gc_paused():
        started = clock()
        for i in range(runs):
            start = clock()
            op(i)
            end = clock()
            samples[i] = end - start
            done = i + 1
            if limit_ns is not None and done >= min_runs and end - started > limit_ns:
                break
    return Timings(samples[:done] / 1e6)


def time_once(op: Callable[[], object]) -> tuple[float, object]:
    """Seconds taken by one call of `op`, and its result."""
    start = time.perf_counter()
    result = op()
    return time.perf_counter() - start, result


def rates(counts: np.ndarray, seconds: np.ndarray) -> np.ndarray:
    """Items per second of each timed batch."""
    return counts / np.maximum(seconds, 1e-12)
