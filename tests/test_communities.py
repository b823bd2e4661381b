"""Communities (Leiden over the exported arrays) and the rustworkx view of the graph."""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import memcore

REPO = Path(__file__).resolve().parents[1]

GROUPS, SIZE = 4, 15


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[memcore.Memory]:
    """4 dense groups of 15 entities (60% of pairs related), 6 relations across groups,
    and one entity with no relations."""
    rng = np.random.default_rng(7)
    names = [[f"g{g}-member-{i:02d}" for i in range(SIZE)] for g in range(GROUPS)]
    rows = []
    for group in names:
        for i in range(SIZE):
            for j in range(i + 1, SIZE):
                if rng.random() < 0.6:
                    rows.append((group[i], group[j], "works with", 0.8))
    for a, b in [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2), (1, 3)]:
        rows.append((names[a][0], names[b][1], "met", 0.2))
    with memcore.Memory(tmp_path_factory.mktemp("communities") / "store", model=None) as mem:
        mem.create_entities(
            [
                {"name": n, "entityType": "Person", "importance": 0.9 if n.endswith("07") else 0.5}
                for group in names
                for n in group
            ]
            + [{"name": "Hermit", "entityType": "Person"}]
        )
        mem.create_relations(rows)
        yield mem


def test_leiden_recovers_planted_groups(planted: memcore.Memory) -> None:
    found = planted.detect_communities(seed=42)
    big = [g for g in found.groups if g.size > 1]
    assert sorted(g.size for g in big) == [SIZE] * GROUPS
    assert {frozenset(g.members) for g in big} == {
        frozenset(f"g{i}-member-{j:02d}" for j in range(SIZE)) for i in range(GROUPS)
    }
    assert found.modularity > 0.6
    assert found.sizes == [g.size for g in found.groups] == [15, 15, 15, 15, 1]
    assert [g.id for g in found.groups] == [0, 1, 2, 3, 4]
    # Members come most important first.
    assert all(g.members[0].endswith("07") for g in big)
    assert found.community_of("Hermit") == 4
    assert found.to_dict()["groups"][0]["size"] == SIZE


def test_options_of_detect_communities(planted: memcore.Memory) -> None:
    assert planted.detect_communities(seed=1, min_size=2).sizes == [SIZE] * GROUPS
    again = planted.detect_communities(seed=42)
    assert again == planted.detect_communities(seed=42)  # a seed makes it reproducible
    finer = planted.detect_communities(resolution=5.0, seed=1, min_size=2)
    assert len(finer.groups) > GROUPS
    for bad in (0, -1.0):
        with pytest.raises(memcore.InvalidParameterError):
            planted.detect_communities(resolution=bad)
    empty = planted.detect_communities(namespace="empty")
    assert (empty.groups, empty.modularity, empty.sizes) == ([], 0.0, [])


def test_weightless_ties_give_a_modularity_of_zero_not_nan(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # Modularity divides by the ties' total weight; relations of importance 0 make it 0/0,
    # which igraph reports as NaN and JSON (the MCP tool's result) cannot carry.
    with memcore.Memory(tmp_path_factory.mktemp("weightless") / "store", model=None) as mem:
        mem.create_entities([{"name": n, "entityType": "Person"} for n in ("Ann", "Bo")])
        mem.create_relations([("Ann", "Bo", "knows", 0.0)])
        found = mem.detect_communities(seed=1)
    assert found.modularity == 0.0
    assert sorted(m for g in found.groups for m in g.members) == ["Ann", "Bo"]


def test_leiden_is_part_of_the_default_install() -> None:
    """detect_communities needs no extra: its libraries are memcore's own dependencies,
    so `pip install memcore` (and the Docker image, which installs no extra) has them."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    names = {d.split(">")[0].split("=")[0].split("[")[0].strip() for d in project["dependencies"]}
    assert {"leidenalg", "python-igraph"} <= names
    assert not {"leidenalg", "python-igraph"} & {
        d.split(">")[0].strip() for d in project["optional-dependencies"]["graph"]
    }


def test_a_missing_library_says_how_to_install_it(
    planted: memcore.Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "leidenalg", None)
    with pytest.raises(ModuleNotFoundError, match="pip install memcore-engine installs"):
        planted.detect_communities()


def test_to_rustworkx_entities_and_relations(planted: memcore.Memory) -> None:
    rustworkx = pytest.importorskip("rustworkx")
    entities, relations = planted._engine.count_graph(planted.namespace)
    graph = planted.to_rustworkx(kinds=("entity",))
    assert isinstance(graph, rustworkx.PyDiGraph)
    assert (graph.num_nodes(), graph.num_edges()) == (entities, relations)
    node = graph[graph.attrs["node_of"]["g0-member-07"]]
    assert node["kind"] == "entity" and node["name"] == "g0-member-07"
    assert node["entity_type"] == "Person" and node["importance"] == pytest.approx(0.9)
    assert node["id"].startswith("ent_")
    kinds = {(e["kind"], e["relation_type"]) for e in graph.edges()}
    assert kinds == {("relation", "works with"), ("relation", "met")}
    # Any rustworkx algorithm runs on it: 4 groups joined by "met" plus the hermit.
    assert len(rustworkx.weakly_connected_components(graph)) == 2


def test_to_rustworkx_with_memories_and_mentions(tmp_path_factory: pytest.TempPathFactory) -> None:
    with memcore.Memory(tmp_path_factory.mktemp("rx") / "store", model=None) as mem:
        mem.create_entities(
            [{"name": "Ada", "entityType": "Person"}, {"name": "Atlas", "entityType": "Project"}]
        )
        mem.create_relation("Ada", "Atlas", "leads")
        both = mem.store_memory("Ada demoed Atlas to the board").id
        one = mem.store_memory("Atlas passed the security review").id
        mem.store_memory("Nothing about anyone")
        gone = mem.store_memory("Ada left early on Monday").id
        mem.invalidate(gone)

        graph = mem.to_rustworkx()
        node_of = graph.attrs["node_of"]
        assert graph.attrs["namespace"] == "default"
        # Two entities and the two valid memories that name one; three mention edges.
        assert graph.num_nodes() == 4
        assert set(node_of) == {"Ada", "Atlas", both, one}
        memory = graph[node_of[both]]
        assert memory["kind"] == "memory" and memory["content"] == "Ada demoed Atlas to the board"
        mentions = [
            (graph[u]["id"], graph[v]["name"], data["explicit"])
            for u, v, data in graph.weighted_edge_list()
            if data["kind"] == "mention"
        ]
        assert sorted(mentions) == sorted(
            [(both, "Ada", False), (both, "Atlas", False), (one, "Atlas", False)]
        )
        assert graph.num_edges() == 4
        with pytest.raises(memcore.InvalidParameterError):
            mem.to_rustworkx(kinds=("memory",))
        with pytest.raises(memcore.InvalidParameterError):
            mem.to_rustworkx(kinds=("entity", "files"))
