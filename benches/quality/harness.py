"""Run the quality sets and render their tables (shared by `python -m benches` and
`python -m benches.quality`): LoCoMo retrieval and an agent's facts about one user (with
LoCoMo), CoSQA retrieval and identifier queries on a real project (with CoSQA), update
detection on store, fact capture from user messages, and keyword search in seven languages
besides English."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benches import embedding_cache
from benches.quality import capture, cosqa, definitions, facts, locomo, multilingual, updates
from benches.quality.metrics import table_row

SHARED_BENCH = Path(__file__).resolve().parents[2].parent / "shared/bench"
DEFAULT_LOCOMO = SHARED_BENCH / "locomo-dev/locomo-dev.json"
DEFAULT_COSQA = SHARED_BENCH / "cosqa-dev"
#: LoCoMo's columns, overall and per category.
METRICS = ("R@1", "R@5", "R@10", "R@25", "NDCG@10")
# The quick (CI) subset: enough to prove every path runs, small enough for seconds.
QUICK = {"conversations": 1, "questions": 40, "cosqa_queries": 50, "cosqa_pool": 300}


class DataMissingError(RuntimeError):
    """Neither the given nor the default benchmark data is present."""


def run(
    locomo_file: Path | None,
    cosqa_dir: Path | None,
    *,
    quick: bool,
    log: Callable[[str], None] = print,
    with_updates: bool = True,
    with_capture: bool = True,
    with_multilingual: bool = True,
) -> dict[str, Any]:
    result: dict[str, Any] = {"subset": QUICK if quick else "full"}
    if locomo_file is not None:
        log(f"[quality] LoCoMo {locomo_file}")
        result["locomo"] = locomo.evaluate(
            locomo_file,
            max_conversations=QUICK["conversations"] if quick else None,
            max_questions=QUICK["questions"] if quick else None,
            log=log,
        )
        log(f"[quality] an agent's facts {facts.DATA}")
        result["facts"] = facts.evaluate(log=log)
    if cosqa_dir is not None:
        log(f"[quality] CoSQA {cosqa_dir}")
        result["cosqa"] = cosqa.evaluate(
            cosqa_dir,
            max_queries=QUICK["cosqa_queries"] if quick else None,
            pool_size=QUICK["cosqa_pool"] if quick else None,
            log=log,
        )
        log("[quality] identifier -> definition (the standard library's modules)")
        result["definitions"] = definitions.evaluate(quick=quick, log=log)
    if with_updates:
        result["updates"] = run_updates(quick=quick, log=log)
    if with_capture:
        result["capture"] = run_capture(log=log)
    if with_multilingual:
        result["multilingual"] = run_multilingual(log=log)
    return result


def run_updates(
    *,
    quick: bool,
    log: Callable[[str], None] = print,
    holdout: Path | None = updates.HOLDOUT,
) -> dict[str, Any]:
    """Update detection on the labelled pairs in benches/quality/updates.jsonl, and on the
    sealed second set (`holdout`, counts only) when it exists and the run is full (skipped,
    with the reason, where the embedding model is absent: `similar` needs vectors)."""
    reason = embedding_cache.available()
    if reason is not None:
        log(f"[quality] update detection skipped: {reason}")
        return {"skipped": reason}
    log(f"[quality] update detection {updates.DATA}")
    result = updates.evaluate(quick=quick, holdout=holdout, log=log)
    result["subset"] = f"{updates.QUICK_PER_LABEL} pairs per label" if quick else "full"
    return result


def run_capture(*, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Fact capture on the two dev sets (capture.jsonl, capture_dev2.jsonl), and on the
    held-out set beside them when it exists (its aggregate row only)."""
    log(f"[quality] fact capture {capture.DEV}")
    return capture.evaluate(log=log)


