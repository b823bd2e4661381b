"""The knowledge-graph values the facade returns: frozen dataclasses with `to_dict()`
(JSON-ready: ISO 8601 times, no embeddings), built from the native engine's dicts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memcore._time import from_micros, optional_datetime
from memcore.records.facts import Record, Scores


@dataclass(frozen=True, slots=True)
class EntityRecord(Record):
    """A node of the knowledge graph (a person, project, file, concept…)."""

    id: str
    namespace: str
    name: str
    entity_type: str
    description: str | None
    importance: float
    confidence: float
    thread_id: str | None
    created_at: datetime
    updated_at: datetime
    valid_from: datetime
    valid_until: datetime | None

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> EntityRecord:
        """Build from a native entity dict (extra keys are ignored)."""
        return cls(
            id=raw["id"],
            namespace=raw["namespace"],
            name=raw["name"],
            entity_type=raw["entity_type"],
            description=raw["description"],
            importance=raw["importance"],
            confidence=raw["confidence"],
            thread_id=raw["thread_id"],
            created_at=from_micros(raw["created_at"]),
            updated_at=from_micros(raw["updated_at"]),
            valid_from=from_micros(raw["valid_from"]),
            valid_until=optional_datetime(raw["valid_until"]),
        )


@dataclass(frozen=True, slots=True)
class ObservationRecord(Record):
    """One atomic fact about an entity, in a version chain (`supersedes`/`superseded_by`)."""

    id: str
    namespace: str
    entity_id: str
    entity_name: str
    content: str
    version: int
    supersedes: str | None
    superseded_by: str | None
    thread_id: str | None
    confidence: float
    importance: float
    timestamp: datetime
    valid_from: datetime
    valid_until: datetime | None

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> ObservationRecord:
        """Build from a native observation dict."""
        return cls(
            id=raw["id"],
            namespace=raw["namespace"],
            entity_id=raw["entity_id"],
            entity_name=raw["entity_name"],
            content=raw["content"],
            version=raw["version"],
            supersedes=raw["supersedes"],
            superseded_by=raw["superseded_by"],
            thread_id=raw["thread_id"],
            confidence=raw["confidence"],
            importance=raw["importance"],
            timestamp=from_micros(raw["timestamp"]),
            valid_from=from_micros(raw["valid_from"]),
            valid_until=optional_datetime(raw["valid_until"]),
        )

    @property
    def is_current(self) -> bool:
        """Whether this is the latest version (not superseded)."""
        return self.superseded_by is None


@dataclass(frozen=True, slots=True)
class RelationRecord(Record):
    """A directed, typed, weighted edge. `from_name`/`to_name` are entity names
    (`from`/`to` in `to_dict()`, as in the reference server); `from_entity`/`to_entity`
    are entity ids."""

    id: str
    namespace: str
    from_name: str
    to_name: str
    from_entity: str
    to_entity: str
    relation_type: str
    importance: float
    thread_id: str | None
    created_at: datetime
    valid_from: datetime
    valid_until: datetime | None

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> RelationRecord:
        """Build from a native relation dict."""
        return cls(
            id=raw["id"],
            namespace=raw["namespace"],
            from_name=raw["from"],
            to_name=raw["to"],
            from_entity=raw["from_entity"],
            to_entity=raw["to_entity"],
            relation_type=raw["relation_type"],
            importance=raw["importance"],
            thread_id=raw["thread_id"],
            created_at=from_micros(raw["created_at"]),
            valid_from=from_micros(raw["valid_from"]),
            valid_until=optional_datetime(raw["valid_until"]),
        )

    def to_dict(self) -> dict[str, Any]:
        """The relation with `from`/`to` entity names."""
        data = Record.to_dict(self)
        data["from"] = data.pop("from_name")
        data["to"] = data.pop("to_name")
        return data


def _relations(raw: list[dict[str, Any]]) -> list[RelationRecord]:
    return [RelationRecord.from_core(r) for r in raw]


@dataclass(frozen=True, slots=True)
class EntityView(Record):
    """An entity with its current observations (empty in summary reads; the count is
    always there) and every relation it takes part in."""

    entity: EntityRecord
    observations: list[ObservationRecord]
    observation_count: int
    relations: list[RelationRecord]

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> EntityView:
        """Build from a native entity-view dict."""
        return cls(
            entity=EntityRecord.from_core(raw),
            observations=[ObservationRecord.from_core(o) for o in raw["observations"]],
            observation_count=raw["observation_count"],
            relations=_relations(raw["relations"]),
        )

    @property
    def name(self) -> str:
        """The entity's name."""
        return self.entity.name

    def to_dict(self) -> dict[str, Any]:
        """The entity's fields, then `observations`, `observation_count`, `relations`."""
        return {
            **self.entity.to_dict(),
            "observations": [o.to_dict() for o in self.observations],
            "observation_count": self.observation_count,
            "relations": [r.to_dict() for r in self.relations],
        }


