"""The graph group: the knowledge-graph contract (docs/guide.md) over the
facade's graph API. ``save_memory`` is the one validated write an agent should use;
``search_nodes``, ``open_nodes`` and ``add_observations`` also belong to the legacy group
(one implementation, registered once). Field names follow the contract's camelCase; see
``_graph_shapes`` for the wire form of entities and relations.
"""

from __future__ import annotations

from typing import Any

from memcore.errors import MemcoreError, StorageError
from memcore.records.graph import MAX_OBSERVATION_CHARS
from memcore.tools import schema
from memcore.tools.groups._graph_shapes import (
    MAX_ENTITIES,
    OBSERVATION_CHARS,
    entity_name,
    entity_name_item,
    entity_out,
    graph_type,
    observation_item,
    observation_out,
    relation_out,
    relations_among,
    thread_id,
)
from memcore.tools.groups._save_contract import CHECKED_SCHEMA, SAVE_MEMORY_SCHEMA, rejected
from memcore.tools.groups._shared import (
    HYBRID_WITHOUT_MODEL,
    SAVED_WITHOUT_MODEL,
    optional,
    search_limit,
)
from memcore.tools.registry import ToolCall, ToolRegistry, ToolSpec


def save_memory(call: ToolCall) -> dict[str, Any]:
    """Validate and save entities with their observations and relations, atomically."""
    args = call.arguments
    # A missing threadId goes to the core as an empty one, which it reports beside the
    # request's other problems (the contract requires it; nothing is saved without it).
    thread = args.get("threadId", "")
    result = call.memory.save_memory(args["entities"], thread, namespace=call.namespace)
    return result.to_dict()


def add_observations(call: ToolCall) -> dict[str, Any]:
    """Append observations to entities; ``supersedes`` makes a new version of one."""
    args, memory, ns = call.arguments, call.memory, call.namespace
    items = args["observations"]
    for item in items:  # every entity must exist before anything is written
        memory.get_entity(item["entityName"], namespace=ns)
    results = []
    for index, item in enumerate(items):
        try:
            added = memory.add_observations(
                item["entityName"],
                item["contents"],
                namespace=ns,
                **optional(item, "supersedes", "confidence", "importance"),
                **({"thread_id": args["threadId"]} if "threadId" in args else {}),
            )
        except MemcoreError as exc:
            # Each entity is its own transaction: say which items are already saved.
            exc.details = {**_details(exc), "item": index, "items_saved": index}
            raise
        result: dict[str, Any] = {
            "entityName": added[0].entity_name if added else item["entityName"],
            "addedObservations": [o.content for o in added],
            "observationIds": [o.id for o in added],
        }
        if "supersedes" in item and added:
            result["supersedes"], result["version"] = item["supersedes"], added[0].version
        results.append(result)
    return {"results": results}


def _details(error: MemcoreError) -> dict[str, Any]:
    details = getattr(error, "details", None)
    return dict(details) if isinstance(details, dict) else {}


def get_observation_history(call: ToolCall) -> dict[str, Any]:
    """The version chain of one observation, oldest first."""
    args = call.arguments
    versions = call.memory.get_observation_history(
        args["entityName"], args["observationId"], namespace=call.namespace
    )
    return {
        "entityName": versions[0].entity_name if versions else args["entityName"],
        "observationId": args["observationId"],
        "versions": [observation_out(o) for o in versions],
    }


def get_analytics(call: ToolCall) -> dict[str, Any]:
    """The four analytics of a thread."""
    args = call.arguments
    analytics = call.memory.get_analytics(args["threadId"], args["limit"], namespace=call.namespace)
    return {"threadId": args["threadId"], **analytics.to_dict()}


def search_nodes(call: ToolCall) -> dict[str, Any]:
    """Hybrid search over entities."""
    args = call.arguments
    hits = call.memory.search_nodes(args["query"], args["limit"], namespace=call.namespace)
    views = [hit.view for hit in hits]
    entities = [{**entity_out(hit.view), "scores": hit.scores.to_dict()} for hit in hits]
    return {"entities": entities, "relations": relations_among(views)}


