"""The reliability run: schema fuzzing of every tool, HTTP load from 8 clients, kill -9
loops of one writer, kill -9 loops across 4 processes writing one store, random damage of
every file of a data folder, and a PostgreSQL node's replica opened where its database is
not, with the counts merged into ``results/reliability.json`` and ``.md``.

    python -m benches.reliability            # medium: a few minutes
    python -m benches.reliability --long     # 10,000 cases per tool, 10 min of load, 100 kills
                                             # of one writer, 100 among 4 processes
    python -m benches.reliability --fuzz-cases 50 --load-seconds 10 --kills 5 --out /tmp/r
    python -m benches.reliability --phases damage,replicas --damage-trials 120

The long run can be done in pieces: ``--phases load,kills,processes`` runs only those,
``--tools a,b`` fuzzes only those tools, ``--resume`` fuzzes only the tools whose recorded
result has fewer cases than planned, and ``--jobs N`` fuzzes N tools at once, each through
its own server. Every phase and every tool is recorded with the commit and the date it ran
on, and written as soon as it finishes, so an interrupted run keeps what it measured; what
was not run this time keeps its earlier result. The report says which tools have reached
the long run's 10,000 cases.

Counts are reported, never asserted here (the bounded versions are asserted in
tests/reliability); the exit code is 1 when any crash, contract violation, error or lost
acknowledged write was seen in what ran.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from benches.reliability import damage, fuzz, jobs, kills, load, processes, replicas, results
from benches.reliability.client import ROOT

RESULTS = ROOT / "benches" / "results"
MEDIUM = {
    "fuzz_cases": 300,
    "fuzz_seconds": 240.0,
    "load_seconds": 60.0,
    "kills": 20,
    "process_kills": 20,
    "damage_trials": 120,
    "replica_rounds": 2,
}
LONG = {
    "fuzz_cases": 10_000,
    "fuzz_seconds": float("inf"),
    "load_seconds": 600.0,
    "kills": 100,
    "process_kills": 100,
    "damage_trials": 300,
    "replica_rounds": 5,
}
PHASES = ("fuzz", "load", "kills", "processes", "damage", "replicas")
#: Processes writing one store in the ``processes`` phase.
WRITERS = 4


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
    parser.add_argument("--kills", type=int, help="kill -9 rounds of one writer")
    parser.add_argument(
        "--process-kills", type=int, help=f"kill -9 rounds among {WRITERS} writer processes"
    )
    parser.add_argument("--damage-trials", type=int, help="random damages, one file each")
    parser.add_argument("--replica-rounds", type=int, help="rounds of the replica scenarios")
    parser.add_argument(
        "--phases",
        default=",".join(PHASES),
        help="which of fuzz,load,kills,processes,damage,replicas to run (all)",
    )
    parser.add_argument("--tools", help="fuzz only these tools (comma-separated)")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="fuzz only the tools whose recorded result has fewer cases than planned",
    )
    parser.add_argument("--jobs", type=int, default=1, help="tools fuzzed at once (1)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where results go")
    args = parser.parse_args(argv)
    plan = dict(LONG if args.long else MEDIUM)
    for key in plan:
        if getattr(args, key) is not None:
            plan[key] = getattr(args, key)
    phases = [p.strip() for p in args.phases.split(",") if p.strip()]
    unknown = sorted(set(phases) - set(PHASES))
    if unknown:
        parser.error(f"unknown phases {unknown}; choose from {', '.join(PHASES)}")
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")

    record = results.Recorder(args.out, mode=_mode(args.long, plan))
    failed = False
    with tempfile.TemporaryDirectory(prefix="memcore-reliability-") as scratch:
        work = Path(scratch)
        if "load" in phases:
            log = Path(tempfile.gettempdir()) / "memcore-reliability-load-server.log"
            loaded = load.run(
                work / "load", seconds=float(plan["load_seconds"]), clients=8, keep_log=log
            )
            record.phase("http_load", loaded)
            print(_load_line(loaded) + f" (server log: {log})", flush=True)
            failed |= bool(
                loaded["errors"] or loaded["protocol_errors"] or loaded["transport_errors"]
            )
        if "kills" in phases:
            killed = kills.run(work / "kills", rounds=int(plan["kills"]))
            record.phase("kills", killed)
            print(_kill_line(killed), flush=True)
            failed |= bool(killed["lost"] or killed["unfindable"])
        if "processes" in phases:
            shared = processes.run(
                work / "processes", rounds=int(plan["process_kills"]), writers=WRITERS
            )
            record.phase("process_kills", shared)
            print(_processes_line(shared), flush=True)
            failed |= processes.failed(shared)
        if "damage" in phases:
            damaged = damage.run(work / "damage", trials=int(plan["damage_trials"]))
            record.phase("damage", damaged)
            print(_damage_line(damaged), flush=True)
            failed |= bool(damaged["outcomes"]["silent_wrong"] or damaged["outcomes"]["crash"])
        if "replicas" in phases:
            checked = replicas.run(work / "replicas", rounds=int(plan["replica_rounds"]))
            if "skipped" in checked:
                print(f"replica identity: skipped ({checked['skipped']})", flush=True)
            else:
                record.phase("replica_identity", checked)
                print(f"replica identity: {checked['outcomes']}", flush=True)
                failed |= bool(checked["outcomes"]["served_wrong"])
        if "fuzz" in phases:
            failed |= run_fuzz(work / "fuzz", plan, args, record)
    print(f"wrote {args.out / 'reliability.json'} and reliability.md")
    return 1 if failed else 0


def run_fuzz(
    home: Path, plan: dict[str, Any], args: argparse.Namespace, record: results.Recorder
) -> bool:
    """Fuzz the chosen tools; each tool's tally recorded as it finishes. Whether any
    crashed or broke the contract."""
    schemas = jobs.schemas(home / "listing")
    chosen = list(schemas)
    if args.tools:
        wanted = [t.strip() for t in args.tools.split(",") if t.strip()]
        missing = sorted(set(wanted) - set(schemas))
        if missing:
            raise SystemExit(f"no such tools: {', '.join(missing)}")
        chosen = [t for t in chosen if t in wanted]
    cases = int(plan["fuzz_cases"])
    if args.resume:
        chosen = [t for t in chosen if record.fuzz_cases(t) < cases]
    record.tool_order(list(schemas))
    share = _per_tool_seconds(float(plan["fuzz_seconds"]), len(chosen), args.jobs)
    print(f"fuzz: {len(chosen)} tools, {cases} cases each, {args.jobs} at once", flush=True)
    failed = False
    work = [(name, schemas[name]) for name in chosen]
    for tally in jobs.run(home, work, cases=cases, seconds=share, jobs=args.jobs):
        record.tool(tally)
        bad = tally["outcomes"].get("crash", 0) + len(tally["violations"])
        failed |= bool(bad) or not tally["server_alive_after"]
        print(
            f"  {tally['tool']}: {tally['cases']} cases in {tally['seconds']:.0f} s, "
            f"{dict(tally['outcomes'])}, {tally.get('hostile', 0)} holding a value no store "
            "can take" + (f", {bad} BAD" if bad else ""),
            flush=True,
        )
    return failed


def _per_tool_seconds(total: float, tools: int, jobs_at_once: int) -> float:
    """Each tool's share of ``total`` seconds when ``jobs_at_once`` run side by side."""
    return fuzz.per_tool_seconds(total * jobs_at_once, tools)


