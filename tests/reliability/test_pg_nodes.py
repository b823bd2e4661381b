"""Several memcore nodes, each a process of its own, on one PostgreSQL database
(docs/scale-out.md): what one node acknowledges, every node reads after its seq; a node
killed with SIGKILL loses nothing it acknowledged and catches up when restarted; a node
restarted from its index snapshots equals one built anew from PostgreSQL; a node serving
a subset of namespaces never answers for the others.

The nodes are real processes (pg_node_process.py) on a real PostgreSQL server (the
`pg_cluster` fixture of tests/conftest.py); nothing is mocked.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from pg_node_process import NodeProcess, started, vector

from pg_cluster import PgCluster

#: Queries whose top-k two equal nodes must agree on.
#: Each matches fewer documents than a search returns (50), so two nodes must return the
#: same hits with the same scores; only the order of equal scores may differ (ties are
#: broken by each node's own document keys).
QUERIES = ("harbour", "lantern", "orchid", "meteor", "violin", "saffron")


def _database(url: str) -> str:
    return url.rsplit("/", 1)[1]


def _head(cluster: PgCluster, url: str, namespace: str = "default") -> int:
    """The namespace's last seq in PostgreSQL's log (0 before its first write)."""
    sql = f"SELECT coalesce(max(seq), 0) FROM memcore.log_heads WHERE namespace = '{namespace}'"
    return int(cluster.psql(_database(url), sql).strip())


def _ids_in_postgres(cluster: PgCluster, url: str) -> set[str]:
    return set(cluster.psql(_database(url), "SELECT id FROM memcore.memories").split())


def _records(node: NodeProcess) -> list[dict[str, Any]]:
    """Every record the node holds, as its export writes them (ids, times, vectors)."""
    records: list[dict[str, Any]] = node.ok("export")["records"]
    return records


def _top_k(node: NodeProcess) -> list[list[tuple[float, str]]]:
    """The node's answers to QUERIES, BM25 alone and hybrid with a fixed vector, once
    its indexer committed everything (see `settle` in pg_node_process.py): each hit as
    (score, id), best first, equal scores in id order."""
    node.ok("settle")
    answers = []
    for i, query in enumerate(QUERIES):
        for found in (
            node.ok("search_text", query=query, limit=50),
            node.ok("recall", query=query, vector=vector(9_000 + i), limit=50),
        ):
            scored = zip(found["ids"], found["scores"], strict=True)
            hits = [(round(scores[-1], 4), hit) for hit, scores in scored]
            answers.append(sorted(hits, key=lambda hit: (-hit[0], hit[1])))
    return answers


@pytest.fixture
def nodes() -> Iterator[ExitStack]:
    """Closes every node a test started, even when it fails."""
    with ExitStack() as stack:
        yield stack


def _start(
    stack: ExitStack, url: str, tmp_path: Path, name: str, namespaces: list[str] | None = None
) -> NodeProcess:
    log = tmp_path / f"{name}.log"
    return stack.enter_context(started(url, tmp_path / name, log, namespaces))


def test_writes_on_each_of_three_nodes_are_read_on_the_others(
    pg_database: str, tmp_path: Path, nodes: ExitStack
) -> None:
    trio = [_start(nodes, pg_database, tmp_path, name) for name in ("a", "b", "c")]
    written: list[tuple[int, str, str]] = []  # (node, id, content)
    for round_ in range(4):
        for n, node in enumerate(trio):
            content = f"node {n} round {round_} saw the {('harbour', 'orchid', 'meteor')[n]}"
            stored = node.ok("store", content=content, vector=vector(100 * n + round_))
            written.append((n, stored["id"], content))
            last = stored["seq"]
    assert last == len(written), "one gapless order over the three writers"

    for reader in trio:
        assert reader.ok("wait", seq=last)["applied"] >= last
        for _, memory_id, content in written:
            assert reader.ok("get", id=memory_id)["content"] == content
        found = reader.ok("search_text", query="orchid", limit=20)["ids"]
        assert sorted(found) == sorted(i for n, i, _ in written if n == 1)
    first = _records(trio[0])
    assert len(first) == len(written)
    assert _records(trio[1]) == first and _records(trio[2]) == first
    assert _top_k(trio[1]) == _top_k(trio[0]) == _top_k(trio[2])


def test_a_node_killed_during_writes_loses_nothing_it_acknowledged(
    pg_cluster: PgCluster, pg_database: str, tmp_path: Path, nodes: ExitStack
) -> None:
    a = _start(nodes, pg_database, tmp_path, "a")
    b = _start(nodes, pg_database, tmp_path, "b")
    victim = _start(nodes, pg_database, tmp_path, "victim")
    victim.send("stream", count=100_000, prefix="victim", seed=1_000)
    acknowledged: dict[str, int] = {}
    for i in range(60):
        ack = victim.read()
        assert "error" not in ack, ack
        acknowledged[ack["id"]] = ack["seq"]
        if i % 15 == 0:  # another node writes the same namespace meanwhile
            a.ok("store", content=f"a wrote during the stream {i}", vector=vector(i))
    victim.kill()

    assert set(acknowledged) <= _ids_in_postgres(pg_cluster, pg_database)
    head = _head(pg_cluster, pg_database)
    assert head >= max(acknowledged.values())
    for survivor in (a, b):
        survivor.ok("wait", seq=head)
        for memory_id in acknowledged:
            assert survivor.ok("get", id=memory_id)["content"].startswith("victim write")

    # Restarted on the same replica folder, it applies what it missed (its own writes
    # that PostgreSQL committed after its replica's last commit included) and equals them.
    back = _start(nodes, pg_database, tmp_path, "victim")
    back.ok("wait", seq=head)
    expected = _records(a)
    assert len(expected) == head, "every committed write, acknowledged or not, once"
    assert _records(back) == expected == _records(b)
    assert _top_k(back) == _top_k(a)
    again = back.ok("store", content="the restarted node writes again", vector=vector(7))
    assert again["seq"] == head + 1


def test_a_node_restarted_from_its_snapshot_equals_one_built_from_postgres(
    pg_cluster: PgCluster, pg_database: str, tmp_path: Path, nodes: ExitStack
) -> None:
    with started(pg_database, tmp_path / "a", tmp_path / "a.log") as a:
        a.send("stream", count=300, prefix="first", seed=0)
        first = [a.read() for _ in range(300)]
        assert all("error" not in ack for ack in first)
    snapshot = tmp_path / "a" / "index" / "vectors"
    assert any(snapshot.glob("*.usearch")), "closing the node saved its vector index"
    # While the node is down, another node writes a tail it must replay at restart,
    # and deletes one of the snapshot's memories.
    with started(pg_database, tmp_path / "b", tmp_path / "b.log") as b:
        b.ok("wait", seq=300)
        for i in range(25):
            b.ok("store", content=f"tail write {i} about the glacier", vector=vector(500 + i))
        b.ok("delete", id=first[0]["id"])
    head = _head(pg_cluster, pg_database)
    assert head == 326

    restarted = _start(nodes, pg_database, tmp_path, "a")
    fresh = _start(nodes, pg_database, tmp_path, "fresh")
    restarted.ok("wait", seq=head)
    fresh.ok("wait", seq=head)
    assert restarted.ok("count")["count"] == fresh.ok("count")["count"] == 324
    assert _records(restarted) == _records(fresh)
    # The restarted node indexed the deleted memory before it was deleted, and BM25's
    # statistics (document frequency, average length) count a deleted document until its
    # segment is rewritten: scores differ by that until compaction rewrites it.
    restarted.ok("compact")
    fresh.ok("compact")
    answers = _top_k(restarted)
    assert all(answers), "every query finds something"
    assert answers == _top_k(fresh)


def _subset_and_full(
    stack: ExitStack, url: str, tmp_path: Path
) -> tuple[NodeProcess, NodeProcess, dict[str, Any], dict[str, Any]]:
    """A full node that wrote one memory for tenant a and one for tenant b, and a node
    serving tenant a only, caught up; with the two writes' answers."""
    full = _start(stack, url, tmp_path, "full")
    theirs = full.ok("store", content="tenant b keeps the lantern", namespace="tenant-b")
    mine = full.ok("store", content="tenant a keeps the orchid", namespace="tenant-a")
    subset = _start(stack, url, tmp_path, "subset", namespaces=["tenant-a"])
    subset.ok("wait", seq=mine["seq"], namespace="tenant-a")
    return subset, full, mine, theirs


