"""The automatic path's hooks at a 10k-turn store, embedding included (the lifecycle
contract's SLO: p95 memory_before_turn <= 300 ms with compaction, memory_after_turn
<= 500 ms with capture).

    python -m benches.bench_hooks [--quick] [--turns N] [--json out.json]

Also the runner's area "hooks" (`collect(ctx)`). The store is a user's sessions with an
agent: each user message mixes a statement about the user (a move, a manager, a tool, a
day's plan) with a request, as a thin client sends it; it is built with the turns' and
facts' embeddings precomputed (benches/embedding_cache.py), then the timed calls run the
real model as a server does. memory_before_turn gets a 300-item session over a 16k-token
model, so every timed call compacts; memory_after_turn records a new turn and captures its
facts. Correctness (a digest item, the 30 latest items verbatim, facts captured) is checked
outside the timed loops.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benches import embedding_cache
from benches.report import Record, latency
from benches.stats import time_calls
from benches.workloads import corpus, queries

if TYPE_CHECKING:
    from memcore import Memory

AREA = "hooks"
TURNS_PER_SESSION = 20
#: The model the client talks to, and the session it sends (every call compacts).
MAX_INPUT_TOK = 16_000
SESSION_ITEMS = 300
_CITIES = ("Austin", "Lisbon", "Berlin", "Osaka", "Nairobi", "Toronto", "Porto", "Denver")
_NAMES = ("Daniel", "Priya", "Tomás", "Aiko", "Sven", "Amara", "Leila", "Jonas")
_TOOLS = ("Argo", "Terraform", "Bazel", "Grafana", "Kafka", "dbt", "Airflow", "Helm")
# `{n}` makes each message's fact its own (a store of 10k turns holds many facts).
_STATEMENTS = (
    "I moved to {city} {n} days ago.",
    "My manager for project {n} is {name} now.",
    "We deploy service {n} with {tool}.",
    "I'm working from home today on ticket {n}.",
    "This week I'm in {city} for workshop {n}.",
    "I don't drink coffee after {n} pm anymore.",
    "My sister {name} lives in {city} at number {n}.",
    "We switched dashboard {n} to {tool}.",
)


def messages(count: int, seed: int = 0) -> list[str]:
    """User messages: a statement about the user, then a request of the workload."""
    requests = corpus(count)
    out = []
    for i in range(count):
        j = i + seed
        statement = _STATEMENTS[j % len(_STATEMENTS)].format(
            n=j,
            city=_CITIES[j * 7 % len(_CITIES)],
            name=_NAMES[j * 5 % len(_NAMES)],
            tool=_TOOLS[j * 3 % len(_TOOLS)],
        )
        out.append(f"{statement} Can you note this: {requests[i]}?")
    return out


def build(path: Path, turns: int, log: Any) -> Memory:
    """A store of `turns` recorded turns and the facts their messages state, embedded
    from the cache, opened with the real model for the timed calls."""
    import memcore
    from memcore import _core
    from memcore.capture import capture_facts

    folder = embedding_cache.model_dir()
    assert folder is not None
    texts = messages(turns)
    keys = [_core.turn_vector_text(1_700_000_000_000_000, t) for t in texts]
    turn_vectors = embedding_cache.embed(keys, "passage", label="hooks turns")
    facts = list(dict.fromkeys(f.content for t in texts for f in capture_facts(t).facts))
    fact_vectors = embedding_cache.embed(facts, "passage", label="hooks facts")
    mem = memcore.Memory(path, model_path=folder)
    for i, text in enumerate(texts):
        mem.record_turn(
            f"session-{i // TURNS_PER_SESSION}",
            text,
            "Noted.",
            turn_id=f"t{i}",
            vector=turn_vectors[i],
            at=1_700_000_000 + i,
        )
    mem.store_memories(facts, vectors=fact_vectors, source="conversation")
    mem._engine.flush()
    assert mem.embeddings is not None and mem.embeddings.wait_ready(120)
    log(f"[hooks] {turns:,} turns, {len(facts):,} facts")
    return mem


def measure(mem: Memory, turns: int, runs: int, warmup: int) -> list[Record]:
    session = _session(SESSION_ITEMS)
    asks = queries(warmup + runs)

    def before(i: int) -> dict[str, Any]:
        current = [*session, {"role": "user", "content": asks[i]}]
        return dict(mem.memory_before_turn("bench", f"b{i}", current, max_input_tok=MAX_INPUT_TOK))

    fresh = messages(warmup + runs + 1, seed=turns + SESSION_ITEMS)

    def after(i: int) -> dict[str, Any]:
        return dict(
            mem.memory_after_turn(
                f"bench-{i // TURNS_PER_SESSION}", f"a{i}", fresh[i], "Done, noted."
            )
        )

    sample = before(0)
    assert sample["compacted"] and sample["context_token_count"] <= MAX_INPUT_TOK
    latest = [*session, {"role": "user", "content": asks[0]}][-30:]
    assert sample["input_items"][-30:] == latest, "the 30 latest items verbatim"
    captured = after(0)["captured"]
    assert captured, "the statement of a message is captured"
    records = []
    for name, op, target in (
        ("memory_before_turn", before, 300.0),
        ("memory_after_turn", after, 500.0),
    ):
        timed = time_calls(lambda i, op=op: op(1 + i), warmup=warmup, runs=runs)
        record = latency(
            name,
            name,
            timed,
            scale=turns,
            row=f"hooks_{name.split('_')[1]}",
            note="real MiniLM embedding included; "
            + (
                f"{SESSION_ITEMS}-item session compacted for a {MAX_INPUT_TOK:,}-token model"
                if name == "memory_before_turn"
                else "a new turn recorded and its facts captured (deduplicated, tiered)"
            ),
        )
        record.target = {"p95": target}
        record.passed = timed.p95 <= target
        records.append(record)
    return records


def _session(n: int) -> list[dict[str, Any]]:
    texts = messages(n, seed=11)
    items: list[dict[str, Any]] = []
    for i, text in enumerate(texts):
        if i % 3 == 2:
            path = f"src/pkg{i % 9}/mod_{i}.py"
            items.append(
                {
                    "type": "function_call",
                    "name": "read_file",
                    "arguments": json.dumps({"path": path}),
                }
            )
        elif i % 2 == 0:
            items.append({"role": "user", "content": text * 3})
        else:
            items.append({"role": "assistant", "content": f"I looked at it: {text} " * 3})
    return items


def collect(ctx: Any) -> list[Record]:
    """The runner's entry point: 10k turns (1k in the quick run)."""
    reason = embedding_cache.available()
    if reason is not None:
        ctx.log(f"[hooks] skipped: {reason}")
        return []
    turns = 1_000 if ctx.settings.quick else 10_000
    root = ctx.scratch_dir(AREA) / "store"
    ctx.log(f"[hooks] building {turns:,} turns")
    mem = build(root, turns, ctx.log)
    try:
        runs = 30 if ctx.settings.quick else 300
        return measure(mem, turns, runs, warmup=5 if ctx.settings.quick else 20)
    finally:
        mem.close()
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="1k turns, fewer runs")
    parser.add_argument("--turns", type=int, help="turns in the store (default 10,000)")
    parser.add_argument("--runs", type=int, help="timed calls per hook")
    parser.add_argument("--json", type=Path, help="write the records to this JSON file")
    args = parser.parse_args(argv)
    reason = embedding_cache.available()
    if reason is not None:
        print(f"skipped: {reason}", file=sys.stderr)
        return 0
    turns = args.turns or (1_000 if args.quick else 10_000)
    runs = args.runs or (30 if args.quick else 300)
    work = Path(tempfile.mkdtemp(prefix="memcore-bench-hooks-"))

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    try:
        mem = build(work / "store", turns, log)
        try:
            records = measure(mem, turns, runs, warmup=5 if args.quick else 20)
        finally:
            mem.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for r in records:
        print(
            f"{r.name}: p50 {r.p50:.1f} ms, p95 {r.p95:.1f} ms, p99 {r.p99:.1f} ms "
            f"(target p95 <= {r.target['p95'] if r.target else '?'} ms, runs {r.runs})"
        )
    if args.json:
        args.json.write_text(json.dumps([r.to_json() for r in records], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
