"""Keep the figures in README.md and docs/ equal to what the code and the results say.

    python -m benches.docs_sync            # rewrite every generated block
    python -m benches.docs_sync --check    # exit 1, naming the stale blocks (tests run it)

A generated block sits between ``<!-- docs_sync:NAME -->`` and ``<!-- /docs_sync:NAME -->``
in a Markdown file; everything outside the markers is prose and is left alone. Each block
is made from one source of truth:

- the results the benchmark runner and the quality harness write (``benches/results/
  results.json``, ``quality.json`` and ``quality.md``: run ``python -m benches`` or
  ``python -m benches.quality``, then this),
- the wheel check's record (``benches/results/wheel.json``, written by
  ``benches/wheel_check.sh``),
- the reliability run's counts (``benches/results/reliability.json``: run
  ``python -m benches.reliability``, or only some of its phases, then this),
- the code itself: the tool registry (groups, profiles and the size of ``tools/list``) and
  every setting of the server and the CLI (flag, variable, help with its default).

So a count or a limit in the docs cannot drift from the code: ``tests/test_docs_facts.py``
fails while a block is stale, and checks the numbers the prose repeats.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benches.reliability.results import silent, when

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benches" / "results"

_BLOCK = re.compile(
    r"(<!-- docs_sync:(?P<name>[a-z0-9-]+) -->\n)(?P<body>.*?)(<!-- /docs_sync:(?P=name) -->)",
    re.DOTALL,
)

RETRIEVE_CONTEXT = "retrieve_context (turns via record_turn)"
RECALL = "recall (hybrid)"


# -- facts the code knows ------------------------------------------------------------------


@dataclass(frozen=True)
class ToolFacts:
    """What ``tools/list`` offers per profile, counted from the registry."""

    core: int
    all: int
    all_non_admin: int
    core_kb: int
    all_kb: int
    all_non_admin_kb: int
    groups: tuple[tuple[str, tuple[str, ...]], ...]
    core_names: tuple[str, ...]
    admin_only: tuple[str, ...]


def tool_facts() -> ToolFacts:
    """Counts and sizes of the tool profiles (sizes: compact JSON of the listing)."""
    from memcore.mcp.listing import listing_for
    from memcore.tools.groups import load_registry

    registry = load_registry()

    def size_kb(tools: list[Any], admin: bool) -> int:
        listing = listing_for(tools, admin=admin)
        raw = json.dumps(listing, separators=(",", ":"), ensure_ascii=False).encode()
        return round(len(raw) / 1024)

    every, core = registry.all(), registry.core()
    non_admin = [spec for spec in every if not spec.admin_only]
    groups = tuple(
        (
            group,
            tuple(spec.name for spec in every if spec.in_group(group)),
        )
        for group in registry.groups
    )
    return ToolFacts(
        core=len(core),
        all=len(every),
        all_non_admin=len(non_admin),
        core_kb=size_kb(core, True),
        all_kb=size_kb(every, True),
        all_non_admin_kb=size_kb(every, False),
        groups=groups,
        core_names=tuple(spec.name for spec in core),
        admin_only=tuple(spec.name for spec in every if spec.admin_only),
    )


def _tool_groups() -> str:
    facts = tool_facts()
    core = ", ".join(f"`{name}`" for name in facts.core_names)
    admin = " and ".join(f"`{name}`" for name in facts.admin_only)
    lines = [
        f"`--tools core` (the default) lists {facts.core} tools, about {facts.core_kb} KB of "
        f"`tools/list`: {core}. `--tools all` lists all {facts.all} tools, about "
        f"{facts.all_kb} KB ({facts.all_non_admin} tools, about {facts.all_non_admin_kb} KB, "
        f"for a non-admin HTTP token, which is not offered {admin}). Or name groups and "
        "tools: `--tools facts,graph,get_status`, `--tools core,index_project`.",
        "",
        "| group | tools |",
        "|---|---|",
    ]
    for group, names in facts.groups:
        lines.append(f"| {group} | {', '.join(f'`{n}`' for n in names)} |")
    return "\n".join(lines) + "\n"


def _settings_table() -> str:
    from memcore.settings.options import OPTIONS, STORE_OPTIONS

    store = set(STORE_OPTIONS)
    lines = ["| flag | variable | what (default) | CLI too |", "|---|---|---|---|"]
    for option in OPTIONS.values():
        flag = option.flag if option.is_flag else f"{option.flag} {option.metavar or 'VALUE'}"
        cli = "yes" if option.name in store else "server only"
        help_text = option.help.replace("|", "\\|")
        lines.append(f"| `{flag}` | `{option.env}` | {help_text} | {cli} |")
    return "\n".join(lines) + "\n"


# -- facts the results hold ------------------------------------------------------------------


def _load(name: str) -> dict[str, Any]:
    path = RESULTS / name
    return json.loads(path.read_text()) if path.is_file() else {}


def _record(results: dict[str, Any], row: str, scale: int | None) -> dict[str, Any] | None:
    for record in results.get("records", []):
        mine = record.get("row") == row and record.get("system") == "memcore"
        if mine and (scale is None or record.get("scale") == scale):
            return dict(record)
    return None


def _ms(record: dict[str, Any] | None) -> str:
    if record is None or record.get("p50") is None:
        return "not measured yet"
    return f"p50 {record['p50']:.2g} ms" if record["p50"] < 1 else f"p50 {record['p50']:.3g} ms"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def _retriever(quality: dict[str, Any], section: str, name: str) -> dict[str, Any]:
    found = quality.get(section, {}).get("retrievers", {}).get(name, {})
    return dict(found.get("all", found))


def _hooks_row(quality: dict[str, Any]) -> dict[str, Any] | None:
    for name, scores in quality.get("locomo", {}).get("retrievers", {}).items():
        if name.startswith("hooks"):
            return dict(scores.get("all", scores))
    return None


def _headline() -> str:
    results, quality = _load("results.json"), _load("quality.json")
    at = "100k memories"
    rows = [
        ("`store_memory` in the core, durable, vector given", at, "store", 100_000),
        ("`search`, vector, k=10", at, "search_vector", 100_000),
        ("`search_text`, BM25, k=10", at, "search_text", 100_000),
        ("`recall`, hybrid + graph, vector given", at, "recall", 100_000),
        ("`recall` over MCP stdio, query embedded", "—", "mcp_recall", None),
    ]
    lines = ["| measure | scale | memcore | more |", "|---|---|---|---|"]
    for what, scale, row, size in rows:
        value = _ms(_record(results, row, size))
        lines.append(f"| {what} | {scale} | {value} | [benchmarks](docs/benchmarks.md) |")
    turn = _retriever(quality, "locomo", RETRIEVE_CONTEXT)
    recall = _retriever(quality, "locomo", RECALL)
    if turn:
        questions = quality["locomo"].get("questions", "—")
        lines.append(
            f"| LoCoMo: evidence in the top 10, `retrieve_context` / `recall` | {questions} "
            f"questions | R@10 {_pct(turn.get('R@10'))} / {_pct(recall.get('R@10'))} "
            "| [quality](docs/quality.md) |"
        )
    facts = _retriever(quality, "facts", RECALL)
    if facts:
        lines.append(
            f"| an agent's facts: `recall` | {facts.get('n', '—')} questions | "
            f"R@5 {_pct(facts.get('R@5'))}, MRR {_pct(facts.get('MRR'))} "
            "| [quality](docs/quality.md) |"
        )
    cosqa = _retriever(quality, "cosqa", "search_code (hybrid)")
    if cosqa:
        lines.append(
            f"| CoSQA: `search_code` | {cosqa.get('n', '—')} queries | MRR "
            f"{_pct(cosqa.get('MRR'))} | [quality](docs/quality.md) |"
        )
    # The set written by other hands and never read is the honest number (issue 45: the
    # first set's halves are both dev now); the first set's held-out half before it exists.
    updates = quality.get("updates", {})
    sealed = updates.get("holdout", {}).get("all", {})
    table, label = sealed, "sealed set by other hands"
    if not sealed:
        table, label = updates.get("halves", {}).get("held-out", {}), "held-out pairs"
    update = table.get("update")
    others = [table[name] for name in ("related", "unrelated") if name in table]
    if update and others:
        other_n = sum(row["n"] for row in others)
        other_flagged = sum(row["flagged"] for row in others)
        lines.append(
            f"| updates flagged on store ({label}) | {update['n'] + other_n} pairs "
            f"| {_pct(update['flagged'] / update['n'])}% of updates, "
            f"{_pct(other_flagged / other_n)}% of the other pairs "
            "| [quality](docs/quality.md) |"
        )
    return "\n".join(lines) + "\n"


def _reliability() -> str:
    """README's reliability table: the kill -9, damage and replica phases, each with the
    commit and date it ran on."""
    data = _load("reliability.json")
    lines = ["| check | what ran | outcome | commit, date |", "|---|---|---|---|"]
    if "kills" in data:
        k = data["kills"]
        lines.append(
            f"| kill -9 of a writer | {k['rounds']} kills, {k['acknowledged']:,} acknowledged "
            f"writes | {k['lost']} lost, {k['unfindable']} unfindable | {when(k)} |"
        )
    if "process_kills" in data:
        p = data["process_kills"]
        lines.append(
            f"| kill -9 across processes | {p['rounds']} kills among {p['writers']} writers "
            f"of one store, {p['acknowledged']:,} acknowledged writes | {p['lost']} lost, "
            f"{p['unfindable']} unfindable by their word, {p.get('unfindable_by_vector', 0)} of "
            f"{p.get('vector_sampled', 0):,} sampled by their vector | {when(p)} |"
        )
    if "damage" in data:
        d = data["damage"]
        o = d["outcomes"]
        lines.append(
            f"| random damage of one file of the data folder | {d['trials']} trials, each "
            f"opened in a subprocess | {o['refused']} refused, {o['healed']} healed, "
            f"{o['opened_correct']} opened correct, {o['silent_wrong']} silent wrong"
            f"{silent(d)}, {o['crash']} crashes | {when(d)} |"
        )
    if "replica_identity" in data:
        r = data["replica_identity"]
        o = r["outcomes"]
        lines.append(
            f"| a PostgreSQL node's replica opened on another database | {r['trials']} trials "
            f"| {o['refused']} refused, {o['own_folder']} opened the new database's own "
            f"folder, {o['served_wrong']} served the wrong database | {when(r)} |"
        )
    return "\n".join(lines) + "\n"


def _damage_by_file() -> str:
    """docs/reliability.md's table: the damage trials' outcomes for each file."""
    damage = _load("reliability.json").get("damage")
    if not damage:
        return "Not measured yet: run `python -m benches.reliability --phases damage`.\n"
    kinds = ("refused", "healed", "opened_correct", "silent_wrong", "crash")
    o = damage["outcomes"]
    silent = ", ".join(f"{n} {k}" for k, n in sorted((damage.get("silent") or {}).items()))
    lines = [
        f"{damage['trials']} trials at {when(damage)}: {o['refused']} refused (each refused "
        f"again on a second open; {damage.get('repaired', 0)} then made sound by `repair "
        f"--accept-empty`), {o['healed']} healed, {o['opened_correct']} opened correct, "
        f"{o['silent_wrong']} silent wrong{f' ({silent})' if silent else ''}, {o['crash']} "
        "crashes.",
        "",
        "| file | refused | healed | opened correct | silent wrong | crash |",
        "|---|---|---|---|---|---|",
    ]
    for name, counts in damage["by_file"].items():
        cells = " | ".join(str(counts.get(k, 0)) for k in kinds)
        lines.append(f"| `{name}` | {cells} |")
    return "\n".join(lines) + "\n"


def _automatic_path() -> str:
    """Capture precision / recall and tiering per labelled set, the hooks' latency at a
    10k-turn store and LoCoMo played through the hooks, as one table."""
    quality = _load("quality.json")
    hooks_path = RESULTS / "hooks.json"
    hooks_bench: list[dict[str, Any]] = (
        json.loads(hooks_path.read_text()) if hooks_path.is_file() else []
    )
    lines = ["| measure | set or scale | result |", "|---|---|---|"]
    for name, data in quality.get("capture", {}).items():
        every = data.get("all", {})
        if "recall" in every:
            lines.append(
                f"| fact capture: facts captured / captures correct / chit-chat captured "
                f"| {name} (`{data.get('file', '')}`, {every.get('lines', '—')} messages) "
                f"| {_pct(every['recall'])}% / {_pct(every['precision'])}% / "
                f"{_pct(every['chit_chat_captured'])}% |"
            )
            lines.append(
                f"| tier right, over the captured facts | {name} "
                f"| {_pct(every.get('tier_accuracy'))}% |"
            )
    for record in hooks_bench:
        lines.append(
            f"| `{record['name']}` latency, p50 / p95 (target p95 "
            f"{record.get('target', {}).get('p95', '—'):.0f} ms) "
            f"| {record.get('scale', 0):,} turns "
            f"| {record['p50']:.1f} / {record['p95']:.1f} ms |"
        )
    hooks = _hooks_row(quality)
    if hooks is not None:
        turn = _retriever(quality, "locomo", RETRIEVE_CONTEXT)
        lines.append(
            "| LoCoMo played through the two hooks: evidence in the memory block, R@10 "
            f"| {hooks.get('n', '—')} questions | {_pct(hooks.get('R@10'))} "
            f"(`retrieve_context` on the same turns: {_pct(turn.get('R@10'))}) |"
        )
    return (
        "\n".join(lines) + "\n\nFrom [benches/results/quality.md](benches/results/quality.md) and "
        "[benches/results/hooks.md](benches/results/hooks.md); the held-out set is written "
        "in other styles and never tuned on.\n"
    )


def _demoted(markdown: str, levels: int = 1) -> str:
    out = []
    for line in markdown.splitlines():
        out.append("#" * levels + line if line.startswith("#") else line)
    return "\n".join(out).rstrip() + "\n"


def _section(markdown: str, title: str) -> str:
    """The text of one ``## title`` section, without its heading."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", markdown, re.M | re.S)
    return match.group(1).strip() + "\n" if match else "Not measured yet.\n"


