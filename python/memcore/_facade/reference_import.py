"""Import the reference MCP memory server's ``memory.json`` (``memcore import
--from-reference-server``).

That server keeps its knowledge graph as JSON Lines, one object per line::

    {"type": "entity", "name": "Ada", "entityType": "person", "observations": ["..."]}
    {"type": "relation", "from": "Ada", "to": "Analytical Engine", "relationType": "wrote for"}

Entities become memcore entities with their observations, relations become relations, in the
namespace of the store (or ``namespace``). The import is idempotent: an entity that exists
gets only the observations it does not hold yet, a relation that exists is left alone, so
importing the same file twice changes nothing, and a file fixed after a first attempt can
simply be imported again.

Every line is applied on its own (one transaction each), so a line memcore cannot take is
reported with its number and the reason and leaves nothing behind, while the others are
imported: blank lines, lines that are not a JSON object, unknown ``type`` values, missing or
mistyped fields, a second line for the same entity or relation, observations that break the
knowledge-graph rules (``docs/guide.md``: 5-150 characters, at most two sentences) and
relations whose ends are neither in the file nor in the store. Relations are applied after
every entity, so a relation may come before the entities it links.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memcore.errors import MemcoreError, NotFoundError

if TYPE_CHECKING:
    from memcore.memory import Memory


@dataclass(frozen=True, slots=True)
class SkippedLine:
    """A line of the file that was not imported, and why."""

    line: int
    reason: str


@dataclass
class ReferenceImportReport:
    """What an import of a reference-server file did.

    Attributes:
        entities_created: Entities that did not exist before.
        entities_existing: Entity lines whose entity was already stored (their new
            observations were added).
        observations_added: Observations written, on new and existing entities.
        relations_created: Relations that did not exist before.
        relations_existing: Relation lines whose relation was already stored.
        skipped: Lines not imported, in line order (blank lines included).
    """

    entities_created: int = 0
    entities_existing: int = 0
    observations_added: int = 0
    relations_created: int = 0
    relations_existing: int = 0
    skipped: list[SkippedLine] = field(default_factory=list)

    @property
    def rejected(self) -> list[SkippedLine]:
        """Skipped lines that held something (blank lines left out): what needs a fix."""
        return [s for s in self.skipped if s.reason != BLANK]

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON values."""
        return {
            "entities": {"created": self.entities_created, "existing": self.entities_existing},
            "observations": {"added": self.observations_added},
            "relations": {"created": self.relations_created, "existing": self.relations_existing},
            "skipped": [{"line": s.line, "reason": s.reason} for s in self.skipped],
        }


BLANK = "blank line"


@dataclass(frozen=True, slots=True)
class _Entity:
    line: int
    name: str
    entity_type: str
    observations: list[str]


@dataclass(frozen=True, slots=True)
class _Relation:
    line: int
    source: str
    target: str
    relation_type: str


