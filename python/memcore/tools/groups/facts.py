"""The facts group: store, read, change, list and supersede memories (docs/guide.md)."""

from __future__ import annotations

from typing import Any

from memcore.facade import TIERS
from memcore.tools import schema
from memcore.tools.groups._graph_shapes import entity_name_item
from memcore.tools.groups._shared import (
    MEMORY_TYPES,
    SOURCES,
    as_of,
    hit_out,
    keywords_only_reason,
    memories_out,
    memory_id,
    memory_out,
    optional,
    page,
    thread_id,
    with_degraded,
)
from memcore.tools.registry import ToolCall, ToolRegistry, ToolSpec

_SHAPED_FIELDS = {
    "memory_type": schema.string(
        "episodic (a moment of a conversation or an event, understood with the rest of its "
        "thread: recall reads it in its thread), semantic (a lasting fact that stands on its "
        "own; the default) or procedural (how to do something).",
        enum=MEMORY_TYPES,
    ),
    "source": schema.string(
        "explicit if the user asked you to remember it, extracted if you inferred it, "
        "conversation if captured from what the user said.",
        enum=SOURCES,
    ),
    "confidence": schema.number("How sure you are, 0-1.", minimum=0, maximum=1),
    "importance": schema.number("How much this matters, 0-1.", minimum=0, maximum=1),
    "metadata": schema.json_object("Free-form JSON object stored with the memory."),
    "thread_id": schema.string(
        "The conversation or agent thread this came from. Give it: recall ranks an "
        "episodic memory higher when the rest of its thread matches the question too.",
        min_length=1,
        max_length=200,
    ),
    "user_id": schema.string("Whose fact this is.", min_length=1, max_length=200),
    "event_time": schema.string(
        "When the event happened (ISO 8601), for episodic memories.", date_time=True
    ),
    "expires_at": schema.string(
        "When the memory stops holding on its own (ISO 8601).", date_time=True
    ),
}


def _with_defaults(**defaults: Any) -> dict[str, schema.Schema]:
    return {
        name: {**prop, "default": defaults[name]} if name in defaults else prop
        for name, prop in _SHAPED_FIELDS.items()
    }


def store_memory(call: ToolCall) -> dict[str, Any]:
    """Store one fact; report similar memories it may replace."""
    args = call.arguments
    result = call.memory.store_memory(
        args["content"],
        namespace=call.namespace,
        **optional(
            args,
            "memory_type",
            "source",
            "confidence",
            "importance",
            "metadata",
            "thread_id",
            "user_id",
            "event_time",
            "valid_from",
            "expires_at",
            "ttl",
            "tier",
            "entities",
        ),
    )
    out = {
        "id": result.id,
        "created": memory_out(result.created),
        "similar": memories_out(result.similar),
        "action_required": result.action_required,
        "embedding": result.embedding,
    }
    if result.pending_reason is not None:
        out["pending_reason"] = result.pending_reason
    return out


def get_memory(call: ToolCall) -> dict[str, Any]:
    """One memory by id."""
    return memory_out(call.memory.get_memory(call.arguments["memory_id"], namespace=call.namespace))


def update_memory(call: ToolCall) -> dict[str, Any]:
    """Change fields of one memory."""
    args = call.arguments
    record = call.memory.update_memory(
        args["memory_id"], namespace=call.namespace, **optional(args, "content", *_SHAPED_FIELDS)
    )
    return memory_out(record)


def delete_memory(call: ToolCall) -> dict[str, Any]:
    """Delete one memory for good."""
    memory_id = call.arguments["memory_id"]
    call.memory.delete_memory(memory_id, namespace=call.namespace)
    return {"success": True, "message": f"Memory {memory_id} deleted"}


def list_memories(call: ToolCall) -> dict[str, Any]:
    """A newest-first page of memories."""
    args = call.arguments
    limit, offset = args["limit"], args["offset"]
    # One extra row tells whether another page exists without a count query.
    rows = call.memory.list_memories(
        limit + 1,
        offset,
        valid_only=args["valid_only"],
        namespace=call.namespace,
        **optional(args, "thread_id", "as_of"),
    )
    more = len(rows) > limit
    return {
        "memories": memories_out(rows[:limit]),
        "next_offset": offset + limit if more else None,
    }


