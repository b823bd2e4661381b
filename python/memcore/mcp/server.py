"""The MCP SDK's low-level ``Server`` wired to memcore's tools.

The low-level server (not ``MCPServer``) because memcore's tools are data, not Python
signatures: schemas are written out in full, ``tools/list`` is built once, and every call
goes through the ``Dispatcher`` for one error shape on every path.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.to_thread
from mcp.server import Server, ServerRequestContext
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
)

from memcore import __version__
from memcore.errors import MemcoreError, error_payload
from memcore.mcp.dispatch import Caller, Dispatcher, Outcome
from memcore.mcp.envelope import envelope_problem, guard_tool_calls
from memcore.mcp.host import StoreHost
from memcore.mcp.registry import ToolSpec

CallerOf = Callable[[ServerRequestContext[Any, Any]], Caller]

INSTRUCTIONS = (
    "memcore is your long-term memory across conversations. Search it (recall or "
    "search_memories) before answering questions that depend on the user, their work or "
    "earlier conversations. Store lasting facts with store_memory, one clear statement each; "
    "when its result carries action_required, follow it (usually supersede_memory) if the "
    "new fact replaces an old one. Use invalidate for facts that stopped being true. Save "
    "people, projects and how they connect with save_memory (search_nodes first, to reuse "
    "existing names); at the start of a task, retrieve_context brings back what earlier "
    "conversations did with the same request or files. Errors come back as {error: {code, "
    "message, details}}; EMBEDDING_ERROR right after start-up means the model is still "
    "loading (get_status shows it) and recall still works by keywords."
)


def tool_listing(spec: ToolSpec) -> dict[str, Any]:
    """The ``tools/list`` entry of a tool, in wire form."""
    return {
        "name": spec.name,
        "title": spec.title,
        "description": spec.description,
        "inputSchema": dict(spec.input_schema),
        "annotations": {
            "title": spec.title,
            "readOnlyHint": spec.read_only,
            "destructiveHint": spec.destructive,
            "idempotentHint": spec.idempotent,
            "openWorldHint": False,
        },
    }


def build_server(dispatcher: Dispatcher, host: StoreHost, caller_of: CallerOf) -> Server[None]:
    """An SDK server answering ``tools/list`` and ``tools/call`` through ``dispatcher``.

    Its lifespan closes the store when the transport stops.
    """
    # Built once: the list never changes while the server runs.
    listing = ListToolsResult.model_validate(
        {"tools": [tool_listing(spec) for spec in dispatcher.tools]}
    )

    async def list_tools(
        ctx: ServerRequestContext[None, Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return listing

    async def call_tool(
        ctx: ServerRequestContext[None, Any], params: CallToolRequestParams
    ) -> CallToolResult:
        try:
            problem = envelope_problem()
            if problem is not None:
                raise problem
            caller = caller_of(ctx)
        except MemcoreError as exc:
            outcome = Outcome({"error": error_payload(exc)}, is_error=True)
        else:
            outcome = await dispatcher.call(params.name, params.arguments, caller)
        return CallToolResult(
            content=[TextContent(type="text", text=outcome.text)],
            structured_content=outcome.payload,
            is_error=outcome.is_error,
        )

    @asynccontextmanager
    async def lifespan(_: Server[None]) -> AsyncIterator[None]:
        try:
            yield None
        finally:
            # Shielded: a signal cancels the serving scope, and the store must still close.
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(host.close)

    server: Server[None] = Server(
        "memcore",
        version=__version__,
        title="memcore",
        description="Long-term memory for AI agents: facts, hybrid search, valid time.",
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        get_tool_input_schema=dispatcher.schema_of,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    server.middleware.append(guard_tool_calls)
    return server