def _quality_tables() -> str:
    path = RESULTS / "quality.md"
    if not path.is_file():
        return "Not measured yet: run `python -m benches.quality`.\n"
    text = path.read_text()
    body = text.split("\n", 1)[1] if text.startswith("## ") else text
    # The harness's links are relative to benches/results/.
    body = body.replace("](quality-experiments.md)", "](../benches/results/quality-experiments.md)")
    return _demoted(body.strip() + "\n")


def _budget() -> str:
    path = RESULTS / "results.md"
    if not path.is_file():
        return "Not measured yet: run `python -m benches`.\n"
    text = path.read_text()
    return (
        _section(text, "Budget (docs/performance.md)")
        + "\n**The machine**\n\n"
        + _section(text, "Machine")
    )


def _wheel_facts() -> dict[str, Any]:
    return _load("wheel.json")


def _install_facts() -> str:
    wheel = _wheel_facts()
    if not wheel:
        return "Not checked yet: run `bash benches/wheel_check.sh`.\n"
    return (
        f"The {wheel['tag']} wheel is {wheel['mb']:.1f} MB; on the project's 2-core machine "
        f"`pip install` of it took {wheel['install_seconds']} s (pip's download cache warm) "
        f"and the quick start below ran offline in {wheel['quickstart_seconds']:.1f} s "
        f"([the wheel check](docs/install.md#the-wheel-check), {wheel['date']}).\n"
    )


