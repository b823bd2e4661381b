"""kill -9 at random moments loses nothing that was acknowledged.

A child process stores memories (with vectors and a unique word each) and
prints each id only after `store_memory` returned; it also flushes the
indexes now and then so kills land during text commits and graph saves too.
The parent SIGKILLs it at random points, many times, and after each kill
reopens the store and checks that every acknowledged id is present,
findable by its vector and by its word, and that SQLite's quick_check is ok.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import memcore

DIM = 32
WRITER = textwrap.dedent(
    """
    import sys
    import numpy as np
    import memcore

    path, start = sys.argv[1], int(sys.argv[2])
    with memcore.Memory(path, model=None) as mem:
        i = start
        while True:
            v = np.random.default_rng(i).standard_normal({dim}).astype("float32")
            r = mem.store_memory(f"fact number {{i}} marker zq{{i}}x", vector=v)
            print(i, r.id, flush=True)
            if i % 25 == 0:
                mem._engine.flush()
            if i % 40 == 0:
                mem.invalidate(r.id, "churn")
            i += 1
    """
).format(dim=DIM)


def vector_for(i: int) -> np.ndarray:
    return np.random.default_rng(i).standard_normal(DIM).astype("float32")


def run_and_kill(path: Path, start: int, rng: random.Random) -> dict[int, str]:
    """Start a writer, let it acknowledge a random number of stores, SIGKILL it."""
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), str(start)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    acked: dict[int, str] = {}
    target = rng.randint(1, 60)
    assert child.stdout is not None
    deadline = time.monotonic() + 60
    while len(acked) < target and time.monotonic() < deadline:
        line = child.stdout.readline()
        if not line:
            break
        i, mem_id = line.split()
        acked[int(i)] = mem_id
    # Let it run a random few more milliseconds so the kill lands mid-write.
    time.sleep(rng.random() * 0.05)
    os.kill(child.pid, signal.SIGKILL)
    # Acknowledgements printed before the kill still count; a line the kill
    # cut short was never a complete acknowledgement.
    rest, err = child.communicate(timeout=30)
    for line in rest.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit() and len(parts[1]) == 30:
            acked[int(parts[0])] = parts[1]
    assert acked or "Traceback" not in err, err
    return acked


@pytest.mark.slow
def test_kill_minus_nine_loses_nothing_acknowledged(tmp_path: Path) -> None:
    rng = random.Random(1234)
    path = tmp_path / "store"
    acknowledged: dict[int, str] = {}
    start = 0
    for _round in range(20):
        acked = run_and_kill(path, start, rng)
        acknowledged.update(acked)
        start = max(acknowledged, default=start) + 1000
        with memcore.Memory(path, model=None) as mem:
            mem._engine.quick_check()
            for i, mem_id in acknowledged.items():
                record = mem.get_memory(mem_id)
                assert record.content == f"fact number {i} marker zq{i}x"
                by_text = mem.search_text(f"zq{i}x", 1, include_invalid=True)
                assert [h.memory.id for h in by_text] == [mem_id]
                by_vector = mem.search(vector=vector_for(i), limit=1, include_invalid=True)
                assert [h.memory.id for h in by_vector] == [mem_id]
    assert len(acknowledged) >= 10
