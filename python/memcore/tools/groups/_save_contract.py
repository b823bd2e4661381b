"""``save_memory``'s contract (docs/guide.md, "The knowledge-graph contract"): the input
schema exactly as the contract gives it, the schema its arguments are checked against, and
the shape of a rejected request.

The contract's rules (lengths, at most two sentences, at least one relation, known
targets) are checked by the core, which words every problem as the contract does and
reports them all at once. So the server publishes the contract's schema for clients and
models to read, but checks arguments only for shape (types, required and unknown
fields): a JSON Schema rejection would otherwise stop at the first rule with generic
wording, before the core could list every problem. ``threadId`` is one of those rules: the
contract requires it, and the core lists a missing one with the request's other problems.
"""

from __future__ import annotations

from typing import Any

from memcore.errors import MemcoreError
from memcore.records.graph import MAX_OBSERVATION_CHARS, MAX_TYPE_CHARS
from memcore.tools import schema
from memcore.tools.groups._graph_shapes import entity_name_item, observation_item

#: The save_memory schema exactly as the contract gives it (docs/guide.md), plus descriptions
#: and ``additionalProperties: false`` on its objects.
SAVE_MEMORY_SCHEMA: schema.Schema = {
    "type": "object",
    "properties": {
        "entities": {
            "type": "array",
            "minItems": 1,
            "description": "The entities to save, each with its facts and its relations.",
            "items": {
                "type": "object",
                "properties": {
                    "name": entity_name_item(),
                    "entityType": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": MAX_TYPE_CHARS,
                        "description": "Type of entity (e.g., Person, Document, File, or "
                        "custom types like Patient, API)",
                    },
                    "observations": {
                        "type": "array",
                        "minItems": 1,
                        "items": observation_item(),
                        "description": "Array of atomic facts. Each must be ONE fact, max "
                        f"{MAX_OBSERVATION_CHARS} chars.",
                    },
                    "relations": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "properties": {
                                "targetEntity": {
                                    "type": "string",
                                    "description": "Name of entity to connect to (must exist "
                                    "in this request)",
                                },
                                "relationType": {
                                    "type": "string",
                                    "maxLength": MAX_TYPE_CHARS,
                                    "description": "Type of relationship (e.g., 'created by', "
                                    "'contains', 'uses')",
                                },
                                "importance": {
                                    "type": "number",
                                    "minimum": 0,
                                    "maximum": 1,
                                    "default": 0.7,
                                },
                            },
                            "required": ["targetEntity", "relationType"],
                            "additionalProperties": False,
                        },
                        "description": "REQUIRED: Every entity must have at least 1 relation",
                    },
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1, "default": 1.0},
                    "importance": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5},
                },
                "required": ["name", "entityType", "observations", "relations"],
                "additionalProperties": False,
            },
        },
        "threadId": {
            "type": "string",
            "minLength": 1,
            "description": "Thread ID for this conversation/project",
        },
    },
    "required": ["entities", "threadId"],
    "additionalProperties": False,
}

_LIMIT_KEYWORDS = frozenset({"minLength", "maxLength", "minItems", "minimum", "maximum"})


def _without_limits(node: Any) -> Any:
    """A schema with its length, count and range rules removed, types kept."""
    if isinstance(node, dict):
        return {k: _without_limits(v) for k, v in node.items() if k not in _LIMIT_KEYWORDS}
    if isinstance(node, list):
        return [_without_limits(v) for v in node]
    return node


def rejected(error: MemcoreError) -> dict[str, Any]:
    """The contract's failure shape: nothing created, every problem listed."""
    if error.code not in ("VALIDATION_FAILED", "INVALID_PARAMETER"):
        return {}
    details = getattr(error, "details", None)
    problems = details.get("problems") if isinstance(details, dict) else None
    if not isinstance(problems, list):
        field = details.get("field") if isinstance(details, dict) else None
        problems = [
            {
                "entity": None,
                "value": None,
                "problem": str(error),
                "suggestion": f"Fix {field or 'the request'} and call save_memory again.",
            }
        ]
    return {
        "success": False,
        "created": {"entities": 0, "relations": 0, "observations": 0},
        "warnings": [],
        "quality_score": 0.0,
        "validation_errors": problems,
    }


def _checked_schema() -> schema.Schema:
    """The contract's schema without its rules, and without ``threadId`` among the required
    fields: the core reports a missing (empty) ``threadId`` together with every other
    problem of the request, where a schema rejection would hide them all behind it."""
    checked: dict[str, Any] = _without_limits(SAVE_MEMORY_SCHEMA)
    checked["required"] = [name for name in checked["required"] if name != "threadId"]
    return checked


#: What arguments are checked against: the contract's schema without its rules (above).
CHECKED_SCHEMA: schema.Schema = _checked_schema()
