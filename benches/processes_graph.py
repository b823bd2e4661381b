"""Two processes on a larger store while one of them writes the knowledge graph: how long
its writes take to show in the other's search_text, and how long the other's own
store_memory calls wait meanwhile (part of ``benches/bench_processes.py``'s full run).

A process applies another's memories, turns and code chunks one by one, but a write of an
entity, a relation or an observation (save_memory, create_entities, add_observations, a
store_memory that names entities) makes it rescan its catalog and graph from the tables:
O(store), under that process's writer lock, and its follower then pauses four times as
long as the catch-up took (rust/memcore/src/engine/follow.rs). So the lag and the stalls
grow with the store. Measured against the same writer storing plain memories instead.
Plain ``memcore.Memory(path, model=None)`` on both sides: the engine, without MCP.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from benches.report import Record
from benches.stats import Timings

#: argv: store, mode ("graph" or "memories"), seconds. Every 300 ms: one write of the
#: mode's kind, then a memory whose word the other process polls for.
WRITER = r"""
import json, sys, time
import memcore
store, mode, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
mem = memcore.Memory(store, model=None)
print(json.dumps({"ready": True}), flush=True)
end = time.monotonic() + seconds
i = 0
while time.monotonic() < end:
    if mode == "graph":
        mem.create_entity(f"project{i}", "project", [f"project {i} started this week"])
    else:
        mem.store_memory(f"project {i} started this week")
    token = f"zqgraph{mode}n{i}x"
    m = mem.store_memory(f"a probe for the lag: {token}")
    print(json.dumps({"token": token, "id": m.id, "at": time.monotonic()}), flush=True)
    i += 1
    time.sleep(0.3)
"""


def build(store: Path, memories: int) -> None:
    """A store of ``memories`` memories and a tenth as many entities (text only)."""
    import memcore

    with memcore.Memory(store, model=None) as mem:
        for start in range(0, memories, 5_000):
            mem.store_memories(
                [
                    f"background fact {i} about topic {i % 97} and area {i % 13}"
                    for i in range(start, min(memories, start + 5_000))
                ]
            )
        for start in range(0, memories // 10, 1_000):
            mem.create_entities(
                [
                    {
                        "name": f"entity {i}",
                        "entityType": "thing",
                        "observations": [f"entity {i} is known"],
                        "relations": [],
                    }
                    for i in range(start, min(memories // 10, start + 1_000))
                ]
            )


def measure(store: Path, mode: str, seconds: float) -> dict[str, Any]:
    """The other process writes (``mode``) for ``seconds``; this one polls for its probes
    and stores a memory of its own every 10 ms. Lags and stalls in ms."""
    import memcore

    lags: list[float] = []
    stalls: list[float] = []
    unseen = 0
    with memcore.Memory(store, model=None) as mem:
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(store), mode, str(seconds)],
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        assert writer.stdout is not None
        done = threading.Event()

        def write_own() -> None:
            i = 0
            while not done.is_set():
                started = time.perf_counter()
                mem.store_memory(f"this process's own fact {i}")
                stalls.append((time.perf_counter() - started) * 1e3)
                i += 1
                time.sleep(0.01)

        own = threading.Thread(target=write_own, name="own-writes")
        try:
            if not json.loads(writer.stdout.readline()).get("ready"):
                raise RuntimeError("the writer did not open the store")
            own.start()
            for line in writer.stdout:
                probe = json.loads(line)
                deadline = time.monotonic() + 30
                while True:
                    hits = mem.search_text(probe["token"], limit=3)
                    if any(h.memory.id == probe["id"] for h in hits):
                        lags.append((time.monotonic() - probe["at"]) * 1e3)
                        break
                    if time.monotonic() > deadline:
                        unseen += 1
                        break
                    time.sleep(0.005)
        finally:
            done.set()
            if own.is_alive():
                own.join()
            writer.wait(60)
            writer.stdout.close()
    return {"lags": lags, "stalls": stalls, "unseen": unseen}


def collect(work: Path, memories: int, seconds: float, log: Any) -> tuple[list[Record], str]:
    """Records of both writers' runs at a store of ``memories``; a failure, or ""."""
    store = work / "store"
    log(f"[processes] building {memories:,} memories for the graph-write lag")
    build(store, memories)
    records: list[Record] = []
    failure = ""
    for mode in ("memories", "graph"):
        log(f"[processes] lag while another process writes {mode}, {seconds:.0f} s")
        found = measure(store, mode, seconds)
        prefix = f"processes.none.2p.lag_while_writing_{mode}"
        what = "plain memories" if mode == "memories" else "entities (create_entity)"
        if found["unseen"]:
            failure = f"{found['unseen']} probes unseen in 30 s while the other wrote {what}"
        lags, stalls = Timings(np.asarray(found["lags"])), Timings(np.asarray(found["stalls"]))
        records += [
            Record(
                name=f"{prefix}",
                group=prefix,
                unit="ms",
                scale=memories,
                p50=lags.p50,
                p95=lags.p95,
                p99=lags.p99,
                value=float(lags.samples_ms.max()),
                runs=lags.runs,
                note=f"another process writes {what} every 300 ms: from its probe memory's "
                "acknowledgement to this one's search_text finding it (value: the max)",
            ),
            Record(
                name=f"processes.none.2p.store_memory_while_writing_{mode}",
                group=f"processes.none.2p.store_memory_while_writing_{mode}",
                unit="ms",
                scale=memories,
                p50=stalls.p50,
                p95=stalls.p95,
                p99=stalls.p99,
                value=float(stalls.samples_ms.max()),
                runs=stalls.runs,
                note=f"this process's own store_memory (every 10 ms) while the other writes "
                f"{what} (value: the max)",
            ),
        ]
    return records, failure
