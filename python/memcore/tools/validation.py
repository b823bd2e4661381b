"""Check tool arguments against the tool's JSON Schema before the facade sees them.

The MCP SDK does not validate ``tools/call`` arguments, so this is the only gate: a wrong
type, an unknown field or a value out of range becomes ``INVALID_PARAMETER`` naming the
field, with the rule that was broken, in words a model can act on.

jsonschema decides and explains; arguments that plainly satisfy the keywords memcore's
own schemas use are let through without it (:func:`surely_valid`). Its import is about a
tenth of a second of Python, which a server's first call paid beside the model's load
(benches/results/round-rerun.md), and a session of well-formed calls never needs it.
"""

from __future__ import annotations

import importlib
import json
import math
import threading
from collections.abc import Callable, Mapping, Sequence, Sized
from typing import Any

from memcore.errors import InvalidParameterError, invalid

# jsonschema ships no type information; its validators and errors are handled as Any.
Validator = Any
ValidationError = Any

_JSON_TYPES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "object": "an object",
    "array": "an array",
    "null": "null",
}


class ArgumentChecker:
    """Validates one tool's arguments; the compiled validator is built on first use."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self._schema = dict(schema)
        self._validator: Validator | None = None
        self._lock = threading.Lock()

    def check(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """The arguments with schema defaults filled in.

        Raises:
            InvalidParameterError: The first problem found, naming the field in ``details``.
        """
        given = {} if arguments is None else dict(arguments)
        if not surely_valid(self._schema, given):
            errors = sorted(self.validator().iter_errors(given), key=_error_rank)
            if errors:
                raise _describe(errors[0], self._schema)
        return self._with_defaults(given)

    def validator(self) -> Validator:
        """The compiled validator (compiling imports jsonschema, so it is deferred)."""
        if self._validator is None:
            with self._lock:
                if self._validator is None:
                    jsonschema = importlib.import_module("jsonschema")
                    self._validator = jsonschema.Draft202012Validator(self._schema)
        return self._validator

    def _with_defaults(self, given: dict[str, Any]) -> dict[str, Any]:
        properties: Mapping[str, Any] = self._schema.get("properties", {})
        for name, prop in properties.items():
            if name not in given and "default" in prop:
                given[name] = prop["default"]
            elif prop.get("type") == "integer" and isinstance(given.get(name), float):
                # JSON Schema counts 5.0 as an integer; the facade wants a real int.
                given[name] = int(given[name])
        return given


def surely_valid(schema: Mapping[str, Any] | bool, value: Any) -> bool:
    """Whether ``value`` satisfies ``schema``, answered without jsonschema; False also
    where it cannot tell (a keyword outside those below, 5.0 for an integer, a number
    that is not finite), so only a True skips jsonschema, which then finds nothing.

    Each keyword is read as draft 2020-12 reads it: one that constrains another kind of
    value (``minLength`` on a number) does not apply, ``bool`` is not a number, and
    ``format`` only annotates (no format checker is passed to jsonschema either).
    """
    if not isinstance(schema, Mapping):
        return schema is True  # a boolean schema
    for keyword, rule in schema.items():
        if keyword in _ANNOTATIONS:
            continue
        check = _CHECKS.get(keyword)
        if check is None or not check(rule, value, schema):
            return False
    return True


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_finite(value: Any) -> bool:
    # An int of any size is finite (and too large for math.isfinite); a float may be NaN.
    return _is_number(value) and (isinstance(value, int) or math.isfinite(value))


def _bound(holds: Callable[[float, float], bool]) -> Callable[[Any, Any, Any], bool]:
    def check(rule: Any, value: Any, _schema: Any) -> bool:
        if not _is_number(value):
            return True
        return _is_finite(value) and _is_number(rule) and holds(value, rule)

    return check


def _size(kind: type[Sized], holds: Callable[[int, int], bool]) -> Callable[[Any, Any, Any], bool]:
    def check(rule: Any, value: Any, _schema: Any) -> bool:
        return not isinstance(value, kind) or (isinstance(rule, int) and holds(len(value), rule))

    return check


def _additional(rule: Any, value: Any, schema: Mapping[str, Any]) -> bool:
    if not isinstance(value, dict) or rule is True:
        return True
    extra = [key for key in value if key not in schema.get("properties", {})]
    if rule is False:
        return not extra
    return isinstance(rule, dict) and all(surely_valid(rule, value[key]) for key in extra)


_ANNOTATIONS = frozenset({"description", "default", "title", "examples", "format"})
_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda value: isinstance(value, str),
    "boolean": lambda value: isinstance(value, bool),
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "null": lambda value: value is None,
    "integer": lambda value: isinstance(value, int) and not isinstance(value, bool),
    "number": _is_finite,
}
_CHECKS: dict[str, Callable[[Any, Any, Mapping[str, Any]], bool]] = {
    "type": lambda rule, value, _: any(
        _TYPES.get(name, lambda _: False)(value)
        for name in ([rule] if isinstance(rule, str) else rule)
    ),
    "enum": lambda rule, value, _: (
        isinstance(value, str) and all(isinstance(option, str) for option in rule) and value in rule
    ),
    "const": lambda rule, value, _: rule is True and value is True,
    "minimum": _bound(lambda value, low: value >= low),
    "maximum": _bound(lambda value, high: value <= high),
    "minLength": _size(str, lambda size, low: size >= low),
    "maxLength": _size(str, lambda size, high: size <= high),
    "minItems": _size(list, lambda size, low: size >= low),
    "maxItems": _size(list, lambda size, high: size <= high),
    "required": lambda rule, value, _: (
        not isinstance(value, dict) or all(name in value for name in rule)
    ),
    "properties": lambda rule, value, _: (
        not isinstance(value, dict)
        or all(surely_valid(rule[name], value[name]) for name in rule if name in value)
    ),
    "additionalProperties": _additional,
    "items": lambda rule, value, _: (
        not isinstance(value, list)
        or (isinstance(rule, dict) and all(surely_valid(rule, item) for item in value))
    ),
    "anyOf": lambda rule, value, _: any(surely_valid(option, value) for option in rule),
}


def _error_rank(error: ValidationError) -> tuple[int, int, str]:
    # Unknown and missing fields first (they explain the rest), then the shallowest path.
    keyword = str(error.validator)
    first = 0 if keyword in ("additionalProperties", "required") else 1
    return (first, len(error.path), _field(error.path))


def _describe(error: ValidationError, schema: Mapping[str, Any]) -> InvalidParameterError:
    keyword = str(error.validator)
    where = _field(error.path)
    instance = error.instance
    if keyword == "additionalProperties" and isinstance(instance, dict):
        allowed = sorted(_subschema(schema, error.path).get("properties", {}))
        unknown = sorted(k for k in instance if k not in allowed)
        name = _join(where, unknown[0] if unknown else "?")
        err = invalid(
            name, f"Unknown field '{name}'. Valid fields: {', '.join(allowed) or 'none'}."
        )
        err.details["allowed"] = allowed
        return err
    if keyword == "required" and isinstance(instance, dict):
        missing = [r for r in error.validator_value if r not in instance]
        name = _join(where, missing[0] if missing else "?")
        return invalid(name, f"Missing required field '{name}'.")
    name = where or "arguments"
    return invalid(name, f"{name} {_rule(keyword, error, _subschema(schema, error.path))}")


def _rule(keyword: str, error: ValidationError, prop: Mapping[str, Any]) -> str:
    got = _show(error.instance)
    if keyword == "type":
        return f"must be {_expected_type(error.validator_value)}, got {got}."
    if keyword == "enum":
        options = ", ".join(str(v) for v in error.validator_value)
        return f"must be one of: {options}; got {got}."
    if keyword == "const":
        return f"must be {json.dumps(error.validator_value)}, got {got}."
    if keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        low, high = prop.get("minimum"), prop.get("maximum")
        if low is not None and high is not None:
            return f"must be from {low} to {high}, got {got}."
        return f"is out of range: {error.message}."
    if keyword in ("minLength", "maxLength"):
        return f"must have {_bounds(prop, 'minLength', 'maxLength')} characters, got {got}."
    if keyword in ("minItems", "maxItems"):
        return f"must have {_bounds(prop, 'minItems', 'maxItems')} items."
    return f"is invalid: {error.message}."


def _bounds(prop: Mapping[str, Any], low_key: str, high_key: str) -> str:
    low, high = prop.get(low_key), prop.get(high_key)
    if low is not None and high is not None:
        return f"{low} to {high}"
    return f"at least {low}" if low is not None else f"at most {high}"


def _expected_type(value: Any) -> str:
    names = [value] if isinstance(value, str) else list(value)
    return " or ".join(_JSON_TYPES.get(n, n) for n in names)


def _show(value: Any) -> str:
    if isinstance(value, str):
        return repr(value) if len(value) <= 40 else f"a string of {len(value)} characters"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return f"an array of {len(value)} items"
    return json.dumps(value)


def _subschema(schema: Mapping[str, Any], path: Sequence[Any]) -> Mapping[str, Any]:
    node: Mapping[str, Any] = schema
    for part in path:
        if isinstance(part, int):
            node = node.get("items", {})
        else:
            node = node.get("properties", {}).get(part, {})
    return node


def _field(path: Sequence[Any]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _join(parent: str, name: str) -> str:
    return f"{parent}.{name}" if parent else name
