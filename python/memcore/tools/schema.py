"""Small builders for the tools' JSON Schemas (draft 2020-12).

Every schema they build is complete on its own: a type, limits, a default where there is one
and a description written for the model. Arguments objects never accept unknown fields.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Schema = dict[str, Any]


def arguments(properties: dict[str, Schema], required: Sequence[str] = ()) -> Schema:
    """The schema of a tool's arguments object; unknown fields are refused."""
    schema: Schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema


def string(
    description: str,
    *,
    min_length: int | None = None,
    max_length: int | None = None,
    enum: Sequence[str] | None = None,
    default: str | None = None,
    date_time: bool = False,
) -> Schema:
    """A string; ``date_time`` marks ISO 8601 times (checked by the facade, naming the field)."""
    schema: Schema = {"type": "string", "description": description}
    if enum is not None:
        schema["enum"] = list(enum)
    if min_length is not None:
        schema["minLength"] = min_length
    if max_length is not None:
        schema["maxLength"] = max_length
    if date_time:
        schema["format"] = "date-time"
    if default is not None:
        schema["default"] = default
    return schema


def integer(description: str, *, minimum: int, maximum: int, default: int | None = None) -> Schema:
    """An integer in ``[minimum, maximum]``."""
    schema: Schema = {
        "type": "integer",
        "description": description,
        "minimum": minimum,
        "maximum": maximum,
    }
    if default is not None:
        schema["default"] = default
    return schema


def number(
    description: str, *, minimum: float, maximum: float, default: float | None = None
) -> Schema:
    """A number in ``[minimum, maximum]``."""
    schema: Schema = {
        "type": "number",
        "description": description,
        "minimum": minimum,
        "maximum": maximum,
    }
    if default is not None:
        schema["default"] = default
    return schema


def boolean(description: str, *, default: bool | None = None) -> Schema:
    """A boolean."""
    schema: Schema = {"type": "boolean", "description": description}
    if default is not None:
        schema["default"] = default
    return schema


def json_object(description: str) -> Schema:
    """Any JSON object (free-form metadata)."""
    return {"type": "object", "description": description, "additionalProperties": True}


def const_true(description: str) -> Schema:
    """A boolean that must be ``true`` (a confirmation)."""
    return {"type": "boolean", "const": True, "description": description}