def _offline(wheel: dict[str, Any]) -> str:
    how = str(wheel.get("offline", ""))
    if how.startswith("unshare"):
        return f"`{how}`: a network namespace with no interface"
    return how or "hub off, proxies closed"


def _wheel_check() -> str:
    wheel = _wheel_facts()
    if not wheel:
        return "Not checked yet: run `bash benches/wheel_check.sh`.\n"
    packages = ", ".join(f"{p['name']} {p['version']}" for p in wheel["packages"])
    lines = [
        f"Last run {wheel['date']} on the project's machine ({wheel['machine']}), memcore "
        f"{wheel['version']}:",
        "",
        "| check | result |",
        "|---|---|",
        f"| wheel | `{wheel['name']}`, {wheel['mb']:.1f} MB (at most {wheel['max_mb']} MB) |",
        f"| built | {wheel['build']} |",
        f"| auditwheel | {wheel['auditwheel']} |",
        f"| install into a fresh venv, no Rust on PATH | {wheel['install_seconds']} s "
        f"(at most {wheel['max_install_seconds']} s) |",
        f"| README quick start, offline ({_offline(wheel)}) | passed in "
        f"{wheel['quickstart_seconds']:.1f} s |",
        f"| packages installed besides pip | {len(wheel['packages'])}, each required by memcore "
        "or by a package it requires (none unused) |",
        "",
        f"The packages: {packages}.",
    ]
    return "\n".join(lines) + "\n"


