"""The knowledge-graph values the facade returns, all with `to_dict()` (JSON-ready: ISO 8601
times, no embeddings).

What the engine returns as is (`EntityRecord`, `ObservationRecord`, `RelationRecord`,
`EntityView`, `EntityHit`, `RelatedEntity`, `GraphView`, `GraphPage`, and `Analytics` with
its camelCase rows `RecentChange`, `ImportantEntity`, `ConnectedEntity`, `OrphanedEntity`)
are native classes defined in `rust/memcore-py/src/records/graph.rs`. The rest stay frozen
dataclasses holding them, because the facade composes them: a path's entity names, the
save outcome's contract shape (nested `created`/`updated`, `success` always True), the
rankings and communities computed in Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The knowledge-graph contract's limits (MAX_* / MIN_*) are defined once, in
# rust/memcore/src/knowledge/rules.rs; the tool schemas state them from here
# (memcore/tools/groups/_graph_shapes.py).
from memcore._core import (
    MAX_NAME_CHARS,
    MAX_OBSERVATION_CHARS,
    MAX_SENTENCES,
    MAX_TYPE_CHARS,
    MIN_OBSERVATION_CHARS,
    Analytics,
    ConnectedEntity,
    EntityHit,
    EntityRecord,
    EntityView,
    GraphPage,
    GraphQuality,
    GraphView,
    ImportantEntity,
    ObservationRecord,
    OrphanedEntity,
    RecentChange,
    RelatedEntity,
    RelationRecord,
)
from memcore.records.facts import Record


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
    def from_core(cls, source: str, target: str, relations: list[RelationRecord]) -> RelationPath:
        """Build from the native path (relations in walking order)."""
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
    "MAX_NAME_CHARS",
    "MAX_OBSERVATION_CHARS",
    "MAX_SENTENCES",
    "MAX_TYPE_CHARS",
    "MIN_OBSERVATION_CHARS",
    "Analytics",
    "Communities",
    "Community",
    "ConnectedEntity",
    "EntityHit",
    "EntityRecord",
    "EntityScore",
    "EntityView",
    "GraphPage",
    "GraphQuality",
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
