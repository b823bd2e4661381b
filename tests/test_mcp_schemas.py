"""The MCP layer's parts in process: every tool schema is valid JSON Schema, profiles pick
the right tools, a new group registers by adding its module, arguments are checked with
field-naming messages, limits, the Prometheus text, and log redaction."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from memcore import logs
from memcore.errors import InvalidParameterError, PayloadTooLargeError
from memcore.mcp.metrics import Metrics
from memcore.tools.groups import load_registry
from memcore.tools.limits import Limits
from memcore.tools.registry import CORE_TOOLS, ProfileError, ToolCall, ToolRegistry, ToolSpec
from memcore.tools.schema import arguments, integer, string
from memcore.tools.validation import ArgumentChecker
from test_mcp_support import ALL_TOOLS, GROUP_TOOLS, LEGACY_TOOLS


def test_every_schema_is_valid_draft_2020_12() -> None:
    for spec in load_registry().all():
        Draft202012Validator.check_schema(dict(spec.input_schema))
        assert spec.input_schema["additionalProperties"] is False, spec.name
        for name, prop in spec.input_schema["properties"].items():
            assert prop.get("description"), (spec.name, name)
            default = prop.get("default")
            if default is not None:  # a default must itself be valid
                Draft202012Validator({"type": "object", "properties": {name: prop}}).validate(
                    {name: default}
                )


def test_profiles() -> None:
    registry = load_registry()
    core = [spec.name for spec in registry.select("core")]
    assert set(core) == {name for name in CORE_TOOLS if registry.get(name)}
    listing = [spec.name for spec in registry.all()]
    assert core == sorted(core, key=listing.index)  # listed in group order
    assert [spec.name for spec in registry.select("all")] == ALL_TOOLS
    for group, names in GROUP_TOOLS.items():
        # "search" names the search tool before its group (a tool name wins).
        if group not in ("legacy", "search"):
            assert [spec.name for spec in registry.select(group)] == names, group
    picked = [spec.name for spec in registry.select("temporal,get_status,temporal")]
    assert picked == ["get_valid", "get_valid_at", "invalidate", "get_status"]
    with pytest.raises(ProfileError, match="nope, grahp"):
        registry.select("core,nope,graph,grahp")


def _noop(call: ToolCall) -> dict[str, Any]:
    return {}


def test_a_new_group_slots_into_the_listing_order() -> None:
    registry = load_registry()
    registry.add(ToolSpec("zz_tool", "zz", "Z", "A new capability.", arguments({}), _noop))
    assert registry.groups[-2:] == ["admin", "zz"]
    assert [spec.name for spec in registry.all()][-1] == "zz_tool"
    with pytest.raises(ValueError, match="registered twice"):
        registry.add(ToolSpec("save_memory", "graph", "", "", arguments({}), _noop))
    assert [spec.name for spec in ToolRegistry().select("core")] == []


def test_shared_tools_are_registered_once_and_selected_by_either_group() -> None:
    registry = load_registry()
    assert [spec.name for spec in registry.select("legacy")] == LEGACY_TOOLS
    both = [spec.name for spec in registry.select("graph,legacy")]
    assert len(both) == len(set(both)) == len(GROUP_TOOLS["graph"]) + len(GROUP_TOOLS["legacy"])
    shared = registry.get("search_nodes")
    assert shared is not None and shared.group == "graph" and shared.in_group("legacy")
    for name in GROUP_TOOLS["legacy"]:
        spec = registry.get(name)
        assert spec is not None and spec.description.startswith("Deprecated: prefer "), name


def test_save_memory_publishes_the_contract_schema_and_checks_types_only() -> None:
    spec = load_registry().get("save_memory")
    assert spec is not None and spec.argument_schema is not None
    entity = spec.input_schema["properties"]["entities"]["items"]
    assert entity["required"] == ["name", "entityType", "observations", "relations"]
    assert entity["properties"]["observations"]["items"] == {
        "type": "string",
        "minLength": 5,
        "maxLength": 150,
    }
    relation = entity["properties"]["relations"]["items"]["properties"]
    assert relation["importance"]["default"] == 0.7
    assert entity["properties"]["relations"]["minItems"] == 1
    # The rules with the contract's wording are the core's: the checker lets them through...
    checker = ArgumentChecker(spec.argument_schema)
    too_long = {"name": "A", "entityType": "T", "observations": ["x" * 200], "relations": []}
    assert checker.check({"entities": [too_long], "threadId": "t"})
    # ...but still refuses wrong types and unknown fields, naming them.
    with pytest.raises(InvalidParameterError, match=r"entities\[0\]\.colour"):
        checker.check({"entities": [{**too_long, "colour": 1}], "threadId": "t"})


def test_arguments_get_defaults_and_named_errors() -> None:
    checker = ArgumentChecker(
        arguments(
            {
                "query": string("q", min_length=1),
                "limit": integer("n", minimum=1, maximum=20, default=5),
            },
            required=["query"],
        )
    )
    assert checker.check({"query": "x"}) == {"query": "x", "limit": 5}
    assert checker.check({"query": "x", "limit": 7.0}) == {"query": "x", "limit": 7}
    with pytest.raises(InvalidParameterError) as info:
        checker.check({"query": "", "limit": 3})
    assert info.value.details == {"field": "query"}
    assert "must have at least 1 characters" in str(info.value)
    with pytest.raises(InvalidParameterError, match="Unknown field 'lmit'"):
        checker.check({"query": "x", "lmit": 3, "limit": 99})
    with pytest.raises(InvalidParameterError, match="limit must be an integer, got true"):
        checker.check({"query": "x", "limit": True})


def test_limits() -> None:
    limits = Limits(max_request_bytes=100, max_items=3)
    limits.check({"a": [1, 2, 3], "b": {"c": "x" * 50}})
    with pytest.raises(PayloadTooLargeError) as info:
        limits.check({"a": {"b": [[1, 2, 3, 4]]}})
    assert info.value.details == {"field": "a.b[0]", "limit": 3}
    with pytest.raises(PayloadTooLargeError, match="the limit is 100"):
        limits.check({"a": "é" * 60})
    nested: Any = []
    for _ in range(100):
        nested = [nested]
    with pytest.raises(PayloadTooLargeError, match="nested too deeply"):
        Limits().check({"x": nested})


def test_metrics_exposition() -> None:
    metrics = Metrics()
    metrics.observe("recall", "ok", 0.004)
    metrics.observe("recall", "EMBEDDING_ERROR", 0.2)
    metrics.reject("unauthorized")
    text = metrics.render(lambda: {"memcore_store_open": 1.0})
    assert 'memcore_tool_calls_total{tool="recall",status="ok"} 1' in text
    assert 'memcore_tool_call_duration_seconds_bucket{tool="recall",le="0.005"} 1' in text
    assert 'memcore_tool_call_duration_seconds_bucket{tool="recall",le="0.25"} 2' in text
    assert 'memcore_tool_call_duration_seconds_count{tool="recall"} 2' in text
    assert 'memcore_http_rejected_total{reason="unauthorized"} 1' in text
    assert text.endswith("memcore_store_open 1.0\n")
    for line in text.splitlines():
        assert line.startswith("#") or len(line.rsplit(" ", 1)) == 2


def test_logs_never_carry_content() -> None:
    fields = {"tool": "store_memory", "content": "secret", "nested": {"query": "also"}}
    assert logs.redact(fields) == {
        "tool": "store_memory",
        "content": "<redacted 6>",
        "nested": {"query": "<redacted 4>"},
    }
    record = logging.LogRecord("memcore.mcp", logging.INFO, __file__, 1, "tool call", (), None)
    record.fields = {"token": "mct_abc", "ms": 1.5}
    line = json.loads(logs.JsonFormatter().format(record))
    assert line["msg"] == "tool call" and line["ms"] == 1.5
    assert line["token"] == "<redacted 7>" and line["level"] == "info"


def test_start_up_imports_stay_light() -> None:
    """What the server imports before it answers tools/list: no numpy, no model runtime, no
    code indexer (the store opens and the model loads in background threads later), also
    when the settings name the model (checked against the registry, which is plain data;
    importing the whole embeddings package for it cost tools/list 80 ms)."""
    heavy = (
        "numpy",
        "onnxruntime",
        "tokenizers",
        "huggingface_hub",
        "tree_sitter",
        "memcore.memory",
        "memcore.embeddings.service",
    )
    probe = (
        "import sys, memcore, memcore.mcp.main as m; m.load_registry(); "
        "from memcore.settings.options import resolve; "
        "resolve(m.build_parser().parse_args(['--model', 'minilm']), m.SERVER_OPTIONS); "
        f"print([name for name in {heavy!r} if name in sys.modules])"
    )
    found = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert found.stdout.strip() == "[]"


def _string_limits(node: Any, key: str = "") -> list[tuple[str, int | None, int | None]]:
    """(property name, minLength, maxLength) of every string schema under `node`; a list's
    items are named by the list's property."""
    found: list[tuple[str, int | None, int | None]] = []
    if isinstance(node, dict):
        if node.get("type") == "string" and "maxLength" in node:
            found.append((key, node.get("minLength"), node["maxLength"]))
        for name, child in (node.get("properties") or {}).items():
            found += _string_limits(child, name)
        if "items" in node:
            found += _string_limits(node["items"], key)
    return found


