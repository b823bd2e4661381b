"""Replica-identity trials: a PostgreSQL node's replica opened where its database is not
(docs/reliability.md, docs/scale-out.md "A replica knows its database").

Each round writes memories through a node on a fresh database (its replica in a folder
named explicitly, and one in the default folder), then changes what the URL reaches and
opens the node again:

- ``dropped``: the database dropped and created again empty under the same name;
- ``other_database``: the URL names another database of the cluster;
- ``other_cluster``: a database of the same name on a second cluster (another port);
- ``restored_older``: the database lost the last write (as a restore of an older backup);
- ``reconnect``: the database is replaced while the node runs (dropped with FORCE, created
  again): the node must stop serving within 30 s;
- ``shared_folder``: a second node on the same replica folder.

An outcome is ``refused`` (STORAGE_ERROR, or RESOURCE_BUSY for the shared folder),
``own_folder`` (the default folder: the node opened the new database's own, empty folder and
served nothing of the old one), or ``served_wrong`` (it served a memory of the old database
or accepted a write against it): the last must be 0. Without PostgreSQL the phase is skipped.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

SCENARIOS = (
    "dropped",
    "other_database",
    "other_cluster",
    "restored_older",
    "reconnect",
    "shared_folder",
)
MARK = "zebra of the first database"


def run(home: Path, *, rounds: int) -> dict[str, Any]:
    """`rounds` of every scenario; the counts (`skipped` without PostgreSQL)."""
    from tests.pg_cluster import find_bindir, start_cluster

    bindir = find_bindir()
    if bindir is None:
        return {"skipped": "PostgreSQL is not installed"}
    home.mkdir(parents=True, exist_ok=True)
    cluster, other = start_cluster(bindir), start_cluster(bindir)
    outcomes: Counter[str] = Counter()
    per: dict[str, Counter[str]] = {s: Counter() for s in SCENARIOS}
    wrong: list[str] = []
    try:
        for n in range(rounds):
            for scenario in SCENARIOS:
                for folder in ("named", "default"):
                    if scenario in ("reconnect", "shared_folder") and folder == "default":
                        continue
                    where = home / f"{n}-{scenario}-{folder}"
                    outcome = _trial(cluster, other, scenario, where, default=folder == "default")
                    outcomes[outcome] += 1
                    per[scenario][outcome] += 1
                    if outcome == "served_wrong":
                        wrong.append(f"{scenario} ({folder} folder), round {n + 1}")
            print(f"  replica identity: round {n + 1}/{rounds}: {dict(outcomes)}", flush=True)
    finally:
        cluster.stop()
        other.stop()
    return {
        "rounds": rounds,
        "trials": sum(outcomes.values()),
        "outcomes": {k: outcomes.get(k, 0) for k in ("refused", "own_folder", "served_wrong")},
        "per_scenario": {s: dict(c) for s, c in per.items()},
        "wrong": wrong,
    }


def _trial(cluster: Any, other: Any, scenario: str, where: Path, *, default: bool) -> str:
    import memcore

    url = cluster.create_database()
    name = url.rsplit("/", 1)[1]
    replica = where / "replica"
    opts: dict[str, Any] = {"model": None}
    if default:
        opts["mode"] = "local"
        opts["project_root"] = where
        where.mkdir(parents=True, exist_ok=True)
    else:
        opts["replica_dir"] = replica
    with memcore.Memory(url, **opts) as node:
        node.store_memory(MARK, vector=[1.0, 0.0, 0.0, 0.0])
        node.store_memory("the last write", vector=[0.0, 1.0, 0.0, 0.0])
        if scenario == "reconnect":
            return _reconnect(cluster, name, node)
        if scenario == "shared_folder":
            try:
                memcore.Memory(url, **opts).close()
            except memcore.ResourceBusyError:
                return "refused"
            return "served_wrong"
    if scenario == "dropped":
        cluster.psql("postgres", f"DROP DATABASE {name}")
        cluster.psql("postgres", f"CREATE DATABASE {name}")
    elif scenario == "other_database":
        url = cluster.create_database()
    elif scenario == "other_cluster":
        other.psql("postgres", f"CREATE DATABASE {name}")
        url = other.url(name)
    elif scenario == "restored_older":
        cluster.psql(
            name,
            "DELETE FROM memcore.log WHERE seq = 2; UPDATE memcore.log_heads SET seq = 1; "
            "DELETE FROM memcore.memories WHERE content = 'the last write'",
        )
    try:
        node = memcore.Memory(url, **opts)
    except memcore.StorageError:
        return "refused"
    with node:
        served = bool(node.search_text("zebra")) if scenario != "restored_older" else False
        served |= bool(node.search_text("last write")) and scenario == "restored_older"
        return "served_wrong" if served else "own_folder"


def _reconnect(cluster: Any, name: str, node: Any) -> str:
    import memcore

    cluster.psql("postgres", f"DROP DATABASE {name} WITH (FORCE)")
    cluster.psql("postgres", f"CREATE DATABASE {name}")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            node.search_text("zebra")
        except memcore.StorageError:
            try:
                node.store_memory("after the swap", vector=[0.0, 0.0, 1.0, 0.0])
            except memcore.StorageError:
                return "refused"
            return "served_wrong"
        time.sleep(0.05)
    return "served_wrong"
