"""save_memory, the knowledge-graph contract (docs/guide.md): every validation rule
in the contract's wording, warnings, quality_score, atomicity, and extending existing
entities instead of duplicating them."""

from __future__ import annotations

from typing import Any

import pytest

import memcore
from backends import both_backends

pytestmark = both_backends

SEED_LONG = (
    "This is a very long observation that contains multiple facts and exceeds the maximum "
    "allowed length of 150 characters which will cause validation to fail"
)


def entity(
    name: str,
    observations: list[str] | None = None,
    relations: list[dict[str, Any]] | None = None,
    entity_type: str = "Person",
    **extra: Any,
) -> dict[str, Any]:
    return {
        "name": name,
        "entityType": entity_type,
        "observations": ["A fact about it"] if observations is None else observations,
        "relations": [] if relations is None else relations,
        **extra,
    }


def rel(target: str, kind: str = "related to", **extra: Any) -> dict[str, Any]:
    return {"targetEntity": target, "relationType": kind, **extra}


def seed_valid_request() -> list[dict[str, Any]]:
    """The contract's valid three-entity request (Portfolio's type lower-cased for a warning)."""
    return [
        entity(
            "Andrii",
            ["Works at Google", "Author of MCP Memory Server", "Uses Windows"],
            [rel("Python Scripts", "created"), rel("Portfolio", "updates for")],
            importance=1.0,
        ),
        entity(
            "Python Scripts",
            ["update_portfolio.py is main script", "Uses python-docx 1.2.0", "Uses lxml 6.0.2"],
            [rel("Andrii", "created by"), rel("Portfolio", "modifies")],
            entity_type="CodeArtifact",
            importance=0.6,
        ),
        entity(
            "Portfolio",
            [
                "Final file: shevchenko-viktoria-yevgenivna-v4.docx",
                "Contains 2 main tables",
                "Total 21 records",
            ],
            [rel("Python Scripts", "modified by"), rel("Andrii", "updated by")],
            entity_type="document",
            importance=0.9,
        ),
    ]


def rejection(mem: memcore.Memory, entities: list[dict[str, Any]], thread: str = "test") -> Any:
    """The ValidationFailedError a request raises; asserts that nothing was written."""
    before = mem._engine.count_graph(mem.namespace)
    with pytest.raises(memcore.ValidationFailedError) as info:
        mem.save_memory(entities, thread)
    assert mem._engine.count_graph(mem.namespace) == before
    assert type(info.value).code == "VALIDATION_FAILED"
    return info.value


def problems(error: Any) -> list[str]:
    return [p["problem"] for p in error.details["problems"]]


# -- the contract's requests --------------------------------------------------------------------


def test_the_seed_valid_request(mem: memcore.Memory) -> None:
    result = mem.save_memory(seed_valid_request(), "portfolio-update-2026")
    assert result.to_dict() == {
        "success": True,
        "created": {"entities": 3, "relations": 6, "observations": 9},
        "updated": {"entities": 0},
        "warnings": [
            "Entity 'Portfolio': entityType 'document' starts with a lowercase letter; saved as "
            "'Document'. Convention: start types with a capital letter."
        ],
        "quality_score": 1.0,
    }
    portfolio = mem.get_entity("portfolio")
    assert portfolio.entity.entity_type == "Document"
    assert portfolio.entity.importance == pytest.approx(0.9)
    assert portfolio.entity.thread_id == "portfolio-update-2026"
    assert portfolio.observation_count == 3
    assert {(r.from_name, r.to_name, r.relation_type) for r in portfolio.relations} >= {
        ("Portfolio", "Python Scripts", "modified by"),
        ("Andrii", "Portfolio", "updates for"),
    }
    docx = mem.get_entity("Python Scripts").observations
    assert "Uses python-docx 1.2.0" in [o.content for o in docx]  # dots in versions are no breaks


def test_the_seed_too_long_request(mem: memcore.Memory) -> None:
    # The contract's comment says 165 chars; its string is really 153, and the count is the truth.
    assert len(SEED_LONG) == 153
    request = [entity("Test", [SEED_LONG], [rel("Other", "related")], entity_type="Example")]
    error = rejection(mem, request)
    assert str(error).startswith(
        "Validation failed: Observation too long (153 chars). Max 150. Split into multiple "
        "observations. (entity 'Test')."
    )
    assert str(error).endswith("Nothing was saved.")
    first = error.details["problems"][0]
    assert first == {
        "entity": "Test",
        "value": SEED_LONG,
        "problem": "Observation too long (153 chars). Max 150. Split into multiple observations.",
        "suggestion": first["suggestion"],
    }
    assert first["suggestion"]
    # The same request also names a target that exists nowhere.
    assert "Target entity 'Other' not found in request" in problems(error)
    assert "and 1 more problem(s); see details." in str(error)


def test_an_observation_of_165_chars(mem: memcore.Memory) -> None:
    long = ("Stores every build artefact in the shared bucket " * 4)[:165]
    assert len(long) == 165
    error = rejection(mem, [entity("A", [long], [rel("B")]), entity("B", relations=[rel("A")])])
    assert problems(error) == [
        "Observation too long (165 chars). Max 150. Split into multiple observations."
    ]


