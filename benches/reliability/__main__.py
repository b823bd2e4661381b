"""The reliability run: schema fuzzing of every tool, HTTP load from 8 clients, and kill -9
loops, with the counts written to ``results/reliability.json`` and ``.md``.

    python -m benches.reliability            # medium: a few minutes
    python -m benches.reliability --long     # 10,000 cases per tool, 10 min of load, 100 kills
    python -m benches.reliability --fuzz-cases 50 --load-seconds 10 --kills 5 --out /tmp/r

Counts are reported, never asserted here (the bounded versions are asserted in
tests/reliability); the exit code is 1 when any crash, contract violation, error or lost
acknowledged write was seen.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benches.reliability import fuzz, kills, load
from benches.reliability.client import ROOT, stdio_client_session

RESULTS = ROOT / "benches" / "results"
MEDIUM = {"fuzz_cases": 300, "fuzz_seconds": 240.0, "load_seconds": 60.0, "kills": 20}
LONG = {"fuzz_cases": 10_000, "fuzz_seconds": float("inf"), "load_seconds": 600.0, "kills": 100}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benches.reliability",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--long", action="store_true", help="the long version")
    parser.add_argument("--fuzz-cases", type=int, help="fuzz cases per tool")
    parser.add_argument("--fuzz-seconds", type=float, help="fuzzing time over all tools")
    parser.add_argument("--load-seconds", type=float, help="seconds of 8-client HTTP load")
    parser.add_argument("--kills", type=int, help="kill -9 rounds")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where results go")
    args = parser.parse_args(argv)
    plan = dict(LONG if args.long else MEDIUM)
    for key in plan:
        if getattr(args, key) is not None:
            plan[key] = getattr(args, key)

    started = time.time()
    with tempfile.TemporaryDirectory(prefix="memcore-reliability-") as scratch:
        work = Path(scratch)
        fuzzed = run_fuzz(work / "fuzz", int(plan["fuzz_cases"]), float(plan["fuzz_seconds"]))
        print(_fuzz_line(fuzzed), flush=True)
        loaded = load.run(work / "load", seconds=float(plan["load_seconds"]), clients=8)
        print(_load_line(loaded), flush=True)
        killed = kills.run(work / "kills", rounds=int(plan["kills"]))
        print(_kill_line(killed), flush=True)

    result = {
        "mode": "long" if args.long else "custom" if plan != MEDIUM else "medium",
        "plan": {k: (None if v == float("inf") else v) for k, v in plan.items()},
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "seconds": round(time.time() - started, 1),
        "fuzz": fuzzed,
        "http_load": loaded,
        "kills": killed,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "reliability.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / "reliability.md").write_text(render(result))
    print(f"wrote {args.out / 'reliability.json'} and reliability.md")
    failed = (
        fuzzed["violations"]
        or fuzzed["crashes"]
        or loaded["errors"]
        or loaded["protocol_errors"]
        or killed["lost"]
    )
    return 1 if failed else 0


def run_fuzz(home: Path, cases: int, seconds: float) -> dict[str, Any]:
    """Every tool of ``--tools all`` fuzzed through one text-only stdio server."""
    home.mkdir(parents=True)
    sandbox = fuzz.make_sandbox(home / "sandbox")
    args = ["--data-dir", str(home / "store"), "--model", "none", "--tools", "all"]
    tallies = []
    with stdio_client_session(args, home) as client:
        client.call("store_memory", {"content": "the fuzz sandbox holds a small python app"})
        schemas = client.schemas()
        share = fuzz.per_tool_seconds(seconds, len(schemas))
        for name, schema in schemas.items():
            tally = fuzz.fuzz_tool(client, name, schema, sandbox, cases=cases, seconds=share)
            tallies.append(tally.to_dict())
            print(f"  {name}: {tally.cases} cases, {dict(tally.outcomes)}", flush=True)
        alive = fuzz.memory_count(client) is not None
    return {
        "tools": len(tallies),
        "cases": sum(t["cases"] for t in tallies),
        "min_cases_per_tool": min(t["cases"] for t in tallies),
        "error_results": sum(n for t in tallies for k, n in t["outcomes"].items() if k != "ok"),
        "crashes": sum(t["outcomes"].get("crash", 0) for t in tallies),
        "violations": sum(len(t["violations"]) for t in tallies),
        "server_alive_after": alive,
        "per_tool": tallies,
    }


def render(result: dict[str, Any]) -> str:
    """The results as a short Markdown report."""
    f, h, k = result["fuzz"], result["http_load"], result["kills"]
    lines = [
        "# Reliability run",
        "",
        f"`python -m benches.reliability` ({result['mode']}), started {result['started']}, "
        f"{result['seconds']} s on this machine. Plan: {json.dumps(result['plan'])}.",
        "",
        "| check | what ran | outcome |",
        "|---|---|---|",
        f"| schema fuzzing over stdio | {f['cases']:,} calls over {f['tools']} tools "
        f"(≥ {f['min_cases_per_tool']:,} per tool; {f['error_results']:,} coded error results) "
        f"| {f['crashes']} crashes, {f['violations']} contract violations "
        "(uncoded error, bad reply, refused call that wrote) |",
        f"| HTTP load | {h['clients']} clients for {h['seconds']:.0f} s, {h['calls']:,} calls "
        f"({h['calls_per_second']:.0f}/s) | {h['errors']} error results, "
        f"{h['protocol_errors']} protocol errors; /healthz after: {h['healthy_after']} |",
        f"| kill -9 during writes | {k['rounds']} kills, {k['acknowledged']:,} acknowledged "
        f"writes | {k['lost']} lost, {k['unfindable']} unfindable, "
        f"quick_check ok after every kill: {k['integrity_ok']} |",
        "",
        "## Fuzzing per tool",
        "",
        "| tool | cases | outcomes |",
        "|---|---|---|",
    ]
    for tally in f["per_tool"]:
        outcomes = ", ".join(f"{key} {n}" for key, n in tally["outcomes"].items())
        lines.append(f"| `{tally['tool']}` | {tally['cases']} | {outcomes} |")
    return "\n".join(lines) + "\n"


def _fuzz_line(f: dict[str, Any]) -> str:
    return (
        f"fuzz: {f['cases']} calls over {f['tools']} tools, {f['crashes']} crashes, "
        f"{f['violations']} violations"
    )


def _load_line(h: dict[str, Any]) -> str:
    return (
        f"http load: {h['calls']} calls in {h['seconds']:.0f} s ({h['calls_per_second']:.0f}/s), "
        f"{h['errors']} errors, {h['protocol_errors']} protocol errors"
    )


def _kill_line(k: dict[str, Any]) -> str:
    return f"kills: {k['rounds']} rounds, {k['acknowledged']} acknowledged, {k['lost']} lost"


if __name__ == "__main__":
    sys.exit(main())
