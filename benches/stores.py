"""Opening memcore stores for the benches, waiting for the background indexer, and the
stores built once per scale."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from memcore import Memory

NAMESPACE = "default"

# How long the indexer may take to drain after flush() before the bench calls it stuck.
SETTLE_TIMEOUT_S = 600.0


def open_memory(path: Path, durability: Literal["normal", "full"] = "normal") -> Memory:
    """A text-only Memory (vectors are always passed in): no model is loaded, so the timings
    are of the engine, not of an embedding model."""
    import memcore  # late: `python -m benches --help` works without the native module

    return memcore.Memory(path, model=None, durability=durability)


def settle(mem: Memory) -> None:
    """Flush and compute every hubness value, then wait until index_status reports
    nothing pending (so no background work runs beside the timed calls)."""
    mem._engine.flush()
    mem._engine.settle_hubness()
    deadline = time.perf_counter() + SETTLE_TIMEOUT_S
    while True:
        status = mem._engine.index_status()
        if status.vectors_pending == 0 and status.text_pending == 0:
            return
        if time.perf_counter() > deadline:
            raise RuntimeError(f"indexer did not settle: {status}")
        time.sleep(0.005)


@dataclass
class BuiltStore:
    """A memcore data directory holding one workload, closed, and the id of each text."""

    path: Path
    ids: list[str]

    def index_of(self) -> dict[str, int]:
        return {memory_id: i for i, memory_id in enumerate(self.ids)}
