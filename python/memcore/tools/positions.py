"""Reading one's writes across the nodes of a PostgreSQL deployment (docs/scale-out.md,
"Read your writes across nodes"), for every tool at once.

On a node, a write tool's result carries ``seq``: the position of that write in its
namespace's log. Every read tool takes an optional ``min_seq``: the node waits, at most
``--min-seq-wait`` seconds, until it has applied its namespace up to that position, and
past the bound answers RESOURCE_BUSY (retry, or read from the node that took the write)
rather than older data. A client that moves between nodes keeps the highest ``seq`` it was
given and passes it.

On SQLite there is one store and every acknowledged write is in it: ``seq`` is left out of
results, and ``min_seq`` is accepted and returns at once, so a client written for a
deployment of nodes also runs against a single store.

Which tools take part follows from their annotations alone, so a new tool needs nothing
here: a tool that changes nothing (``read_only``) takes ``min_seq``, one that writes returns
``seq``. Store-wide tools and those that answer without the store take part in neither:
positions are per namespace, and they act on every namespace or on none.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from memcore.tools import schema
from memcore.tools.registry import ToolCall, ToolSpec

#: Seconds a read waits for its ``min_seq`` by default (the ``--min-seq-wait`` setting);
#: a follower applies another node's write within milliseconds, so this is a node that
#: lost PostgreSQL or serves the namespace from far behind.
MIN_SEQ_WAIT = 2.0
#: The largest ``min_seq`` accepted: the largest integer JSON carries exactly.
MAX_SEQ = 2**53

_MIN_SEQ = schema.integer(
    "Read only once this server holds every write of the namespace up to this seq (the "
    "`seq` a write tool returned, possibly from another server of the same database): it "
    "waits a short, bounded time, then fails with RESOURCE_BUSY (retry, or ask the server "
    "that took the write). Omit it to read at once; a server on a single store holds every "
    "write it acknowledged and never waits.",
    minimum=0,
    maximum=MAX_SEQ,
)
_READS_NOTE = " Pass min_seq (a write's seq) to read that write, wherever it was taken."
_WRITES_NOTE = (
    " On a server that shares a PostgreSQL database with others, the result also carries "
    "seq: this write's position in the namespace's log; pass it as min_seq to a read on "
    "any server of that database to see the write. A server on a single store leaves seq "
    "out."
)


def takes_min_seq(spec: ToolSpec) -> bool:
    """Whether ``spec`` is a read of one namespace, which may wait for a position."""
    return spec.read_only and spec.needs_store and not spec.store_wide


def returns_seq(spec: ToolSpec) -> bool:
    """Whether ``spec`` writes one namespace, so its result names a position."""
    return not spec.read_only and spec.needs_store and not spec.store_wide


def published(spec: ToolSpec) -> ToolSpec:
    """``spec`` as listed and checked: ``min_seq`` in a read's arguments, and each
    description saying what the tool takes or returns."""
    if takes_min_seq(spec):
        return dataclasses.replace(
            spec,
            description=spec.description + _READS_NOTE,
            input_schema=_with_min_seq(spec.input_schema),
            argument_schema=(
                None if spec.argument_schema is None else _with_min_seq(spec.argument_schema)
            ),
        )
    if returns_seq(spec):
        return dataclasses.replace(spec, description=spec.description + _WRITES_NOTE)
    return spec


def _with_min_seq(arguments: Mapping[str, Any]) -> dict[str, Any]:
    properties = dict(arguments.get("properties", {}))
    if "min_seq" in properties:
        raise ValueError("a tool's own argument is named min_seq")
    return {**arguments, "properties": {**properties, "min_seq": _MIN_SEQ}}


def run(spec: ToolSpec, call: ToolCall, min_seq_wait: float) -> dict[str, Any]:
    """Run ``spec``'s handler for ``call`` in this (worker) thread, at the position the
    call asks for, and with the position its write reached.

    Raises:
        ResourceBusyError: This node had not applied ``min_seq`` within ``min_seq_wait``.
        InvalidParameterError: This node does not serve the namespace.
    """
    if takes_min_seq(spec):
        return spec.handler(_at_min_seq(spec, call, min_seq_wait))
    if not returns_seq(spec):
        return spec.handler(call)
    memory = call.memory
    if not memory.on_postgres:
        return spec.handler(call)
    memory.last_write_seq()  # whatever an earlier call on this worker thread left behind
    result = spec.handler(call)
    seq = memory.last_write_seq()
    if seq is None:
        # The write ran on another thread (a background index job) or changed nothing
        # shared: what this node had applied is still a position that holds every write
        # it acknowledged in the namespace.
        seq = memory.applied_seq(namespace=spec.namespace_of(call))
    return {**result, "seq": seq}


def _at_min_seq(spec: ToolSpec, call: ToolCall, min_seq_wait: float) -> ToolCall:
    """``call`` without its ``min_seq``, once this node applied it."""
    if "min_seq" not in call.arguments:
        return call
    arguments = dict(call.arguments)
    min_seq = int(arguments.pop("min_seq"))
    call = dataclasses.replace(call, arguments=arguments)
    call.memory.wait_for_seq(min_seq, namespace=spec.namespace_of(call), timeout=min_seq_wait)
    return call
