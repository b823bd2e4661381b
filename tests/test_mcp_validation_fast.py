"""Arguments that plainly satisfy a tool's schema are let through without jsonschema
(``surely_valid``); jsonschema still decides everything else and words the errors. The
fast check must never pass what jsonschema refuses: checked here on every tool's schema
with the reliability fuzzer's arguments (valid ones and near misses of them), and on the
edges of the keywords it reads."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from benches.reliability import fuzz
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from memcore.tools.groups import load_registry
from memcore.tools.validation import surely_valid

SCHEMAS = {
    spec.name: dict(spec.argument_schema or spec.input_schema) for spec in load_registry().all()
}


@pytest.mark.parametrize("tool", sorted(SCHEMAS))
def test_the_fast_check_never_passes_what_jsonschema_refuses(tool: str, tmp_path: Path) -> None:
    schema = SCHEMAS[tool]
    validator = Draft202012Validator(schema)
    sandbox = fuzz.make_sandbox(tmp_path / "sandbox")
    passed: list[bool] = []

    @settings(
        max_examples=150,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(fuzz.arguments(schema, sandbox))
    def agree(arguments: dict[str, Any]) -> None:
        fast = surely_valid(schema, arguments)
        passed.append(fast)
        if fast:
            assert not list(validator.iter_errors(arguments)), arguments

    agree()
    # The check is of use only if well-formed calls take it: most drawn arguments are
    # valid, so some must pass it (near misses and 5.0-for-an-integer do not).
    assert any(passed), f"{tool}: no drawn arguments passed the fast check"


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        ({"type": "integer", "minimum": 1}, 3, True),
        ({"type": "integer"}, True, False),  # bool is not a number
        ({"type": "integer"}, 5.0, False),  # valid, but jsonschema decides
        ({"type": "integer", "maximum": 10}, 10**400, False),  # out of range, no overflow
        ({"type": "number", "minimum": 0}, 10**400, True),
        ({"type": "number"}, float("nan"), False),
        ({"type": "number", "maximum": 1}, float("inf"), False),
        ({"type": "string", "maxLength": 2}, "éé", True),  # code points, as jsonschema
        ({"type": "string", "maxLength": 2}, "ééé", False),
        ({"minLength": 3}, 7, True),  # a string rule on a number does not apply
        ({"enum": ["a", "b"]}, "b", True),
        ({"enum": ["a", 1]}, "a", False),  # a mixed enum goes to jsonschema
        ({"const": True}, True, True),
        ({"const": True}, 1, False),
        ({"type": ["string", "null"]}, None, True),
        ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, 2, True),
        ({"type": "array", "items": {"type": "string"}, "maxItems": 2}, ["a", "b"], True),
        ({"type": "array", "items": {"type": "string"}}, ["a", 2], False),
        ({"type": "object", "required": ["a"]}, {}, False),
        (
            {"type": "object", "properties": {"a": True}, "additionalProperties": False},
            {"a": 1},
            True,
        ),
        ({"type": "object", "additionalProperties": False}, {"a": 1}, False),
        ({"type": "object", "additionalProperties": {"type": "integer"}}, {"a": 1}, True),
        ({"type": "string", "format": "date-time"}, "not a date", True),  # format annotates
        ({"type": "string", "pattern": "^a"}, "abc", False),  # a keyword it does not read
        ({"type": "object", "patternProperties": {"^x": {}}}, {}, False),
    ],
)
def test_keyword_edges(schema: dict[str, Any], value: Any, expected: bool) -> None:
    assert surely_valid(schema, value) is expected
    if expected:
        assert not list(Draft202012Validator(schema).iter_errors(value))


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
        ),
        max_leaves=8,
    )
)
@settings(max_examples=300, deadline=None, database=None)
def test_any_json_value_against_a_nested_schema(value: Any) -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": -5, "maximum": 5},
            "x": {"type": "number", "minimum": 0},
            "s": {"type": "string", "minLength": 1, "maxLength": 4},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
        },
        "required": ["n"],
        "additionalProperties": False,
    }
    for candidate in (value, {"n": value}, {"n": 1, "x": value}, {"n": 1, "tags": value}):
        if surely_valid(schema, candidate):
            assert not list(Draft202012Validator(schema).iter_errors(candidate)), candidate


def test_a_session_of_well_formed_calls_never_imports_jsonschema() -> None:
    # Its import is about a tenth of a second of Python, which a server's first call paid
    # beside the model's load.
    probe = (
        "import sys\n"
        "from memcore.tools.groups import load_registry\n"
        "from memcore.tools.validation import ArgumentChecker\n"
        "spec = load_registry().get('store_memory')\n"
        "checker = ArgumentChecker(spec.argument_schema or spec.input_schema)\n"
        "checker.check({'content': 'The user prefers tea', 'importance': 0.5})\n"
        "print('jsonschema' in sys.modules)\n"
    )
    found = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == "False"
