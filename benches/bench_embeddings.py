"""Embedding benchmarks: query latency, cache-hit latency and batch throughput
(docs/performance.md).

Run:
    python benches/bench_embeddings.py --json out.json [--model-path DIR] [--quick] [--check]

Every measurement warms up first, checks its results for correctness outside the timed part,
prints a markdown table and writes JSON records ``{name, p50, p95, p99, unit, target, pass}``.
For throughput records, the percentiles are of per-batch latency converted to sentences/s, so
``p95``/``p99`` are the slow tail (lower rates) and the comparison with a target is ``>=``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path

import numpy as np

from memcore.embeddings import EmbeddingService
from memcore.embeddings.threads import default_intra_op_threads

SHARED_MINILM = Path(__file__).resolve().parents[1].parent / "shared/models/all-MiniLM-L6-v2-int8"
SHORT_QUERY = "fix the login bug"
SENTENCES = [
    "the user prefers TypeScript over JavaScript for new frontend projects",
    "the deployment failed because the database migration timed out again",
    "remember to rotate the API keys before the end of the quarter",
    "the login page throws an error when the session cookie has expired",
]


@dataclass(frozen=True)
class Record:
    """One benchmark result, as written to the JSON file."""

    name: str
    p50: float
    p95: float
    p99: float
    unit: str
    target: float | None
    passed: bool | None

    def to_json(self) -> dict[str, object]:
        data = asdict(self)
        data["pass"] = data.pop("passed")
        return data


def _timings_ms(operation: Callable[[], object], *, warmup: int, runs: int) -> np.ndarray:
    for _ in range(warmup):
        operation()
    timings = np.empty(runs)
    for i in range(runs):
        start = time.perf_counter_ns()
        operation()
        timings[i] = (time.perf_counter_ns() - start) / 1e6
    return timings


def latency_record(name: str, timings_ms: np.ndarray, target_ms: float | None) -> Record:
    """Percentiles of latencies; passes if the p50 is within the target."""
    p50, p95, p99 = (float(np.percentile(timings_ms, q)) for q in (50, 95, 99))
    passed = None if target_ms is None else p50 <= target_ms
    return Record(name, p50, p95, p99, "ms", target_ms, passed)


def throughput_record(
    name: str, timings_ms: np.ndarray, batch: int, target: float | None
) -> Record:
    """Sentences/s from per-batch latencies; the tail percentiles are the slow batches."""
    p50, p95, p99 = (batch / (float(np.percentile(timings_ms, q)) / 1e3) for q in (50, 95, 99))
    passed = None if target is None else p50 >= target
    return Record(name, p50, p95, p99, "sentences/s", target, passed)


def _passages(count: int, words: int, seed: int) -> list[str]:
    vocabulary = " ".join(SENTENCES).split()
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(vocabulary, size=words)) for _ in range(count)]


def _direct_query(model_dir: Path, threads: int) -> Callable[[], object]:
    """Tokenize and run the short query with tokenizers + onnxruntime only, no memcore code."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    session = ort.InferenceSession(
        str(model_dir / "model.onnx"), options, providers=["CPUExecutionProvider"]
    )
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_padding()
    wanted = {i.name for i in session.get_inputs()}

    def run() -> object:
        ids = np.array([tokenizer.encode(SHORT_QUERY).ids], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if "token_type_ids" in wanted:
            feeds["token_type_ids"] = np.zeros_like(ids)
        return session.run(None, feeds)

    return run


def _check_vectors(service: EmbeddingService) -> None:
    """Correctness outside the timed part: unit vectors, a similar pair above an unrelated one."""
    query = service.embed_query(SHORT_QUERY)
    similar, unrelated = service.embed_passages(
        ["resolve authentication issue", "the weather is nice"]
    )
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-4, "query vector is not unit length"
    assert float(similar @ query) > float(unrelated @ query), "similar pair scored below unrelated"


def _ready_service(
    args: argparse.Namespace, *, cache_size: int = 1000, max_batch_tokens: int = 2048
) -> EmbeddingService:
    service = EmbeddingService(
        args.model,
        model_path=args.model_path,
        threads=args.threads,
        cache_size=cache_size,
        max_batch_tokens=max_batch_tokens,
    )
    if not service.wait_ready(timeout=300):
        raise SystemExit(f"model failed to load: {service.error}")
    return service


def run(args: argparse.Namespace) -> list[Record]:
    """Run every benchmark and return its records."""
    scale = 5 if args.quick else 1
    records: list[Record] = []

    started = time.perf_counter()
    uncached = _ready_service(args, cache_size=0)
    load_ms = (time.perf_counter() - started) * 1e3
    records.append(Record("model_load_to_ready", load_ms, load_ms, load_ms, "ms", None, None))
    _check_vectors(uncached)

    timings = _timings_ms(partial(uncached.embed_query, SHORT_QUERY), warmup=50, runs=1000 // scale)
    records.append(latency_record("query_embedding_short_uncached", timings, 4.0))
    if args.model_path is not None:
        # The peer column of the budget (docs/performance.md): the same query straight
        # through onnxruntime, in the same run, so the service's own overhead shows even on a
        # noisy machine.
        direct = _direct_query(args.model_path, args.threads or default_intra_op_threads())
        timings = _timings_ms(direct, warmup=50, runs=1000 // scale)
        records.append(latency_record("query_onnxruntime_direct_reference", timings, None))
    for n_words, name in ((12, "batch32_short_12w"), (60, "batch32_mid_60w")):
        batch = _passages(32, n_words, seed=n_words)
        timings = _timings_ms(partial(uncached.embed_passages, batch), warmup=3, runs=40 // scale)
        records.append(throughput_record(f"throughput_{name}", timings, 32, None))
    uncached.close()

    cached = _ready_service(args)
    first = cached.embed_query(SHORT_QUERY)
    timings = _timings_ms(
        partial(cached.embed_query, SHORT_QUERY), warmup=1000, runs=100_000 // scale
    )
    assert cached.embed_query(SHORT_QUERY) is first, "cache hit returned a different array"
    assert cached.cache_info()["misses"] == 1, "the cached query was recomputed"
    records.append(latency_record("query_embedding_cache_hit", timings, 0.05))
    cached.close()

    # The default token budget (2048) against the 8192 cap on long passages: attention memory
    # grows with rows x length², which is why the default sits below the cap.
    long_batch = _passages(32, 300, seed=300)
    for budget in (2048, 8192):
        service = _ready_service(args, cache_size=0, max_batch_tokens=budget)
        timings = _timings_ms(
            partial(service.embed_passages, long_batch), warmup=1, runs=max(10 // scale, 2)
        )
        records.append(
            throughput_record(f"throughput_batch32_long_256tok_budget{budget}", timings, 32, None)
        )
        service.close()
    return records


def markdown_table(records: Sequence[Record]) -> str:
    """The records as a markdown table."""
    lines = [
        "| benchmark | p50 | p95 | p99 | unit | target | pass |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in records:
        target = "—" if r.target is None else f"{r.target:g}"
        verdict = "—" if r.passed is None else ("yes" if r.passed else "NO")
        values = " | ".join(f"{v:.4g}" for v in (r.p50, r.p95, r.p99))
        lines.append(f"| {r.name} | {values} | {r.unit} | {target} | {verdict} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments, run, print the table, write JSON; exit 1 on a missed target with --check."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", type=Path, help="write the records to this JSON file")
    parser.add_argument("--model", default="minilm", help="registry model (without --model-path)")
    parser.add_argument(
        "--model-path",
        type=Path,
        default=SHARED_MINILM if SHARED_MINILM.is_dir() else None,
        help="model directory (default: ../shared/models/all-MiniLM-L6-v2-int8 if present)",
    )
    parser.add_argument("--threads", type=int, default=None, help="onnxruntime intra-op threads")
    parser.add_argument("--quick", action="store_true", help="fewer iterations (smoke run)")
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args(argv)

    records = run(args)
    print(markdown_table(records))
    if args.json is not None:
        args.json.write_text(json.dumps([r.to_json() for r in records], indent=2) + "\n")
    missed = [r.name for r in records if r.passed is False]
    if missed and args.check:
        print(f"missed targets: {', '.join(missed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
