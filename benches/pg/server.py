"""The throw-away PostgreSQL server the run measures against, and what it was set to.

The server is tests/pg_cluster.py's (initdb into a temporary folder, stopped and removed at
the end), with PostgreSQL's defaults: `fsync` and `synchronous_commit` on, so every
acknowledged write waited for its WAL flush, as it would in production. That flush is
timed here on the same disk with `pg_test_fsync`, because it dominates a write.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from tests.pg_cluster import PgCluster

#: The settings that decide what a write costs, reported with the results.
SETTINGS = (
    "server_version",
    "fsync",
    "synchronous_commit",
    "wal_sync_method",
    "full_page_writes",
    "shared_buffers",
    "max_connections",
)


def settings(cluster: PgCluster) -> dict[str, str]:
    """The server's version and durability settings."""
    found = {}
    for name in SETTINGS:
        found[name] = cluster.psql("postgres", f"SHOW {name}").strip()
    return found


def wal_flush_ms(cluster: PgCluster) -> float | None:
    """Milliseconds per 8 kB write + fdatasync (Linux's WAL default) on the disk holding the
    cluster, from the first block of `pg_test_fsync`; None when it cannot be measured."""
    program = cluster.bindir / "pg_test_fsync"
    if not program.exists():
        return None
    with tempfile.NamedTemporaryFile(dir=cluster.root.parent, prefix="memcore-fsync-") as probe:
        argv = [str(program), "-s", "2", "-f", probe.name]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                match = re.match(r"\s+fdatasync\s+[\d.]+ ops/sec\s+(\d+) usecs/op", line)
                if match:  # the one-write block comes first: enough
                    return int(match.group(1)) / 1000
        finally:
            proc.kill()
            proc.wait()
    return None


def host_load() -> list[float]:
    """The 1, 5 and 15 minute load averages (the machine is shared)."""
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def describe(cluster: PgCluster) -> dict[str, Any]:
    return {"settings": settings(cluster), "wal_flush_ms": wal_flush_ms(cluster)}
