"""kill -9 across processes: ``writers`` processes write one store at once (plain
``memcore.Memory(path, model=None)`` scripts that print each acknowledged id, as every agent
window's server would); round after round one of them is killed (the owner of the index
files every other round, else one picked at random) while the others write, and started
again. Afterwards a fresh open must hold every acknowledged write and find it by its word,
and its check must find no index missing an entry.

Each writer also says when it first sees itself owning the index files (it holds them until
it dies), so the run checks that exactly one process owns them: a new owner never appears
before the last one was killed, and after every round some live writer owns them.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import memcore
from benches.reliability.client import ROOT, server_env

#: argv: store, tag, pause between writes (s), vector dimension. Prints {"ready"}, then per
#: write its id and the word it is found by (or the code of its error), and {"owner": t} (a
#: monotonic time) when it first owns the files. Each write carries a vector (``vector_of``
#: its word), so the vector index is handed over too.
WRITER = r"""
import json, sys, time, zlib
import numpy as np
import memcore
store, tag, pause, dim = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
def vector_of(token):
    return np.random.default_rng(zlib.crc32(token.encode())).standard_normal(dim).astype("float32")
mem = memcore.Memory(store, model=None)
def owner():
    return mem.status()["store"]["indexes"]["owner"]
print(json.dumps({"ready": True}), flush=True)
owned = False
for i in range(10**9):
    token = f"zq{tag}n{i}x"
    try:
        m = mem.store_memory(f"{tag} writes fact {i}: {token}", vector=vector_of(token))
    except memcore.MemcoreError as e:  # refused, not acknowledged: counted
        print(json.dumps({"error": getattr(e, "code", type(e).__name__)}), flush=True)
        continue
    print(json.dumps({"id": m.id, "token": token}), flush=True)
    if not owned and owner():
        owned = True
        print(json.dumps({"owner": time.monotonic()}), flush=True)
    time.sleep(pause)
"""

#: The writers' vector dimension.
DIM = 16
#: Acknowledged writes looked up by their vector in the fresh open (all, in smaller runs).
VECTOR_SAMPLE = 2_000
#: Seconds a restarted writer may take to open the store.
START_TIMEOUT = 120.0
#: Seconds after a round within which some live writer must own the index files.
OWNER_TIMEOUT = 10.0


@dataclass
class Writer:
    """One writer process and what it printed, read by a thread of its own."""

    tag: str
    process: subprocess.Popen[str]
    acknowledged: dict[str, str] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    owner_at: float | None = None
    killed_at: float | None = None
    ready: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue  # not a whole line: the process died while printing it
            with self.lock:
                if "id" in message:
                    self.acknowledged[message["token"]] = message["id"]
                elif "error" in message:
                    self.errors[message["error"]] = self.errors.get(message["error"], 0) + 1
                elif "owner" in message:
                    self.owner_at = float(message["owner"])
                elif message.get("ready"):
                    self.ready.set()


def _start(store: Path, tag: str, home: Path, pause: float) -> tuple[Writer, threading.Thread]:
    with (home / f"{tag}.log").open("w") as log:
        process = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(store), tag, str(pause), str(DIM)],
            stdout=subprocess.PIPE,
            stderr=log,
            stdin=subprocess.DEVNULL,
            text=True,
            env=server_env(home),
            cwd=ROOT,
        )
    writer = Writer(tag, process)
    reader = threading.Thread(target=writer.read, name=f"read-{tag}", daemon=True)
    reader.start()
    if not writer.ready.wait(START_TIMEOUT):
        process.kill()
        raise RuntimeError(f"writer {tag} did not open the store; see {home / tag}.log")
    return writer, reader


def run(
    home: Path, *, rounds: int, writers: int = 4, pause: float = 0.002, seed: int = 42
) -> dict[str, Any]:
    """``rounds`` kills among ``writers`` processes on one store; the counts."""
    home.mkdir(parents=True)
    rng = random.Random(seed)
    store = home / "store"
    everyone: list[tuple[Writer, threading.Thread]] = []
    counts: dict[str, Any] = {
        "rounds": rounds,
        "writers": writers,
        "owner_kills": 0,
        "owner_overlaps": 0,
        "rounds_without_owner": 0,
        "unexpected_exits": 0,
    }
    takeovers: list[float] = []

    def start(tag: str) -> Writer:
        everyone.append(_start(store, tag, home, pause))
        return everyone[-1][0]

    try:
        live = [start(f"w{i}r0") for i in range(writers)]
        for round_ in range(1, rounds + 1):
            owner = _wait_for_owner(live)
            if owner is None:
                counts["rounds_without_owner"] += 1
            time.sleep(rng.uniform(0.2, 0.8))  # the others write meanwhile
            for gone in [w for w in live if w.process.poll() is not None]:
                counts["unexpected_exits"] += 1  # not killed by us: its log says why
                live.remove(gone)
                gone.killed_at = time.monotonic()
                live.append(start(f"{gone.tag.split('r')[0]}r{round_}x"))
            victim = owner if owner is not None and round_ % 2 else rng.choice(live)
            # Before the signal: a successor's ownership, seen later, is certainly after it.
            victim.killed_at = time.monotonic()
            os.kill(victim.process.pid, signal.SIGKILL)
            victim.process.wait()
            live.remove(victim)
            if victim is owner:
                counts["owner_kills"] += 1
                successor = _wait_for_owner(live)
                if successor is not None and successor.owner_at is not None:
                    takeovers.append(successor.owner_at - victim.killed_at)
            live.append(start(f"{victim.tag.split('r')[0]}r{round_}"))
        if _wait_for_owner(live) is None:
            counts["rounds_without_owner"] += 1
        counts["owners_at_end"] = sum(w.owner_at is not None for w in live)
    finally:
        for writer, _ in everyone:
            if writer.process.poll() is None:
                writer.process.send_signal(signal.SIGKILL)
                writer.killed_at = writer.killed_at or time.monotonic()
            writer.process.wait()
        for writer, reader in everyone:
            reader.join(30)
            if writer.process.stdout is not None:
                writer.process.stdout.close()
    counts["owner_overlaps"] = _overlaps([w for w, _ in everyone])
    acknowledged: dict[str, str] = {}
    for writer, _ in everyone:
        acknowledged.update(writer.acknowledged)
    counts["acknowledged"] = len(acknowledged)
    errors: dict[str, int] = {}
    for writer, _ in everyone:
        for code, n in writer.errors.items():
            errors[code] = errors.get(code, 0) + n
    counts["write_errors"] = errors
    counts["takeover_s"] = _spread(takeovers)
    counts.update(_verify(store, acknowledged))
    return counts


def _wait_for_owner(live: list[Writer]) -> Writer | None:
    """The one live writer that owns the index files, once one says so (None after
    OWNER_TIMEOUT, or when more than one does)."""
    deadline = time.monotonic() + OWNER_TIMEOUT
    while time.monotonic() < deadline:
        owners = [w for w in live if w.owner_at is not None]
        if owners:
            return owners[0] if len(owners) == 1 else None
        time.sleep(0.01)
    return None


def _overlaps(writers: list[Writer]) -> int:
    """Pairs of writers that owned the index files at once: each owns them from when it
    said so until it was killed, so a later owner must have said so after the earlier
    one's kill."""
    held = sorted(
        (w.owner_at, w.killed_at or float("inf")) for w in writers if w.owner_at is not None
    )
    return sum(1 for (_, end), (begin, _) in itertools.pairwise(held) if begin < end)


