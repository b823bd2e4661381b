"""The knowledge graph: save_memory, the reference server's operations, traversal,
Personalized PageRank and analytics. Communities and the rustworkx view, which hand the
graph to other libraries, are in `memcore._facade.graph_libraries`.

Every rule lives in the core; this layer checks argument shapes, embeds entity texts and
observations (one batch per call), and composes the results the core does not return as
records of its own (a path, the analytics).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memcore._core import Engine
from memcore._facade.base import Vector, VectorLike, as_vector
from memcore._facade.facts import _count, _number
from memcore._facade.search import SearchAPI
from memcore._time import TimeLike, optional_micros
from memcore.errors import invalid
from memcore.records.graph import (
    Analytics,
    EntityHit,
    EntityRecord,
    EntityScore,
    EntityView,
    GraphPage,
    GraphView,
    ObservationRecord,
    RelatedEntity,
    RelationPath,
    RelationRecord,
    SaveResult,
)


class GraphAPI(SearchAPI):
    """Entities, observations and relations (docs/guide.md, "The knowledge-graph contract")."""

    # -- writes --------------------------------------------------------------------------

    def save_memory(
        self,
        entities: Sequence[Mapping[str, Any]],
        thread_id: str,
        *,
        namespace: str | None = None,
    ) -> SaveResult:
        """Save entities with their observations and relations in one transaction.

        The whole request is validated first (docs/guide.md: names 1-100 chars, types
        1-50, observations 5-150 chars and at most 2 sentences, at least one observation
        and one relation per entity, relation targets in the request or already stored);
        any problem rejects it and nothing is written. An entity that already exists is
        extended with the new observations and relations, not duplicated.

        Args:
            entities: Dicts with `name`, `entityType`, `observations` (list of str),
                `relations` (list of `{targetEntity, relationType, importance?}`) and
                optionally `confidence`, `importance` (0-1) and `description`.
            thread_id: The conversation or project this knowledge comes from.
            namespace: Override the instance's namespace.

        Returns:
            SaveResult; `to_dict()` gives `{success, created, updated, warnings,
            quality_score}`.

        Raises:
            ValidationFailedError: A rule is broken; `details["problems"]` lists every
                problem as `{entity, value, problem, suggestion}`.
            InvalidParameterError: The request is not shaped as above.
            EmbeddingError: The embedding model is still loading.
        """
        if not isinstance(thread_id, str):
            raise invalid("thread_id", "thread_id must be a string.")
        drafts = self._entity_drafts(entities)
        raw = self._engine.save_memory(self._ns(namespace), thread_id, drafts)
        return SaveResult.from_core(raw)

    def create_entities(
        self,
        entities: Sequence[Mapping[str, Any]],
        *,
        thread_id: str | None = None,
        namespace: str | None = None,
    ) -> list[EntityRecord]:
        """The reference server's `create_entities`: new entities, relations optional.

        Names that already exist are skipped (use `save_memory` or `add_observations` to
        extend them).

        Args:
            entities: Dicts with `name`, `entityType` and optionally `observations`,
                `description`, `importance`, `confidence`.
            thread_id: Provenance tag.
            namespace: Override the instance's namespace.

        Returns:
            The entities created.

        Raises:
            ValidationFailedError: A name, type or observation breaks a rule.
        """
        drafts = self._entity_drafts(entities)
        return self._engine.create_entities(self._ns(namespace), drafts, thread_id=thread_id)

    def create_entity(
        self,
        name: str,
        entity_type: str,
        observations: Sequence[str] = (),
        *,
        description: str | None = None,
        importance: float | None = None,
        confidence: float | None = None,
        thread_id: str | None = None,
        namespace: str | None = None,
    ) -> EntityRecord | None:
        """Create one entity, without the relation `save_memory` demands.

        Returns:
            The new entity, or None when an entity of that name (case-insensitive)
            already exists; it is left unchanged.
        """
        draft: dict[str, Any] = {
            "name": name,
            "entityType": entity_type,
            "observations": _strings("observations", observations),
            "description": description,
        }
        for key, value in (("importance", importance), ("confidence", confidence)):
            if value is not None:
                draft[key] = _number(key, value)
        created = self.create_entities([draft], thread_id=thread_id, namespace=namespace)
        return created[0] if created else None

    def create_relations(
        self,
        relations: Sequence[Mapping[str, Any] | Sequence[Any]],
        *,
        thread_id: str | None = None,
        namespace: str | None = None,
    ) -> list[RelationRecord]:
        """Relations between existing entities; duplicates are skipped.

        Args:
            relations: `{from, to, relationType, importance?}` dicts (the reference
                server's form) or `(from, to, relationType[, importance])` tuples.
            thread_id: Provenance tag.
            namespace: Override the instance's namespace.

        Returns:
            The relations created.

        Raises:
            NotFoundError: An endpoint does not exist.
            InvalidParameterError: A malformed relation or a relation to itself.
        """
        rows = [_relation_row(r, i) for i, r in enumerate(_sequence("relations", relations))]
        return self._engine.create_relations(self._ns(namespace), rows, thread_id=thread_id)

    def create_relation(
        self,
        source: str,
        target: str,
        relation_type: str,
        *,
        importance: float | None = None,
        thread_id: str | None = None,
        namespace: str | None = None,
    ) -> RelationRecord | None:
        """One relation `source -relation_type-> target` (weight `importance`, 0.7).

        Returns:
            The new relation, or None when that exact relation already exists.
        """
        row = (source, target, relation_type, importance)
        created = self.create_relations([row], thread_id=thread_id, namespace=namespace)
        return created[0] if created else None

    def add_observations(
        self,
        entity: str,
        observations: str | Sequence[str],
        *,
        supersedes: str | None = None,
        thread_id: str | None = None,
        confidence: float | None = None,
        importance: float | None = None,
        namespace: str | None = None,
    ) -> list[ObservationRecord]:
        """Append observations to an entity (identical current ones are skipped).

        With `supersedes`, the single new observation becomes the next version of that
        observation, which leaves current reads but stays in its history.

        Args:
            entity: The entity's name (case-insensitive).
            observations: One observation or several.
            supersedes: Id of the current observation the new one replaces.
            thread_id: Provenance tag.
            confidence: 0-1 (default 1.0).
            importance: 0-1 (default 0.5).
            namespace: Override the instance's namespace.

        Returns:
            The observations created.

        Raises:
            NotFoundError: No such entity, or `supersedes` is not one of its current
                observations.
            ValidationFailedError: An observation breaks the length/sentence rules.
            InvalidParameterError: `supersedes` with more than one observation.
        """
        contents = [observations] if isinstance(observations, str) else list(observations)
        contents = _strings("observations", contents)
        matrix = self._graph_passages(contents)
        return self._engine.add_observations(
            self._ns(namespace),
            _name("entity", entity),
            contents,
            supersedes=supersedes,
            vectors=None if matrix is None else list(matrix),
            thread_id=thread_id,
            confidence=None if confidence is None else _number("confidence", confidence),
            importance=None if importance is None else _number("importance", importance),
        )

    def delete_entities(self, names: Sequence[str], *, namespace: str | None = None) -> list[str]:
        """Delete entities with their observations, relations and mentions.

        Returns:
            The names deleted (unknown names are ignored).
        """
        return self._engine.delete_entities(self._ns(namespace), _strings("names", names))

    def delete_observations(
        self, entity: str, observations: Sequence[str], *, namespace: str | None = None
    ) -> int:
        """Delete an entity's observations, each given by id or exact content.

        Returns:
            How many were deleted.

        Raises:
            NotFoundError: No such entity.
        """
        which = _strings("observations", observations)
        return self._engine.delete_observations(self._ns(namespace), _name("entity", entity), which)

    def delete_relations(
        self,
        relations: Sequence[Mapping[str, Any] | Sequence[Any]],
        *,
        namespace: str | None = None,
    ) -> int:
        """Delete relations given as `{from, to, relationType}` or `(from, to, type)`.

        Returns:
            How many existed and were deleted.
        """
        rows = [_relation_row(r, i)[:3] for i, r in enumerate(_sequence("relations", relations))]
        return self._engine.delete_relations(self._ns(namespace), rows)

    # -- reads ---------------------------------------------------------------------------

    def get_entity(self, name: str, *, namespace: str | None = None) -> EntityView:
        """One entity with its current observations and its relations.

        Raises:
            NotFoundError: No such entity.
        """
        return self._engine.get_entity(self._ns(namespace), _name("name", name))

    def open_nodes(self, names: Sequence[str], *, namespace: str | None = None) -> GraphView:
        """Entities by name (unknown names skipped) and the relations among them."""
        return self._engine.open_nodes(self._ns(namespace), _strings("names", names))

    def read_graph(
        self,
        limit: int = 50,
        offset: int = 0,
        summary: bool = False,
        *,
        namespace: str | None = None,
    ) -> GraphPage:
        """A page of the graph, oldest entities first, with the relations among them.

        Args:
            limit: Entities per page, 1-1000.
            offset: Entities to skip; the page's `next_offset` continues.
            summary: Leave observations out (counts only), so a large graph fits a
                context window.
            namespace: Override the instance's namespace.
        """
        offset = _count("offset", offset, minimum=0)
        return self._engine.read_graph(
            self._ns(namespace), limit=_count("limit", limit), offset=offset, summary=summary
        )

    def search_nodes(
        self,
        query: str,
        limit: int = 10,
        *,
        vector: VectorLike | None = None,
        namespace: str | None = None,
    ) -> list[EntityHit]:
        """Hybrid search over entity names, types, descriptions and observations.

        Not substring matching: BM25, the query embedding (when a model is configured)
        and the graph signal are fused, and each entity appears once, ranked by its best
        document.

        Args:
            query: Natural-language query.
            limit: 1-50 entities.
            vector: A precomputed query embedding.
            namespace: Override the instance's namespace.

        Raises:
            EmbeddingError: The embedding model is still loading.
        """
        if not isinstance(query, str) or not query.strip():
            raise invalid("query", "query must be a non-empty string.")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 50:
            raise invalid("limit", f"limit must be an integer from 1 to 50, got {limit!r}.")
        q = as_vector(vector) if vector is not None else self._optional_query_vector(query)
        return self._engine.search_nodes(self._ns(namespace), query, q, limit=limit)

    def query_nodes(
        self,
        entity_type: str | None = None,
        min_importance: float | None = None,
        thread_id: str | None = None,
        limit: int = 50,
        *,
        namespace: str | None = None,
    ) -> list[EntityView]:
        """Entities filtered by type, minimum importance and thread, most important
        first. Observations are left out (see `observation_count`)."""
        floor = None if min_importance is None else _number("min_importance", min_importance)
        return self._engine.query_nodes(
            self._ns(namespace),
            entity_type=entity_type,
            min_importance=floor,
            thread_id=thread_id,
            limit=_count("limit", limit),
        )

    def get_related(
        self,
        entity: str,
        depth: int = 2,
        direction: str = "both",
        relation_type: str | None = None,
        as_of: TimeLike | None = None,
        limit: int = 100,
        *,
        namespace: str | None = None,
    ) -> list[RelatedEntity]:
        """Entities within `depth` hops, nearest first.

        Args:
            entity: Where to start.
            depth: Hops, 1-5.
            direction: "out" (relations from it), "in" (to it) or "both".
            relation_type: Follow only relations of this type.
            as_of: Follow the relations valid at that time.
            limit: At most this many entities, 1-1000.
            namespace: Override the instance's namespace.

        Raises:
            NotFoundError: No such entity.
            InvalidParameterError: Bad depth or direction.
        """
        return self._engine.get_related(
            self._ns(namespace),
            _name("entity", entity),
            depth=_count("depth", depth),
            direction=direction,
            relation_type=relation_type,
            as_of=optional_micros(as_of, "as_of"),
            limit=_count("limit", limit),
        )

    def find_relation_path(
        self, a: str, b: str, max_depth: int = 6, *, namespace: str | None = None
    ) -> RelationPath:
        """The shortest chain of relations between two entities, in either direction.

        Returns:
            RelationPath with the names and relation types along it (`found` is False
            when they are not connected within `max_depth` hops, 1-8).

        Raises:
            NotFoundError: Either entity does not exist.
        """
        ns = self._ns(namespace)
        raw = self._engine.find_relation_path(
            ns, _name("a", a), _name("b", b), max_depth=_count("max_depth", max_depth)
        )
        if not raw and a.strip().lower() == b.strip().lower():
            return RelationPath.to_itself(a, b, self._engine.get_entity(ns, a).name)
        return RelationPath.from_core(a, b, raw)

    def get_observation_history(
        self, entity: str, observation_id: str, *, namespace: str | None = None
    ) -> list[ObservationRecord]:
        """The version chain of an observation (given by any version's id), oldest first.

        Raises:
            NotFoundError: No such entity, or the observation is not one of its own.
        """
        return self._engine.observation_history(
            self._ns(namespace), _name("entity", entity), _name("observation_id", observation_id)
        )

    def get_analytics(
        self, thread_id: str | None = None, limit: int = 10, *, namespace: str | None = None
    ) -> Analytics:
        """recent_changes, top_important, most_connected and orphaned_entities of a
        thread (of the whole namespace when `thread_id` is None), with the graph's
        success metrics (`quality`: relation coverage, mean relations per entity,
        observation atomicity, save_memory's validation error rate in this process) for
        that scope and, for a thread, store-wide (`store_quality`)."""
        return self._engine.analytics(self._ns(namespace), thread_id, limit=_count("limit", limit))

    # -- graph algorithms ------------------------------------------------------------------

    def personalized_pagerank(
        self,
        seeds: str | Sequence[str] | Mapping[str, float] | Sequence[tuple[str, float]],
        teleport: float = 0.5,
        limit: int = 100,
        *,
        namespace: str | None = None,
    ) -> list[EntityScore]:
        """Personalized PageRank from seed entities, best first.

        Relations are walked in both directions, in proportion to their importance; the
        walk restarts at the seeds with probability `teleport`.

        Args:
            seeds: A name, names (equal weights), or name → weight.
            teleport: Restart probability, in (0, 1).
            limit: At most this many entities.
            namespace: Override the instance's namespace.

        Raises:
            NotFoundError: A seed entity does not exist.
        """
        raw = self._engine.personalized_pagerank(
            self._ns(namespace),
            _seeds(seeds),
            teleport=_number("teleport", teleport),
            limit=_count("limit", limit),
        )
        return [EntityScore(name=name, score=score) for name, score in raw]

    # -- helpers -----------------------------------------------------------------------------

    def _graph_passages(self, texts: list[str]) -> Vector | None:
        """Embeddings for graph texts, or None when no model is configured or it failed
        to load (the graph works without vectors; search_nodes then uses BM25 and PPR).

        Raises:
            EmbeddingError: The model is still loading.
        """
        service = self._embeddings
        if service is None or service.status == "error" or not texts:
            return None
        matrix: Vector = service.embed_passages(texts)
        return matrix

    def _entity_drafts(self, entities: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Copies of the entity dicts with `vector` and `observation_vectors` added, all
        texts embedded in one batch. Malformed entries are passed on untouched for the
        core to reject with their position."""
        drafts = [dict(e) if isinstance(e, Mapping) else e for e in _sequence("entities", entities)]
        texts: list[str] = []
        spans: list[tuple[dict[str, Any], int, int]] = []
        for draft in drafts:
            text = _document_text(draft)
            if text is None:
                continue
            observations = draft.get("observations", [])
            spans.append((draft, len(texts), len(observations)))
            texts.append(text)
            texts.extend(observations)
        matrix = self._graph_passages(texts)
        if matrix is not None:
            for draft, start, count in spans:
                draft["vector"] = matrix[start]
                draft["observation_vectors"] = list(matrix[start + 1 : start + 1 + count])
        return drafts


def _document_text(draft: Any) -> str | None:
    """The text an entity draft is embedded by, or None when it is malformed or carries
    its own vectors."""
    if not isinstance(draft, dict) or "vector" in draft or "observation_vectors" in draft:
        return None
    name, kind, description = draft.get("name"), draft.get("entityType"), draft.get("description")
    observations = draft.get("observations", [])
    if not (isinstance(name, str) and isinstance(kind, str) and _all_strings(observations)):
        return None
    return Engine.entity_document_text(
        name, kind, description if isinstance(description, str) else None
    )


def _all_strings(value: Any) -> bool:
    return isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)


def _sequence(field: str, value: Any) -> list[Any]:
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
        raise invalid(field, f"{field} must be a list, got {type(value).__name__}.")
    return list(value)


def _strings(field: str, value: Any) -> list[str]:
    items = _sequence(field, value)
    if not all(isinstance(v, str) for v in items):
        raise invalid(field, f"{field} must be a list of strings.")
    return items


def _name(field: str, value: Any) -> str:
    if not isinstance(value, str):
        raise invalid(field, f"{field} must be a string, got {type(value).__name__}.")
    return value


def _relation_row(value: Any, index: int) -> tuple[str, str, str, float | None]:
    """A relation as `(from, to, relationType, importance or None)`."""
    field = f"relations[{index}]"
    parts: list[Any]
    if isinstance(value, Mapping):
        parts = [value.get("from"), value.get("to"), value.get("relationType")]
        importance = value.get("importance")
    elif isinstance(value, Sequence) and not isinstance(value, str) and len(value) in (3, 4):
        parts = list(value[:3])
        importance = value[3] if len(value) == 4 else None
    else:
        raise invalid(field, f"{field} must be {{from, to, relationType}} or a 3/4-tuple.")
    if not all(isinstance(p, str) for p in parts):
        raise invalid(field, f"{field} needs string from, to and relationType.")
    source, target, kind = parts
    return (source, target, kind, None if importance is None else _number("importance", importance))


def _seeds(value: Any) -> list[tuple[str, float]]:
    """PPR seeds as `(name, weight)` pairs."""
    if isinstance(value, str):
        return [(value, 1.0)]
    if isinstance(value, Mapping):
        return _nonempty([(_name("seeds", k), _number("seeds", w)) for k, w in value.items()])
    seeds: list[tuple[str, float]] = []
    for item in _sequence("seeds", value):
        if isinstance(item, str):
            seeds.append((item, 1.0))
        elif isinstance(item, Sequence) and len(item) == 2:
            seeds.append((_name("seeds", item[0]), _number("seeds", item[1])))
        else:
            raise invalid("seeds", "seeds must be names or (name, weight) pairs.")
    return _nonempty(seeds)


def _nonempty(seeds: list[tuple[str, float]]) -> list[tuple[str, float]]:
    if not seeds:
        raise invalid("seeds", "Pass at least one seed entity.")
    return seeds
