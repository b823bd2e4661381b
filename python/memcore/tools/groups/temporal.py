"""The temporal group: what is valid now, what was valid then, and soft deletion."""

from __future__ import annotations

from typing import Any

from memcore.tools import schema
from memcore.tools.groups._shared import (
    as_of,
    memories_out,
    memory_id,
    memory_out,
    optional,
    page,
    thread_id,
)
from memcore.tools.registry import ToolCall, ToolRegistry, ToolSpec


def get_valid(call: ToolCall) -> dict[str, Any]:
    """Memories valid now (or at as_of), newest first."""
    args = call.arguments
    rows = call.memory.get_valid(
        args["limit"],
        args["offset"],
        namespace=call.namespace,
        **optional(args, "thread_id", "as_of"),
    )
    return {"memories": memories_out(rows)}


def get_valid_at(call: ToolCall) -> dict[str, Any]:
    """Memories valid at a past (or future) time."""
    args = call.arguments
    rows = call.memory.get_valid_at(
        args["timestamp"],
        args["limit"],
        args["offset"],
        namespace=call.namespace,
        **optional(args, "thread_id"),
    )
    return {"timestamp": args["timestamp"], "memories": memories_out(rows)}


def invalidate(call: ToolCall) -> dict[str, Any]:
    """Close a memory's validity now."""
    args = call.arguments
    record = call.memory.invalidate(args["memory_id"], args.get("reason"), namespace=call.namespace)
    return {
        "success": True,
        "message": f"Memory {record.id} is no longer valid; as_of queries still see it.",
        "memory": memory_out(record),
    }


def register(registry: ToolRegistry) -> None:
    """Add the temporal group."""
    registry.add(
        ToolSpec(
            name="get_valid",
            group="temporal",
            title="Currently valid memories",
            description=(
                "List the memories that hold right now (not invalidated, superseded or "
                "expired), newest first, or those that held at as_of. Use it to review the "
                "current state of what is known. Returns {memories}."
            ),
            input_schema=schema.arguments(
                {**page(default_limit=100), "thread_id": thread_id(), "as_of": as_of()}
            ),
            handler=get_valid,
            read_only=True,
        )
    )
    registry.add(
        ToolSpec(
            name="get_valid_at",
            group="temporal",
            title="Memories valid at a time",
            description=(
                "List the memories that were valid at a given time, including ones since "
                "superseded or invalidated: 'what did we believe on March 1st?'. Returns "
                "{timestamp, memories}, newest first."
            ),
            input_schema=schema.arguments(
                {
                    "timestamp": schema.string(
                        "The point in time, ISO 8601 (e.g. 2026-03-01T00:00:00Z).",
                        date_time=True,
                    ),
                    **page(default_limit=100),
                    "thread_id": thread_id(),
                },
                required=["timestamp"],
            ),
            handler=get_valid_at,
            read_only=True,
        )
    )
    registry.add(
        ToolSpec(
            name="invalidate",
            group="temporal",
            title="Invalidate a memory",
            description=(
                "Mark a memory as no longer true, without a replacement (e.g. 'the user no "
                "longer has a cat'). It is soft-deleted: default searches drop it, history "
                "(get_valid_at, as_of) still sees it. If a new fact replaces it, store that and "
                "call supersede_memory instead. Returns {success, message, memory}."
            ),
            input_schema=schema.arguments(
                {
                    "memory_id": memory_id(),
                    "reason": schema.string(
                        "Why it stopped being true (kept with the memory).",
                        min_length=1,
                        max_length=1000,
                    ),
                },
                required=["memory_id"],
            ),
            handler=invalidate,
        )
    )