def test_the_seed_no_relations_request(mem: memcore.Memory) -> None:
    error = rejection(mem, [entity("Isolated Entity", ["Some fact"], [], entity_type="Test")])
    assert error.details["problems"] == [
        {
            "entity": "Isolated Entity",
            "value": None,
            "problem": "Entity 'Isolated Entity' must have at least 1 relation",
            "suggestion": "Add relations to show connections, e.g. { targetEntity: 'Portfolio', "
            "relationType: 'updates' }.",
        }
    ]


def test_the_seed_unknown_target_request(mem: memcore.Memory) -> None:
    error = rejection(mem, [entity("Andrii", ["Works at Google"], [rel("NonExistent", "created")])])
    (problem,) = error.details["problems"]
    assert problem["problem"] == "Target entity 'NonExistent' not found in request"
    assert problem["entity"] == "Andrii"
    assert problem["value"] == {"targetEntity": "NonExistent", "relationType": "created"}
    assert "same save_memory call" in problem["suggestion"]


# -- every other rule ---------------------------------------------------------------------------

PAIR = [rel("Partner")]


@pytest.mark.parametrize(
    ("request_entities", "message"),
    [
        ([entity("", relations=PAIR)], "Entity name is empty."),
        ([entity("   ", relations=PAIR)], "Entity name is empty."),
        ([entity("N" * 101, relations=PAIR)], "Entity name too long (101 chars). Max 100."),
        ([entity("Tab\tName", relations=PAIR)], "Entity name contains control characters."),
        ([entity("X", relations=PAIR, entity_type="")], "entityType is empty."),
        (
            [entity("X", relations=PAIR, entity_type="T" * 51)],
            "entityType too long (51 chars). Max 50.",
        ),
        ([entity("X", [], PAIR)], "Entity 'X' must have at least 1 observation"),
        (
            [entity("X", ["Tiny"], PAIR)],
            "Observation too short (4 chars). Min 5. Write one complete fact.",
        ),
        (
            [entity("X", ["Likes tea. Hates coffee. Owns a cat."], PAIR)],
            "Too many sentences (3). Max 2. One fact per observation.",
        ),
        ([entity("X", relations=[rel("")])], "Relation targetEntity is empty."),
        ([entity("X", relations=[rel("x")])], "Entity 'X' cannot relate to itself."),
        ([entity("X", relations=[rel("Partner", "")])], "relationType is empty."),
        (
            [entity("X", relations=[rel("Partner", "r" * 51)])],
            "relationType too long (51 chars). Max 50.",
        ),
        (
            [entity("X", relations=[rel("Partner", importance=1.5)])],
            "importance must be between 0 and 1, got 1.5.",
        ),
        (
            [entity("X", relations=PAIR, confidence=-0.1)],
            "confidence must be between 0 and 1, got -0.1.",
        ),
        ([entity("X", relations=PAIR, importance=2)], "importance must be between 0 and 1, got 2."),
        (
            [entity("X", relations=PAIR), entity("x", relations=PAIR)],
            "Entity 'x' appears more than once in the request.",
        ),
        ([], "No entities given."),
    ],
)
def test_each_rule_rejects_with_its_message(
    mem: memcore.Memory, request_entities: list[dict[str, Any]], message: str
) -> None:
    mem.create_entity("Partner", "Person", ["Exists before the request"])
    error = rejection(mem, request_entities)
    assert message in problems(error)
    assert all(p["suggestion"] for p in error.details["problems"])


def test_an_empty_thread_is_rejected(mem: memcore.Memory) -> None:
    error = rejection(mem, seed_valid_request(), thread="  ")
    assert problems(error) == ["threadId is empty."]


def test_every_problem_is_reported_at_once(mem: memcore.Memory) -> None:
    error = rejection(
        mem,
        [
            entity("A", ["No"], []),
            entity("B", [SEED_LONG], [rel("Ghost")]),
        ],
    )
    assert [(p["entity"], p["problem"]) for p in error.details["problems"]] == [
        ("A", "Observation too short (2 chars). Min 5. Write one complete fact."),
        ("A", "Entity 'A' must have at least 1 relation"),
        ("B", "Observation too long (153 chars). Max 150. Split into multiple observations."),
        ("B", "Target entity 'Ghost' not found in request"),
    ]
    assert "…and 3 more problem(s)" in str(error)


def test_malformed_requests_are_invalid_parameters(mem: memcore.Memory) -> None:
    with pytest.raises(memcore.InvalidParameterError) as info:
        mem.save_memory([{"name": "No type", "observations": [], "relations": []}], "t")
    assert info.value.details == {"field": "entities[0]"}
    with pytest.raises(memcore.InvalidParameterError):
        mem.save_memory({"name": "not a list"}, "t")  # type: ignore[arg-type]
    with pytest.raises(memcore.InvalidParameterError):
        mem.save_memory(seed_valid_request(), None)  # type: ignore[arg-type]


# -- warnings and quality -----------------------------------------------------------------------


