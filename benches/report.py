"""Benchmark records, target verdicts, memcore/peer ratios, and the JSON + markdown output."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benches.stats import Timings
from benches.targets import BUDGET_SCALE, ROWS, Row

MEMCORE = "memcore"


@dataclass
class Record:
    """One measured metric of one system at one scale.

    `group` ties comparable measurements together: every memcore record is divided by each
    peer record of the same group and scale. `row` is set on the memcore record that answers
    a line of the performance budget (docs/performance.md, benches.targets); the verdict is
    computed for it only.
    """

    name: str
    group: str
    unit: str
    system: str = MEMCORE
    scale: int | None = None
    p50: float | None = None
    p95: float | None = None
    p99: float | None = None
    # The headline for non-latency metrics (a rate, a recall, a size); latencies use p50.
    value: float | None = None
    higher_is_better: bool = False
    row: str | None = None
    runs: int | None = None
    note: str = ""
    target: dict[str, float] | None = None
    passed: bool | None = None
    peer_ratios: dict[str, float] = field(default_factory=dict)

    @property
    def headline(self) -> float | None:
        return self.value if self.value is not None else self.p50

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["pass"] = data.pop("passed")
        return data


def latency(
    name: str, group: str, timings: Timings, *, system: str = MEMCORE, **extra: Any
) -> Record:
    """A latency record (ms percentiles) from a timed loop."""
    return Record(
        name=name,
        group=group,
        unit="ms",
        system=system,
        p50=timings.p50,
        p95=timings.p95,
        p99=timings.p99,
        runs=timings.runs,
        **extra,
    )


def from_json(data: dict[str, Any]) -> Record:
    """A record read back from results.json (verdicts and ratios are recomputed)."""
    known = {f for f in Record.__dataclass_fields__ if f not in {"passed", "peer_ratios"}}
    record = Record(**{k: v for k, v in data.items() if k in known})
    record.passed = data.get("pass")
    return record


def merge(old: Sequence[Record], new: Sequence[Record]) -> list[Record]:
    """`old` with every record that `new` measured again replaced (same name, system, scale),
    for a partial rerun of some areas into an existing results folder."""
    key = lambda r: (r.name, r.system, r.scale)  # noqa: E731
    fresh = {key(r): r for r in new}
    merged = [fresh.pop(key(r), r) for r in old]
    return merged + [r for r in new if key(r) in fresh]


def finalize(records: Sequence[Record]) -> None:
    """Fill in each memcore record's target verdict and its ratios to the peers."""
    rows = {row.key: row for row in ROWS}
    peers: dict[tuple[str, int | None], list[Record]] = {}
    for r in records:
        if r.system != MEMCORE:
            peers.setdefault((r.group, r.scale), []).append(r)
    for r in records:
        if r.system != MEMCORE:
            continue
        r.peer_ratios = {}
        if r.row is not None and r.row in rows:
            r.target, r.passed = _verdict(r, rows[r.row])
        mine = r.headline
        for peer in peers.get((r.group, r.scale), []):
            theirs = peer.headline
            if mine is not None and theirs:
                r.peer_ratios[peer.system] = mine / theirs


def _verdict(record: Record, row: Row) -> tuple[dict[str, float], bool | None]:
    ok: bool | None = True
    bounds = row.bounds_at(record.scale)
    for stat, bound in bounds.items():
        measured = record.headline if stat == "value" else getattr(record, stat)
        if measured is None or math.isnan(measured):
            ok = None
            break
        if (measured < bound) if row.higher_is_better else (measured > bound):
            ok = False
    return bounds, ok


def not_measured(records: Iterable[Record]) -> list[Row]:
    """Budget rows that no memcore record answers."""
    seen = {r.row for r in records if r.system == MEMCORE}
    return [row for row in ROWS if row.key not in seen]


# -- formatting ----------------------------------------------------------------------------


def fmt(value: float | None, unit: str) -> str:
    """A number for a table: three significant figures, rates and counts without decimals."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if unit in {"memories/s", "sentences/s", "MB"} or abs(value) >= 1000:
        return f"{value:,.0f}"
    if unit in {"recall", "score"}:
        return f"{value:.3f}"
    return f"{value:.3g}"


def _targets_text(row: Row, bounds: dict[str, float] | None = None) -> str:
    op = "≥" if row.higher_is_better else "≤"
    shown = row.targets if bounds is None else bounds
    return ", ".join(f"{stat} {op} {fmt(v, row.unit)}" for stat, v in shown.items())


def _operation(row: Row, record: Record) -> str:
    """The row's operation, naming the size really run when the bound scales with it."""
    if row.design_size is None or record.scale in (None, row.design_size):
        return row.operation
    return (
        f"{row.operation} — run at {record.scale:,} {row.size_unit}, "
        f"target scaled to {record.scale / row.design_size:.0%}"
    )


