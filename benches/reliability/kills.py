"""kill -9 during writes, many times: the writer and the kill of
tests/test_crash_recovery.py (``run_and_kill``), with every acknowledged write checked after
each kill (present, findable by its word and by its vector, SQLite's quick_check ok)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from tests.test_crash_recovery import run_and_kill, vector_for

import memcore


def run(home: Path, *, rounds: int, seed: int = 20) -> dict[str, Any]:
    """``rounds`` kills of a writer on one store; what was acknowledged and what was lost."""
    home.mkdir(parents=True)
    rng = random.Random(seed)
    path = home / "store"
    acknowledged: dict[int, str] = {}
    lost: set[str] = set()
    unfindable: set[str] = set()
    integrity_ok = True
    start = 0
    for _ in range(rounds):
        acknowledged.update(run_and_kill(path, start, rng))
        start = max(acknowledged, default=start) + 1000
        with memcore.Memory(path, model=None) as mem:
            try:
                mem._engine.quick_check()
            except memcore.MemcoreError:
                integrity_ok = False
            for i, mem_id in acknowledged.items():
                try:
                    mem.get_memory(mem_id)
                except memcore.MemcoreError:
                    lost.add(mem_id)
                    continue
                by_text = mem.search_text(f"zq{i}x", 1, include_invalid=True)
                by_vector = mem.search(vector=vector_for(i), limit=1, include_invalid=True)
                found = [h.memory.id for h in by_text] + [h.memory.id for h in by_vector]
                if found != [mem_id, mem_id]:
                    unfindable.add(mem_id)
    return {
        "rounds": rounds,
        "acknowledged": len(acknowledged),
        "lost": len(lost),
        "unfindable": len(unfindable),
        "integrity_ok": integrity_ok,
    }
