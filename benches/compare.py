"""Compare two benchmark results and fail on a regression (the bench workflow's gate).

    python -m benches.compare OLD NEW [--ratio-threshold 0.25] [--quality-threshold 2]

OLD and NEW are ``results.json`` files as ``python -m benches`` writes them (or the folders
holding them, as ``--out DIR`` names them; a ``quality.json`` beside a results file that
carries no quality is read too).

Milliseconds and rates differ from one machine to the next, so the gate compares what a
run measures against itself: each memcore/peer ratio (``peer_ratios`` of a memcore record,
peers run in the same process on the same workload) and each retrieval-quality figure
(LoCoMo and CoSQA recall@k, NDCG, MRR). A ratio regresses when it moves the wrong way by
more than ``--ratio-threshold`` (relative: 0.25 = 25 %; latencies are worse when the ratio
grows, rates when it shrinks); a quality figure regresses when it drops by more than
``--quality-threshold`` percentage points. Rows present in only one file are listed, never
failed (a new area, a peer missing on one machine). Exit status: 0 no regression, 1 a
regression (with a table of them), 2 unreadable input.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Quality fields that count questions rather than measure anything.
_COUNTS = frozenset({"n"})


@dataclass(frozen=True, slots=True)
class Figure:
    """One comparable number of a run."""

    key: str
    value: float
    #: Whether a larger value is better.
    higher_is_better: bool
    #: "ratio" (memcore/peer) or "quality" (a fraction, shown in points).
    kind: str


@dataclass(frozen=True, slots=True)
class Change:
    """A figure in both runs."""

    old: Figure
    new: Figure
    regressed: bool

    @property
    def shown(self) -> tuple[str, str, str]:
        """Old, new and the change, as printed."""
        if self.old.kind == "quality":
            delta = 100 * (self.new.value - self.old.value)
            return f"{100 * self.old.value:.1f}", f"{100 * self.new.value:.1f}", f"{delta:+.1f} pt"
        relative = self.new.value / self.old.value - 1 if self.old.value else float("inf")
        return f"{self.old.value:.3g}", f"{self.new.value:.3g}", f"{100 * relative:+.0f} %"


@dataclass(frozen=True, slots=True)
class Comparison:
    """Every figure of two runs, matched by key."""

    changes: list[Change]
    only_old: list[str]
    only_new: list[str]

    @property
    def regressions(self) -> list[Change]:
        """The changes past their threshold."""
        return [c for c in self.changes if c.regressed]


def load(path: Path) -> dict[str, Any]:
    """A run's results: ``results.json`` (or a folder holding it), with its quality.

    Raises:
        ValueError: The file is missing or is not a results file.
    """
    file = path / "results.json" if path.is_dir() else path
    try:
        result = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{file}: {exc}") from None
    if not isinstance(result, dict) or not isinstance(result.get("records"), list):
        raise ValueError(f"{file}: not a benchmark results file (no 'records' list)")
    beside = file.parent / "quality.json"
    if result.get("quality") is None and beside.is_file():
        result["quality"] = json.loads(beside.read_text(encoding="utf-8"))
    return result


def figures(result: Mapping[str, Any]) -> dict[str, Figure]:
    """The comparable figures of a run, by key."""
    found: dict[str, Figure] = {}
    for record in result.get("records", []):
        if record.get("system") != "memcore":
            continue
        for peer, ratio in (record.get("peer_ratios") or {}).items():
            if not isinstance(ratio, int | float) or ratio <= 0:
                continue
            key = f"{record['name']} @ {record.get('scale') or '-'} vs {peer}"
            higher = bool(record.get("higher_is_better"))
            found[key] = Figure(key, float(ratio), higher, "ratio")
    quality = result.get("quality") or {}
    subset = quality.get("subset", "")
    for dataset in ("locomo", "facts", "cosqa"):
        retrievers = (quality.get(dataset) or {}).get("retrievers") or {}
        for path, value in _leaves(retrievers, (dataset,)):
            key = f"quality[{subset}] " + " / ".join(path)
            found[key] = Figure(key, value, True, "quality")
    return found


def _leaves(value: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], float]]:
    if isinstance(value, Mapping):
        for name, inner in value.items():
            if name not in _COUNTS:
                yield from _leaves(inner, (*path, str(name)))
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield path, float(value)


def compare(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    *,
    ratio_threshold: float = 0.25,
    quality_threshold: float = 2.0,
) -> Comparison:
    """Match the figures of two runs and judge each change.

    Args:
        old: The reference run (the last one on main).
        new: The run under test.
        ratio_threshold: Relative move of a memcore/peer ratio, in the wrong direction,
            that counts as a regression (0.25 = 25 %).
        quality_threshold: Drop of a quality figure, in percentage points, that counts.
    """
    before, after = figures(old), figures(new)
    changes = []
    for key in sorted(before.keys() & after.keys()):
        a, b = before[key], after[key]
        if a.kind == "quality":
            regressed = 100 * (a.value - b.value) > quality_threshold
        elif a.higher_is_better:
            regressed = b.value < a.value * (1 - ratio_threshold)
        else:
            regressed = b.value > a.value * (1 + ratio_threshold)
        changes.append(Change(a, b, regressed))
    return Comparison(
        changes, sorted(before.keys() - after.keys()), sorted(after.keys() - before.keys())
    )


def table(changes: list[Change]) -> str:
    """A Markdown table of changes (readable in a terminal and in a CI summary)."""
    lines = ["| figure | better | old | new | change |", "|---|---|---|---|---|"]
    for change in changes:
        better = "higher" if change.old.higher_is_better else "lower"
        old, new, delta = change.shown
        lines.append(f"| {change.old.key} | {better} | {old} | {new} | {delta} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benches.compare",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("old", type=Path, help="the reference results (file or folder)")
    parser.add_argument("new", type=Path, help="the results to check (file or folder)")
    parser.add_argument(
        "--ratio-threshold",
        type=float,
        default=0.25,
        help="relative worsening of a memcore/peer ratio that fails (default 0.25 = 25 %%)",
    )
    parser.add_argument(
        "--quality-threshold",
        type=float,
        default=2.0,
        help="drop of a quality figure, in percentage points, that fails (default 2)",
    )
    parser.add_argument(
        "--all", action="store_true", help="print every compared figure, not only regressions"
    )
    args = parser.parse_args(argv)
    try:
        old, new = load(args.old), load(args.new)
    except ValueError as exc:
        print(f"benches.compare: {exc}", file=sys.stderr)
        return 2
    result = compare(
        old, new, ratio_threshold=args.ratio_threshold, quality_threshold=args.quality_threshold
    )
    if args.all and result.changes:
        print(f"## All {len(result.changes)} compared figures\n\n{table(result.changes)}\n")
    for label, keys in (("only in OLD", result.only_old), ("only in NEW", result.only_new)):
        if keys:
            print(f"{len(keys)} figure(s) {label} (not compared): {', '.join(keys)}\n")
    regressions = result.regressions
    if regressions:
        print(
            f"## {len(regressions)} regression(s) past the thresholds (ratio "
            f"{args.ratio_threshold:.0%}, quality {args.quality_threshold:g} pt)\n\n"
            f"{table(regressions)}"
        )
        return 1
    print(f"no regression among {len(result.changes)} compared figures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
