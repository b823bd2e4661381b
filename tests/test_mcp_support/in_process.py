"""Calling one MCP tool's handler in process, on a ``Memory`` the test already holds:
the tool's own schema check (with its defaults) and its own handler, without a server
process, for tests that are about what a tool passes to the facade."""

from __future__ import annotations

from typing import Any

from memcore import Memory
from memcore.tools.groups import load_registry
from memcore.tools.host import StoreHost
from memcore.tools.registry import ToolCall
from memcore.tools.validation import ArgumentChecker


def run_tool(mem: Memory, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    """The result object of tool ``name`` called by an admin caller in ``mem``'s namespace.

    Raises:
        MemcoreError: What the server would turn into the tool's error result.
    """
    spec = load_registry().get(name)
    assert spec is not None, name
    checked = ArgumentChecker(spec.argument_schema or spec.input_schema).check(arguments)
    host = StoreHost(lambda: mem)  # never closed here: the test owns the Memory
    host.wait_blocking(10.0)
    return spec.handler(ToolCall(host=host, namespace=mem.namespace, arguments=checked, admin=True))
