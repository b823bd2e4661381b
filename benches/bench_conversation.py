"""The interaction log (issue 8 targets): record_turn and retrieve_context, embedding excluded.

    python -m benches.bench_conversation [--quick] [--turns N] [--json out.json]

Also the runner's area "conversation" (`collect(ctx)`, see benches.__main__.AREAS). Targets
(not in the budget of docs/performance.md yet, so each record carries its own verdict):
record_turn p50 ≤ 1 ms (first asked: < 50 ms) and retrieve_context p50 ≤ 10 ms at 10k
turns (first asked: < 200 ms), vectors precomputed in both.

The store is a coding agent's log in local mode: conversations of five turns, each turn
reading and editing one to three files of a 500-file project (Zipf-distributed, so popular
files have long version chains and many conversations, as hypernode lookup meets them).
Correctness is checked outside the timed loops.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from benches.report import Record, latency
from benches.stats import time_calls
from benches.stores import settle
from benches.workloads import corpus, hashed_vectors, queries

if TYPE_CHECKING:
    from memcore import ContextResult

AREA = "conversation"
NAMESPACE = "default"
TURNS_PER_CONVERSATION = 5
FILES = 500
TARGET_MS = {"record_turn": 1.0, "retrieve_context": 10.0}
# A slow operation gets fewer timed calls (at least MIN_RUNS), so a full run stays bounded.
LOOP_SECONDS = 60.0
MIN_RUNS = 100


class AgentLog:
    """Deterministic turns of a coding agent: texts, vectors and the files each touches."""

    def __init__(self, turns: int, seed: int = 5) -> None:
        self.texts = corpus(turns)
        self.vectors = hashed_vectors(self.texts)
        self.files = [f"src/pkg{i % 25}/module_{i}.py" for i in range(FILES)]
        ranks = np.arange(1, FILES + 1, dtype=np.float64)
        self._weights = ranks**-1.07 / np.sum(ranks**-1.07)
        self._rng = np.random.default_rng(seed)
        self._edits: dict[str, int] = {}

    def touched(self) -> list[str]:
        """One to three distinct files, popular ones more often."""
        count = int(self._rng.integers(1, 4))
        picks = self._rng.choice(FILES, size=count, replace=False, p=self._weights)
        return [self.files[i] for i in picks]

    def procedures(self, files: list[str]) -> list[dict[str, Any]]:
        """Native procedure dicts: READ every file, then EDIT it (a new version)."""
        reads, edits = [], []
        for f in files:
            n = self._edits.get(f, 0)
            self._edits[f] = n + 1
            reads.append({"canonical": f, "content_hash": f"{f}#{n}", "size": 100})
            edits.append(
                {"canonical": f, "content_hash": f"{f}#{n + 1}", "size": 100, "written": True}
            )
        args = json.dumps({"paths": files})
        return [
            {"tool": "READ", "args": args, "documents": reads},
            {"tool": "EDIT", "args": args, "documents": edits},
        ]

    def facade_procedures(self, files: list[str]) -> list[dict[str, Any]]:
        """The same turn as `Memory.record_turn` takes it (hashes given, no file reads)."""
        return [
            {
                "tool": p["tool"],
                "args": {"paths": files},
                "documents": [
                    {"path": d["canonical"], "content_hash": d["content_hash"]}
                    for d in p["documents"]
                ],
            }
            for p in self.procedures(files)
        ]


def build(root: Path, turns: int, log: Callable[[str], None]) -> tuple[Any, AgentLog]:
    """A local-mode Memory in `root` holding `turns` recorded turns."""
    import memcore  # late: --help works without the native module

    mem = memcore.Memory(mode="local", project_root=root, model=None)
    agent = AgentLog(turns)
    engine = mem._engine
    for i, text in enumerate(agent.texts):
        engine.record_turn(
            NAMESPACE,
            f"conv-{i // TURNS_PER_CONVERSATION}",
            f"t{i % TURNS_PER_CONVERSATION}",
            text,
            agent_text=f"Done: {text}",
            procedures=agent.procedures(agent.touched()),
            vector=agent.vectors[i],
        )
        if (i + 1) % 5000 == 0:
            log(f"[conversation] {i + 1:,} turns recorded")
    settle(mem)
    return mem, agent


def measure(mem: Any, agent: AgentLog, turns: int, runs: int, warmup: int) -> list[Record]:
    """retrieve_context, then record_turn (core and facade) on the built store."""
    engine = mem._engine
    conversations = turns // TURNS_PER_CONVERSATION
    qs = queries(200)
    q_vectors = hashed_vectors(qs)
    rng = np.random.default_rng(11)
    requests = [
        (
            qs[i % len(qs)],
            q_vectors[i % len(qs)],
            f"conv-{rng.integers(conversations)}",
            agent.touched(),
        )
        for i in range(warmup + runs)
    ]
    results: list[ContextResult] = []

    def retrieve_core(i: int) -> None:
        query, vector, conversation, docs = requests[i]
        results.append(
            engine.retrieve_context(
                NAMESPACE, query, vector, conversation_id=conversation, documents=docs
            )
        )

    def retrieve_query_only(i: int) -> object:
        query, vector, conversation, _ = requests[i]
        return engine.retrieve_context(NAMESPACE, query, vector, conversation_id=conversation)

    def retrieve_facade(i: int) -> object:
        query, vector, conversation, docs = requests[i]
        return mem.retrieve_context(query, conversation, docs, vector=vector)

    group = "retrieve_context"
    records = [
        _latency("retrieve_context.core", group, retrieve_core, turns, runs, warmup),
        _latency(
            "retrieve_context.core.query_only", group, retrieve_query_only, turns, runs, warmup
        ),
        _latency("retrieve_context.facade", group, retrieve_facade, turns, runs, warmup),
    ]
    assert all(r.items and r.token_count <= 2000 for r in results), "empty or over budget"
    assert all(
        i.turn.conversation_id != requests[n][2] for n, r in enumerate(results) for i in r.items
    ), "retrieve_context returned the current conversation"

    fresh = AgentLog(warmup + runs, seed=23)

    def record_core(i: int) -> object:
        return engine.record_turn(
            NAMESPACE,
            f"bench-core-{i // 1000}",
            f"t{i}",
            fresh.texts[i],
            agent_text="done",
            procedures=fresh.procedures(fresh.touched()),
            vector=fresh.vectors[i],
        )

    def record_facade(i: int) -> object:
        return mem.record_turn(
            f"bench-facade-{i // 1000}",
            fresh.texts[i],
            "done",
            fresh.facade_procedures(fresh.touched()),
            f"t{i}",
            vector=fresh.vectors[i],
        )

    records += [
        _latency("record_turn.core", "record_turn", record_core, turns, runs, warmup),
        _latency("record_turn.facade", "record_turn", record_facade, turns, runs, warmup),
    ]
    stored = sum(
        len(engine.conversation_turns(NAMESPACE, f"bench-{kind}-{k}", limit=1000))
        for kind in ("core", "facade")
        for k in range((warmup + runs - 1) // 1000 + 1)
    )
    assert stored == 2 * (warmup + runs), f"{stored} turns stored, expected {2 * (warmup + runs)}"
    return records


def _latency(
    name: str,
    group: str,
    op: Callable[[int], object],
    turns: int,
    runs: int,
    warmup: int,
) -> Record:
    """Time `op` after `warmup` calls, with at most `LOOP_SECONDS` of timed calls."""
    # Warm-up calls use indices [0, warmup), timed ones [warmup, warmup + runs), so no
    # request repeats and every recorded turn id is new.
    started = time.perf_counter()
    for i in range(warmup):
        op(i)
    per_call = (time.perf_counter() - started) / max(warmup, 1)
    runs = min(runs, max(MIN_RUNS, int(LOOP_SECONDS / max(per_call, 1e-6))))
    timed = time_calls(lambda i: op(warmup + i), warmup=0, runs=runs)
    target = TARGET_MS[group]
    record = latency(
        name,
        group,
        timed,
        scale=turns,
        note="vectors precomputed (embedding excluded); "
        + ("engine call" if ".core" in name else "Memory facade")
        + ("; no documents (search path only)" if name.endswith("query_only") else ""),
    )
    record.target = {"p50": target}
    record.passed = timed.p50 <= target
    return record


def collect(ctx: Any) -> list[Record]:
    """The runner's entry point: 10k turns (2k in the quick run)."""
    turns = 2_000 if ctx.settings.quick else 10_000
    root = ctx.scratch_dir(AREA) / "project"
    root.mkdir(parents=True, exist_ok=True)
    ctx.log(f"[conversation] building {turns:,} turns")
    mem, agent = build(root, turns, ctx.log)
    try:
        return measure(mem, agent, turns, ctx.settings.runs, ctx.settings.warmup)
    finally:
        mem.close()
        shutil.rmtree(root, ignore_errors=True)