@dataclass(frozen=True, slots=True)
class EntityHit(Record):
    """An entity found by `search_nodes`, with the scores of its best-matching document."""

    view: EntityView
    scores: Scores

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> EntityHit:
        """Build from a native search_nodes hit."""
        return cls(view=EntityView.from_core(raw), scores=Scores.from_core(raw["scores"]))

    @property
    def name(self) -> str:
        """The entity's name."""
        return self.view.name

    def to_dict(self) -> dict[str, Any]:
        """The entity view plus `scores`."""
        return {**self.view.to_dict(), "scores": self.scores.to_dict()}


@dataclass(frozen=True, slots=True)
class GraphView(Record):
    """Entities and the relations among them (`open_nodes`)."""

    entities: list[EntityView]
    relations: list[RelationRecord]


@dataclass(frozen=True, slots=True)
class GraphPage(Record):
    """A page of `read_graph`: entities oldest first, the relations among them, the
    namespace's totals, and the offset of the next page (None on the last one)."""

    entities: list[EntityView]
    relations: list[RelationRecord]
    total_entities: int
    total_relations: int
    offset: int
    next_offset: int | None
    summary: bool

    @classmethod
    def from_core(cls, raw: dict[str, Any], offset: int, summary: bool) -> GraphPage:
        """Build from a native read_graph page."""
        entities = [EntityView.from_core(v) for v in raw["entities"]]
        end = offset + len(entities)
        return cls(
            entities=entities,
            relations=_relations(raw["relations"]),
            total_entities=raw["total_entities"],
            total_relations=raw["total_relations"],
            offset=offset,
            next_offset=end if entities and end < raw["total_entities"] else None,
            summary=summary,
        )


@dataclass(frozen=True, slots=True)
class RelatedEntity(Record):
    """An entity reached by `get_related`: how deep, through which relation, from whom."""

    entity: EntityRecord
    depth: int
    via: RelationRecord
    parent: str

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> RelatedEntity:
        """Build from a native get_related entry."""
        return cls(
            entity=EntityRecord.from_core(raw),
            depth=raw["depth"],
            via=RelationRecord.from_core(raw["via"]),
            parent=raw["parent"],
        )

    @property
    def name(self) -> str:
        """The entity's name."""
        return self.entity.name

    def to_dict(self) -> dict[str, Any]:
        """The entity's fields plus `depth`, `via` and `parent`."""
        return {
            **self.entity.to_dict(),
            "depth": self.depth,
            "via": self.via.to_dict(),
            "parent": self.parent,
        }


@dataclass(frozen=True, slots=True)
class RelationPath(Record):
    """The shortest chain of relations between two entities (either direction).

    `entities` lists the names along the way, source first (just the one name when source
    and target are the same entity); both lists are empty when they are not connected
    within the search depth.
    """

    source: str
    target: str
    found: bool
    entities: list[str]
    relations: list[RelationRecord]

    @classmethod
    def from_core(cls, source: str, target: str, raw: list[dict[str, Any]]) -> RelationPath:
        """Build from the native path (relations in walking order)."""
        relations = _relations(raw)
        names: list[str] = []
        if relations:
            first, key = relations[0], source.strip().lower()
            # The first relation may point either way: start from whichever end is the source.
            from_source = first.from_name.lower() == key or first.to_name.lower() != key
            names.append(first.from_name if from_source else first.to_name)
            for r in relations:
                names.append(r.to_name if r.from_name == names[-1] else r.from_name)
        return cls(source, target, bool(relations), names, relations)

    @classmethod
    def to_itself(cls, source: str, target: str, name: str) -> RelationPath:
        """The empty path from an entity to itself."""
        return cls(source, target, True, [name], [])

    @property
    def length(self) -> int:
        """Hops along the path (0 when not found)."""
        return len(self.relations)

    @property
    def relation_types(self) -> list[str]:
        """The relation types along the path, in walking order."""
        return [r.relation_type for r in self.relations]

    def to_dict(self) -> dict[str, Any]:
        """The path plus `length` and `relation_types`."""
        return {
            **Record.to_dict(self),
            "length": self.length,
            "relation_types": self.relation_types,
        }


