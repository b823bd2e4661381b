"""Run the SLO benchmarks and write results.json + results.md.

    python -m benches                      # full: 10k and 100k, peers, quality (tens of minutes)
    python -m benches --quick --out DIR    # CI smoke run: one small scale, < 3 minutes
    python -m benches --areas search,store --scales 10000 --no-quality

Targets are reported, never asserted: a missed target still exits 0. The exit code is 1 only
when an area crashed or a correctness check (outside the timed part) failed.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from benches import machine, report, stats
from benches.context import Context, Settings
from benches.peers import REGISTRY

# In run order: ingest builds the shared stores; store and rss come after search because the
# peers write into the indexes the search area measured; index_project and conversation build
# their own stores. Modules that do not exist yet (owned elsewhere) are skipped, and their
# budget rows show as "not measured yet".
AREAS: dict[str, str] = {
    "ingest": "benches.bench_ingest",
    "search": "benches.bench_search",
    "store": "benches.bench_store",
    "reopen": "benches.bench_reopen",
    "rss": "benches.bench_rss",
    "graph": "benches.bench_graph",
    "embeddings": "benches.embeddings_rows",
    "mcp": "benches.bench_mcp",
    "index_project": "benches.bench_code",
    "conversation": "benches.bench_conversation",
    "hooks": "benches.bench_hooks",
    "cli": "benches.bench_cli",
    "records": "benches.bench_records",
    "processes": "benches.bench_processes",
}
ALL_PEERS = (*REGISTRY, "igraph")
RESULTS_DIR = Path(__file__).resolve().parent / "results"


def _settings(args: argparse.Namespace, work_dir: Path) -> Settings:
    quick = args.quick
    scales = args.scales or ((2_000,) if quick else (10_000, 100_000))
    peers = () if args.no_peers else tuple(args.peers or ALL_PEERS)
    return Settings(
        quick=quick,
        scales=tuple(scales),
        runs=args.runs or (100 if quick else 2_000),
        warmup=10 if quick else 100,
        n_queries=100 if quick else 1_000,
        n_extra=600 if quick else 10_000,
        ingest_batch=500 if quick else 1_000,
        peers=peers,
        work_dir=work_dir,
    )


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benches",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="CI smoke run (small, fast)")
    parser.add_argument("--out", type=Path, help="output folder (default: benches/results)")
    parser.add_argument("--scales", type=lambda s: [int(x) for x in s.split(",")])
    parser.add_argument("--areas", type=lambda s: s.split(","), help=",".join(discover()))
    parser.add_argument("--runs", type=int, help="timed calls per latency loop")
    parser.add_argument("--peers", type=lambda s: s.split(","), help=",".join(ALL_PEERS))
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--no-quality", action="store_true", help="skip LoCoMo / CoSQA")
    parser.add_argument("--work-dir", type=Path, help="where stores are built (default: tmp)")
    parser.add_argument("--keep", action="store_true", help="keep the built stores")
    parser.add_argument(
        "--update",
        action="store_true",
        help="merge into the results already in --out (rerun some areas, keep the rest)",
    )
    return parser.parse_args(argv)


def discover() -> dict[str, str]:
    """The known areas in run order, then any other `bench_<area>.py` with a `collect`
    function (alphabetically), so a new capability's bench needs no edit here."""
    areas = dict(AREAS)
    known = set(AREAS.values())
    for path in sorted(Path(__file__).resolve().parent.glob("bench_*.py")):
        module = f"benches.{path.stem}"
        if module not in known and "def collect(" in path.read_text():
            areas[path.stem.removeprefix("bench_")] = module
    return areas


def _run_areas(
    ctx: Context, areas: dict[str, str], names: list[str]
) -> tuple[list[report.Record], list[str]]:
    records: list[report.Record] = []
    failed: list[str] = []
    load: list[str] = []
    for name in names:
        try:
            module = importlib.import_module(areas[name])
        except ModuleNotFoundError as exc:
            if exc.name == areas[name]:
                continue  # not written yet: its rows stay "not measured yet"
            raise
        started = time.perf_counter()
        load.append(f"{name} {os.getloadavg()[0]:.1f}")
        try:
            records += module.collect(ctx)
        except Exception:
            traceback.print_exc()
            failed.append(name)
            ctx.note(f"area {name} FAILED (see the log); its rows are incomplete")
        ctx.log(f"[{name}] done in {time.perf_counter() - started:.0f} s")
    # Other work on the machine shows up here; a 2-core box above ~2 is oversubscribed.
    ctx.note(f"1-minute load average as each area started: {', '.join(load)}")
    return records, failed


def _run_quality(ctx: Context, out: Path) -> tuple[dict[str, Any] | None, str]:
    from benches.quality import harness

    try:
        return harness.run_default(quick=ctx.settings.quick, out_dir=out, log=ctx.log)
    except harness.DataMissingError as exc:
        ctx.note(f"quality not run: {exc}")
    return None, ""


def _quality_md(out: Path) -> str:
    path = out / "quality.md"
    return path.read_text() if path.is_file() else ""


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    out = args.out or (RESULTS_DIR / ("quick" if args.quick else ""))
    work_dir = Path(tempfile.mkdtemp(prefix="memcore-bench-", dir=args.work_dir))
    ctx = Context(_settings(args, work_dir))
    # A row far off its target (say 100 ms per call) must not stretch the run by an hour.
    stats.set_loop_budget(5.0 if args.quick else 60.0)
    started = time.perf_counter()
    try:
        areas = discover()
        unknown = set(args.areas or ()) - set(areas)
        if unknown:
            raise SystemExit(f"unknown areas: {', '.join(sorted(unknown))}")
        records, failed = _run_areas(ctx, areas, args.areas or list(areas))
        quality, quality_md = (None, "") if args.no_quality else _run_quality(ctx, out)
        for scale in ctx.settings.scales:
            ctx.drop_scale(scale)
    finally:
        if not args.keep:
            shutil.rmtree(work_dir, ignore_errors=True)
    info = machine.describe()
    info["vectors"] = ctx.vector_source()
    info["wall time"] = f"{time.perf_counter() - started:.0f} s"
    settings, notes = ctx.describe(), list(ctx.notes)
    if args.update and (out / "results.json").is_file():
        previous = json.loads((out / "results.json").read_text())
        records = report.merge([report.from_json(r) for r in previous["records"]], records)
        rerun = ",".join(args.areas or ["all"])
        stale = tuple(f"area {a} FAILED" for a in args.areas or ())
        kept = [n for n in previous["notes"] if not n.startswith(stale or ("\0",))]
        notes = kept + [f"rerun of {rerun} on {info['date']}: {n}" for n in notes]
        info = {**previous["machine"], f"rerun of {rerun}": info["date"]}
        settings = previous["settings"]
        if quality is None:
            quality, quality_md = previous.get("quality"), _quality_md(out)
    report.finalize(records)
    json_path, md_path = report.write(
        out, records, notes, info, settings, quality=quality, quality_md=quality_md
    )
    print(md_path.read_text())
    print(f"wrote {json_path} and {md_path}", file=sys.stderr)
    return 1 if failed or ctx.failures else 0


if __name__ == "__main__":
    sys.exit(main())
