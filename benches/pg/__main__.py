"""SQLite against PostgreSQL nodes on this machine, in one run: store_memory p50/p99,
search_text and recall p50, apply lag between two nodes, a node's start from its snapshot
(and a new node's bootstrap) at 100k memories, and read throughput of one node against two
over HTTP. Results to benches/results/pg.md and pg.json, with the commit, the host's load,
PostgreSQL's settings and the disk's WAL flush time.

    python -m benches.pg              # full: 100k memories for the start (tens of minutes)
    python -m benches.pg --quick      # smoke run, seconds: small sizes, short loops
    python -m benches.pg --memories 20000 --http-seconds 10 --out /tmp/pg

Without PostgreSQL's programs (initdb etc., see tests/pg_cluster.py) the run says so and
exits 0 without writing anything. Targets are reported, never asserted.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.pg_cluster import find_bindir, start_cluster

from benches import machine
from benches.pg import http, nodes, report, server

RESULTS = Path(__file__).resolve().parents[1] / "results"
FULL = {"base": 5_000, "runs": 500, "memories": 100_000, "tail": 100, "http_seconds": 20.0}
QUICK = {"base": 300, "runs": 40, "memories": 1_000, "tail": 20, "http_seconds": 2.0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benches.pg",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="smoke run (seconds)")
    parser.add_argument("--memories", type=int, help="memories for the start measure")
    parser.add_argument("--http-seconds", type=float, help="seconds of each throughput load")
    parser.add_argument("--clients", type=int, default=4, help="HTTP client sessions (4)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where results go")
    args = parser.parse_args(argv)
    plan: dict[str, Any] = dict(QUICK if args.quick else FULL)
    if args.memories is not None:
        plan["memories"] = args.memories
    if args.http_seconds is not None:
        plan["http_seconds"] = args.http_seconds

    bindir = find_bindir()
    if bindir is None:
        print("PostgreSQL is not installed (no initdb found): nothing measured", flush=True)
        return 0
    cluster = start_cluster(bindir)
    try:
        result = run(cluster, plan, args.clients, quick=args.quick)
    finally:
        cluster.stop()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "pg.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / "pg.md").write_text(report.render(result))
    print(report.render(result))
    print(f"wrote {args.out / 'pg.json'} and pg.md")
    return 0


def run(cluster: Any, plan: dict[str, Any], clients: int, *, quick: bool) -> dict[str, Any]:
    result: dict[str, Any] = {
        "mode": "quick" if quick else "full",
        "plan": plan,
        "machine": machine.describe(),
        "load_before": server.host_load(),
        "postgres_server": server.describe(cluster),
    }
    with tempfile.TemporaryDirectory(prefix="memcore-bench-pg-") as scratch:
        work = Path(scratch)
        latency_db = cluster.create_database()
        for name, measured in nodes.sqlite_vs_node(
            latency_db, work / "latency", 7, plan["base"], plan["runs"]
        ):
            result[name] = measured
            print(f"{name}: {measured}", flush=True)
        result["http"] = http.throughput(latency_db, work / "http", clients, plan["http_seconds"])
        print(f"http: {result['http']}", flush=True)
        start_db = cluster.create_database()
        result["start"] = nodes.start_times(
            start_db, work / "start", nodes.Corpus(11), plan["memories"], plan["tail"]
        )
        print(f"start: {result['start']}", flush=True)
    result["load_after"] = server.host_load()
    return result


if __name__ == "__main__":
    sys.exit(main())