def open_nodes(call: ToolCall) -> dict[str, Any]:
    """Entities by name and the relations among them."""
    view = call.memory.open_nodes(call.arguments["names"], namespace=call.namespace)
    return {
        "entities": [entity_out(e) for e in view.entities],
        "relations": [relation_out(r) for r in view.relations],
    }


def query_nodes(call: ToolCall) -> dict[str, Any]:
    """Entities by type, minimum importance and thread."""
    args = call.arguments
    views = call.memory.query_nodes(
        args.get("entityType"),
        args.get("minImportance"),
        args.get("threadId"),
        args["limit"],
        namespace=call.namespace,
    )
    return {"entities": [entity_out(v, summary=True) for v in views]}


def find_relation_path(call: ToolCall) -> dict[str, Any]:
    """The shortest chain of relations between two entities."""
    args = call.arguments
    path = call.memory.find_relation_path(
        args["from"], args["to"], args["maxDepth"], namespace=call.namespace
    )
    return {
        "from": args["from"],
        "to": args["to"],
        "found": path.found,
        "length": path.length,
        "path": path.entities,
        "relationTypes": path.relation_types,
        "relations": [relation_out(r) for r in path.relations],
    }


def get_related(call: ToolCall) -> dict[str, Any]:
    """Entities within a few hops, nearest first."""
    args = call.arguments
    related = call.memory.get_related(
        args["entityName"],
        args["depth"],
        args["direction"],
        args.get("relationType"),
        args.get("asOf"),
        args["limit"],
        namespace=call.namespace,
    )
    return {
        "entityName": args["entityName"],
        "related": [
            {
                "name": r.entity.name,
                "entityType": r.entity.entity_type,
                "importance": r.entity.importance,
                "depth": r.depth,
                "parent": r.parent,
                "via": relation_out(r.via),
            }
            for r in related
        ],
    }


def detect_communities(call: ToolCall) -> dict[str, Any]:
    """Leiden communities of the entity graph."""
    args = call.arguments
    try:
        found = call.memory.detect_communities(
            args["resolution"],
            args.get("seed"),
            min_size=args["minSize"],
            namespace=call.namespace,
        )
    except ModuleNotFoundError as exc:
        # An optional dependency of the server, not a fault of the call: say how to fix it.
        error = StorageError(
            "detect_communities needs the leidenalg and python-igraph packages, memcore "
            "dependencies this server's environment lacks; reinstall memcore (pip install "
            "memcore) or install them: pip install leidenalg python-igraph."
        )
        error.details = {"missing": exc.name, "install": "pip install leidenalg python-igraph"}
        raise error from None
    return found.to_dict()


def create_entity(call: ToolCall) -> dict[str, Any]:
    """One entity, without the relation save_memory demands."""
    args, memory = call.arguments, call.memory
    created = memory.create_entity(
        args["name"],
        args["entityType"],
        args["observations"],
        namespace=call.namespace,
        **optional(args, "description", "importance", "confidence"),
        **({"thread_id": args["threadId"]} if "threadId" in args else {}),
    )
    view = memory.get_entity(args["name"], namespace=call.namespace)
    message = (
        f"Entity '{view.name}' created."
        if created is not None
        else f"An entity named '{view.name}' already exists and was left unchanged; use "
        "add_observations to extend it."
    )
    return {"created": created is not None, "message": message, "entity": entity_out(view)}


def create_relation(call: ToolCall) -> dict[str, Any]:
    """One relation between two existing entities."""
    args = call.arguments
    created = call.memory.create_relation(
        args["from"],
        args["to"],
        args["relationType"],
        namespace=call.namespace,
        **optional(args, "importance"),
        **({"thread_id": args["threadId"]} if "threadId" in args else {}),
    )
    what = f"'{args['from']}' -{args['relationType']}-> '{args['to']}'"
    return {
        "created": created is not None,
        "message": f"Relation {what} created."
        if created is not None
        else f"Relation {what} already exists.",
        "relation": None if created is None else relation_out(created),
    }


