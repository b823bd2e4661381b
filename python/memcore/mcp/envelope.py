"""Keep a malformed ``tools/call`` inside the tool error shape.

The SDK checks the request envelope before any handler runs: a ``name`` that is not a
string or ``arguments`` that are not an object would come back as a JSON-RPC protocol
error, which a model never sees. This server middleware (it runs before that check)
replaces the bad member with a placeholder and leaves the problem for ``tools/call`` to
answer as ``INVALID_PARAMETER``, like every other bad argument. So it does for the
arguments that held a lone surrogate, which the transport's screen replaced before the SDK
could read the call and listed in ``_meta`` (``malformed.UNENCODABLE``).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import replace
from typing import Any

from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult

from memcore.arguments import unencodable
from memcore.errors import InvalidParameterError, invalid
from memcore.mcp.malformed import UNENCODABLE

# Set for the duration of one call's handler chain (same task, so no leak between calls).
_problem: ContextVar[InvalidParameterError | None] = ContextVar("memcore_envelope", default=None)


def envelope_problem() -> InvalidParameterError | None:
    """What was wrong with the current call's envelope, if anything."""
    return _problem.get()


async def guard_tool_calls(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    """Server middleware: pass other requests through; repair and flag bad tool calls."""
    if ctx.method != "tools/call" or not isinstance(ctx.params, Mapping | None):
        return await call_next(ctx)
    params = dict(ctx.params or {})
    name, arguments = params.get("name"), params.get("arguments")
    problem = None
    if not isinstance(name, str):
        problem = invalid("name", f"name must be a tool name (a string), got {_kind(name)}.")
        params["name"] = ""
    elif arguments is not None and not isinstance(arguments, dict):
        problem = invalid("arguments", f"arguments must be an object, got {_kind(arguments)}.")
        params["arguments"] = None
    elif isinstance(meta := params.get("_meta"), dict) and meta.get(UNENCODABLE):
        fields = meta[UNENCODABLE]
        problem = unencodable(str(fields[0]) if isinstance(fields, list) else "arguments")
    if problem is None:
        return await call_next(ctx)
    token = _problem.set(problem)
    try:
        return await call_next(replace(ctx, params=params))
    finally:
        _problem.reset(token)


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    return {list: "an array", str: "a string", bool: "a boolean", dict: "an object"}.get(
        type(value), "a number" if isinstance(value, int | float) else type(value).__name__
    )
