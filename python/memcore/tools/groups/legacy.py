"""The legacy group: the reference MCP memory server's nine tools on memcore's graph.

Same input shapes as the reference server, same storage as the graph group, so a client
written for that server keeps working and its data meets save_memory's. Three of the nine
(``add_observations``, ``search_nodes``, ``open_nodes``) are the graph group's tools, which
accept the reference shapes; the six here are deprecated in their descriptions in favour of
``save_memory``, whose validation keeps the graph connected and its facts atomic.
"""

from __future__ import annotations

from typing import Any

from memcore.tools import schema
from memcore.tools.groups._graph_shapes import (
    MAX_ENTITIES,
    OBSERVATION_CHARS,
    entity_name,
    entity_name_item,
    entity_out,
    graph_type,
    relation_out,
    thread_id,
)
from memcore.tools.registry import ToolCall, ToolRegistry, ToolSpec

_DEPRECATED = "Deprecated: prefer save_memory, which saves entities with their relations "


def create_entities(call: ToolCall) -> dict[str, Any]:
    """New entities; existing names are skipped."""
    args = call.arguments
    entities = args["entities"]
    created = call.memory.create_entities(entities, namespace=call.namespace, **_thread(args))
    given = {e["name"].strip().lower(): e for e in entities}
    made = {record.name.lower() for record in created}
    return {
        "entities": [
            {
                "name": record.name,
                "entityType": record.entity_type,
                "observations": list(given.get(record.name.lower(), {}).get("observations", [])),
            }
            for record in created
        ],
        "skipped": [e["name"] for e in entities if e["name"].strip().lower() not in made],
    }


def create_relations(call: ToolCall) -> dict[str, Any]:
    """Relations between existing entities; duplicates are skipped."""
    args = call.arguments
    created = call.memory.create_relations(
        args["relations"], namespace=call.namespace, **_thread(args)
    )
    return {"relations": [relation_out(r) for r in created]}


def delete_entities(call: ToolCall) -> dict[str, Any]:
    """Entities with their observations and relations."""
    deleted = call.memory.delete_entities(call.arguments["entityNames"], namespace=call.namespace)
    return {"success": True, "message": f"{len(deleted)} entities deleted", "deleted": deleted}


def delete_observations(call: ToolCall) -> dict[str, Any]:
    """Observations of entities, by content or id."""
    memory, ns = call.memory, call.namespace
    deletions = call.arguments["deletions"]
    for item in deletions:  # unknown entities fail the call before anything is deleted
        memory.get_entity(item["entityName"], namespace=ns)
    count = sum(
        memory.delete_observations(item["entityName"], item["observations"], namespace=ns)
        for item in deletions
    )
    return {"success": True, "message": f"{count} observations deleted", "deleted": count}


def delete_relations(call: ToolCall) -> dict[str, Any]:
    """Relations given by their two ends and type."""
    count = call.memory.delete_relations(call.arguments["relations"], namespace=call.namespace)
    return {"success": True, "message": f"{count} relations deleted", "deleted": count}


def read_graph(call: ToolCall) -> dict[str, Any]:
    """A page of the graph."""
    args = call.arguments
    page = call.memory.read_graph(
        args["limit"], args["offset"], args["summary"], namespace=call.namespace
    )
    return {
        "entities": [entity_out(v, summary=page.summary) for v in page.entities],
        "relations": [relation_out(r) for r in page.relations],
        "totalEntities": page.total_entities,
        "totalRelations": page.total_relations,
        "offset": page.offset,
        "nextOffset": page.next_offset,
        "summary": page.summary,
    }


def _thread(args: Any) -> dict[str, Any]:
    return {"thread_id": args["threadId"]} if "threadId" in args else {}


def register(registry: ToolRegistry) -> None:
    """Add the legacy group (its shared tools come from the graph group)."""
    for spec in _SPECS:
        registry.add(spec)


_RELATION = schema.arguments(
    {
        "from": entity_name("The source entity."),
        "to": entity_name("The target entity."),
        "relationType": graph_type("The relation, in active voice (e.g. 'works at')."),
    },
    required=["from", "to", "relationType"],
)


def _relations(description: str) -> schema.Schema:
    return {
        "type": "array",
        "minItems": 1,
        "maxItems": 500,
        "items": _RELATION,
        "description": description,
    }