def _table(records: list[Record]) -> str:
    lines = ["| name | turns | p50 ms | p95 ms | p99 ms | target | pass |", "|---" * 7 + "|"]
    for r in records:
        target = f"p50 ≤ {r.target['p50']:g} ms" if r.target else "—"
        lines.append(
            f"| {r.name} | {r.scale:,} | {r.p50:.3f} | {r.p95:.3f} | {r.p99:.3f} | {target} "
            f"| {'yes' if r.passed else 'NO'} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="2k turns, fewer runs (smoke run)")
    parser.add_argument("--turns", type=int, help="turns in the store (default 10,000)")
    parser.add_argument("--runs", type=int, help="timed calls per loop")
    parser.add_argument("--json", type=Path, help="write the records to this JSON file")
    args = parser.parse_args(argv)
    turns = args.turns or (2_000 if args.quick else 10_000)
    runs = args.runs or (200 if args.quick else 1_000)
    warmup = 20 if args.quick else 100
    work = Path(tempfile.mkdtemp(prefix="memcore-bench-conversation-"))

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    try:
        log(f"[conversation] building {turns:,} turns")
        mem, agent = build(work, turns, log)
        try:
            records = measure(mem, agent, turns, runs, warmup)
        finally:
            mem.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(_table(records))
    if args.json:
        args.json.write_text(json.dumps([r.to_json() for r in records], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
