"""get_analytics: the contract's four lists with its field names, per thread."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import memcore
from backends import both_backends, sqlite_only
from test_graph_save import entity, rel, seed_valid_request

pytestmark = both_backends


@pytest.fixture
def graph(mem: memcore.Memory) -> memcore.Memory:
    mem.save_memory(seed_valid_request(), "t1")
    mem.create_entity("Lonely", "Concept", ["Nobody links here"], importance=0.95, thread_id="t1")
    mem.save_memory([entity("Visitor", relations=[rel("Andrii", "met")])], "t2")
    # Extending an entity later makes it the most recent change, as an update.
    mem.save_memory([entity("Python Scripts", ["Runs nightly on CI"], [rel("Andrii")])], "t9")
    return mem


def test_the_four_lists_of_a_thread(graph: memcore.Memory) -> None:
    report = graph.get_analytics("t1")
    assert [(c.entity_name, c.change_type) for c in report.recent_changes][:1] == [
        ("Python Scripts", "updated")
    ]
    assert {c.entity_name for c in report.recent_changes} == {
        "Andrii",
        "Python Scripts",
        "Portfolio",
        "Lonely",
    }
    assert [c.change_type for c in report.recent_changes[1:]] == ["created"] * 3
    modified = [c.last_modified for c in report.recent_changes]
    assert modified == sorted(modified, reverse=True)

    assert [(e.entity_name, e.importance, e.observation_count) for e in report.top_important] == [
        ("Andrii", 1.0, 3),
        ("Lonely", 0.95, 1),
        ("Portfolio", 0.9, 3),
        ("Python Scripts", 0.6, 4),
    ]

    connected = {c.entity_name: c for c in report.most_connected}
    assert "Lonely" not in connected
    andrii = report.most_connected[0]
    # Andrii: 2 out, 2 in from the request, 1 from Visitor, 1 more from Python Scripts.
    assert (andrii.entity_name, andrii.relation_count) == ("Andrii", 6)
    assert set(andrii.connected_to) == {"Python Scripts", "Portfolio", "Visitor"}
    assert connected["Portfolio"].relation_count == 4

    assert [(o.entity_name, o.entity_type, o.reason) for o in report.orphaned_entities] == [
        ("Lonely", "Concept", "no_relations")
    ]


def test_the_wire_form_uses_the_seed_field_names(graph: memcore.Memory) -> None:
    data = graph.get_analytics("t1").to_dict()
    assert set(data) == {
        "recent_changes",
        "top_important",
        "most_connected",
        "orphaned_entities",
        "quality",
        "store_quality",
    }
    assert set(data["recent_changes"][0]) == {
        "entityName",
        "entityType",
        "lastModified",
        "changeType",
    }
    assert data["recent_changes"][0]["lastModified"].endswith("Z")
    assert set(data["top_important"][0]) == {
        "entityName",
        "entityType",
        "importance",
        "observationCount",
    }
    assert set(data["most_connected"][0]) == {
        "entityName",
        "entityType",
        "relationCount",
        "connectedTo",
    }
    assert data["orphaned_entities"] == [
        {"entityName": "Lonely", "entityType": "Concept", "reason": "no_relations"}
    ]


def test_other_threads_and_the_whole_namespace(graph: memcore.Memory) -> None:
    visitor = graph.get_analytics("t2")
    assert [c.entity_name for c in visitor.recent_changes] == ["Visitor"]
    assert visitor.orphaned_entities == []
    everything = graph.get_analytics()
    assert len(everything.recent_changes) == 5
    assert len(graph.get_analytics(limit=2).top_important) == 2
    empty = graph.get_analytics("no-such-thread")
    assert {k: v for k, v in empty.to_dict().items() if "quality" not in k} == {
        "recent_changes": [],
        "top_important": [],
        "most_connected": [],
        "orphaned_entities": [],
    }
    assert (empty.quality.entities, empty.quality.relation_coverage) == (0, 0.0)
    assert everything.store_quality is None, "the namespace is the scope already"


def test_deleting_the_only_partner_orphans_an_entity(graph: memcore.Memory) -> None:
    graph.delete_entities(["Andrii"])
    orphans = {o.entity_name: o.reason for o in graph.get_analytics("t2").orphaned_entities}
    assert orphans == {"Visitor": "no_relations"}
    with pytest.raises(memcore.InvalidParameterError):
        graph.get_analytics(limit=0)


def test_success_metrics_per_thread_and_store_wide(graph: memcore.Memory) -> None:
    """The seed's success metrics: relation coverage, observation atomicity, mean
    relations per entity and save_memory's error rate; entities made without a relation
    (the legacy tools, the importer) count against the coverage and are listed."""
    graph.create_entities([{"name": "Imported", "entityType": "Person"}])
    with pytest.raises(memcore.ValidationFailedError):
        graph.save_memory([entity("Nobody", relations=[])], "t1")
    thread = graph.get_analytics("t1").quality
    # t1: Andrii, Python Scripts, Portfolio (related) and Lonely (no relation).
    assert (thread.entities, thread.entities_with_relations) == (4, 3)
    assert thread.relation_coverage == 0.75
    # Relations that hold, counted at each end: Andrii 6, Python Scripts 5, Portfolio 4.
    assert thread.mean_relations_per_entity == (6 + 5 + 4 + 0) / 4
    assert thread.observations == 11 and thread.observation_atomicity == 1.0
    assert (thread.save_calls, thread.save_error_rate) == (4, 0.25)
    store = graph.get_analytics("t1").store_quality
    assert store is not None
    assert (store.entities, store.entities_with_relations) == (6, 4)
    orphans = {o.entity_name for o in graph.get_analytics(limit=50).orphaned_entities}
    assert orphans == {"Lonely", "Imported"}


@sqlite_only("the test edits the SQLite file of a closed store")
def test_observations_outside_the_rules_lower_the_atomicity(data_dir: Path) -> None:
    # Every write path validates observations now; a store written before the rules (or
    # by another tool) may still hold ones that break them.
    with memcore.Memory(data_dir, model=None) as mem:
        mem.create_entities([{"name": "Old", "entityType": "Thing"}])
        mem.add_observations("Old", ["An old fact", "Another old fact"])
    db = sqlite3.connect(data_dir / "memcore.db")
    with db:
        db.execute(
            "UPDATE observations SET content = 'First. Second. Third sentence.' "
            "WHERE content = 'An old fact'"
        )
    db.close()
    with memcore.Memory(data_dir, model=None) as mem:
        quality = mem.get_analytics().quality
    assert (quality.observations, quality.atomic_observations) == (2, 1)
    assert quality.observation_atomicity == 0.5