def test_the_graph_schemas_state_the_cores_limits() -> None:
    # One definition (rust/memcore/src/knowledge/rules.rs): a schema allowing a longer name,
    # type or observation than the core would pass it through to a refusal, a shorter one
    # would refuse what the core stores.
    from memcore.records.graph import (
        MAX_NAME_CHARS,
        MAX_OBSERVATION_CHARS,
        MAX_TYPE_CHARS,
        MIN_OBSERVATION_CHARS,
    )

    expected = {
        "name": (1, MAX_NAME_CHARS),
        "names": (1, MAX_NAME_CHARS),
        "entityName": (1, MAX_NAME_CHARS),
        "entityNames": (1, MAX_NAME_CHARS),
        "entities": (1, MAX_NAME_CHARS),
        "from": (1, MAX_NAME_CHARS),
        "to": (1, MAX_NAME_CHARS),
        "entityType": (1, MAX_TYPE_CHARS),
        "observations": (MIN_OBSERVATION_CHARS, MAX_OBSERVATION_CHARS),
    }
    checked = 0
    for spec in load_registry().all():
        if spec.group not in ("graph", "legacy") and spec.name != "store_memory":
            continue
        for key, low, high in _string_limits(dict(spec.input_schema)):
            if key == "relationType":
                assert high == MAX_TYPE_CHARS, (spec.name, key, high)
                checked += 1
            elif key in expected:
                assert (low, high) == expected[key], (spec.name, key, low, high)
                checked += 1
    assert checked >= 15
    # And the descriptions word the same numbers.
    save = load_registry().get("save_memory")
    assert save is not None
    assert f"max {MAX_OBSERVATION_CHARS} chars" in save.description
