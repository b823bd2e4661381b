"""Per-tool call counters and latency histograms in the Prometheus text format (0.0.4),
and the automatic path's seven metrics (``mcp_memory_*``), which the facade counts.

Hand-written rather than prometheus_client: a few metric families do not justify a
dependency and its import time in a server that must start in well under a second.
Updates come from the event loop and from worker threads, so they take a lock.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Mapping

from memcore.facade import TIERS, TurnMetricsSnapshot

#: Latency buckets in seconds: engine calls are sub-millisecond, embeddings a few ms,
#: a cold model or a big recall can take seconds.
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Metrics:
    """Counters of tool calls by tool and status, latency histograms by tool, and
    counters of HTTP requests refused before reaching a tool."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: defaultdict[tuple[str, str], int] = defaultdict(int)
        self._buckets: defaultdict[str, list[int]] = defaultdict(lambda: [0] * len(BUCKETS))
        self._sums: defaultdict[str, float] = defaultdict(float)
        self._counts: defaultdict[str, int] = defaultdict(int)
        self._rejected: defaultdict[str, int] = defaultdict(int)

    def observe(self, tool: str, status: str, seconds: float) -> None:
        """Record one tool call; ``status`` is ``ok`` or the error code."""
        with self._lock:
            self._calls[(tool, status)] += 1
            self._sums[tool] += seconds
            self._counts[tool] += 1
            row = self._buckets[tool]
            for i, bound in enumerate(BUCKETS):
                if seconds <= bound:
                    row[i] += 1

    def reject(self, reason: str) -> None:
        """Record an HTTP request refused before the MCP layer (``unauthorized``, …)."""
        with self._lock:
            self._rejected[reason] += 1

    def render(self, gauges: Callable[[], dict[str, float]] | None = None) -> str:
        """The exposition text; ``gauges`` adds current values such as readiness."""
        with self._lock:
            lines = [
                "# HELP memcore_tool_calls_total Tool calls by tool and outcome (ok or error).",
                "# TYPE memcore_tool_calls_total counter",
            ]
            for (tool, status), n in sorted(self._calls.items()):
                lines.append(f'memcore_tool_calls_total{{tool="{tool}",status="{status}"}} {n}')
            lines += [
                "# HELP memcore_tool_call_duration_seconds Tool call latency, end to end.",
                "# TYPE memcore_tool_call_duration_seconds histogram",
            ]
            histogram = "memcore_tool_call_duration_seconds"
            for tool in sorted(self._counts):
                for bound, n in zip(BUCKETS, self._buckets[tool], strict=True):
                    lines.append(f'{histogram}_bucket{{tool="{tool}",le="{bound}"}} {n}')
                count = self._counts[tool]
                lines += [
                    f'{histogram}_bucket{{tool="{tool}",le="+Inf"}} {count}',
                    f'{histogram}_sum{{tool="{tool}"}} {self._sums[tool]!r}',
                    f'{histogram}_count{{tool="{tool}"}} {count}',
                ]
            lines += [
                "# HELP memcore_http_rejected_total HTTP requests refused before any tool ran.",
                "# TYPE memcore_http_rejected_total counter",
            ]
            for reason, n in sorted(self._rejected.items()):
                lines.append(f'memcore_http_rejected_total{{reason="{reason}"}} {n}')
        for name, value in sorted((gauges() if gauges else {}).items()):
            lines += [f"# TYPE {name} gauge", f"{name} {value!r}"]
        return "\n".join(lines) + "\n"


def render_lifecycle(snapshot: TurnMetricsSnapshot) -> str:
    """The automatic path's seven metrics under their contract names (``mcp_memory_*``).

    Every family is written even before the first call, with zeros: a dashboard or an
    alert on them then finds them from the start (``status="ok"``, each tier).
    """
    by_status: tuple[tuple[str, str, Mapping[str, int]], ...] = (
        (
            "mcp_memory_before_turn_total",
            "memory_before_turn calls",
            snapshot["before_turn_total"],
        ),
        ("mcp_memory_after_turn_total", "memory_after_turn calls", snapshot["after_turn_total"]),
        (
            "mcp_memory_maintenance_total",
            "Maintenance runs, called or periodic,",
            snapshot["maintenance_total"],
        ),
    )
    lines: list[str] = []
    for name, what, counts in by_status:
        lines += _family(name, "counter", f"{what} by status (ok or the error code).")
        for status, n in sorted({"ok": 0, **counts}.items()):
            lines.append(f'{name}{{status="{_label(status)}"}} {n}')
    duration = snapshot["after_turn_duration_ms"]
    histogram = "mcp_memory_after_turn_duration_ms"
    lines += _family(histogram, "histogram", "memory_after_turn latency in milliseconds.")
    for bound, n in duration["buckets"]:
        lines.append(f'{histogram}_bucket{{le="{bound}"}} {n}')
    lines += [
        f'{histogram}_bucket{{le="+Inf"}} {duration["count"]}',
        f"{histogram}_sum {float(duration['sum'])!r}",
        f"{histogram}_count {duration['count']}",
    ]
    lines += _family(
        "mcp_memory_compaction_total",
        "counter",
        "memory_before_turn inputs whose older items were replaced by a digest.",
    )
    lines.append(f"mcp_memory_compaction_total {snapshot['compaction_total']}")
    lines += _family(
        "mcp_memory_fact_write_total", "counter", "Facts captured from turns, by tier."
    )
    writes = {**dict.fromkeys(TIERS, 0), **snapshot["fact_write_total"]}
    for tier, n in sorted(writes.items()):
        lines.append(f'mcp_memory_fact_write_total{{tier="{_label(tier)}"}} {n}')
    lines += _family(
        "mcp_memory_idempotency_conflicts_total",
        "counter",
        "memory_after_turn calls repeating a turn already recorded or being recorded.",
    )
    lines.append(
        f"mcp_memory_idempotency_conflicts_total {snapshot['idempotency_conflicts_total']}"
    )
    return "\n".join(lines) + "\n"


def _family(name: str, kind: str, help_text: str) -> list[str]:
    return [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]


def _label(value: str) -> str:
    """A label value escaped as the text format requires."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