def register(registry: ToolRegistry) -> None:
    """Add the graph group."""
    for spec in _SPECS:
        registry.add(spec)


def _unit(description: str, default: float | None = None) -> schema.Schema:
    return schema.number(description, minimum=0, maximum=1, default=default)


_SHARED = ("legacy",)  # the reference server's tools of the same name and shape

_SPECS = (
    ToolSpec(
        name="save_memory",
        group="graph",
        title="Save to the knowledge graph",
        description=(
            "Save entities and their relations to memory graph. RULES: 1) Each observation max "
            f"{MAX_OBSERVATION_CHARS} chars (atomic facts only). 2) Each entity MUST have at "
            "least 1 relation. Use it to record people, projects, files, concepts and how "
            "they connect; one call per batch of related entities, with every relation "
            "target in the same call or already saved. Existing entities (same name, any "
            "case) get the new observations and relations appended. Atomic: on any rule "
            "broken nothing is saved and the result has success: false and validation_errors "
            "[{entity, value, problem, suggestion}] to fix and retry. Returns {success, "
            "created: {entities, relations}, warnings, quality_score (0-1, how well connected "
            "the entities are)}." + SAVED_WITHOUT_MODEL
        ),
        input_schema=SAVE_MEMORY_SCHEMA,
        handler=save_memory,
        argument_schema=CHECKED_SCHEMA,
        error_shape=rejected,
    ),
    ToolSpec(
        name="add_observations",
        group="graph",
        also_in=_SHARED,
        title="Add observations",
        description=(
            "Append atomic facts (5-150 chars, at most 2 sentences each) to existing "
            "entities; identical current facts are skipped. To correct a fact, pass the new "
            "content with supersedes: <observation id> (one content per item): it becomes "
            "the next version and the old one leaves current reads but stays in "
            "get_observation_history. Returns {results: [{entityName, addedObservations, "
            "observationIds}]}." + SAVED_WITHOUT_MODEL
        ),
        input_schema=schema.arguments(
            {
                "observations": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 100,
                    "description": "One item per entity.",
                    "items": schema.arguments(
                        {
                            "entityName": entity_name(),
                            "contents": {
                                "type": "array",
                                "minItems": 1,
                                "maxItems": 50,
                                "items": {"type": "string", "minLength": 1, "maxLength": 1000},
                                "description": "The facts to add, one atomic fact each.",
                            },
                            "supersedes": schema.string(
                                "Id of the current observation the (single) content replaces.",
                                min_length=1,
                                max_length=200,
                            ),
                            "confidence": _unit("How sure you are, 0-1 (1.0)."),
                            "importance": _unit("How much these facts matter, 0-1 (0.5)."),
                        },
                        required=["entityName", "contents"],
                    ),
                },
                "threadId": thread_id(),
            },
            required=["observations"],
        ),
        handler=add_observations,
    ),
    ToolSpec(
        name="get_observation_history",
        group="graph",
        title="Observation history",
        description=(
            "The version chain of one observation (give the id of any of its versions), "
            "oldest first, each with its content, version, timestamp and supersedes / "
            "supersededBy links. Use it to see how a fact about an entity changed. Returns "
            "{entityName, observationId, versions}."
        ),
        input_schema=schema.arguments(
            {
                "entityName": entity_name(),
                "observationId": schema.string(
                    'Id of any version of the observation ("obs_…").',
                    min_length=1,
                    max_length=200,
                ),
            },
            required=["entityName", "observationId"],
        ),
        handler=get_observation_history,
        read_only=True,
    ),
    ToolSpec(
        name="get_analytics",
        group="graph",
        title="Graph analytics",
        description=(
            "Four quality checks of the knowledge saved in a thread: recent_changes "
            "(created/updated entities), top_important, most_connected and "
            "orphaned_entities (reason no_relations or broken_relation), and the graph's "
            "success metrics for the thread (quality) and store-wide (store_quality): "
            "relation_coverage (share of entities with a relation), "
            "mean_relations_per_entity, observation_atomicity (share of observations within "
            "the rules) and save_error_rate (save_memory calls refused by validation). Use "
            "it to review or repair a thread's graph. Returns {threadId, recent_changes, "
            "top_important, most_connected, orphaned_entities, quality, store_quality}."
        ),
        input_schema=schema.arguments(
            {
                "threadId": schema.string(
                    "The thread whose entities to analyse.", min_length=1, max_length=200
                ),
                "limit": schema.integer("Entries per list.", minimum=1, maximum=100, default=10),
            },
            required=["threadId"],
        ),
        handler=get_analytics,
        read_only=True,
    ),
    ToolSpec(
        name="search_nodes",
        group="graph",
        also_in=_SHARED,
        title="Search the knowledge graph",
        description=(
            "Find entities relevant to a query: hybrid search over entity names, types, "
            "descriptions and observations (meaning and keywords, not substring matching), "
            "boosted by the graph. Use it before save_memory to reuse existing entity names, "
            "and to look up what is known about a topic. Returns {entities, relations}: "
            "entities best first with their observations, observationIds and scores; "
            "relations among them." + HYBRID_WITHOUT_MODEL
        ),
        input_schema=schema.arguments(
            {
                "query": schema.string("What to look for.", min_length=1, max_length=2000),
                "limit": search_limit(),
            },
            required=["query"],
        ),
        handler=search_nodes,
        read_only=True,
    ),
    ToolSpec(
        name="open_nodes",
        group="graph",
        also_in=_SHARED,
        title="Open entities",
        description=(
            "Fetch entities by exact name (any case) with their current observations, and "
            "the relations among them; unknown names are skipped. Returns {entities, "
            "relations}."
        ),
        input_schema=schema.arguments(
            {
                "names": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 100,
                    "items": entity_name_item(),
                    "description": "The entity names.",
                }
            },
            required=["names"],
        ),
        handler=open_nodes,
        read_only=True,
    ),
    ToolSpec(
        name="query_nodes",
        group="graph",
        title="Query entities",
        description=(
            "List entities by type, minimum importance and/or thread, most important first "
            "(observation counts only; open_nodes shows the facts). Use it to browse, e.g. "
            "every Person, or what a thread saved. Returns {entities}."
        ),
        input_schema=schema.arguments(
            {
                "entityType": graph_type("Only this type (case-insensitive)."),
                "minImportance": _unit("Only entities at least this important."),
                "threadId": schema.string(
                    "Only entities saved in this thread.", min_length=1, max_length=200
                ),
                "limit": schema.integer(
                    "Maximum number of entities.", minimum=1, maximum=MAX_ENTITIES, default=50
                ),
            }
        ),
        handler=query_nodes,
        read_only=True,
    ),
    ToolSpec(
        name="find_relation_path",
        group="graph",
        title="Find a relation path",
        description=(
            "The shortest chain of relations connecting two entities, following relations "
            "in either direction: how is A connected to B? Returns {from, to, found, length, "
            "path (entity names), relationTypes, relations}; found is false when they are "
            "not connected within maxDepth hops."
        ),
        input_schema=schema.arguments(
            {
                "from": entity_name("Where the path starts."),
                "to": entity_name("Where the path ends."),
                "maxDepth": schema.integer(
                    "Most relations along the path.", minimum=1, maximum=8, default=6
                ),
            },
            required=["from", "to"],
        ),
        handler=find_relation_path,
        read_only=True,
    ),
    ToolSpec(
        name="get_related",
        group="graph",
        title="Related entities",
        description=(
            "Entities connected to one entity within a few hops, nearest first, each with "
            "the relation it was reached by. direction: out (relations from it), in "
            "(relations to it) or both. Use it to explore the neighbourhood of a person, "
            "project or file. Returns {entityName, related: [{name, entityType, importance, "
            "depth, parent, via}]}."
        ),
        input_schema=schema.arguments(
            {
                "entityName": entity_name("Where to start."),
                "depth": schema.integer("Hops to follow.", minimum=1, maximum=5, default=2),
                "direction": schema.string(
                    "Which relations to follow.", enum=("out", "in", "both"), default="both"
                ),
                "relationType": graph_type("Follow only relations of this type."),
                "asOf": schema.string(
                    "Follow the relations valid at this time (ISO 8601). Default: now.",
                    date_time=True,
                ),
                "limit": schema.integer(
                    "Maximum number of entities.", minimum=1, maximum=MAX_ENTITIES, default=100
                ),
            },
            required=["entityName"],
        ),
        handler=get_related,
        read_only=True,
    ),
    ToolSpec(
        name="detect_communities",
        group="graph",
        title="Detect communities",
        description=(
            "Group densely related entities with the Leiden algorithm (relations undirected, "
            "weighted by importance). Use it to find the clusters of a large graph (teams, "
            "subsystems, topics). Returns {groups: [{id, size, members}] largest first, "
            "modularity, resolution, sizes}. Needs the server's optional graph packages."
        ),
        input_schema=schema.arguments(
            {
                "resolution": schema.number(
                    "Higher gives more, smaller groups (1.0 = modularity).",
                    minimum=0.001,
                    maximum=1000,
                    default=1.0,
                ),
                "seed": schema.integer(
                    "Random seed for a reproducible partition.", minimum=0, maximum=2**31 - 1
                ),
                "minSize": schema.integer(
                    "Leave out groups smaller than this (2 hides isolated entities).",
                    minimum=1,
                    maximum=10_000,
                    default=1,
                ),
            }
        ),
        handler=detect_communities,
        read_only=True,
    ),
    ToolSpec(
        name="create_entity",
        group="graph",
        title="Create an entity",
        description=(
            "Create one entity without relations (prefer save_memory, which saves entities "
            "with their relations and keeps the graph connected). An existing entity of the "
            "same name is left unchanged (created: false). Returns {created, message, "
            "entity}."
        ),
        input_schema=schema.arguments(
            {
                "name": entity_name("The entity's name, unique in memory (any case)."),
                "entityType": graph_type(
                    "Type of entity, e.g. Person, Project, File, or a domain type."
                ),
                "observations": {
                    "type": "array",
                    "maxItems": 50,
                    "items": observation_item(),
                    "default": [],
                    "description": f"Atomic facts about it, {OBSERVATION_CHARS} each.",
                },
                "description": schema.string("A short description.", min_length=1, max_length=1000),
                "importance": _unit("How much it matters, 0-1 (0.5)."),
                "confidence": _unit("How sure you are, 0-1 (1.0)."),
                "threadId": thread_id(),
            },
            required=["name", "entityType"],
        ),
        handler=create_entity,
        idempotent=True,
    ),
    ToolSpec(
        name="create_relation",
        group="graph",
        title="Create a relation",
        description=(
            "Connect two existing entities with a typed, directed relation (from -> to), "
            "e.g. Alice -works on-> memcore. An identical relation is not duplicated "
            "(created: false); a missing entity is NOT_FOUND. Returns {created, message, "
            "relation}."
        ),
        input_schema=schema.arguments(
            {
                "from": entity_name("The source entity."),
                "to": entity_name("The target entity."),
                "relationType": graph_type(
                    "Type of relationship, e.g. 'created', 'uses', 'works on'."
                ),
                "importance": _unit("Weight of the relation, 0-1 (0.7)."),
                "threadId": thread_id(),
            },
            required=["from", "to", "relationType"],
        ),
        handler=create_relation,
        idempotent=True,
    ),
)
