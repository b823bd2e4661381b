"""The graph and legacy tool groups over stdio: save_memory's contract (the contract's valid
request and its three invalid ones, with nothing written), observation versions,
traversal, analytics and communities, and the reference server's nine tools on the same
storage. One text-only server serves the module; every test uses its own entity names."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from test_mcp_support import LEGACY_TOOLS, SyncClient, server_env, stdio_server

SEED_THREAD = "portfolio-update-2026"
SEED_VALID = {
    "entities": [
        {
            "name": "Andrii",
            "entityType": "Person",
            "observations": ["Works at Google", "Author of MCP Memory Server", "Uses Windows"],
            "relations": [
                {"targetEntity": "Python Scripts", "relationType": "created"},
                {"targetEntity": "Portfolio", "relationType": "updates for"},
            ],
            "importance": 1.0,
        },
        {
            "name": "Python Scripts",
            "entityType": "CodeArtifact",
            "observations": [
                "update_portfolio.py is main script",
                "Uses python-docx 1.2.0",
                "Uses lxml 6.0.2",
            ],
            "relations": [
                {"targetEntity": "Andrii", "relationType": "created by"},
                {"targetEntity": "Portfolio", "relationType": "modifies"},
            ],
            "importance": 0.6,
        },
        {
            "name": "Portfolio",
            "entityType": "Document",
            "observations": [
                "Final file: shevchenko-viktoria-yevgenivna-v4.docx",
                "Contains 2 main tables",
                "Total 21 records",
            ],
            "relations": [
                {"targetEntity": "Python Scripts", "relationType": "modified by"},
                {"targetEntity": "Andrii", "relationType": "updated by"},
            ],
            "importance": 0.9,
        },
    ],
    "threadId": SEED_THREAD,
}
TOO_LONG = (
    "This is a very long observation that contains multiple facts and exceeds the maximum "
    "allowed length of 150 characters which will cause validation to fail"
)
SEED_INVALID = [
    pytest.param(
        {
            "name": "Test",
            "entityType": "Example",
            "observations": [TOO_LONG],
            "relations": [{"targetEntity": "Other", "relationType": "related"}],
        },
        f"Observation too long ({len(TOO_LONG)} chars). Max 150. Split into multiple observations.",
        TOO_LONG,
        id="too-long",
    ),
    pytest.param(
        {
            "name": "Isolated Entity",
            "entityType": "Test",
            "observations": ["Some fact"],
            "relations": [],
        },
        "Entity 'Isolated Entity' must have at least 1 relation",
        None,
        id="no-relations",
    ),
    pytest.param(
        {
            "name": "Andrii Invalid",
            "entityType": "Person",
            "observations": ["Works at Google"],
            "relations": [{"targetEntity": "NonExistent", "relationType": "created"}],
        },
        "Target entity 'NonExistent' not found in request",
        {"targetEntity": "NonExistent", "relationType": "created"},
        id="unknown-target",
    ),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SyncClient]:
    home = tmp_path_factory.mktemp("mcp-graph")
    args = ["--data-dir", str(home / "store"), "--model", "none", "--tools", "all"]
    with stdio_server(args, server_env(home), home / "server.log") as client:
        client.ok("save_memory", SEED_VALID)
        yield client


def _pair(a: str, b: str, thread: str = "t") -> dict[str, Any]:
    """A save_memory request of two entities related both ways."""
    return {
        "entities": [
            {
                "name": a,
                "entityType": "Person",
                "observations": [f"{a} writes Rust"],
                "relations": [{"targetEntity": b, "relationType": "knows"}],
            },
            {
                "name": b,
                "entityType": "Person",
                "observations": [f"{b} writes Go"],
                "relations": [{"targetEntity": a, "relationType": "knows"}],
            },
        ],
        "threadId": thread,
    }


# -- save_memory --------------------------------------------------------------------------------


def test_the_seeds_valid_request_scores_one(tmp_path: Path) -> None:
    home = tmp_path
    args = ["--data-dir", str(home / "store"), "--model", "none", "--tools", "graph,legacy"]
    with stdio_server(args, server_env(home), home / "server.log") as client:
        assert client.tool_names()[:1] == ["save_memory"]
        assert set(LEGACY_TOOLS) <= set(client.tool_names())
        saved = client.ok("save_memory", SEED_VALID)
        assert saved["success"] is True
        assert saved["created"]["entities"] == 3 and saved["created"]["relations"] == 6
        assert saved["warnings"] == [] and saved["quality_score"] == 1.0
        assert "validation_errors" not in saved
        again = client.ok("save_memory", SEED_VALID)  # existing entities are extended
        assert again["created"]["entities"] == 0 and again["updated"]["entities"] == 3
        graph = client.ok("read_graph", {"summary": True})
        assert (graph["totalEntities"], graph["totalRelations"]) == (3, 6)


@pytest.mark.parametrize(("entity", "problem", "value"), SEED_INVALID)
def test_the_seeds_invalid_requests_write_nothing(
    server: SyncClient, entity: dict[str, Any], problem: str, value: Any
) -> None:
    before = server.ok("read_graph", {"summary": True, "limit": 1})
    rejected = server.rejected("save_memory", {"entities": [entity], "threadId": "test"})
    assert rejected["success"] is False
    assert rejected["created"]["entities"] == rejected["created"]["relations"] == 0
    assert rejected["warnings"] == [] and rejected["quality_score"] == 0.0
    assert rejected["error"]["code"] == "VALIDATION_FAILED"
    assert "Nothing was saved" in rejected["error"]["message"]
    found = [p for p in rejected["validation_errors"] if p["problem"] == problem]
    assert found, rejected["validation_errors"]
    assert found[0]["entity"] == entity["name"] and found[0]["value"] == value
    assert found[0]["suggestion"]
    after = server.ok("read_graph", {"summary": True, "limit": 1})
    assert after["totalEntities"] == before["totalEntities"]
    assert server.ok("open_nodes", {"names": [entity["name"]]})["entities"] == []


def test_a_missing_thread_id_is_listed_with_the_other_problems(server: SyncClient) -> None:
    request = _pair("Quinn", "Rosa")
    del request["threadId"]
    request["entities"][0]["observations"] = [TOO_LONG]
    rejected = server.rejected("save_memory", request)
    assert rejected["success"] is False and rejected["error"]["code"] == "VALIDATION_FAILED"
    problems = {(p["entity"], p["problem"]) for p in rejected["validation_errors"]}
    assert (None, "threadId is empty.") in problems, problems
    too_long = f"Observation too long ({len(TOO_LONG)} chars). Max 150."
    assert any(e == "Quinn" and p.startswith(too_long) for e, p in problems), problems
    # Alone, it still refuses the request: the contract requires a thread.
    valid_but_threadless = _pair("Quinn", "Rosa")
    del valid_but_threadless["threadId"]
    alone = server.rejected("save_memory", valid_but_threadless)["validation_errors"]
    assert [p["problem"] for p in alone] == ["threadId is empty."]
    assert alone[0]["suggestion"].startswith("Pass the id of the conversation or project")
    assert server.ok("open_nodes", {"names": ["Quinn", "Rosa"]})["entities"] == []
    # The published schema is the contract's, threadId required.
    listed = server.tools()["save_memory"].input_schema
    assert listed["required"] == ["entities", "threadId"]


def test_type_problems_are_warnings_and_wrong_types_keep_the_contract_shape(
    server: SyncClient,
) -> None:
    request = _pair("Wanda", "Xavier", "warn-thread")
    request["entities"][0]["entityType"] = "api key"
    saved = server.ok("save_memory", request)
    assert any("starts with a lowercase letter" in w for w in saved["warnings"])
    assert any("consider 'ApiKey'" in w for w in saved["warnings"])
    opened = server.ok("open_nodes", {"names": ["wanda"]})["entities"][0]
    assert opened["entityType"] == "Api key"

    bad = _pair("Yara", "Zoe")
    bad["entities"][0]["observations"] = "one string"
    rejected = server.rejected("save_memory", bad)
    assert rejected["success"] is False and rejected["error"]["code"] == "INVALID_PARAMETER"
    assert rejected["error"]["details"]["field"] == "entities[0].observations"
    assert rejected["validation_errors"][0]["problem"].startswith("entities[0].observations")


# -- observations, traversal, analytics ---------------------------------------------------------


def test_observation_versions(server: SyncClient) -> None:
    server.ok("save_memory", _pair("Olga", "Pavel"))
    olga = server.ok("open_nodes", {"names": ["Olga"]})["entities"][0]
    first = olga["observationIds"][0]
    added = server.ok(
        "add_observations",
        {
            "observations": [
                {
                    "entityName": "olga",
                    "contents": ["Olga writes Rust and Zig"],
                    "supersedes": first,
                },
                {"entityName": "Pavel", "contents": ["Pavel lives in Riga", "Pavel writes Go"]},
            ],
            "threadId": "t",
        },
    )
    olga_result, pavel_result = added["results"]
    assert (olga_result["entityName"], olga_result["version"]) == ("Olga", 2)
    assert pavel_result["addedObservations"] == ["Pavel lives in Riga"]  # a duplicate is skipped
    history = server.ok("get_observation_history", {"entityName": "Olga", "observationId": first})
    assert [v["version"] for v in history["versions"]] == [1, 2]
    assert history["versions"][0]["supersededBy"] == olga_result["observationIds"][0]
    current = server.ok("open_nodes", {"names": ["Olga"]})["entities"][0]
    assert current["observations"] == ["Olga writes Rust and Zig"]

    missing = server.error(
        "add_observations", {"observations": [{"entityName": "Nobody", "contents": ["A fact"]}]}
    )
    assert missing["code"] == "NOT_FOUND"
    too_many = server.error(
        "add_observations",
        {"observations": [{"entityName": "Olga", "contents": ["Too. Many. Sentences."]}]},
    )
    assert too_many["code"] == "VALIDATION_FAILED"
    assert "Too many sentences (3)" in too_many["message"]


def test_traversal_and_paths(server: SyncClient) -> None:
    related = server.ok("get_related", {"entityName": "Andrii", "depth": 1, "direction": "out"})
    assert {r["name"] for r in related["related"]} == {"Python Scripts", "Portfolio"}
    assert all(r["depth"] == 1 and r["via"]["from"] == "Andrii" for r in related["related"])
    incoming = server.ok(
        "get_related", {"entityName": "Andrii", "direction": "in", "relationType": "created by"}
    )
    assert [r["name"] for r in incoming["related"]] == ["Python Scripts"]

    server.ok("save_memory", _pair("Quinn", "Ruth"))
    server.ok("create_relation", {"from": "Ruth", "to": "Andrii", "relationType": "reads"})
    path = server.ok("find_relation_path", {"from": "Quinn", "to": "Portfolio"})
    assert path["found"] is True and path["path"][0] == "Quinn" and path["path"][-1] == "Portfolio"
    assert path["length"] == len(path["relationTypes"]) == 3
    server.ok("create_entity", {"name": "Hermit", "entityType": "Person"})
    apart = server.ok("find_relation_path", {"from": "Hermit", "to": "Andrii"})
    assert (apart["found"], apart["path"]) == (False, [])

    assert server.error("get_related", {"entityName": "Nobody"})["code"] == "NOT_FOUND"
    error = server.error("get_related", {"entityName": "Andrii", "direction": "sideways"})
    assert error["code"] == "INVALID_PARAMETER" and error["details"]["field"] == "direction"


def test_search_query_analytics_and_communities(server: SyncClient) -> None:
    found = server.ok("search_nodes", {"query": "works at Google", "limit": 3})
    assert found["entities"][0]["name"] == "Andrii"
    assert set(found["entities"][0]["scores"]) == {"vector", "bm25", "ppr", "fused"}
    people = server.ok("query_nodes", {"entityType": "Person", "threadId": SEED_THREAD})
    assert [e["name"] for e in people["entities"]] == ["Andrii"]
    assert "observations" not in people["entities"][0]

    analytics = server.ok("get_analytics", {"threadId": SEED_THREAD})
    assert set(analytics) == {
        "threadId",
        "recent_changes",
        "top_important",
        "most_connected",
        "orphaned_entities",
        "quality",
        "store_quality",
    }
    assert analytics["quality"]["relation_coverage"] == 1.0
    assert analytics["store_quality"]["entities"] >= analytics["quality"]["entities"]
    assert analytics["top_important"][0] == {
        "entityName": "Andrii",
        "entityType": "Person",
        "importance": 1.0,
        "observationCount": 3,
    }

    communities = server.ok("detect_communities", {"seed": 7, "minSize": 3})
    assert any(
        {"Andrii", "Python Scripts", "Portfolio"} <= set(g["members"])
        for g in communities["groups"]
    )


def test_create_entity_and_relation(server: SyncClient) -> None:
    made = server.ok("create_entity", {"name": "Solo", "entityType": "Tool", "observations": []})
    assert made["created"] is True and made["entity"]["name"] == "Solo"
    again = server.ok("create_entity", {"name": "SOLO", "entityType": "Tool"})
    assert again["created"] is False and "already exists" in again["message"]
    linked = server.ok(
        "create_relation", {"from": "Solo", "to": "Andrii", "relationType": "used by"}
    )
    assert linked["created"] is True and linked["relation"]["from"] == "Solo"
    twice = server.ok(
        "create_relation", {"from": "Solo", "to": "Andrii", "relationType": "used by"}
    )
    assert twice["created"] is False and twice["relation"] is None
    error = server.error("create_relation", {"from": "Solo", "to": "Ghost", "relationType": "x"})
    assert error["code"] == "NOT_FOUND" and "Ghost" in error["message"]


# -- the reference server's tools ------------------------------------------------------------


def test_legacy_round_trip(server: SyncClient) -> None:
    made = server.ok(
        "create_entities",
        {
            "entities": [
                {"name": "Legacy A", "entityType": "Thing", "observations": ["First fact of A"]},
                {"name": "Legacy B", "entityType": "Thing", "observations": []},
                {"name": "Legacy C", "entityType": "Thing", "observations": ["Fact of C"]},
            ]
        },
    )
    assert [e["name"] for e in made["entities"]] == ["Legacy A", "Legacy B", "Legacy C"]
    assert made["entities"][0]["observations"] == ["First fact of A"]
    dup = server.ok(
        "create_entities",
        {"entities": [{"name": "legacy a", "entityType": "Thing", "observations": []}]},
    )
    assert dup == {"entities": [], "skipped": ["legacy a"]}
    relations = [
        {"from": "Legacy A", "to": "Legacy B", "relationType": "precedes"},
        {"from": "Legacy B", "to": "Legacy C", "relationType": "precedes"},
    ]
    created = server.ok("create_relations", {"relations": relations})
    assert [(r["from"], r["to"]) for r in created["relations"]] == [
        ("Legacy A", "Legacy B"),
        ("Legacy B", "Legacy C"),
    ]
    assert server.ok("create_relations", {"relations": relations[:1]})["relations"] == []
    missing = server.error(
        "create_relations", {"relations": [{"from": "Legacy A", "to": "Nope", "relationType": "x"}]}
    )
    assert missing["code"] == "NOT_FOUND"

    opened = server.ok("open_nodes", {"names": ["Legacy A", "Legacy B", "Unknown"]})
    assert [e["name"] for e in opened["entities"]] == ["Legacy A", "Legacy B"]
    assert opened["relations"] == [
        {"from": "Legacy A", "to": "Legacy B", "relationType": "precedes", "importance": 0.7}
    ]
    found = server.ok("search_nodes", {"query": "Legacy fact of C"})
    assert "Legacy C" in [e["name"] for e in found["entities"]]

    # read_graph pages through everything; summary mode leaves the observations out.
    total = server.ok("read_graph", {"limit": 1})["totalEntities"]
    names: list[str] = []
    offset: int | None = 0
    while offset is not None:
        page = server.ok("read_graph", {"limit": 4, "offset": offset, "summary": True})
        assert len(page["entities"]) <= 4
        assert all("observations" not in e and "observationCount" in e for e in page["entities"])
        names += [e["name"] for e in page["entities"]]
        offset = page["nextOffset"]
    assert len(names) == len(set(names)) == total
    full = server.ok("read_graph", {"limit": 500})
    legacy_a = next(e for e in full["entities"] if e["name"] == "Legacy A")
    assert legacy_a["observations"] == ["First fact of A"]

    gone = server.ok(
        "delete_observations",
        {"deletions": [{"entityName": "Legacy A", "observations": ["First fact of A"]}]},
    )
    assert gone["deleted"] == 1
    assert server.ok("delete_relations", {"relations": relations[:1]})["deleted"] == 1
    deleted = server.ok("delete_entities", {"entityNames": ["Legacy A", "Legacy C", "Unknown"]})
    assert deleted["deleted"] == ["Legacy A", "Legacy C"]
    left = server.ok("open_nodes", {"names": ["Legacy A", "Legacy B", "Legacy C"]})
    assert [e["name"] for e in left["entities"]] == ["Legacy B"]
    assert left["relations"] == []
    unknown = server.error(
        "delete_observations", {"deletions": [{"entityName": "Legacy A", "observations": ["x"]}]}
    )
    assert unknown["code"] == "NOT_FOUND"


def test_store_memory_links_the_entities_it_names(server: SyncClient) -> None:
    made = server.ok(
        "store_memory",
        {"content": "Prefers dark mode in every editor", "entities": ["Andrii", "Editors"]},
    )
    assert made["created"]["content"] == "Prefers dark mode in every editor"
    # An unknown name became an entity; the memory reaches recall through the graph.
    assert [e["name"] for e in server.ok("open_nodes", {"names": ["Editors"]})["entities"]] == [
        "Editors"
    ]
    recalled = server.ok("recall", {"query": "Andrii", "limit": 5})["results"]
    hit = next(r for r in recalled if r["id"] == made["id"])
    assert hit["scores"]["ppr"] > 0 and not hit["scores"]["bm25"]  # no word of the query
    error = server.error("store_memory", {"content": "x", "entities": [""]})
    assert error["code"] == "INVALID_PARAMETER" and error["details"]["field"] == "entities[0]"
