"""``python -m benches.compare OLD NEW``: the bench workflow's gate fails when a
memcore/peer ratio or a retrieval-quality figure regresses past its threshold, and passes
on a run that only moved within them."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from benches import compare

RESULTS = Path(__file__).resolve().parents[1] / "benches" / "results"


@pytest.fixture
def old() -> dict[str, Any]:
    """The committed full run: real records and quality, the shape the runner writes."""
    result: dict[str, Any] = json.loads((RESULTS / "results.json").read_text())
    assert result["quality"] is not None
    return result


def _memcore(result: dict[str, Any], name: str, scale: int) -> dict[str, Any]:
    return next(
        r
        for r in result["records"]
        if (r["name"], r["system"], r["scale"]) == (name, "memcore", scale)
    )


def _write(tmp_path: Path, name: str, result: dict[str, Any]) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps(result))
    return folder


def _noisy(old: dict[str, Any]) -> dict[str, Any]:
    """The same run measured again: every ratio 10 % worse, quality 1 point lower."""
    new = copy.deepcopy(old)
    for record in new["records"]:
        worse = 0.9 if record.get("higher_is_better") else 1.1
        for peer in record.get("peer_ratios") or {}:
            record["peer_ratios"][peer] *= worse
    hybrid = new["quality"]["locomo"]["retrievers"]["recall (hybrid)"]["all"]
    hybrid["R@10"] -= 0.01
    return new


def test_a_run_within_the_thresholds_passes(
    old: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = compare.main(
        [str(_write(tmp_path, "old", old)), str(_write(tmp_path, "new", _noisy(old)))]
    )
    out = capsys.readouterr().out
    assert status == 0, out
    assert out.startswith("no regression among")
    compared = int(out.split("among ")[1].split()[0])
    # Every ratio and every quality figure of the run was compared.
    assert compared == len(compare.figures(old)) > 100


def test_a_regressed_ratio_and_quality_figure_fail_with_a_table(
    old: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = _noisy(old)
    # A latency ratio up 50 % (lower is better), a rate ratio down 40 % (higher is better).
    _memcore(new, "search_vector.facade", 100_000)["peer_ratios"]["usearch"] *= 1.5
    _memcore(new, "ingest.durable", 10_000)["peer_ratios"]["lancedb"] *= 0.6
    cosqa = new["quality"]["cosqa"]["retrievers"]["search_code (hybrid)"]
    cosqa["MRR"] -= 0.05
    # Better is never a regression, however large.
    _memcore(new, "recall.facade", 10_000)["peer_ratios"]["lancedb"] *= 0.2

    status = compare.main([str(_write(tmp_path, "old", old)), str(_write(tmp_path, "new", new))])
    out = capsys.readouterr().out
    assert status == 1
    assert "## 3 regression(s) past the thresholds (ratio 25%, quality 2 pt)" in out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "figure" not in line]
    # The committed run's own figures, before and after the changes above.
    ingest = _memcore(old, "ingest.durable", 10_000)["peer_ratios"]["lancedb"]
    search = _memcore(old, "search_vector.facade", 100_000)["peer_ratios"]["usearch"]
    mrr = 100 * old["quality"]["cosqa"]["retrievers"]["search_code (hybrid)"]["MRR"]
    assert rows == [
        f"| ingest.durable @ 10000 vs lancedb | higher | {ingest:.3g} | {ingest * 0.54:.3g} "
        "| -46 % |",
        f"| quality[full] cosqa / search_code (hybrid) / MRR | higher | {mrr:.1f} | {mrr - 5:.1f} "
        "| -5.0 pt |",
        f"| search_vector.facade @ 100000 vs usearch | lower | {search:.3g} | {search * 1.65:.3g} "
        "| +65 % |",
    ]


def test_thresholds_are_flags(old: dict[str, Any], tmp_path: Path) -> None:
    paths = [str(_write(tmp_path, "old", old)), str(_write(tmp_path, "new", _noisy(old)))]
    assert compare.main([*paths, "--ratio-threshold", "0.05"]) == 1
    assert compare.main([*paths, "--quality-threshold", "0.5", "--ratio-threshold", "0.2"]) == 1
    assert compare.main([*paths, "--ratio-threshold", "0.2"]) == 0


def test_rows_in_one_run_only_are_listed_not_failed(
    old: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = copy.deepcopy(old)
    new["quality"] = None  # a CI run without the quality data
    for record in new["records"]:
        (record.get("peer_ratios") or {}).pop("chromadb", None)  # a peer not installed
    status = compare.main([str(_write(tmp_path, "old", old)), str(_write(tmp_path, "new", new))])
    out = capsys.readouterr().out
    assert status == 0
    assert "only in OLD (not compared): " in out and "vs chromadb" in out


def test_unreadable_input_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "x.json").write_text('{"not": "results"}')
    assert compare.main([str(tmp_path / "x.json"), str(tmp_path / "missing.json")]) == 2
    assert "not a benchmark results file" in capsys.readouterr().err


def test_the_agent_facts_figures_are_compared(old: dict[str, Any]) -> None:
    new = copy.deepcopy(old)
    new["quality"]["facts"] = {"retrievers": {"recall (hybrid)": {"n": 50, "MRR": 0.877}}}
    figure = compare.figures(new)["quality[full] facts / recall (hybrid) / MRR"]
    assert figure.kind == "quality" and figure.value == pytest.approx(0.877)
