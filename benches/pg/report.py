"""benches/results/pg.md from the run's pg.json: one table, SQLite beside PostgreSQL,
with the targets of docs/scale-out.md and what the machine was doing."""

from __future__ import annotations

from typing import Any

#: docs/scale-out.md, "What the next steps build", step 6.
TARGETS = {
    "store_memory": "≤ 2 ms p50 on a local PostgreSQL",
    "search": "unchanged (indexes are in memory)",
    "apply_lag": "≤ 50 / 200 ms",
    "restart": "≤ 2 s",
}


def _ms(value: float) -> str:
    return f"{value:.2f} ms" if value < 10 else f"{value:.0f} ms"


def _s(value: float) -> str:
    return f"{value:.2f} s" if value < 10 else f"{value:.0f} s"


def rows(r: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(measure, SQLite, PostgreSQL node, target) rows."""
    sq, pg, lag, start, web = r["sqlite"], r["postgres"], r["apply_lag"], r["start"], r["http"]
    n = f"{start['memories']:,}"
    return [
        (
            "store_memory p50 / p99 (facade, 384-d vector given)",
            f"{_ms(sq['store_memory']['p50_ms'])} / {_ms(sq['store_memory']['p99_ms'])}",
            f"{_ms(pg['store_memory']['p50_ms'])} / {_ms(pg['store_memory']['p99_ms'])}",
            TARGETS["store_memory"],
        ),
        (
            f"search_text p50 ({r['plan']['base']:,} memories)",
            _ms(sq["search_text"]["p50_ms"]),
            _ms(pg["search_text"]["p50_ms"]),
            TARGETS["search"],
        ),
        (
            "recall p50 (BM25 + vector)",
            _ms(sq["recall"]["p50_ms"]),
            _ms(pg["recall"]["p50_ms"]),
            TARGETS["search"],
        ),
        (
            "apply lag to a second node p50 / p99 (write returned → applied there)",
            "–",
            f"{_ms(lag['p50_ms'])} / {_ms(lag['p99_ms'])}",
            TARGETS["apply_lag"],
        ),
        (
            f"node restart from its snapshot at {n} memories, {start['tail']} writes behind: "
            "open / caught up / tail indexed",
            "–",
            f"{_s(start['restart_open_s'])} / {_s(start['restart_caught_up_s'])} / "
            f"{_s(start['restart_indexed_s'])}",
            TARGETS["restart"],
        ),
        (
            f"new node bootstrapping {n} memories from PostgreSQL: open / indexed",
            "–",
            f"{_s(start['fresh_open_s'])} / {_s(start['fresh_indexed_s'])}",
            "for the record",
        ),
        (
            f"reads over HTTP, {web['clients']} client sessions (recall, search_memories; "
            "median of 3 alternating rounds): one node / two nodes",
            "–",
            f"{web['one_node']['calls_per_second']:.0f} / "
            f"{web['two_nodes']['calls_per_second']:.0f} calls/s "
            f"({_errors(web)} errors)",
            "more with two",
        ),
    ]


def _errors(web: dict[str, Any]) -> int:
    return sum(int(r["errors"]) for done in web["rounds"].values() for r in done)


def render(r: dict[str, Any]) -> str:
    m, pg = r["machine"], r["postgres_server"]
    settings = ", ".join(f"{k} {v}" for k, v in pg["settings"].items())
    flush = pg["wal_flush_ms"]
    lines = [
        "# SQLite and PostgreSQL nodes",
        "",
        f"`python -m benches.pg{' --quick' if r['mode'] == 'quick' else ''}`, "
        f"{m['date']}, commit {m['memcore_commit']}, {m['cpu']} ({m['cores']} cores), "
        f"load average {r['load_before'][0]:.1f} before and {r['load_after'][0]:.1f} after "
        "(the machine is shared).",
        "",
        f"PostgreSQL on the same machine, over loopback: {settings}.",
        "One 8 kB write + fdatasync on its disk (pg_test_fsync, the WAL's flush at every "
        f"commit): {'not measured' if flush is None else _ms(flush)}.",
        "",
        "| measure | SQLite | PostgreSQL node | target |",
        "|---|---|---|---|",
    ]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows(r)]
    start = r["start"]
    lines += [
        "",
        f"Building the {start['memories']:,} memories through one node (batches of 1,000, "
        f"indexed) took {_s(start['build_seconds'])}.",
    ]
    return "\n".join(lines) + "\n"
