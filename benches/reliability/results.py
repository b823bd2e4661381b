"""The reliability results on disk: ``reliability.json`` (every phase and every fuzzed tool
with the commit and date it ran on) and ``reliability.md`` rendered from it.

A run merges into what is there: a phase or a tool that ran replaces its earlier entry,
the others keep theirs, and both files are rewritten after every phase and every tool, so
the long run can be done in several sittings and an interrupted one keeps its counts.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benches.reliability.client import ROOT

#: What the long run asks for (``python -m benches.reliability --long``).
TARGET = {
    "fuzz_cases_per_tool": 10_000,
    "load_seconds": 600,
    "kills": 100,
    "process_kills": 100,
    "damage_trials": 300,
}


class Recorder:
    """Merges each finished phase and tool into ``out/reliability.json`` and ``.md``."""

    def __init__(self, out: Path, *, mode: str) -> None:
        self.out, self.mode = out, mode
        self.commit = current_commit()
        self.data = load(out / "reliability.json")

    def phase(self, key: str, counts: dict[str, Any]) -> None:
        """Record the result of the ``load`` (``http_load``), ``kills`` or ``processes``
        (``process_kills``) phase."""
        entry = {**counts, **self._stamp()}
        self._update(lambda data: data.__setitem__(key, entry))

    def tool(self, tally: dict[str, Any]) -> None:
        """Record one tool's fuzzing tally."""
        entry = {**tally, **self._stamp()}

        def merge(data: dict[str, Any]) -> None:
            _fuzz(data)["per_tool"][tally["tool"]] = entry

        self._update(merge)

    def tool_order(self, names: list[str]) -> None:
        """The server's tool list, in its order (tools no longer listed are dropped)."""

        def order(data: dict[str, Any]) -> None:
            fuzz = _fuzz(data)
            fuzz["tools"] = names
            fuzz["per_tool"] = {n: fuzz["per_tool"][n] for n in names if n in fuzz["per_tool"]}

        self._update(order)

    def fuzz_cases(self, tool: str) -> int:
        """The recorded case count of ``tool`` (0 if it was never fuzzed)."""
        entry = self.data.get("fuzz", {}).get("per_tool", {}).get(tool)
        return int(entry["cases"]) if entry else 0

    def _stamp(self) -> dict[str, str]:
        return {
            "commit": self.commit,
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "mode": self.mode,
        }

    def _update(self, change: Callable[[dict[str, Any]], None]) -> None:
        """Apply ``change`` to the results on disk and write them back, under a lock: two
        runs at once (the kills in one, fuzzing in another) each keep the other's entries."""
        self.out.mkdir(parents=True, exist_ok=True)
        folder = os.open(self.out, os.O_RDONLY)  # the lock: no file of its own to leave behind
        try:
            fcntl.flock(folder, fcntl.LOCK_EX)
            self.data = load(self.out / "reliability.json")
            change(self.data)
            self.data["target"] = TARGET
            (self.out / "reliability.json").write_text(json.dumps(self.data, indent=2) + "\n")
            (self.out / "reliability.md").write_text(render(self.data))
        finally:
            os.close(folder)  # closing releases the lock


def _fuzz(data: dict[str, Any]) -> dict[str, Any]:
    fuzz: dict[str, Any] = data.setdefault("fuzz", {"tools": [], "per_tool": {}})
    return fuzz