def _refused(answer: dict[str, Any]) -> None:
    assert answer.get("error", {}).get("code") == "INVALID_PARAMETER", answer
    assert "does not serve" in answer["error"]["message"]


def test_a_subset_node_refuses_writes_and_waits_for_other_tenants(
    pg_cluster: PgCluster, pg_database: str, tmp_path: Path, nodes: ExitStack
) -> None:
    subset, full, mine, theirs = _subset_and_full(nodes, pg_database, tmp_path)
    assert subset.ok("get", id=mine["id"], namespace="tenant-a")["content"].endswith("orchid")
    assert subset.ok("search_text", query="orchid", namespace="tenant-a")["ids"] == [mine["id"]]
    assert subset.ok("store", content="more for a", namespace="tenant-a")["seq"] == 2

    _refused(subset.call("store", content="written for b", namespace="tenant-b"))
    _refused(subset.call("delete", id=theirs["id"], namespace="tenant-b"))
    _refused(subset.call("wait", seq=theirs["seq"], namespace="tenant-b", timeout=0.1))
    # Nothing it refused was written; the full node answers for both tenants.
    assert _head(pg_cluster, pg_database, "tenant-b") == theirs["seq"] == 1
    assert full.ok("get", id=theirs["id"], namespace="tenant-b")["content"].endswith("lantern")
    assert full.ok("search_text", query="lantern", namespace="tenant-b")["ids"] == [theirs["id"]]
    full.ok("wait", seq=2, namespace="tenant-a")
    assert full.ok("count", namespace="tenant-a")["count"] == 2


def test_a_subset_node_refuses_reads_for_other_tenants(
    pg_database: str, tmp_path: Path, nodes: ExitStack
) -> None:
    subset, _, _, theirs = _subset_and_full(nodes, pg_database, tmp_path)
    _refused(subset.call("get", id=theirs["id"], namespace="tenant-b"))
    _refused(subset.call("search_text", query="lantern", namespace="tenant-b"))
    _refused(subset.call("recall", query="lantern", namespace="tenant-b"))
    _refused(subset.call("count", namespace="tenant-b"))
    _refused(subset.call("export", namespace="tenant-b"))
    # Its whole export (every namespace its replica holds) has none of tenant b's records.
    assert {r.get("namespace") for r in _records(subset)} == {"tenant-a"}
