"""Traversal and the reference server's operations on a known graph: Cleo -knows-> Ada
-knows-> Bob -works on-> Atlas -uses-> Rust, and Dora with no relations."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import memcore
from backends import both_backends

pytestmark = both_backends


@pytest.fixture
def graph(mem: memcore.Memory) -> memcore.Memory:
    mem.create_entities(
        [
            {"name": "Ada", "entityType": "Person", "observations": ["Writes compilers"]},
            {"name": "Bob", "entityType": "Person", "importance": 0.9},
            {"name": "Cleo", "entityType": "Person", "importance": 0.2},
            {"name": "Atlas", "entityType": "Project", "observations": ["Started in 2024"]},
            {"name": "Rust", "entityType": "Language"},
        ],
        thread_id="t-people",
    )
    mem.create_entity("Dora", "Person", ["Has no friends here"], thread_id="t-alone")
    mem.create_relations(
        [
            {"from": "Cleo", "to": "Ada", "relationType": "knows"},
            ("Ada", "Bob", "knows"),
            ("Bob", "Atlas", "works on", 0.9),
            {"from": "Atlas", "to": "Rust", "relationType": "uses", "importance": 0.4},
        ]
    )
    return mem


def names(found: list[memcore.RelatedEntity]) -> list[tuple[str, int]]:
    return [(r.name, r.depth) for r in found]


def test_get_related_by_depth_and_direction(graph: memcore.Memory) -> None:
    assert names(graph.get_related("Ada", depth=1, direction="out")) == [("Bob", 1)]
    assert names(graph.get_related("ada", depth=1, direction="in")) == [("Cleo", 1)]
    assert sorted(names(graph.get_related("Ada", depth=1))) == [("Bob", 1), ("Cleo", 1)]
    both = names(graph.get_related("Ada"))
    assert sorted(both) == [("Atlas", 2), ("Bob", 1), ("Cleo", 1)]
    assert [d for _, d in both] == sorted(d for _, d in both)  # nearest first
    assert names(graph.get_related("Ada", depth=3, direction="out")) == [
        ("Bob", 1),
        ("Atlas", 2),
        ("Rust", 3),
    ]
    assert graph.get_related("Dora") == []


def test_get_related_reports_the_way_it_came(graph: memcore.Memory) -> None:
    rust = graph.get_related("Bob", depth=2, direction="out")[-1]
    assert (rust.name, rust.parent, rust.via.relation_type) == ("Rust", "Atlas", "uses")
    assert (rust.via.from_name, rust.via.to_name) == ("Atlas", "Rust")
    assert rust.via.importance == pytest.approx(0.4)
    data = rust.to_dict()
    assert data["name"] == "Rust" and data["via"]["from"] == "Atlas" and data["depth"] == 2


def test_get_related_filters_by_relation_type_and_time(graph: memcore.Memory) -> None:
    assert sorted(names(graph.get_related("Ada", depth=5, relation_type="knows"))) == [
        ("Bob", 1),
        ("Cleo", 1),
    ]
    before = datetime.now(UTC) - timedelta(days=1)
    assert graph.get_related("Ada", as_of=before) == []
    assert len(graph.get_related("Ada", as_of=datetime.now(UTC) + timedelta(seconds=1))) == 3
    assert len(graph.get_related("Ada", depth=5, limit=2)) == 2


def test_get_related_rejects_bad_arguments(graph: memcore.Memory) -> None:
    with pytest.raises(memcore.NotFoundError):
        graph.get_related("Nobody")
    for depth in (0, 6):
        with pytest.raises(memcore.InvalidParameterError):
            graph.get_related("Ada", depth=depth)
    with pytest.raises(memcore.InvalidParameterError):
        graph.get_related("Ada", direction="sideways")


def test_find_relation_path_with_relation_types(graph: memcore.Memory) -> None:
    path = graph.find_relation_path("Cleo", "Rust")
    assert path.found and path.length == 4
    assert path.entities == ["Cleo", "Ada", "Bob", "Atlas", "Rust"]
    assert path.relation_types == ["knows", "knows", "works on", "uses"]
    back = graph.find_relation_path("rust", "cleo")  # walks relations against their direction
    assert back.entities == ["Rust", "Atlas", "Bob", "Ada", "Cleo"]
    assert back.relation_types == ["uses", "works on", "knows", "knows"]
    assert back.to_dict()["relations"][0]["from"] == "Atlas"


def test_find_relation_path_limits_and_misses(graph: memcore.Memory) -> None:
    assert not graph.find_relation_path("Cleo", "Rust", max_depth=3).found
    none = graph.find_relation_path("Ada", "Dora")
    assert (none.found, none.entities, none.relations) == (False, [], [])
    assert none.to_dict()["found"] is False
    itself = graph.find_relation_path("Ada", "ada")
    assert (itself.found, itself.entities, itself.length) == (True, ["Ada"], 0)
    with pytest.raises(memcore.NotFoundError):
        graph.find_relation_path("Ada", "Nobody")


def test_read_graph_pages_and_summary(graph: memcore.Memory) -> None:
    first = graph.read_graph(limit=2)
    assert [e.name for e in first.entities] == ["Ada", "Bob"]  # oldest first
    assert (first.total_entities, first.total_relations) == (6, 4)
    assert [(r.from_name, r.to_name) for r in first.relations] == [("Ada", "Bob")]
    assert first.next_offset == 2
    seen = [e.name for e in first.entities]
    page = first
    while page.next_offset is not None:
        page = graph.read_graph(limit=2, offset=page.next_offset)
        seen += [e.name for e in page.entities]
    assert seen == ["Ada", "Bob", "Cleo", "Atlas", "Rust", "Dora"]
    assert graph.read_graph(offset=10).entities == []

    full = graph.read_graph(limit=1)
    assert [o.content for o in full.entities[0].observations] == ["Writes compilers"]
    summary = graph.read_graph(limit=1, summary=True)
    assert summary.entities[0].observations == []
    assert summary.entities[0].observation_count == 1
    assert summary.to_dict()["summary"] is True
    with pytest.raises(memcore.InvalidParameterError):
        graph.read_graph(limit=0)
    with pytest.raises(memcore.InvalidParameterError):
        graph.read_graph(offset=-1)


def test_open_nodes_returns_the_relations_among_them(graph: memcore.Memory) -> None:
    view = graph.open_nodes(["ada", "Bob", "Atlas", "missing", "ADA"])
    assert [e.name for e in view.entities] == ["Ada", "Bob", "Atlas"]
    assert sorted(r.relation_type for r in view.relations) == ["knows", "works on"]
    assert view.entities[0].observations[0].content == "Writes compilers"
    assert graph.open_nodes([]).entities == []


def test_query_nodes_by_type_importance_and_thread(graph: memcore.Memory) -> None:
    people = graph.query_nodes(entity_type="Person")
    assert [e.name for e in people][:1] == ["Bob"]  # most important first
    assert {e.name for e in people} == {"Ada", "Bob", "Cleo", "Dora"}
    assert [e.name for e in graph.query_nodes(min_importance=0.8)] == ["Bob"]
    assert [e.name for e in graph.query_nodes(thread_id="t-alone")] == ["Dora"]
    assert len(graph.query_nodes(limit=2)) == 2
    assert graph.query_nodes(entity_type="Person")[0].observation_count == 0


def test_reference_creates_skip_what_exists(graph: memcore.Memory) -> None:
    assert graph.create_entity("ada", "Robot") is None
    assert graph.get_entity("Ada").entity.entity_type == "Person"
    created = graph.create_entities(
        [{"name": "Bob", "entityType": "Person"}, {"name": "Eve", "entityType": "person"}]
    )
    assert [(e.name, e.entity_type) for e in created] == [("Eve", "Person")]
    assert graph.create_relation("Ada", "Bob", "knows") is None
    new = graph.create_relation("Eve", "Ada", "admires", importance=0.3)
    assert new is not None and (new.from_name, new.to_name, new.importance) == ("Eve", "Ada", 0.3)
    with pytest.raises(memcore.NotFoundError):
        graph.create_relation("Eve", "Nobody", "knows")
    with pytest.raises(memcore.InvalidParameterError):
        graph.create_relation("Eve", "eve", "mirrors")
    with pytest.raises(memcore.InvalidParameterError):
        graph.create_relations([("Eve", "Ada")])


def test_delete_observations_by_id_or_content(graph: memcore.Memory) -> None:
    graph.add_observations("Ada", ["Likes chess", "Lives in London"])
    ids = {o.content: o.id for o in graph.get_entity("Ada").observations}
    deleted = graph.delete_observations("Ada", [ids["Likes chess"], "Lives in London", "nope"])
    assert deleted == 2
    assert [o.content for o in graph.get_entity("Ada").observations] == ["Writes compilers"]
    with pytest.raises(memcore.NotFoundError):
        graph.delete_observations("Nobody", ["x"])


def test_delete_relations(graph: memcore.Memory) -> None:
    removed = graph.delete_relations(
        [{"from": "Ada", "to": "Bob", "relationType": "knows"}, ("Ada", "Bob", "hates")]
    )
    assert removed == 1
    assert not graph.find_relation_path("Ada", "Bob").found
    assert graph.read_graph().total_relations == 3


def test_delete_entities_cascades(graph: memcore.Memory) -> None:
    graph.store_memory("Bob presented Atlas at the meetup")
    assert len(graph._engine.mentions(graph.namespace)) == 2
    assert graph.delete_entities(["bob", "Nobody"]) == ["Bob"]
    with pytest.raises(memcore.NotFoundError):
        graph.get_entity("Bob")
    assert graph.read_graph().total_relations == 2  # Cleo-Ada and Atlas-Rust remain
    assert names(graph.get_related("Ada", depth=5)) == [("Cleo", 1)]
    assert not graph.find_relation_path("Cleo", "Rust").found
    assert len(graph._engine.mentions(graph.namespace)) == 1  # only Atlas is still named
    assert all(h.name != "Bob" for h in graph.search_nodes("Bob"))


def test_namespaces_do_not_share_a_graph(graph: memcore.Memory) -> None:
    assert graph.read_graph(namespace="other").total_entities == 0
    with pytest.raises(memcore.NotFoundError):
        graph.get_related("Ada", namespace="other")
    graph.create_entity("Ada", "Robot", namespace="other")
    assert graph.get_entity("Ada", namespace="other").entity.entity_type == "Robot"
    assert graph.get_entity("Ada").entity.entity_type == "Person"
