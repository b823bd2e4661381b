"""What the server says about itself: its identity, its instructions and each tool's
``tools/list`` entry, in wire form.

Kept free of the MCP SDK: the SDK server (``server``) and the answers given while the SDK
is still loading (``handshake``) both build from this module, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memcore import __version__
from memcore.tools.registry import ToolSpec

SERVER_NAME = "memcore"
SERVER_TITLE = "memcore"
SERVER_DESCRIPTION = "Long-term memory for AI agents: facts, hybrid search, valid time."
SERVER_VERSION = __version__

INSTRUCTIONS = (
    "memcore is your long-term memory across conversations. Search it (recall or "
    "search_memories) before answering questions that depend on the user, their work or "
    "earlier conversations. Store lasting facts with store_memory, one clear statement each; "
    "when its result carries action_required, follow it (usually supersede_memory) if the "
    "new fact replaces an old one. Use invalidate for facts that stopped being true. Save "
    "people, projects and how they connect with save_memory (search_nodes first, to reuse "
    "existing names); at the start of a task, retrieve_context brings back what earlier "
    "conversations did with the same request or files. Errors come back as {error: {code, "
    "message, details}}. Right after start-up the embedding model may still be loading: "
    "calls that embed wait a few seconds for it; recall and search_memories then rank by "
    "keywords and say so in `degraded`, and EMBEDDING_ERROR means the model failed or is "
    "still loading (get_status shows which)."
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


def listing_for(tools: Sequence[ToolSpec], *, admin: bool) -> dict[str, Any]:
    """The ``tools/list`` result a caller sees: every enabled tool for an admin, the
    others without the tools only admins may call (a tenant is not offered what it would
    be refused)."""
    return {"tools": [tool_listing(spec) for spec in tools if admin or not spec.admin_only]}
