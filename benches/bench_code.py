"""Code search (issue 9, budget row "index_project" of docs/performance.md): indexing
throughput with real embeddings, search_code latency, the watcher's end-to-end latency, and
CoSQA quality.

    python -m benches.bench_code [--quick] [--files N] [--json out.json] [--no-cosqa]

Also the runner's area "index_project" (`collect(ctx)`, see benches.__main__.AREAS). Every
number goes through the public API (`Memory.index_project`, `Memory.search_code`) with the
all-MiniLM-L6-v2 int8 model of ../shared/models.

- Indexing: N real Python files (default 1,000), every k-th `.py` file of this
  interpreter's site-packages in path order (files over 64 KB left out: generated tables),
  copied into a fresh project; a cold pass on a fresh store (model loaded beforehand, not
  timed), then a pass with nothing changed. Reported: seconds (target ≤ 60 s for 1,000
  files; a run of another size, such as --quick's 100, is judged against the bound scaled
  to its size and labelled so), files/s, chunks/s and the share of the time spent
  computing embeddings.
- search_code: p50/p95/p99 over distinct natural-language queries (each query embedded,
  nothing cached), and with the query vector given (the engine's share).
- Watch latency: with watch=True, append a function to one file and poll search_code
  until it is found; the 500 ms debounce is part of what a user waits for.
- CoSQA (../shared/bench/cosqa-dev), standalone only: every function of the pool is a file
  of a temp project, indexed like any project; each query is searched with search_code
  (hybrid), and through the engine with BM25 alone and with the vector alone. MRR@50,
  R@1/5/10, NDCG@10. The routine is benches.quality.cosqa's; in the runner the quality
  harness reports it, so the area does not index the pool a second time.

Correctness (every file indexed, the changed function found) is checked outside the timed
parts. The machine is shared: compare runs made at the same time.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from benches.quality import cosqa as cosqa_set
from benches.quality.harness import DEFAULT_COSQA as COSQA
from benches.quality.harness import QUICK
from benches.report import Record, finalize, latency
from benches.stats import Timings, time_calls

if TYPE_CHECKING:
    from memcore import Memory

AREA = "index_project"
SHARED = Path(__file__).resolve().parents[1].parent / "shared"
MINILM = SHARED / "models" / "all-MiniLM-L6-v2-int8"
MAX_SOURCE_BYTES = 64_000
SEARCH_QUERIES = (
    "parse a configuration file",
    "retry a request after a timeout",
    "convert a date string to a timestamp",
    "read a file line by line",
    "validate an email address",
    "compute a hash of the content",
    "open a network connection",
    "format a number with thousands separators",
    "merge two dictionaries",
    "raise an error when the argument is invalid",
)

Log = Callable[[str], None]


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _memory(store: Path, model: Path | None) -> Memory:
    import memcore

    mem = memcore.Memory(store, model=None if model is None else "minilm", model_path=model)
    if mem.embeddings is not None and not mem.embeddings.wait_ready(300):
        raise RuntimeError(f"embedding model failed to load: {mem.embeddings.error}")
    return mem


# -- the project -------------------------------------------------------------------------


def real_project(dest: Path, files: int) -> tuple[int, int]:
    """Copy ``files`` Python files of site-packages into ``dest``; (files, bytes)."""
    source = Path(sysconfig.get_paths()["purelib"])
    found = sorted(
        p
        for p in source.rglob("*.py")
        if p.is_file() and not p.is_symlink() and 0 < p.stat().st_size <= MAX_SOURCE_BYTES
    )
    if len(found) < files:
        raise RuntimeError(f"only {len(found)} Python files under {source}")
    step = len(found) // files
    total = 0
    for path in found[::step][:files]:
        target = dest / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        total += path.stat().st_size
    return files, total


# -- indexing, search, watch ---------------------------------------------------------------


def indexing(mem: Memory, project: Path, files: int, size: int, log: Log) -> list[Record]:
    log(f"[code] indexing {files:,} files ({size / 1e6:.1f} MB)")
    cold = mem.index_project(project, project_id="bench")
    if cold.files_indexed != cold.files_scanned or cold.files_failed:
        raise RuntimeError(f"expected every scanned file indexed, got {cold}")
    skipped = files - cold.files_scanned  # minified or generated-looking files the scan skips
    files = cold.files_scanned
    noop = mem.index_project(project, project_id="bench")
    if noop.files_indexed != 0:
        raise RuntimeError(f"a pass with nothing changed re-indexed files: {noop}")
    share = cold.embedding_seconds / cold.seconds
    note = (
        f"{files:,} real .py files, {size / 1e6:.1f} MB, {cold.total_chunks:,} chunks; "
        f"{files / cold.seconds:.1f} files/s, {cold.total_chunks / cold.seconds:.0f} chunks/s, "
        f"embedding {100 * share:.0f}% of the time"
        + (f"; {skipped} copied file(s) skipped by the scanner" if skipped else "")
    )
    log(f"[code] cold pass {cold.seconds:.1f} s: {note}")
    return [
        Record(
            "index_project.cold", AREA, "s", scale=files, value=cold.seconds, row=AREA, note=note
        ),
        Record(
            "index_project.files_per_s",
            AREA + "_rate",
            "files/s",
            value=files / cold.seconds,
            scale=files,
            higher_is_better=True,
        ),
        Record(
            "index_project.chunks_per_s",
            AREA + "_rate",
            "chunks/s",
            value=cold.total_chunks / cold.seconds,
            scale=files,
            higher_is_better=True,
        ),
        Record(
            "index_project.embedding_share",
            AREA + "_share",
            "%",
            scale=files,
            value=100 * share,
            note="embedding seconds / total seconds of the cold pass",
        ),
        Record(
            "index_project.unchanged",
            AREA + "_noop",
            "s",
            scale=files,
            value=noop.seconds,
            note="second pass, nothing changed: scan and hash only",
        ),
    ]


def searching(mem: Memory, files: int, runs: int, log: Log) -> list[Record]:
    log("[code] search_code latency")
    assert mem.embeddings is not None
    fresh = [
        f"{q} (variant {i})" for i in range(runs // len(SEARCH_QUERIES) + 2) for q in SEARCH_QUERIES
    ]
    if not mem.search_code(SEARCH_QUERIES[0]):
        raise RuntimeError("search_code found nothing")
    vectors = [np.array(mem.embeddings.embed_query(q)) for q in SEARCH_QUERIES]
    n = len(SEARCH_QUERIES)
    embedded = time_calls(lambda i: mem.search_code(fresh[i]), warmup=2, runs=runs)
    given = time_calls(
        lambda i: mem.search_code(SEARCH_QUERIES[i % n], vector=vectors[i % n]),
        warmup=10,
        runs=runs,
    )
    return [
        latency(
            "search_code",
            "search_code",
            embedded,
            scale=files,
            note="k=10, hybrid, each query embedded (no cache hit)",
        ),
        latency(
            "search_code.vector_given",
            "search_code_vector",
            given,
            scale=files,
            note="k=10, hybrid, query vector precomputed",
        ),
    ]


def watching(mem: Memory, project: Path, files: int, repeats: int, log: Log) -> list[Record]:
    log(f"[code] watch latency, {repeats} edits")
    mem.index_project(project, project_id="bench", watch=True)
    targets = sorted(project.rglob("*.py"))[:: max(1, files // repeats)][:repeats]
    samples = []
    for i, path in enumerate(targets):
        word = f"watchprobe{i}zq"
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"\n\ndef {word}():\n    return {i}\n")
        started = time.perf_counter()
        while not any(h.name == word for h in mem.search_code(word, project_id="bench")):
            if time.perf_counter() - started > 30:
                raise RuntimeError(f"the watcher did not index {path} within 30 s")
            time.sleep(0.01)
        samples.append((time.perf_counter() - started) * 1e3)
        time.sleep(0.2)  # let the next edit start from a quiet watcher
    timings = Timings(np.array(samples))
    return [
        latency(
            "watch.reindex_one_file",
            "watch_latency",
            timings,
            scale=files,
            note="write to searchable, end to end; includes the 500 ms debounce",
        )
    ]


# -- CoSQA ------------------------------------------------------------------------------------

#: Record name part and system of each ranking benches.quality.cosqa scores.
COSQA_RECORDS = {
    cosqa_set.HYBRID: ("hybrid", "memcore"),
    cosqa_set.BM25: ("bm25", "memcore bm25 only"),
    cosqa_set.VECTOR: ("vector", "memcore vector only"),
}


def cosqa(mem: Memory, work: Path, quick: bool, log: Log) -> list[Record]:
    """CoSQA through index_project + search_code (benches.quality.cosqa), as records."""
    pool, queries = cosqa_set.load(
        COSQA,
        max_queries=QUICK["cosqa_queries"] if quick else None,
        pool_size=QUICK["cosqa_pool"] if quick else None,
    )
    scores = cosqa_set.search_code_scores(mem, work, pool, queries, log)
    note = f"{len(queries)} queries, {len(pool):,} functions, MRR@{cosqa_set.DEPTH}"
    records = []
    for retriever, metrics in scores.items():
        name, system = COSQA_RECORDS[retriever]
        for metric, value in metrics.items():
            if metric == "n":
                continue
            records.append(
                Record(
                    f"cosqa.{name}.{metric}",
                    f"cosqa_{metric}",
                    "score",
                    system=system,
                    value=value,
                    higher_is_better=True,
                    note=note,
                )
            )
    log("[code] CoSQA " + ", ".join(f"{r.name} {r.value:.3f}" for r in records))
    return records


# -- entry points -------------------------------------------------------------------------------


def run(
    *, quick: bool, files: int | None, with_cosqa: bool, work: Path, log: Log = _log
) -> list[Record]:
    """Every measurement of this area; the model must be present."""
    if not (MINILM / "model.onnx").is_file():
        raise RuntimeError(f"no model at {MINILM}")
    files = files or (100 if quick else 1_000)
    project = work / "project"
    count, size = real_project(project, files)
    mem = _memory(work / "store", MINILM)
    try:
        records = indexing(mem, project, count, size, log)
        mem._engine.flush()  # steady state for the latency loop
        records += searching(mem, count, 50 if quick else 200, log)
        records += watching(mem, project, count, 3 if quick else 10, log)
        mem.delete_project("bench")
        if with_cosqa and (COSQA / "code_idx_map.txt").is_file():
            records += cosqa(mem, work, quick, log)
    finally:
        mem.close()
    return records


def collect(ctx: Any) -> list[Record]:
    """The runner's entry point (area ``index_project``). CoSQA is left to the quality
    harness, which runs the same search_code routine (benches.quality.cosqa)."""
    if not (MINILM / "model.onnx").is_file():
        ctx.note(f"index_project not measured: no model at {MINILM}")
        return []
    work = ctx.scratch_dir(AREA)
    try:
        return run(quick=ctx.settings.quick, files=None, with_cosqa=False, work=work, log=ctx.log)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _table(records: list[Record]) -> str:
    lines = ["| name | unit | value / p50 | p95 | p99 | target | pass |", "|---" * 7 + "|"]
    for r in records:
        p95 = "—" if r.p95 is None else f"{r.p95:.3g}"
        p99 = "—" if r.p99 is None else f"{r.p99:.3g}"
        target = "—" if r.target is None else ", ".join(f"{k} ≤ {v:g}" for k, v in r.target.items())
        verdict = "—" if r.passed is None else ("yes" if r.passed else "NO")
        lines.append(
            f"| {r.name} | {r.unit} | {r.headline:.4g} | {p95} | {p99} | {target} | {verdict} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="100 files, CoSQA subset (smoke run)")
    parser.add_argument("--files", type=int, help="source files to index (default 1,000)")
    parser.add_argument("--no-cosqa", action="store_true", help="skip the CoSQA quality run")
    parser.add_argument("--json", type=Path, help="write the records to this JSON file")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="memcore-bench-code-"))
    try:
        records = run(quick=args.quick, files=args.files, with_cosqa=not args.no_cosqa, work=work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    finalize(records)
    print(_table(records))
    if args.json:
        args.json.write_text(json.dumps([r.to_json() for r in records], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
