"""Record conversion at the facade: what a caller waits for beyond the core's own work when
`Memory.search` / `Memory.recall` return ten hits and `Memory.list_memories` a thousand rows.

The store is small and in the page cache, the query vector is given (no embedding model), so
the timed calls are dominated by turning core records into the facade's records. Half of
the memories carry metadata, and some have been updated, so both the `{}` fast path and
distinct timestamps are exercised.

    python -m benches.bench_records                         # this tree
    python -m benches.bench_records --baseline OLD/python   # also OLD's package, same run

With `--baseline`, the same measurement runs in a child process that imports memcore from
OLD (a copy of another tree's `python/` folder with its built `_core` beside it), so a
before/after pair comes from one run on one machine.

Measured when the records became native (release builds of both trees, same run, a busy
2-core machine; p50 in ms; "before" is 1dc163e with its dict builders and `from_core`
dataclasses, "after" the native classes and the one-call store):

| row | before | after |
|---|---:|---:|
| records.search_10 | 0.206 | 0.130 |
| records.recall_10 | 0.337 | 0.273 |
| records.list_1k | 4.96 | 1.02 |
| records.recall_10.to_dict | 0.555 | 0.325 |
| records.list_1k.to_dict | 19.9 | 4.10 |
| records.store | 0.429 | 0.374 |
| records.list_1k.fields | 5.91 | 3.89 |

The conversation and code rows came with their records (benches/results/records.md has
three before/after runs of ci builds on the same busy machine), e.g. the last one:
`turns_50` 0.221 -> 0.046, `context_50` 4.07 -> 0.794, `context_50.to_dict` 11.0 -> 2.10,
`code_10` 0.166 -> 0.082.

A native record makes a field's Python value when it is read, so a single read of every
attribute costs more than a dataclass's slot did (about 2.5 vs 1.5 us per memory), and
reading one attribute twice converts it twice; listing and reading everything once is
still faster than before (the `fields` row).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benches.context import Context
from benches.report import Record, latency
from benches.stats import Timings, time_calls

AREA = "records"
DIM = 384
MEMORIES = 1_000
ROWS = {
    "records.search_10": "Memory.search, 10 hits (vector given)",
    "records.recall_10": "Memory.recall, 10 hits (vector given, hybrid)",
    "records.list_1k": "Memory.list_memories, 1,000 rows",
    # What the MCP tools do with them: every field read, as JSON-ready dicts.
    "records.recall_10.to_dict": "Memory.recall, 10 hits, each hit's to_dict()",
    "records.list_1k.to_dict": "Memory.list_memories, 1,000 rows, each row's to_dict()",
    "records.list_1k.fields": "Memory.list_memories, 1,000 rows, every attribute read once",
    "records.store": "Memory.store_memory with a vector: the store and its similar memories",
    # The interaction log and code search.
    "records.turns_50": "Memory.list_turns, a conversation of 50 turns",
    "records.context_50": "Memory.retrieve_context, 50 past turns with their procedures",
    "records.context_50.to_dict": "Memory.retrieve_context, 50 items, each item's to_dict()",
    "records.code_10": "Memory.search_code, 10 hits (keyword search, snippets cut)",
}
TURNS = 50
CODE_FILES = 40


def _read_every_field(records: list[Any]) -> None:
    """Every attribute of each record, as a caller reading whole records would (the field
    names are `__match_args__` for the native classes and the dataclasses alike)."""
    for record in records:
        for name in type(record).__match_args__:
            getattr(record, name)


def _conversation(mem: Any) -> None:
    """`TURNS` turns of one conversation, each editing a document (a new version a turn)."""
    for i in range(TURNS):
        mem.record_turn(
            "bench",
            f"turn {i} about the project plan and its schedule",
            f"answer {i}",
            procedures=[
                {
                    "tool": "EDIT",
                    "args": {"path": "src/plan.py", "line": i},
                    "documents": [{"path": "src/plan.py", "content": f"PLAN = {i}\n"}],
                },
                {"tool": "BASH", "args": {"cmd": "pytest -q"}},
            ],
            turn_id=f"t{i}",
        )


def _project(root: Path) -> Path:
    """`CODE_FILES` small Python files whose functions all mention the config."""
    root.mkdir()
    for i in range(CODE_FILES):
        functions = "\n\n".join(
            f'def parse_config_{i}_{j}(text):\n    """Parse config part {j}."""\n'
            + "".join(f"    value_{k} = text.split()[{k}]\n" for k in range(12))
            + "    return text\n"
            for j in range(4)
        )
        (root / f"module_{i}.py").write_text(functions + "\n")
    return root


def _store(path: Path) -> Any:
    """A store of `MEMORIES` memories with random unit vectors, a tenth of them updated."""
    import memcore

    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((MEMORIES, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    mem = memcore.Memory(path, model=None)
    texts = [f"memory {i} about topic {i % 37} and the project plan" for i in range(MEMORIES)]
    metadatas = [{"n": i, "tags": ["a", "b"]} if i % 2 else None for i in range(MEMORIES)]
    stored = mem.store_memories(texts, vectors=vectors, metadatas=metadatas)
    for record in stored[::10]:
        mem.update_memory(record.id, importance=0.9)
    _conversation(mem)
    mem.index_project(_project(path.parent / "project"))
    while mem.index_health().vectors_pending or mem.index_health().text_pending:
        time.sleep(0.005)  # searches answer from the settled indexes, as a running store's do
    return mem


def measure(runs: int, warmup: int) -> dict[str, Timings]:
    """Time the three facade calls on a fresh store; checks their answers outside the loop."""
    with tempfile.TemporaryDirectory(prefix="bench-records-") as tmp:
        mem = _store(Path(tmp) / "data")
        try:
            rng = np.random.default_rng(11)
            queries = rng.standard_normal((64, DIM)).astype(np.float32)
            assert len(mem.search(vector=queries[0], limit=10)) == 10, "search lost hits"
            assert len(mem.recall("project plan", vector=queries[0], limit=10)) == 10
            assert len(mem.list_memories(limit=MEMORIES)) == MEMORIES, "list lost rows"
            assert len(mem.list_turns("bench")) == TURNS, "turns lost"
            assert len(_context(mem).items) == TURNS, "context lost turns"
            assert len(mem.search_code("parse config", limit=10)) == 10, "code search lost hits"
            return {
                "records.search_10": time_calls(
                    lambda i: mem.search(vector=queries[i % 64], limit=10),
                    warmup=warmup,
                    runs=runs,
                ),
                "records.recall_10": time_calls(
                    lambda i: mem.recall("project plan", vector=queries[i % 64], limit=10),
                    warmup=warmup,
                    runs=runs,
                ),
                "records.list_1k": time_calls(
                    lambda _: mem.list_memories(limit=MEMORIES),
                    warmup=max(warmup // 10, 2),
                    runs=max(runs // 10, 20),
                ),
                "records.recall_10.to_dict": time_calls(
                    lambda i: [
                        h.to_dict()
                        for h in mem.recall("project plan", vector=queries[i % 64], limit=10)
                    ],
                    warmup=warmup,
                    runs=runs,
                ),
                "records.list_1k.to_dict": time_calls(
                    lambda _: [m.to_dict() for m in mem.list_memories(limit=MEMORIES)],
                    warmup=max(warmup // 10, 2),
                    runs=max(runs // 10, 20),
                ),
                "records.store": time_calls(
                    lambda i: mem.store_memory(
                        f"project plan {i % 37} changed", vector=queries[i % 64]
                    ),
                    warmup=max(warmup // 10, 2),
                    runs=max(runs // 10, 20),
                ),
                "records.list_1k.fields": time_calls(
                    lambda _: _read_every_field(mem.list_memories(limit=MEMORIES)),
                    warmup=max(warmup // 10, 2),
                    runs=max(runs // 10, 20),
                ),
                "records.turns_50": time_calls(
                    lambda _: mem.list_turns("bench"), warmup=warmup, runs=runs
                ),
                "records.context_50": time_calls(
                    lambda _: _context(mem),
                    warmup=max(warmup // 10, 2),
                    runs=max(runs // 10, 20),
                ),
                "records.context_50.to_dict": time_calls(
                    lambda _: [item.to_dict() for item in _context(mem).items],
                    warmup=max(warmup // 10, 2),
                    runs=max(runs // 10, 20),
                ),
                "records.code_10": time_calls(
                    lambda _: mem.search_code("parse config", limit=10),
                    warmup=warmup,
                    runs=runs,
                ),
            }
        finally:
            mem.close()


def _context(mem: Any) -> Any:
    """Every turn of the conversation, found by its text and its document."""
    return mem.retrieve_context(
        "project plan schedule",
        conversation_id="elsewhere",
        documents=["src/plan.py"],
        token_budget=100_000,
        limit=TURNS,
    )


def collect(ctx: Context) -> list[Record]:
    runs, warmup = (200, 20) if ctx.settings.quick else (2_000, 200)
    ctx.log(f"[records] {MEMORIES:,} memories, {runs} runs")
    return [
        latency(name, name, t, scale=MEMORIES, note=ROWS[name])
        for name, t in measure(runs, warmup).items()
    ]


def _baseline(python_dir: Path, runs: int, warmup: int) -> dict[str, dict[str, float]]:
    """The same measurement with memcore imported from `python_dir`, in a child process."""
    # The baseline's memcore first; this tree's root for `benches` itself.
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(python_dir), str(root)])}
    code = (
        "import json; from benches.bench_records import measure, _summary; "
        f"print(json.dumps(_summary(measure({runs}, {warmup}))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=1_800,
    )
    result: dict[str, dict[str, float]] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _summary(timings: dict[str, Timings]) -> dict[str, dict[str, float]]:
    return {k: {"p50": t.p50, "p95": t.p95} for k, t in timings.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benches.bench_records", description=__doc__)
    parser.add_argument("--baseline", type=Path, help="another tree's python/ folder")
    parser.add_argument("--runs", type=int, default=2_000)
    args = parser.parse_args(argv)
    warmup = max(args.runs // 10, 10)
    before = _baseline(args.baseline, args.runs, warmup) if args.baseline else None
    after = _summary(measure(args.runs, warmup))
    print("| row | " + ("before p50 ms | " if before else "") + "p50 ms | p95 ms |")
    print("|---|" + ("---:|" if before else "") + "---:|---:|")
    for name, t in after.items():
        old = f"{before[name]['p50']:.4f} | " if before else ""
        print(f"| {name} | {old}{t['p50']:.4f} | {t['p95']:.4f} |")


if __name__ == "__main__":
    main()