def vector_of(token: str) -> np.ndarray:
    """The vector a writer stores with the write found by ``token`` (as WRITER makes it)."""
    seed = zlib.crc32(token.encode())
    return np.random.default_rng(seed).standard_normal(DIM).astype("float32")


def _spread(seconds: list[float]) -> dict[str, float | int | None]:
    ordered = sorted(seconds)
    return {
        "n": len(ordered),
        "p50": round(ordered[len(ordered) // 2], 3) if ordered else None,
        "max": round(ordered[-1], 3) if ordered else None,
    }


def _verify(store: Path, acknowledged: dict[str, str]) -> dict[str, Any]:
    """In a fresh open: each acknowledged write stored and found by its word, a sample by
    its vector too (among the 10 nearest); the check."""
    lost = unfindable = by_vector = 0
    tokens = sorted(acknowledged)
    sample = set(random.Random(7).sample(tokens, min(VECTOR_SAMPLE, len(tokens))))
    with memcore.Memory(store, model=None) as mem:
        for token, memory_id in acknowledged.items():
            try:
                mem.get_memory(memory_id)
            except memcore.MemcoreError:
                lost += 1
                continue
            if memory_id not in [h.memory.id for h in mem.search_text(token, limit=3)]:
                unfindable += 1
            if token in sample:
                hits = mem.search(vector=vector_of(token), limit=10)
                by_vector += memory_id not in [h.memory.id for h in hits]
        report = mem.check()
    return {
        "lost": lost,
        "unfindable": unfindable,
        "vector_sampled": len(sample),
        "unfindable_by_vector": by_vector,
        "check_ok": report.ok,
        "index_missing": sum(index.missing for index in report.indexes),
        "integrity_ok": report.integrity == ["ok"],
    }


def failed(counts: dict[str, Any]) -> bool:
    """Whether the counts show a loss, a missing index entry or not exactly one owner."""
    return bool(
        counts["lost"]
        or counts["unfindable"]
        or counts["unfindable_by_vector"]
        or counts["index_missing"]
        or not counts["check_ok"]
        or counts["owner_overlaps"]
        or counts["rounds_without_owner"]
        or counts["owners_at_end"] != 1
        or counts["unexpected_exits"]
    )