def import_reference_graph(
    memory: Memory,
    lines: Iterable[bytes | str],
    *,
    namespace: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> ReferenceImportReport:
    """Import a reference memory server's ``memory.json`` into ``memory``.

    Args:
        memory: The open, writable store.
        lines: The file's lines (bytes or text).
        namespace: The target namespace (None: the store's).
        progress: Called with the size of each line read.

    Returns:
        What was created, what existed already, and the lines skipped with their reasons.

    Raises:
        MemcoreError: The store itself failed (STORAGE_ERROR, EMBEDDING_ERROR, …); the
            lines applied before stay imported and a second run completes the rest.
    """
    report = ReferenceImportReport()
    entities, relations = _parse(lines, report, progress)
    for entity in entities:
        _apply_entity(memory, entity, namespace, report)
    for relation in relations:
        _apply_relation(memory, relation, namespace, report)
    report.skipped.sort(key=lambda s: s.line)
    return report


# -- reading ---------------------------------------------------------------------------------


def _parse(
    lines: Iterable[bytes | str],
    report: ReferenceImportReport,
    progress: Callable[[int], None] | None,
) -> tuple[list[_Entity], list[_Relation]]:
    """The file's well-formed entity and relation lines; the others go to the report."""
    entities: list[_Entity] = []
    relations: list[_Relation] = []
    seen_entities: dict[str, int] = {}
    seen_relations: dict[tuple[str, str, str], int] = {}
    for number, raw in enumerate(lines, start=1):
        if progress is not None:
            progress(len(raw))
        try:
            item = _read_line(number, raw)
        except ValueError as exc:
            report.skipped.append(SkippedLine(number, str(exc)))
            continue
        if isinstance(item, _Entity):
            key = item.name.strip().lower()
            first = seen_entities.setdefault(key, number)
            if first != number:
                reason = f"entity {item.name!r} already appears on line {first}"
                report.skipped.append(SkippedLine(number, reason))
            else:
                entities.append(item)
        else:
            triple = (
                item.source.strip().lower(),
                item.target.strip().lower(),
                item.relation_type.strip().lower(),
            )
            first = seen_relations.setdefault(triple, number)
            if first != number:
                reason = f"the same relation already appears on line {first}"
                report.skipped.append(SkippedLine(number, reason))
            else:
                relations.append(item)
    return entities, relations


def _read_line(number: int, raw: bytes | str) -> _Entity | _Relation:
    """Line ``number`` as an entity or a relation.

    Raises:
        ValueError: Why the line cannot be imported.
    """
    if not raw.strip():
        raise ValueError(BLANK)
    try:
        record = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"not JSON ({exc})") from None
    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    kind = record.get("type")
    if kind == "entity":
        observations = record.get("observations", [])
        if not isinstance(observations, list) or not all(isinstance(o, str) for o in observations):
            raise ValueError("an entity's 'observations' must be a list of strings")
        return _Entity(number, _text(record, "name"), _text(record, "entityType"), observations)
    if kind == "relation":
        return _Relation(
            number, _text(record, "from"), _text(record, "to"), _text(record, "relationType")
        )
    raise ValueError(f"unknown type {kind!r} (expected 'entity' or 'relation')")


def _text(record: Mapping[str, Any], name: str) -> str:
    value = record.get(name)
    if not isinstance(value, str) or not value.strip():
        kind = record.get("type")
        raise ValueError(f"{kind} without {name!r} (a non-empty string is required)")
    return value


# -- writing ---------------------------------------------------------------------------------


def _apply_entity(
    memory: Memory, entity: _Entity, namespace: str | None, report: ReferenceImportReport
) -> None:
    """Create the entity, or add to an existing one the observations it lacks; one
    transaction either way, so a rejected line writes nothing."""
    try:
        try:
            stored = memory.get_entity(entity.name, namespace=namespace)
        except NotFoundError:
            draft = {
                "name": entity.name,
                "entityType": entity.entity_type,
                "observations": entity.observations,
            }
            if memory.create_entities([draft], namespace=namespace):
                report.entities_created += 1
                # Counted from the store: it keeps one of identical observations.
                created = memory.get_entity(entity.name, namespace=namespace)
                report.observations_added += created.observation_count
            return
        report.entities_existing += 1
        # Only what the entity lacks, so a re-import neither embeds nor writes anything.
        held = {o.content for o in stored.observations}
        missing = [o for o in dict.fromkeys(entity.observations) if o not in held]
        if missing:
            added = memory.add_observations(entity.name, missing, namespace=namespace)
            report.observations_added += len(added)
    except MemcoreError as exc:
        if not _line_error(exc):
            raise
        report.skipped.append(SkippedLine(entity.line, _reason(exc)))


def _apply_relation(
    memory: Memory, relation: _Relation, namespace: str | None, report: ReferenceImportReport
) -> None:
    row = {"from": relation.source, "to": relation.target, "relationType": relation.relation_type}
    try:
        created = memory.create_relations([row], namespace=namespace)
    except MemcoreError as exc:
        if not _line_error(exc):
            raise
        reason = _reason(exc)
        if isinstance(exc, NotFoundError):
            reason += " (neither in the file nor in the store)"
        report.skipped.append(SkippedLine(relation.line, reason))
        return
    if created:
        report.relations_created += 1
    else:
        report.relations_existing += 1


def _line_error(exc: MemcoreError) -> bool:
    """Whether the error is about the line's content (skip the line) rather than the store
    (stop the import)."""
    return type(exc).code in ("INVALID_PARAMETER", "VALIDATION_FAILED", "NOT_FOUND")


def _reason(exc: MemcoreError) -> str:
    return f"{type(exc).code}: {exc}"