@dataclass(frozen=True, slots=True)
class SaveResult(Record):
    """What `save_memory` did (docs/guide.md, "The knowledge-graph contract"). A rejected
    request raises `ValidationFailedError` instead, so `success` is always True here."""

    success: bool
    entities_created: int
    entities_updated: int
    relations_created: int
    observations_created: int
    warnings: list[str]
    quality_score: float

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> SaveResult:
        """Build from the native save_memory outcome."""
        return cls(
            success=True,
            entities_created=raw["entities_created"],
            entities_updated=raw["entities_updated"],
            relations_created=raw["relations_created"],
            observations_created=raw["observations_created"],
            warnings=list(raw["warnings"]),
            quality_score=raw["quality_score"],
        )

    def to_dict(self) -> dict[str, Any]:
        """`{success, created: {entities, relations, observations}, updated: {entities},
        warnings, quality_score}`, the contract's shape."""
        return {
            "success": self.success,
            "created": {
                "entities": self.entities_created,
                "relations": self.relations_created,
                "observations": self.observations_created,
            },
            "updated": {"entities": self.entities_updated},
            "warnings": list(self.warnings),
            "quality_score": self.quality_score,
        }


# -- analytics (camelCase field names on the wire, as the graph tools use) -----------------


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


class _CamelRecord(Record):
    """`to_dict()` with camelCase keys: the analytics contract's field names."""

    def to_dict(self) -> dict[str, Any]:
        """The record with camelCase keys."""
        return {_camel(k): v for k, v in Record.to_dict(self).items()}


@dataclass(frozen=True, slots=True)
class RecentChange(_CamelRecord):
    """`{entityName, entityType, lastModified, changeType}`."""

    entity_name: str
    entity_type: str
    last_modified: datetime
    change_type: str


@dataclass(frozen=True, slots=True)
class ImportantEntity(_CamelRecord):
    """`{entityName, entityType, importance, observationCount}`."""

    entity_name: str
    entity_type: str
    importance: float
    observation_count: int


@dataclass(frozen=True, slots=True)
class ConnectedEntity(_CamelRecord):
    """`{entityName, entityType, relationCount, connectedTo}`."""

    entity_name: str
    entity_type: str
    relation_count: int
    connected_to: list[str]


@dataclass(frozen=True, slots=True)
class OrphanedEntity(_CamelRecord):
    """`{entityName, entityType, reason}`; reason is no_relations or broken_relation."""

    entity_name: str
    entity_type: str
    reason: str


@dataclass(frozen=True, slots=True)
class Analytics(Record):
    """The four analytics of `get_analytics` (a thread's, or the namespace's)."""

    recent_changes: list[RecentChange]
    top_important: list[ImportantEntity]
    most_connected: list[ConnectedEntity]
    orphaned_entities: list[OrphanedEntity]

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> Analytics:
        """Build from the native analytics dict."""
        return cls(
            recent_changes=[
                RecentChange(
                    r["name"], r["entity_type"], from_micros(r["updated_at"]), r["change_type"]
                )
                for r in raw["recent_changes"]
            ],
            top_important=[
                ImportantEntity(
                    r["name"], r["entity_type"], r["importance"], r["observation_count"]
                )
                for r in raw["top_important"]
            ],
            most_connected=[
                ConnectedEntity(
                    r["name"], r["entity_type"], r["relation_count"], list(r["connected_to"])
                )
                for r in raw["most_connected"]
            ],
            orphaned_entities=[
                OrphanedEntity(r["name"], r["entity_type"], r["reason"])
                for r in raw["orphaned_entities"]
            ],
        )


# -- ranking and communities ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EntityScore(Record):
    """An entity and its Personalized PageRank mass."""

    name: str
    score: float


@dataclass(frozen=True, slots=True)
class Community(Record):
    """One group found by `detect_communities`: its members, most important first."""

    id: int
    size: int
    members: list[str]


@dataclass(frozen=True, slots=True)
class Communities(Record):
    """The partition of `detect_communities`: groups largest first, the modularity of
    the whole partition (standard, resolution 1), and the resolution used."""

    groups: list[Community]
    modularity: float
    resolution: float
    sizes: list[int]

    def community_of(self, name: str) -> int | None:
        """The id of the group holding entity `name` (exact name), or None."""
        return next((g.id for g in self.groups if name in g.members), None)


__all__ = [
    "Analytics",
    "Communities",
    "Community",
    "ConnectedEntity",
    "EntityHit",
    "EntityRecord",
    "EntityScore",
    "EntityView",
    "GraphPage",
    "GraphView",
    "ImportantEntity",
    "ObservationRecord",
    "OrphanedEntity",
    "RecentChange",
    "RelatedEntity",
    "RelationPath",
    "RelationRecord",
    "SaveResult",
]
