"""The admin group: server status, the store check and the store-wide reset."""

from __future__ import annotations

from typing import Any

from memcore import __version__
from memcore.errors import error_payload
from memcore.facade import as_plain
from memcore.tools import schema
from memcore.tools.registry import ToolCall, ToolRegistry, ToolSpec


def get_status(call: ToolCall) -> dict[str, Any]:
    """Version, store state, this namespace's counts, the embedding model's state and the
    automatic path's counters and settings."""
    host = call.host
    # The same numbers as /metrics (which any client of the HTTP port reads): per process,
    # zeros until the store is open.
    lifecycle_metrics = as_plain(host.turn_metrics())
    if host.state != "open":
        # Answer while the store opens (or after it failed): that is when status matters.
        store: dict[str, Any] = {"status": host.state}
        if host.error is not None:
            store["error"] = error_payload(host.error)
        embedding = "loading" if host.state == "opening" else "error"
        return {
            "version": __version__,
            "namespace": call.namespace,
            "store": store,
            "counts": None,
            "embedding": {"status": embedding, "model": None, "dim": None, "error": None},
            "lifecycle_metrics": lifecycle_metrics,
            "lifecycle_settings": None,
        }
    memory = call.memory
    status = memory.status()
    store = {"status": "open", **status["store"]}
    if not call.admin:
        # A tenant has no business knowing where the server keeps its files.
        path = store.pop("path", None)
        indexes = store.get("indexes")
        if path and indexes:
            warnings = [w.replace(path, "<data dir>") for w in indexes["warnings"]]
            store["indexes"] = {**indexes, "warnings": warnings}
    return {
        "version": status["version"],
        "namespace": call.namespace,
        "store": store,
        "counts": {"memories": memory.count_memories(namespace=call.namespace)},
        "embedding": status["embedding"],
        "lifecycle_metrics": lifecycle_metrics,
        "lifecycle_settings": memory.turn_settings.as_dict(),
    }


def reset_all_memory(call: ToolCall) -> dict[str, Any]:
    """Delete everything in every namespace (the schema has already insisted on confirm)."""
    call.memory.reset_all_memory(confirm=call.arguments["confirm"])
    return {"success": True, "message": "Every memory in every namespace was deleted."}


def check_store(call: ToolCall) -> dict[str, Any]:
    """SQLite's integrity check plus each search index against the rows, with fixes."""
    return call.memory.check().to_dict()


def register(registry: ToolRegistry) -> None:
    """Add the admin group."""
    registry.add(
        ToolSpec(
            name="get_status",
            group="admin",
            title="Server status",
            description=(
                "Report memcore's state: version, store (opening/open/error), how many memories "
                "this namespace holds, the search indexes' health (ok/failing/degraded, "
                "with warnings such as a damaged index being rebuilt) and the "
                "embedding model (status loading/ready/error, model, dimension), and the "
                "automatic path's counters (lifecycle_metrics: before/after-turn calls by "
                "status, maintenance runs, compactions, facts written by tier) and settings "
                "(lifecycle_settings). Call it when searches fail or to check the model has "
                "loaded; it answers even while the store is still opening."
            ),
            input_schema=schema.arguments({}),
            handler=get_status,
            read_only=True,
            needs_store=False,
        )
    )
    registry.add(
        ToolSpec(
            name="check_store",
            group="admin",
            title="Check the store",
            description=(
                "Check the whole store (every namespace): the database's integrity (SQLite "
                "integrity_check, reads every page: slow on large stores) and each search index "
                "against the stored records (counts and looked-up documents). Call it when "
                "searches miss records that get_memory finds, or after a crash or disk trouble. "
                "Returns {ok, integrity, last_seq, indexes[{index, expected, found, sampled, "
                "missing}], problems[{area, message, fix}]}; each problem says how to fix it "
                "(e.g. `memcore repair` rebuilds the indexes)."
            ),
            input_schema=schema.arguments({}),
            handler=check_store,
            read_only=True,
            idempotent=True,
            store_wide=True,
        )
    )
    registry.add(
        ToolSpec(
            name="reset_all_memory",
            group="admin",
            title="Delete all memory",
            description=(
                "Irreversibly delete ALL memories in EVERY namespace and rebuild empty indexes. "
                "Only when the user explicitly asks to wipe memcore; requires confirm: true. "
                "Returns {success, message}."
            ),
            input_schema=schema.arguments(
                {"confirm": schema.const_true("Must be true: confirms the irreversible wipe.")},
                required=["confirm"],
            ),
            handler=reset_all_memory,
            destructive=True,
            idempotent=True,
            store_wide=True,
        )
    )
