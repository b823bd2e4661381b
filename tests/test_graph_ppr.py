"""Personalized PageRank: parity with python-igraph's PRPACK on random weighted graphs
built through the engine, and the graph signal in recall."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import memcore
from backends import Backend

igraph = pytest.importorskip("igraph")

TELEPORT = 0.5
TOLERANCE = 1e-3


def random_graph(seed: int, n: int = 300, isolated: int = 30) -> tuple[list[str], dict[Any, float]]:
    """Entity names and `{(source, target): weight}`: a connected-ish core, a few
    leaves, and `isolated` entities without relations (dangling for the walk)."""
    rng = np.random.default_rng(seed)
    names = [f"entity-{seed}-{i:03d}" for i in range(n)]
    linked = n - isolated
    edges: dict[Any, float] = {}
    while len(edges) < 3 * linked:
        a, b = (int(x) for x in rng.integers(0, linked, 2))
        if a != b:
            edges[(a, b)] = float(np.round(rng.uniform(0.05, 1.0), 3))
    return names, edges


@pytest.fixture(scope="module")
def store(
    module_backend: Backend, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[memcore.Memory]:
    with module_backend.open(tmp_path_factory.mktemp("ppr") / "store", model=None) as mem:
        yield mem


def build(mem: memcore.Memory, seed: int) -> tuple[list[str], Any]:
    """The random graph in its own namespace, and the same graph in igraph."""
    names, edges = random_graph(seed)
    ns = f"g{seed}"
    mem.create_entities([{"name": x, "entityType": "Node"} for x in names], namespace=ns)
    rows = [(names[a], names[b], "links", w) for (a, b), w in edges.items()]
    assert len(mem.create_relations(rows, namespace=ns)) == len(edges)
    reference = igraph.Graph(n=len(names), edges=list(edges), directed=False)
    # Python floats: igraph reads numpy float32 attribute values as if unweighted.
    reference.es["weight"] = list(edges.values())
    return names, reference


def ours(mem: memcore.Memory, names: list[str], seeds: dict[str, float], ns: str) -> np.ndarray:
    scores = mem.personalized_pagerank(seeds, TELEPORT, limit=len(names), namespace=ns)
    index = {name: i for i, name in enumerate(names)}
    out = np.zeros(len(names))
    for s in scores:
        out[index[s.name]] = s.score
    return out


def igraph_ppr(reference: Any, names: list[str], seeds: dict[str, float]) -> np.ndarray:
    reset = np.zeros(len(names))
    for name, weight in seeds.items():
        reset[names.index(name)] = weight
    return np.asarray(
        reference.personalized_pagerank(
            directed=False,
            damping=1 - TELEPORT,
            reset=reset.tolist(),
            weights="weight",
            implementation="prpack",
        )
    )


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_ppr_matches_igraph_prpack(store: memcore.Memory, seed: int) -> None:
    names, reference = build(store, seed)
    rng = np.random.default_rng(seed + 100)
    linked = [str(x) for x in rng.choice(names[:-30], 6, replace=False)]
    isolated = names[-1]
    degrees = np.array(reference.degree())
    leaf = names[int(np.argmin(np.where(degrees > 0, degrees, degrees.max() + 1)))]
    seed_sets = [
        {linked[0]: 1.0},
        {leaf: 1.0},
        {linked[1]: 3.0, linked[2]: 1.0, linked[3]: 0.5},
        {linked[4]: 1.0, isolated: 1.0},  # half the reset mass sits on a dangling node
        {isolated: 1.0},
        dict.fromkeys(linked, 1.0),
    ]
    for seeds in seed_sets:
        mine = ours(store, names, seeds, f"g{seed}")
        theirs = igraph_ppr(reference, names, seeds)
        error = np.abs(mine - theirs).max()
        assert error < TOLERANCE, (seeds, error)
        assert mine.sum() == pytest.approx(1.0, abs=TOLERANCE)


def test_ppr_arguments(store: memcore.Memory) -> None:
    names, _ = build(store, 14)
    ns = "g14"
    assert store.personalized_pagerank(names[0], namespace=ns)[0].name == names[0]
    assert len(store.personalized_pagerank([names[0], names[1]], limit=5, namespace=ns)) == 5
    with pytest.raises(memcore.NotFoundError):
        store.personalized_pagerank("nobody", namespace=ns)
    for teleport in (0.0, 1.0):
        with pytest.raises(memcore.InvalidParameterError):
            store.personalized_pagerank(names[0], teleport, namespace=ns)
    with pytest.raises(memcore.InvalidParameterError):
        store.personalized_pagerank([], namespace=ns)
    assert store.personalized_pagerank(names[0], namespace=ns)[0].to_dict()["name"] == names[0]


def test_recall_ranks_a_graph_linked_memory_above_a_lexical_match(
    backend: Backend, data_dir: Path
) -> None:
    with backend.open(data_dir, model=None) as mem:
        mem.save_memory(
            [
                {
                    "name": "Zephyr",
                    "entityType": "Project",
                    "observations": ["Internal billing platform"],
                    "relations": [{"targetEntity": "Orion", "relationType": "deployed by"}],
                },
                {
                    "name": "Orion",
                    "entityType": "Service",
                    "observations": ["Deployment pipeline service"],
                    "relations": [{"targetEntity": "Zephyr", "relationType": "deploys"}],
                },
            ],
            "t1",
        )
        linked = mem.store_memory("Orion finished the rollout on Friday").id
        lexical = mem.store_memory("Weekly status update of the budget committee").id
        for i in range(5):
            mem.store_memory(f"Unrelated note number {i} about lunch")

        hits = mem.recall("Zephyr status update", limit=5)
        ranked = [h.memory.id for h in hits]
        assert ranked.index(linked) < ranked.index(lexical)
        by_id = {h.memory.id: h.scores for h in hits}
        assert by_id[linked].ppr is not None and by_id[linked].ppr > 0
        assert not by_id[linked].bm25  # no word of the query: only the graph explains it
        assert by_id[lexical].bm25 and by_id[lexical].ppr == 0

        # Without the PPR weight, the lexical match wins: the order is PPR's doing.
        plain = [h.memory.id for h in mem.recall("Zephyr status update", weights=(0.4, 0.15, 0))]
        assert linked not in plain or plain.index(lexical) < plain.index(linked)
