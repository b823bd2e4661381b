"""The ``memcore`` command's start: wall time of whole processes, from exec to exit.

Three commands, each run as a user would run it (a fresh interpreter every time):
``memcore --help`` (parsing only), ``memcore status`` on a text-only store (opens the
store, runs the get_status tool) and ``memcore search --text`` on it. The peer is the bare
interpreter (``python -c pass``) measured in the same loop, so the ratio says what memcore
adds to a Python start on whatever machine runs it. Outside the timed part, the bench
checks that parsing loads none of the heavy packages (numpy, onnxruntime, the MCP SDK,
tree-sitter, rich), which is what keeps ``--help`` and usage errors instant.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from benches.context import Context
from benches.report import Record

AREA = "cli"
#: Modules that parsing a command line must not import.
HEAVY = ("numpy", "onnxruntime", "mcp", "tree_sitter", "rich", "jsonschema", "memcore.memory")
PYTHON = "python -c pass"
_WALL = "whole process, exec to exit (wall); warm page cache"
_CPU = "whole process, user + system CPU seconds (insensitive to other load)"

_IMPORTED_BY_HELP = """
import contextlib, io, sys
from memcore.cli.commands import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    main(["--help"])
print("\\n".join(sorted(sys.modules)))
"""


def _run(argv: list[str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {done.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def _record(
    name: str, group: str, samples: list[float], system: str, row: str | None, note: str
) -> Record:
    values = np.array(samples)
    return Record(
        name=name,
        group=group,
        unit="s",
        system=system,
        p50=float(np.percentile(values, 50)),
        p95=float(np.percentile(values, 95)),
        p99=float(np.percentile(values, 99)),
        row=row,
        runs=len(samples),
        note=note,
    )


def _check_parsing_is_light(ctx: Context) -> None:
    loaded = subprocess.run(
        [sys.executable, "-c", _IMPORTED_BY_HELP], capture_output=True, text=True, timeout=120
    ).stdout.split()
    heavy = sorted({m for m in loaded for h in HEAVY if m == h or m.startswith(h + ".")})
    if heavy:
        ctx.fail(f"[cli] memcore --help imported {', '.join(heavy[:8])}")


def collect(ctx: Context) -> list[Record]:
    _check_parsing_is_light(ctx)
    store = ctx.scratch_dir("cli") / "store"
    memcore = [sys.executable, "-m", "memcore.cli"]
    on_store = ["--data-dir", str(store), "--model", "none"]
    commands = {
        "cli.help": [*memcore, "--help"],
        "cli.status": [*memcore, "status", *on_store],
        "cli.search_text": [*memcore, "search", "typescript", "--text", *on_store],
    }
    subprocess.run(
        [*memcore, "store", "User prefers TypeScript", *on_store], check=True, capture_output=True
    )
    repeats = 5 if ctx.settings.quick else 20
    wall: dict[str, list[float]] = {name: [] for name in (*commands, PYTHON)}
    cpu: dict[str, list[float]] = {name: [] for name in (*commands, PYTHON)}
    argvs = {PYTHON: [sys.executable, "-c", "pass"], **commands}
    for _ in range(repeats + 1):  # the first round warms the page cache and is dropped
        for name, argv in argvs.items():
            elapsed, used = _run(argv)
            wall[name].append(elapsed)
            cpu[name].append(used)
    ctx.log(f"[cli] {repeats} runs of {', '.join(commands)}")
    records = []
    for name in commands:
        row = "cli_start" if name == "cli.status" else None
        records.append(_record(name, name, wall[name][1:], "memcore", row, _WALL))
        # The interpreter alone, in each command's group, so each gets its ratio to it.
        records.append(_record(f"{name}.{PYTHON}", name, wall[PYTHON][1:], PYTHON, None, _WALL))
        # CPU time does not grow with other work on the machine the way wall time does.
        group = f"{name}.cpu"
        records.append(_record(group, group, cpu[name][1:], "memcore", None, _CPU))
        records.append(_record(f"{group}.{PYTHON}", group, cpu[PYTHON][1:], PYTHON, None, _CPU))
    return records


if __name__ == "__main__":  # a quick look without the runner
    import tempfile

    from benches.context import Settings

    work = Path(tempfile.mkdtemp(prefix="bench-cli-"))
    settings = Settings(True, (0,), 0, 0, 0, 0, 0, (), work)
    for record in collect(Context(settings)):
        print(f"{record.name:40} {record.system:15} p50 {record.p50:.3f} s")