def run_multilingual(*, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Keyword search over the multilingual set (benches/quality/multilingual.jsonl); needs
    no model, so it always runs whole."""
    log(f"[quality] keyword search beyond English {multilingual.DATA}")
    return multilingual.evaluate(log=log)


def merge_updates(out_dir: Path, result: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Put a fresh update-detection section into the report already in `out_dir` (the
    other sections are kept as they are) and write both files again."""
    return _merge(out_dir, "updates", result, result["subset"])


def merge_capture(out_dir: Path, result: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The same for a fresh fact-capture section (which always runs whole)."""
    return _merge(out_dir, "capture", result, "full")


def merge_multilingual(out_dir: Path, result: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The same for a fresh multilingual section (which always runs whole)."""
    return _merge(out_dir, "multilingual", result, "full")


def _merge(
    out_dir: Path, section: str, result: dict[str, Any], subset: Any
) -> tuple[dict[str, Any], str]:
    path = out_dir / "quality.json"
    merged: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {}
    merged.setdefault("subset", subset)
    merged[section] = result
    text = markdown(merged)
    write(out_dir, merged, text)
    return merged, text


def run_default(
    *, quick: bool, out_dir: Path, log: Callable[[str], None]
) -> tuple[dict[str, Any], str]:
    """Both sets from ../shared/bench; writes quality.json and quality.md into `out_dir`."""
    locomo_file = DEFAULT_LOCOMO if DEFAULT_LOCOMO.is_file() else None
    cosqa_dir = DEFAULT_COSQA if (DEFAULT_COSQA / cosqa.QUERY_FILE).is_file() else None
    if locomo_file is None and cosqa_dir is None:
        # The update pairs ship with the repository, but the other sets do not: a report
        # of update detection alone would read as the whole quality run.
        raise DataMissingError(f"no benchmark data under {SHARED_BENCH}")
    result = run(locomo_file, cosqa_dir, quick=quick, log=log)
    text = markdown(result)
    write(out_dir, result, text)
    return result, text


def write(out_dir: Path, result: dict[str, Any], text: str) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "quality.json").write_text(json.dumps(result, indent=1) + "\n")
    (out_dir / "quality.md").write_text(text)


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "## Retrieval quality",
        "",
        "What each ranking choice bought, and what was tried and dropped, with the numbers:",
        "[quality-experiments.md](quality-experiments.md).",
        "",
    ]
    if result.get("subset") != "full":
        lines += [f"Quick subset: {result['subset']} (not comparable with published numbers).", ""]
    if "locomo" in result:
        lines += _locomo_md(result["locomo"])
    if "facts" in result:
        lines += facts.markdown(result["facts"])
    if "cosqa" in result:
        lines += _cosqa_md(result["cosqa"])
    if "definitions" in result:
        lines += definitions.markdown(result["definitions"])
    if "updates" in result:
        lines += _updates_md(result["updates"])
    if "capture" in result:
        lines += capture.markdown_lines(result["capture"])
    if "multilingual" in result:
        lines += multilingual.markdown(result["multilingual"])
    return "\n".join(lines) + "\n"


def _updates_md(data: dict[str, Any]) -> list[str]:
    if "skipped" in data:
        return ["### Update detection on store", "", f"Not run: {data['skipped']}.", ""]
    lines = updates.markdown(data)
    if data.get("subset", "full") != "full":
        lines[1:1] = ["", f"Quick subset: {data['subset']}."]
    return lines


def _locomo_md(data: dict[str, Any]) -> list[str]:
    lines = [
        f"### LoCoMo ({', '.join(data['conversations'])}; {data['questions']} questions; "
        f"vectors: {data['vectors']})",
        "",
        "Turn-level recall@k (% of a question's evidence turns in the top k) and NDCG@10.",
        f"Evidence normalised; dropped: {data['dropped']}.",
        "",
    ]
    for bucket, title in (("all", "all categories"), ("all_but_5", "without category 5")):
        lines += [
            f"**{title}**",
            "",
            "| retriever | n | R@1 | R@5 | R@10 | R@25 | NDCG@10 |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, buckets in data["retrievers"].items():
            lines.append(f"| {name} | {table_row(buckets.get(bucket, {}), METRICS)} |")
        if bucket == "all":
            d = data["dragon"]
            lines.append(
                f"| DRAGON (LoCoMo paper, 10 conversations) | — | — | {d['R@5']} | {d['R@10']} | "
                f"{d['R@25']} | — |"
            )
        lines.append("")
    categories = sorted({b for v in data["retrievers"].values() for b in v if b.startswith("cat")})
    lines += [
        "**per category**",
        "",
        "| category | retriever | n | R@1 | R@5 | R@10 | R@25 | NDCG@10 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in categories:
        label = locomo.CATEGORIES.get(int(c[3:]), c)
        for name, buckets in data["retrievers"].items():
            lines.append(f"| {label} | {name} | {table_row(buckets.get(c, {}), METRICS)} |")
    lines += [
        "",
        "**per conversation** (the folds: a parameter is chosen on one and read on the other)",
        "",
        "| conversation | retriever | n | R@1 | R@5 | R@10 | R@25 | NDCG@10 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for conv in data["conversations"]:
        for name, buckets in data["retrievers"].items():
            row = table_row(buckets.get(f"conv:{conv}", {}), METRICS)
            lines.append(f"| {conv} | {name} | {row} |")
    return [*lines, ""]


def _cosqa_md(data: dict[str, Any]) -> list[str]:
    lines = [
        f"### CoSQA ({data['queries']} queries over {data['functions']:,} functions, each a "
        f"file of a project indexed with index_project and searched with search_code; "
        f"vectors: {data['vectors']})",
        "",
        f"MRR over the top {data['mrr_depth']} chunks, a file counted once at its best chunk; "
        "recall@k = hit rate. search_code fuses with code's own weights, by the query's "
        "shape (rust/memcore/src/engine/code_weights.rs: a description ranks by the vector, "
        "a query naming an identifier ranks by BM25 after the definitions of its names); the "
        "single-signal rows are the same engine call without a query vector (BM25 only) or "
        "with a query text no "
        "function holds (vector only). The identifier-query rows search each of the first "
        "functions whose name is unique in the pool by that name (399 of 500 snake_case or "
        "camelCase, the rest one plain word; gold = its file), each ranking the function "
        "that defines the name first (benches/quality/definitions.py).",
        "",
        "| retriever | n | MRR | R@1 | R@5 | R@10 | NDCG@10 |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, scores in data["retrievers"].items():
        lines.append(f"| {name} | {table_row(scores, ('MRR', 'R@1', 'R@5', 'R@10', 'NDCG@10'))} |")
    return [*lines, ""]