def list_recent_memories(call: ToolCall) -> dict[str, Any]:
    """The newest currently valid memories."""
    args = call.arguments
    rows = call.memory.list_recent_memories(
        args["limit"], namespace=call.namespace, **optional(args, "thread_id", "as_of")
    )
    return {"memories": memories_out(rows)}


def supersede(call: ToolCall) -> dict[str, Any]:
    """Mark an old memory as replaced by a new one."""
    args = call.arguments
    result = call.memory.supersede_memory(
        args["old_memory_id"], args["new_memory_id"], namespace=call.namespace
    )
    return {"success": result.success, "message": result.message}


def search_memories(call: ToolCall) -> dict[str, Any]:
    """Hybrid search for the agent, superseded memories filtered out."""
    args = call.arguments
    memory = call.memory
    reason = keywords_only_reason(memory)
    hits = memory.search_memories(
        args["query"], args["limit"], namespace=call.namespace, semantic=reason is None
    )
    return with_degraded({"memories": [hit_out(hit) for hit in hits]}, reason)


def register(registry: ToolRegistry) -> None:
    """Add the facts group."""
    for spec in _SPECS:
        registry.add(spec)


_SPECS = (
    ToolSpec(
        name="store_memory",
        group="facts",
        title="Store a memory",
        description=(
            "Store a new memory: one clear, standalone fact, preference or event worth keeping "
            "across conversations (e.g. 'User moved to Austin in June 2024'). Call it when the "
            "user asks you to remember something or you learn a lasting fact about them, their "
            "work or their preferences. Returns {id, created, similar, action_required, "
            "embedding}: `similar` lists existing memories that may now be outdated. ALWAYS "
            "read action_required: when it names a supersede_memory call and the new fact "
            "replaces the old one, make that call. The memory is always stored: while the "
            "embedding model loads the call waits a few seconds for it; if the model is still "
            "loading after that (or failed), the memory is stored without its vector, found "
            "by keywords at once and embedded when the model is ready (embedding: pending)."
        ),
        input_schema=schema.arguments(
            {
                "content": schema.string(
                    "The fact to remember, as one self-contained statement.", min_length=1
                ),
                **_with_defaults(
                    memory_type="semantic", source="extracted", confidence=1.0, importance=0.5
                ),
                "valid_from": schema.string(
                    "When the fact starts to hold (ISO 8601). Default: now.", date_time=True
                ),
                "ttl": schema.number(
                    "Seconds until the memory expires on its own (instead of expires_at).",
                    minimum=1,
                    maximum=1e10,
                ),
                "tier": schema.string(
                    "How long the fact holds: L1 (about today; expires at the end of the UTC "
                    "day), L2 (this week or a passing state; expires after 7 days by default) "
                    "or durable (no expiry). An explicit ttl or expires_at wins.",
                    enum=TIERS,
                    default="durable",
                ),
                "entities": {
                    "type": "array",
                    "maxItems": 50,
                    "items": entity_name_item(),
                    "description": "Names of the knowledge-graph entities this memory is "
                    "about (people, projects, files); unknown names become new entities. "
                    "Known entity names in the content are linked anyway. Links let recall "
                    "find the memory through the graph.",
                },
            },
            required=["content"],
        ),
        handler=store_memory,
    ),
    ToolSpec(
        name="get_memory",
        group="facts",
        title="Get a memory",
        description=(
            "Fetch one memory by id with all its fields: content, type, source, confidence, "
            "timestamps, validity (valid_from/valid_until) and supersession links. Use it to "
            "inspect an id returned by a search or by store_memory."
        ),
        input_schema=schema.arguments({"memory_id": memory_id()}, required=["memory_id"]),
        handler=get_memory,
        read_only=True,
    ),
    ToolSpec(
        name="update_memory",
        group="facts",
        title="Update a memory",
        description=(
            "Correct fields of an existing memory in place (new content is re-embedded: a "
            "model still loading is waited for a few seconds; EMBEDDING_ERROR, nothing "
            "changed, if it failed or is still loading). Use "
            "it to fix a mistake in a stored fact. When the world changed instead (the user "
            "moved, changed jobs), store a new memory and call supersede_memory, so history "
            "keeps the old fact. Returns the updated memory."
        ),
        input_schema=schema.arguments(
            {
                "memory_id": memory_id(),
                "content": schema.string("New content.", min_length=1),
                **_SHAPED_FIELDS,
            },
            required=["memory_id"],
        ),
        handler=update_memory,
        idempotent=True,
    ),
    ToolSpec(
        name="delete_memory",
        group="facts",
        title="Delete a memory",
        description=(
            "Permanently delete a memory (no history is kept). Only for things that should "
            "never have been stored or that the user asks to forget; for facts that stopped "
            "being true use invalidate or supersede_memory. Returns {success, message}."
        ),
        input_schema=schema.arguments({"memory_id": memory_id()}, required=["memory_id"]),
        handler=delete_memory,
        destructive=True,
        idempotent=True,
    ),
    ToolSpec(
        name="list_memories",
        group="facts",
        title="List memories",
        description=(
            "Page through stored memories, newest first, in every state unless valid_only "
            "or as_of. Use it to review or audit what is stored; to find something, search "
            "instead. Returns {memories, next_offset} (next_offset is null on the last page)."
        ),
        input_schema=schema.arguments(
            {
                **page(default_limit=20, maximum=500),
                "valid_only": schema.boolean(
                    "Only memories valid now (not invalidated, superseded or expired).",
                    default=False,
                ),
                "as_of": as_of(default="every memory, or those valid now with valid_only"),
                "thread_id": thread_id(),
            }
        ),
        handler=list_memories,
        read_only=True,
    ),
    ToolSpec(
        name="list_recent_memories",
        group="facts",
        title="List recent memories",
        description=(
            "The most recently stored memories that are still valid (or were valid at as_of), "
            "newest first. Useful for reviewing what was just stored. Returns {memories}."
        ),
        input_schema=schema.arguments(
            {
                "limit": schema.integer(
                    "Number of recent memories to return.", minimum=1, maximum=50, default=10
                ),
                "thread_id": thread_id(),
                "as_of": as_of(),
            }
        ),
        handler=list_recent_memories,
        read_only=True,
    ),
    ToolSpec(
        name="supersede_memory",
        group="facts",
        title="Supersede a memory",
        description=(
            "Mark an old memory as outdated because a newer memory replaces it (e.g. 'lives in "
            "Seattle' replaced by 'moved to Austin'). Call it when store_memory's "
            "action_required suggests it and the facts really conflict; keep both when they "
            "complement each other. The old memory leaves default searches but stays visible "
            "to as_of queries. Returns {success, message}."
        ),
        input_schema=schema.arguments(
            {
                "old_memory_id": memory_id("ID of the outdated memory."),
                "new_memory_id": memory_id("ID of the new memory that replaces it."),
            },
            required=["old_memory_id", "new_memory_id"],
        ),
        handler=supersede,
    ),
    ToolSpec(
        name="search_memories",
        group="facts",
        title="Search memories",
        description=(
            "Find memories relevant to a natural-language query (hybrid semantic + keyword "
            "search; superseded and invalidated memories are left out). Call it before "
            "personalised answers or recommendations, when the user refers to earlier "
            "conversations, and to avoid asking for something already known. Returns "
            "{memories}, best first, each with relevance_score (0-1). Without a usable "
            "embedding model (off, failed, or still loading after a few seconds) it ranks "
            "by keywords alone and adds `degraded` saying so."
        ),
        input_schema=schema.arguments(
            {
                "query": schema.string("Natural language search query.", min_length=1),
                "limit": schema.integer(
                    "Maximum number of results to return.", minimum=1, maximum=20, default=5
                ),
            },
            required=["query"],
        ),
        handler=search_memories,
        read_only=True,
    ),
)