_SPECS = (
    ToolSpec(
        name="create_entities",
        group="legacy",
        title="Create entities (deprecated)",
        description=(
            f"{_DEPRECATED}in one validated call. Creates entities with optional "
            f"observations ({OBSERVATION_CHARS} each) and no relations; names that already "
            "exist are skipped. Returns {entities (the ones created), skipped (names that "
            "existed)}."
        ),
        input_schema=schema.arguments(
            {
                "entities": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 500,
                    "description": "The entities to create.",
                    "items": schema.arguments(
                        {
                            "name": entity_name("The entity's name."),
                            "entityType": graph_type("The entity's type."),
                            "observations": {
                                "type": "array",
                                "items": {"type": "string"},
                                "description": "Facts about the entity.",
                            },
                        },
                        required=["name", "entityType", "observations"],
                    ),
                },
                "threadId": thread_id(),
            },
            required=["entities"],
        ),
        handler=create_entities,
    ),
    ToolSpec(
        name="create_relations",
        group="legacy",
        title="Create relations (deprecated)",
        description=(
            f"{_DEPRECATED}(relations embedded in their entities). Creates relations between "
            "existing entities (a missing one is NOT_FOUND); existing relations are skipped. "
            "Returns {relations (the ones created)}."
        ),
        input_schema=schema.arguments(
            {"relations": _relations("The relations to create."), "threadId": thread_id()},
            required=["relations"],
        ),
        handler=create_relations,
    ),
    ToolSpec(
        name="delete_entities",
        group="legacy",
        title="Delete entities (deprecated)",
        description=(
            "Deprecated: prefer save_memory and add_observations (with supersedes), which keep "
            "history. Deletes entities with their observations and relations, for good; "
            "unknown names are ignored. Returns {success, message, deleted (names)}."
        ),
        input_schema=schema.arguments(
            {
                "entityNames": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 500,
                    "items": entity_name_item(),
                    "description": "Names of the entities to delete.",
                }
            },
            required=["entityNames"],
        ),
        handler=delete_entities,
        destructive=True,
        idempotent=True,
    ),
    ToolSpec(
        name="delete_observations",
        group="legacy",
        title="Delete observations (deprecated)",
        description=(
            "Deprecated: prefer add_observations with supersedes to correct a fact (history "
            "is kept). Deletes observations of entities, each given by its exact content or "
            "its id; an unknown entity is NOT_FOUND and nothing is deleted. Returns "
            "{success, message, deleted (count)}."
        ),
        input_schema=schema.arguments(
            {
                "deletions": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 500,
                    "description": "One item per entity.",
                    "items": schema.arguments(
                        {
                            "entityName": entity_name(),
                            "observations": {
                                "type": "array",
                                "minItems": 1,
                                "items": {"type": "string", "minLength": 1},
                                "description": "Contents or ids of the observations to delete.",
                            },
                        },
                        required=["entityName", "observations"],
                    ),
                }
            },
            required=["deletions"],
        ),
        handler=delete_observations,
        destructive=True,
        idempotent=True,
    ),
    ToolSpec(
        name="delete_relations",
        group="legacy",
        title="Delete relations (deprecated)",
        description=(
            "Deprecated: prefer save_memory, which keeps the graph connected. Deletes "
            "relations given by from, to and relationType; unknown ones are ignored. Returns "
            "{success, message, deleted (count)}."
        ),
        input_schema=schema.arguments(
            {"relations": _relations("The relations to delete.")}, required=["relations"]
        ),
        handler=delete_relations,
        destructive=True,
        idempotent=True,
    ),
    ToolSpec(
        name="read_graph",
        group="legacy",
        title="Read the graph (deprecated)",
        description=(
            "Deprecated: prefer search_nodes or query_nodes, which return only what is "
            "relevant. Reads the knowledge graph a page at a time, oldest entities first, "
            "with the relations among them; summary: true leaves observations out (counts "
            "only) so a large graph fits. Returns {entities, relations, totalEntities, "
            "totalRelations, offset, nextOffset (null on the last page), summary}."
        ),
        input_schema=schema.arguments(
            {
                "limit": schema.integer(
                    "Entities per page.", minimum=1, maximum=MAX_ENTITIES, default=50
                ),
                "offset": schema.integer(
                    "Entities to skip (pass the previous nextOffset).",
                    minimum=0,
                    maximum=2**53,
                    default=0,
                ),
                "summary": schema.boolean("Leave observations out (counts only).", default=False),
            }
        ),
        handler=read_graph,
        read_only=True,
    ),
)
