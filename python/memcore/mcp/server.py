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

from memcore.errors import MemcoreError, error_payload
from memcore.mcp.dispatch import Caller, Dispatcher, Outcome
from memcore.mcp.envelope import envelope_problem, guard_tool_calls
from memcore.mcp.listing import (
    INSTRUCTIONS,
    SERVER_DESCRIPTION,
    SERVER_NAME,
    SERVER_TITLE,
    SERVER_VERSION,
    listing_for,
)
from memcore.tools.host import StoreHost

CallerOf = Callable[[ServerRequestContext[Any, Any]], Caller]


def build_server(dispatcher: Dispatcher, host: StoreHost, caller_of: CallerOf) -> Server[None]:
    """An SDK server answering ``tools/list`` and ``tools/call`` through ``dispatcher``.

    Its lifespan closes the store when the transport stops.
    """
    # Built once per kind of caller: the lists never change while the server runs.
    listings = {
        admin: ListToolsResult.model_validate(listing_for(dispatcher.tools, admin=admin))
        for admin in (True, False)
    }

    async def list_tools(
        ctx: ServerRequestContext[None, Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        try:
            admin = caller_of(ctx).admin
        except MemcoreError:
            admin = False  # unreachable behind the token check; show the least
        return listings[admin]

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
        SERVER_NAME,
        version=SERVER_VERSION,
        title=SERVER_TITLE,
        description=SERVER_DESCRIPTION,
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        get_tool_input_schema=dispatcher.schema_of,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    server.middleware.append(guard_tool_calls)
    return server