def load(path: Path) -> dict[str, Any]:
    """The recorded results (empty when there are none yet)."""
    if not path.exists():
        return {}
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def current_commit() -> str:
    """The short commit of the checkout, ``-dirty`` when code differs from it (the results
    folder aside: the run itself rewrites it)."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    changed = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!benches/results")
    return commit + ("-dirty" if changed else "")


def fuzz_summary(data: dict[str, Any]) -> dict[str, Any]:
    """Totals over the recorded tools."""
    fuzz = data.get("fuzz", {})
    tools = [fuzz["per_tool"][n] for n in fuzz.get("tools", []) if n in fuzz.get("per_tool", {})]
    target = TARGET["fuzz_cases_per_tool"]
    return {
        "listed": len(fuzz.get("tools", [])),
        "tools": len(tools),
        "cases": sum(t["cases"] for t in tools),
        "min_cases": min((t["cases"] for t in tools), default=0),
        "max_cases": max((t["cases"] for t in tools), default=0),
        "error_results": sum(
            n for t in tools for k, n in t["outcomes"].items() if k not in ("ok", "crash")
        ),
        "crashes": sum(t["outcomes"].get("crash", 0) for t in tools),
        "violations": sum(t["outcomes"].get("violation", 0) for t in tools),
        "servers_lost": sum(1 for t in tools if not t.get("server_alive_after", True)),
        "at_target": [t["tool"] for t in tools if t["cases"] >= target],
        "commits": sorted({t["commit"] for t in tools}),
    }


def silent(d: dict[str, Any]) -> str:
    """How the silent-wrong damage showed, when there was any."""
    kinds = d.get("silent") or {}
    return f" ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))})" if kinds else ""


def render(data: dict[str, Any]) -> str:
    """The results as a short Markdown report."""
    target = TARGET["fuzz_cases_per_tool"]
    lines = [
        "# Reliability run",
        "",
        "`python -m benches.reliability` merges each phase and each fuzzed tool into this "
        "report as it finishes, with the commit and date it ran on (`--long`: "
        f"{target:,} fuzz cases per tool, {TARGET['load_seconds'] // 60} minutes of "
        f"8-client HTTP load, {TARGET['kills']} kills of one writer, "
        f"{TARGET['process_kills']} kills among 4 writer processes).",
        "",
        "| check | what ran | outcome | commit, date |",
        "|---|---|---|---|",
    ]
    if "fuzz" in data:
        s = fuzz_summary(data)
        lines.append(
            f"| schema fuzzing over stdio | {s['cases']:,} calls over {s['tools']} of "
            f"{s['listed']} tools ({s['min_cases']:,}–{s['max_cases']:,} per tool, "
            f"{len(s['at_target'])} tools at {target:,}; {s['error_results']:,} coded error "
            f"results) | {s['crashes']} crashes, {s['violations']} contract violations "
            "(uncoded error, bad reply, refused call that wrote), "
            f"{s['servers_lost']} servers lost | {', '.join(s['commits'])}, per tool below |"
        )
    if "http_load" in data:
        h = data["http_load"]
        lines.append(
            f"| HTTP load | {h['clients']} clients for {h['seconds']:.0f} s, {h['calls']:,} "
            f"calls ({h['calls_per_second']:.0f}/s) | {h['errors']} error results, "
            f"{h['protocol_errors']} protocol errors, {h.get('transport_errors', 0)} "
            f"transport errors; /healthz after: {h['healthy_after']}{_rss(h)} | {when(h)} |"
        )
    if "kills" in data:
        k = data["kills"]
        lines.append(
            f"| kill -9 during writes | {k['rounds']} kills, {k['acknowledged']:,} acknowledged "
            f"writes | {k['lost']} lost, {k['unfindable']} unfindable, "
            f"quick_check ok after every kill: {k['integrity_ok']} | {when(k)} |"
        )
    if "process_kills" in data:
        lines.append(_process_kills_row(data["process_kills"]))
    if "damage" in data:
        d = data["damage"]
        o = d["outcomes"]
        lines.append(
            f"| random damage of every file | {d['trials']} trials, each one file of a data "
            f"folder of {d['memories']} memories (cleanly closed, or left by a crash) damaged "
            "by bit flips, a 4 KiB block of garbage or zeros, truncation or deletion, opened "
            f"in a subprocess | {o['refused']} refused (refused again on a second open; "
            f"{d.get('repaired', 0)} then made sound by `repair --accept-empty`), "
            f"{o['healed']} healed, "
            f"{o['opened_correct']} opened correct, {o['silent_wrong']} silent wrong"
            f"{silent(d)}, "
            f"{o['crash']} crashes | {when(d)} |"
        )
    if "replica_identity" in data:
        r = data["replica_identity"]
        o = r["outcomes"]
        lines.append(
            f"| replica of another database | {r['trials']} trials ({r['rounds']} rounds of "
            f"{len(r['per_scenario'])} scenarios: dropped and created again, another "
            "database, another cluster, a database that lost writes, replaced under a running "
            f"node, two nodes on one folder) | {o['refused']} refused, {o['own_folder']} "
            f"opened their database's own folder, {o['served_wrong']} served the wrong "
            f"database | {when(r)} |"
        )
    if "damage" in data:
        lines += [
            "",
            "## Damage by file",
            "",
            "| file | refused | healed | opened correct | silent wrong | crash |",
            "|---|---|---|---|---|---|",
        ]
        for name, counts in data["damage"]["by_file"].items():
            cells = " | ".join(
                str(counts.get(k, 0))
                for k in ("refused", "healed", "opened_correct", "silent_wrong", "crash")
            )
            lines.append(f"| `{name}` | {cells} |")
        if data["damage"].get("bad") or data["damage"].get("repair_failed"):
            lines += ["", "Trials served wrong or crashed, and refusals repair left unsound:", ""]
        for bad in data["damage"].get("bad", []):
            lines.append(f"- {bad['outcome']}: {bad['file']} ({bad['damage']}): {bad['detail']}")
        for bad in data["damage"].get("repair_failed", []):
            lines.append(
                f"- refused, and `repair --accept-empty` left it unsound: {bad['file']} "
                f"({bad['damage']}): {bad['repair_failed']}"
            )
    if "fuzz" in data:
        fuzz = data["fuzz"]
        lines += [
            "",
            "## Fuzzing per tool",
            "",
            f"| tool | cases | at {target:,} | outcomes | commit, date |",
            "|---|---|---|---|---|",
        ]
        for name in fuzz["tools"]:
            entry = fuzz["per_tool"].get(name)
            if entry is None:
                lines.append(f"| `{name}` | – | no | not fuzzed yet | |")
                continue
            outcomes = ", ".join(f"{key} {n}" for key, n in entry["outcomes"].items())
            reached = "yes" if entry["cases"] >= target else "no"
            lines.append(
                f"| `{name}` | {entry['cases']:,} | {reached} | {outcomes} | {when(entry)} |"
            )
        bad = [
            (name, v)
            for name, entry in fuzz["per_tool"].items()
            for v in entry.get("violations", [])
        ]
        if bad:
            lines += ["", "## Violations", ""]
            lines += [f"- `{name}`: {v}" for name, v in bad]
    return "\n".join(lines) + "\n"


def _process_kills_row(p: dict[str, Any]) -> str:
    takeover = p.get("takeover_s") or {}
    taken = (
        f"; owner take-over p50 {takeover['p50']:.2f} s, max {takeover['max']:.2f} s"
        if takeover.get("n")
        else ""
    )
    errors = ", ".join(f"{code} {n}" for code, n in (p.get("write_errors") or {}).items())
    return (
        f"| kill -9 across processes | {p['writers']} processes writing one store, "
        f"{p['rounds']} kills ({p['owner_kills']} of the index files' owner), each restarted; "
        f"{p['acknowledged']:,} acknowledged writes with vectors | {p['lost']} lost, "
        f"{p['unfindable']} unfindable by their word in a fresh open, "
        f"{p.get('unfindable_by_vector', 0)} of {p.get('vector_sampled', 0):,} sampled by their "
        f"vector; index entries missing {p['index_missing']} (check ok: "
        f"{p['check_ok']}); two owners at once {p['owner_overlaps']} times, rounds without "
        f"an owner {p['rounds_without_owner']}, owners at the end {p['owners_at_end']}{taken}; "
        f"write errors: {errors or 'none'} | {when(p)} |"
    )


def when(entry: dict[str, Any]) -> str:
    """The commit and date a phase ran on."""
    return f"{entry.get('commit', '?')}, {entry.get('date', '?')[:10]}"


def _rss(h: dict[str, Any]) -> str:
    rss = h.get("server_rss_mb")
    if not rss or rss.get("max") is None:
        return ""
    return f"; server memory {rss['start']:.0f}→{rss['max']:.0f} MB (max)"
