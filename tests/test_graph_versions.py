"""Observation versions: add_observations appends; with `supersedes` it makes version n+1,
closes the old one, and get_observation_history returns the chain oldest first."""

from __future__ import annotations

import pytest

import memcore
from backends import both_backends

pytestmark = both_backends


@pytest.fixture
def scripts(mem: memcore.Memory) -> memcore.Memory:
    mem.create_entity("Python Scripts", "CodeArtifact", ["Uses python-docx 1.1.0"])
    mem.create_entity("Portfolio", "Document", ["Total 21 records"])
    return mem


def current_id(mem: memcore.Memory, entity: str, content: str) -> str:
    return next(o.id for o in mem.get_entity(entity).observations if o.content == content)


def test_add_observations_appends_and_skips_identical_ones(scripts: memcore.Memory) -> None:
    added = scripts.add_observations(
        "python scripts", ["Uses lxml 6.0.2", "Uses python-docx 1.1.0"], thread_id="t9"
    )
    assert [o.content for o in added] == ["Uses lxml 6.0.2"]
    assert added[0].version == 1 and added[0].thread_id == "t9"
    assert added[0].entity_name == "Python Scripts" and added[0].id.startswith("obs_")
    view = scripts.get_entity("Python Scripts")
    assert view.observation_count == 2
    single = scripts.add_observations("Portfolio", "Contains 2 main tables", importance=0.9)
    assert single[0].importance == pytest.approx(0.9)


def test_supersedes_builds_a_version_chain(scripts: memcore.Memory) -> None:
    v1 = current_id(scripts, "Python Scripts", "Uses python-docx 1.1.0")
    (v2,) = scripts.add_observations("Python Scripts", "Uses python-docx 1.2.0", supersedes=v1)
    assert (v2.version, v2.supersedes, v2.superseded_by) == (2, v1, None)
    (v3,) = scripts.add_observations("Python Scripts", ["Uses python-docx 1.3.0"], supersedes=v2.id)
    assert v3.version == 3

    current = scripts.get_entity("Python Scripts").observations
    assert [o.content for o in current] == ["Uses python-docx 1.3.0"]

    for start in (v1, v2.id, v3.id):  # any version finds the whole chain
        chain = scripts.get_observation_history("python scripts", start)
        assert [(o.version, o.content) for o in chain] == [
            (1, "Uses python-docx 1.1.0"),
            (2, "Uses python-docx 1.2.0"),
            (3, "Uses python-docx 1.3.0"),
        ]
    old, mid, new = chain
    assert old.superseded_by == mid.id and mid.superseded_by == new.id
    assert not old.is_current and new.is_current
    assert old.valid_until is not None and old.valid_until == mid.valid_from
    assert new.valid_until is None
    assert old.timestamp <= mid.timestamp <= new.timestamp
    assert chain[0].to_dict()["superseded_by"] == mid.id


def test_a_superseded_observation_cannot_be_superseded_again(scripts: memcore.Memory) -> None:
    v1 = current_id(scripts, "Python Scripts", "Uses python-docx 1.1.0")
    scripts.add_observations("Python Scripts", "Uses python-docx 1.2.0", supersedes=v1)
    with pytest.raises(memcore.NotFoundError):
        scripts.add_observations("Python Scripts", "Uses python-docx 9.9.9", supersedes=v1)


def test_supersedes_takes_exactly_one_observation(scripts: memcore.Memory) -> None:
    v1 = current_id(scripts, "Python Scripts", "Uses python-docx 1.1.0")
    with pytest.raises(memcore.InvalidParameterError):
        scripts.add_observations("Python Scripts", ["Uses A 1.0", "Uses B 2.0"], supersedes=v1)


def test_history_is_scoped_to_the_entity(scripts: memcore.Memory) -> None:
    v1 = current_id(scripts, "Python Scripts", "Uses python-docx 1.1.0")
    with pytest.raises(memcore.NotFoundError):
        scripts.get_observation_history("Portfolio", v1)
    with pytest.raises(memcore.NotFoundError):
        scripts.get_observation_history("Python Scripts", "obs_missing")
    assert len(scripts.get_observation_history("Python Scripts", v1)) == 1


def test_new_observations_follow_the_rules(scripts: memcore.Memory) -> None:
    with pytest.raises(memcore.ValidationFailedError) as info:
        scripts.add_observations("Portfolio", ["x" * 151])
    assert info.value.details["problems"][0]["problem"] == (
        "Observation too long (151 chars). Max 150. Split into multiple observations."
    )
    with pytest.raises(memcore.NotFoundError):
        scripts.add_observations("Nobody", ["A valid fact"])
    with pytest.raises(memcore.InvalidParameterError):
        scripts.add_observations("Portfolio", [42])  # type: ignore[list-item]


def test_superseded_versions_leave_search(scripts: memcore.Memory) -> None:
    v1 = current_id(scripts, "Python Scripts", "Uses python-docx 1.1.0")
    scripts.add_observations("Python Scripts", "Depends on openpyxl 3.1", supersedes=v1)
    hits = scripts.search_nodes("python-docx")
    assert all("python-docx" not in o.content for h in hits for o in h.view.observations)
    assert [h.name for h in scripts.search_nodes("openpyxl")] == ["Python Scripts"]