def _mode(long: bool, plan: dict[str, Any]) -> str:
    if long:
        return "long" if plan == LONG else "custom"
    return "medium" if plan == MEDIUM else "custom"


def _load_line(h: dict[str, Any]) -> str:
    return (
        f"http load: {h['calls']} calls in {h['seconds']:.0f} s ({h['calls_per_second']:.0f}/s), "
        f"{h['errors']} errors, {h['protocol_errors']} protocol errors, "
        f"{h['transport_errors']} transport errors"
    )


def _damage_line(d: dict[str, Any]) -> str:
    return f"damage: {d['trials']} trials, {d['outcomes']}"


def _kill_line(k: dict[str, Any]) -> str:
    return f"kills: {k['rounds']} rounds, {k['acknowledged']} acknowledged, {k['lost']} lost"


def _processes_line(p: dict[str, Any]) -> str:
    return (
        f"kills across {p['writers']} processes: {p['rounds']} rounds ({p['owner_kills']} of "
        f"the owner), {p['acknowledged']} acknowledged, {p['lost']} lost, {p['unfindable']} "
        f"unfindable ({p['unfindable_by_vector']} by vector), index entries missing "
        f"{p['index_missing']}, owner overlaps "
        f"{p['owner_overlaps']}, rounds without an owner {p['rounds_without_owner']}"
    )


if __name__ == "__main__":
    sys.exit(main())
