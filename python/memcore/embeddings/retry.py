"""Retrying a failed inference call with backoff."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")

DEFAULT_DELAYS: tuple[float, ...] = (0.1, 0.5, 2.0)
"""Waits before the 1st, 2nd and 3rd retry. Inference failures worth retrying are transient
(memory pressure, a remote custom embedder's hiccup); three growing waits ride those out
while a persistent fault still surfaces within about 3 s."""

_log = logging.getLogger("memcore.embeddings")


class RetriesExhaustedError(Exception):
    """Every attempt failed; ``__cause__`` is the last failure."""

    def __init__(self, attempts: int, last: BaseException) -> None:
        super().__init__(f"failed after {attempts} attempts: {type(last).__name__}: {last}")
        self.attempts = attempts


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry.

    Attributes:
        delays: Seconds to wait before each retry; ``len(delays)`` retries in all.
        sleep: The wait function (replaceable so tests need not wait).
    """

    delays: Sequence[float] = DEFAULT_DELAYS
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)

    def call(self, operation: Callable[[], T], what: str = "inference") -> T:
        """Run ``operation``, retrying on any exception.

        Args:
            operation: The call to attempt.
            what: Named in log lines.

        Returns:
            The first successful result.

        Raises:
            RetriesExhaustedError: If the first attempt and every retry failed.
        """
        for attempt, delay in enumerate((*self.delays, None), start=1):
            try:
                return operation()
            except Exception as exc:
                if delay is None:
                    raise RetriesExhaustedError(attempt, exc) from exc
                _log.warning(
                    "%s failed (attempt %d, %s); retrying in %.1f s",
                    what,
                    attempt,
                    type(exc).__name__,
                    delay,
                )
                self.sleep(delay)
        raise AssertionError("unreachable")  # the loop always returns or raises