def test_spaced_types_warn_with_a_suggestion(mem: memcore.Memory) -> None:
    result = mem.save_memory(
        [
            entity("Key", relations=[rel("Vault", "stored in")], entity_type="API Key"),
            entity("Vault", relations=[rel("Key", "stores")], entity_type="Service"),
        ],
        "t",
    )
    assert result.warnings == [
        "Entity 'Key': entityType 'API Key' contains spaces; consider 'ApiKey'."
    ]
    assert mem.get_entity("Key").entity.entity_type == "API Key"


def test_a_near_miss_of_a_known_type_suggests_it(mem: memcore.Memory) -> None:
    mem.save_memory(
        [
            entity("Ann", relations=[rel("Atlas", "leads")]),
            entity("Atlas", relations=[rel("Ann", "led by")], entity_type="Projekt Plan"),
        ],
        "t",
    )
    result = mem.save_memory(
        [
            entity("Bob", relations=[rel("Ann", "knows")], entity_type="Persn"),
            entity("Cleo", relations=[rel("Ann", "knows")], entity_type="Recipe"),
        ],
        "t",
    )
    assert result.warnings == [
        "Entity 'Bob': entityType 'Persn' looks like 'Person', a type this memory already "
        "uses or a common one; use 'Person' to keep one kind of thing under one type."
    ]
    # A warning only: types are free text.
    assert mem.get_entity("Bob").entity.entity_type == "Persn"


def test_quality_score_follows_the_formula(mem: memcore.Memory) -> None:
    # Every entity has a relation (share 1.0), 1 relation each on average (mean/2 = 0.5).
    result = mem.save_memory(
        [entity("A", relations=[rel("B")]), entity("B", relations=[rel("A")])], "t"
    )
    assert result.quality_score == pytest.approx(0.5 * 1.0 + 0.5 * 0.5)


# -- atomicity and extension --------------------------------------------------------------------


def test_a_failing_entity_leaves_nothing(mem: memcore.Memory) -> None:
    request = seed_valid_request()
    request.append(entity("Broken", ["x"], [rel("Andrii")]))
    rejection(mem, request)
    assert mem.read_graph().entities == []
    assert mem.search_nodes("Google") == []
    assert mem.query_nodes() == []


def test_a_failed_extension_leaves_the_stored_entity_unchanged(mem: memcore.Memory) -> None:
    mem.save_memory(seed_valid_request(), "t1")
    before = mem.get_entity("Andrii").to_dict()
    rejection(
        mem,
        [
            entity("Andrii", ["Moved to Berlin"], [rel("Berlin", "lives in")]),
            entity("Berlin", ["Capital of Germany"], [rel("Nowhere")]),
        ],
    )
    assert mem.get_entity("Andrii").to_dict() == before
    with pytest.raises(memcore.NotFoundError):
        mem.get_entity("Berlin")


def test_saving_an_existing_entity_appends(mem: memcore.Memory) -> None:
    mem.save_memory(seed_valid_request(), "t1")
    result = mem.save_memory(
        [
            entity(
                "ANDRII",
                ["Works at Google", "Speaks Ukrainian"],
                [rel("portfolio", "updates for"), rel("Kyiv", "lives in")],
                importance=0.8,
            ),
            entity("Kyiv", ["Capital of Ukraine"], [rel("Andrii", "home of")], entity_type="City"),
        ],
        "t2",
    )
    assert (result.entities_created, result.entities_updated) == (1, 1)
    # The repeated observation and the repeated relation are not duplicated.
    assert result.observations_created == 2
    assert result.relations_created == 2
    andrii = mem.get_entity("andrii")
    assert andrii.entity.name == "Andrii"
    assert andrii.entity.importance == pytest.approx(0.8)
    assert [o.content for o in andrii.observations].count("Works at Google") == 1
    assert "Speaks Ukrainian" in [o.content for o in andrii.observations]
    assert mem.read_graph().total_entities == 4


def test_targets_may_already_exist_in_the_namespace_only(mem: memcore.Memory) -> None:
    mem.save_memory(seed_valid_request(), "t1")
    ok = mem.save_memory([entity("Laptop", relations=[rel("andrii", "owned by")])], "t3")
    assert ok.entities_created == 1
    with pytest.raises(memcore.ValidationFailedError) as info:
        mem.save_memory([entity("Phone", relations=[rel("Andrii")])], "t3", namespace="other")
    assert problems(info.value) == ["Target entity 'Andrii' not found in request"]


def test_a_different_type_for_an_existing_entity_is_kept_with_a_warning(
    mem: memcore.Memory,
) -> None:
    mem.save_memory(seed_valid_request(), "t1")
    result = mem.save_memory(
        [entity("Andrii", relations=[rel("Portfolio")], entity_type="Bot")], "t"
    )
    assert result.warnings == [
        "Entity 'Andrii' already exists with entityType 'Person'; kept it (not 'Bot')."
    ]
    assert mem.get_entity("Andrii").entity.entity_type == "Person"


def test_the_caller_s_dicts_are_not_modified(mem: memcore.Memory) -> None:
    request = seed_valid_request()
    snapshot = [dict(e) for e in request]
    mem.save_memory(request, "t")
    assert request == snapshot