def _ratios_text(record: Record, by_system: dict[str, Record]) -> str:
    parts = []
    for system, ratio in sorted(record.peer_ratios.items(), key=lambda kv: kv[0]):
        peer = by_system[system]
        parts.append(f"{system} {fmt(peer.headline, peer.unit)} (×{ratio:.2f})")
    return "; ".join(parts) or "—"


def markdown(
    records: Sequence[Record], notes: Sequence[str], machine: dict[str, Any], quality_md: str = ""
) -> str:
    """The whole report: the budget table, every measurement, quality, and notes."""
    lines = [
        "## Budget (docs/performance.md)",
        "",
        f"Verdicts hold at {BUDGET_SCALE:,} memories; smaller scales are shown for orientation. "
        "Ratios are memcore / peer on the headline number (p50 for latencies): below 1 is "
        "better for latencies, above 1 for rates.",
        "",
        "| operation | scale | memcore p50 | p95 | p99 | value | target | pass | peers (×ratio) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    rows = {row.key: row for row in ROWS}
    for row in ROWS:
        for r in sorted(
            (r for r in records if r.row == row.key and r.system == MEMCORE),
            key=lambda r: r.scale or 0,
        ):
            peers = {p.system: p for p in records if p.group == r.group and p.scale == r.scale}
            verdict = {True: "yes", False: "**NO**", None: "—"}[r.passed]
            value = fmt(r.value, r.unit) if r.value is not None else "—"
            lines.append(
                f"| {_operation(row, r)} | {_scale(r.scale)} | {fmt(r.p50, r.unit)} | "
                f"{fmt(r.p95, r.unit)} | {fmt(r.p99, r.unit)} | {value} | "
                f"{_targets_text(rows[row.key], r.target)} {row.unit} | {verdict} | "
                f"{_ratios_text(r, peers)} |"
            )
    for row in not_measured(records):
        lines.append(
            f"| {row.operation} | — | not measured yet | | | | {_targets_text(row)} {row.unit} "
            f"| — | budget: {row.design_peers}; pending: {row.pending_on or '—'} |"
        )
    lines += [
        "",
        "## Every measurement",
        "",
        "| metric | system | scale | p50 | p95 | p99 | value | unit | target | pass | runs "
        "| note |",
        "|---" * 12 + "|",
    ]
    for r in records:
        op = "≥" if r.higher_is_better else "≤"
        target = ", ".join(f"{k} {op} {fmt(v, r.unit)}" for k, v in (r.target or {}).items())
        verdict = {True: "yes", False: "**NO**", None: "—"}[r.passed]
        lines.append(
            f"| {r.name} | {r.system} | {_scale(r.scale)} | {fmt(r.p50, r.unit)} | "
            f"{fmt(r.p95, r.unit)} | {fmt(r.p99, r.unit)} | {fmt(r.value, r.unit)} | {r.unit} | "
            f"{target or '—'} | {verdict} | {r.runs or '—'} | {r.note} |"
        )
    if quality_md:
        lines += ["", quality_md]
    lines += ["", "## Machine", ""]
    lines += [f"- {key}: {value}" for key, value in machine.items()]
    if notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


def _scale(scale: int | None) -> str:
    if scale is None:
        return "—"
    return f"{scale // 1000}k" if scale >= 1000 and scale % 1000 == 0 else str(scale)


def write(
    out_dir: Path,
    records: Sequence[Record],
    notes: Sequence[str],
    machine: dict[str, Any],
    settings: dict[str, Any],
    quality: dict[str, Any] | None = None,
    quality_md: str = "",
) -> tuple[Path, Path]:
    """Write results.json and results.md into `out_dir`; return both paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    payload = {
        "machine": machine,
        "settings": settings,
        "records": [r.to_json() for r in records],
        "not_measured": [
            {"row": row.key, "operation": row.operation, "pending_on": row.pending_on}
            for row in not_measured(records)
        ],
        "quality": quality,
        "notes": list(notes),
    }
    json_path = out_dir / "results.json"
    json_path.write_text(json.dumps(payload, indent=1, default=_json_default) + "\n")
    md_path = out_dir / "results.md"
    md_path.write_text(markdown(records, notes, machine, quality_md))
    return json_path, md_path


def _json_default(value: object) -> object:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()  # type: ignore[attr-defined]
    return str(value)