#: Block name -> what makes it. Files say which blocks they hold.
MAKERS: dict[str, Callable[[], str]] = {
    "headline": _headline,
    "automatic-path": _automatic_path,
    "install-facts": _install_facts,
    "wheel-check": _wheel_check,
    "quality-tables": _quality_tables,
    "budget": _budget,
    "tool-groups": _tool_groups,
    "settings": _settings_table,
    "reliability": _reliability,
    "damage-by-file": _damage_by_file,
}

FILES = (
    ROOT / "README.md",
    ROOT / "docs" / "install.md",
    ROOT / "docs" / "quality.md",
    ROOT / "docs" / "benchmarks.md",
    ROOT / "docs" / "server.md",
    ROOT / "docs" / "configuration.md",
    ROOT / "docs" / "reliability.md",
)


def synced(text: str) -> str:
    """``text`` with every generated block made again."""

    def fill(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in MAKERS:
            raise KeyError(f"unknown docs_sync block {name!r}")
        return f"{match.group(1)}{MAKERS[name]()}{match.group(4)}"

    return _BLOCK.sub(fill, text)


def stale() -> list[str]:
    """``file: block`` for every generated block that differs from what it should say."""
    found = []
    for path in FILES:
        if not path.is_file():
            continue
        text = path.read_text()
        for match in _BLOCK.finditer(text):
            name = match.group("name")
            if match.group("body") != MAKERS[name]():
                found.append(f"{path.relative_to(ROOT)}: {name}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.docs_sync", description=__doc__)
    parser.add_argument("--check", action="store_true", help="only report stale blocks")
    args = parser.parse_args(argv)
    if args.check:
        found = stale()
        for entry in found:
            print(f"stale: {entry} (run python -m benches.docs_sync)", file=sys.stderr)
        return 1 if found else 0
    for path in FILES:
        if path.is_file():
            text = path.read_text()
            new = synced(text)
            if new != text:
                path.write_text(new)
                print(f"updated {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
