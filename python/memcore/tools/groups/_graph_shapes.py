"""The knowledge graph on the wire, shared by the graph and legacy groups.

Both groups speak the reference memory server's field names (``name``, ``entityType``,
``observations`` as strings, relations as ``{from, to, relationType}``), so a client
written for that server reads memcore's answers unchanged; memcore's additions follow the
same camelCase (``observationIds``, ``importance``, ``threadId``). ``observationIds[i]`` is
the id of ``observations[i]``: the id that ``supersedes`` and ``get_observation_history``
take. Graph reads leave out everything a model does not need (namespace, validity bounds,
internal entity ids of relations) to keep answers short.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from memcore._time import iso
from memcore.records.graph import (
    MAX_NAME_CHARS,
    MAX_OBSERVATION_CHARS,
    MAX_TYPE_CHARS,
    MIN_OBSERVATION_CHARS,
)
from memcore.tools import schema

if TYPE_CHECKING:
    from memcore.records.graph import EntityView, ObservationRecord, RelationRecord

#: Most entities one graph read returns.
MAX_ENTITIES = 500


#: How the schemas word an observation's length ("5-150 chars").
OBSERVATION_CHARS = f"{MIN_OBSERVATION_CHARS}-{MAX_OBSERVATION_CHARS} chars"


def entity_name(description: str = "The entity's name (case-insensitive).") -> schema.Schema:
    """An entity-name argument."""
    return schema.string(description, min_length=1, max_length=MAX_NAME_CHARS)


def entity_name_item() -> schema.Schema:
    """An entity name as an item of a list."""
    return {"type": "string", "minLength": 1, "maxLength": MAX_NAME_CHARS}


def graph_type(description: str) -> schema.Schema:
    """An entity's or a relation's type."""
    return schema.string(description, min_length=1, max_length=MAX_TYPE_CHARS)


def observation_item() -> schema.Schema:
    """One observation (an atomic fact) as an item of a list."""
    return {
        "type": "string",
        "minLength": MIN_OBSERVATION_CHARS,
        "maxLength": MAX_OBSERVATION_CHARS,
    }


def thread_id() -> schema.Schema:
    """The optional provenance tag of graph writes."""
    return schema.string(
        "The conversation or project this knowledge comes from.", min_length=1, max_length=200
    )


def relation_out(relation: RelationRecord) -> dict[str, Any]:
    """``{from, to, relationType, importance}``."""
    return {
        "from": relation.from_name,
        "to": relation.to_name,
        "relationType": relation.relation_type,
        "importance": relation.importance,
    }


def entity_out(view: EntityView, *, summary: bool = False) -> dict[str, Any]:
    """An entity with its current observations (counts only when ``summary``)."""
    entity = view.entity
    out: dict[str, Any] = {"name": entity.name, "entityType": entity.entity_type}
    if not summary:
        out["observations"] = [o.content for o in view.observations]
        out["observationIds"] = [o.id for o in view.observations]
    out["observationCount"] = view.observation_count
    if entity.description:
        out["description"] = entity.description
    out["importance"] = entity.importance
    out["confidence"] = entity.confidence
    if entity.thread_id is not None:
        out["threadId"] = entity.thread_id
    out["updatedAt"] = iso(entity.updated_at)
    return out


def observation_out(observation: ObservationRecord) -> dict[str, Any]:
    """One version of an observation."""
    return {
        "id": observation.id,
        "content": observation.content,
        "version": observation.version,
        "supersedes": observation.supersedes,
        "supersededBy": observation.superseded_by,
        "threadId": observation.thread_id,
        "confidence": observation.confidence,
        "importance": observation.importance,
        "timestamp": iso(observation.timestamp),
    }


def relations_among(views: Iterable[EntityView]) -> list[dict[str, Any]]:
    """The relations whose two ends are both among ``views``, each once."""
    chosen = list(views)
    names = {view.entity.name for view in chosen}
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    for view in chosen:
        for relation in view.relations:
            if relation.id in seen or not {relation.from_name, relation.to_name} <= names:
                continue
            seen.add(relation.id)
            out.append(relation_out(relation))
    return out
