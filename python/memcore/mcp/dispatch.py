"""Serving one tool call over MCP, whatever the transport.

The checks and the run are the tool runner's (memcore/tools/runner.py), shared with the
``memcore`` command; this adds what a server needs around them: the tools of the
``--tools`` profile (telling "not enabled" from "no such tool"), waiting for the store
without blocking the event loop, a worker thread for the handler (engine and embedding
calls block), and the outcome's shape. Every failure becomes ``{"error": {"code",
"message", "details"}}`` with ``isError`` set: a tool call never ends in a protocol error
or takes the server down. Each call is counted, timed and logged: its request id,
namespace, session and turn ids, latency and status, never what was said.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread

from memcore.errors import MemcoreError, StorageError, error_payload, invalid
from memcore.mcp.metrics import Metrics
from memcore.tools import positions
from memcore.tools.host import StoreHost
from memcore.tools.limits import Limits
from memcore.tools.registry import ToolCall, ToolSpec
from memcore.tools.runner import ToolRunner

_log = logging.getLogger("memcore.mcp.calls")

#: BaseExceptions that are not failures of a call: they end the task or the process.
_PROPAGATED = (KeyboardInterrupt, SystemExit, GeneratorExit)

#: The automatic path's hooks: operators watch them, so a success is logged at INFO too.
HOOK_TOOLS = frozenset({"memory_before_turn", "memory_after_turn", "memory_run_maintenance"})
#: Arguments that identify a call's conversation; logged (they are ids, not content).
_ID_ARGUMENTS = ("session_id", "turn_id")
#: Longest id value put in a log line; a longer one is not an id anyone chose to read.
_MAX_LOGGED_ID = 200

RequestId = int | str


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is calling: their namespace, whether they may act on every namespace, and a
    name for the logs (``stdio``, ``local`` or the token's id; never the token); and the
    JSON-RPC id of the request being answered, when the transport knows it (for the logs)."""

    namespace: str
    admin: bool
    principal: str
    request_id: RequestId | None = None

    def answering(self, request_id: RequestId | None) -> Caller:
        """This caller, answering the request with that id."""
        return Caller(self.namespace, self.admin, self.principal, request_id)


@dataclass(frozen=True, slots=True)
class Outcome:
    """A tool's result object, or its error object with ``is_error`` set."""

    payload: dict[str, Any]
    is_error: bool

    @property
    def text(self) -> str:
        """The payload as compact JSON (the text content of the MCP result)."""
        return json.dumps(self.payload, ensure_ascii=False, separators=(",", ":"))


class Dispatcher:
    """Runs calls to the tools of one profile."""

    def __init__(
        self,
        tools: Sequence[ToolSpec],
        host: StoreHost,
        *,
        limits: Limits,
        metrics: Metrics,
        timeout: float,
        known: Sequence[str] = (),
        min_seq_wait: float = positions.MIN_SEQ_WAIT,
    ) -> None:
        """
        Args:
            tools: The enabled tools.
            host: The store.
            limits: Per-call size limits.
            metrics: Where calls are counted.
            timeout: Seconds a call waits for the store to open.
            known: Every registered tool name, to tell "not enabled" from "no such tool".
            min_seq_wait: Seconds a read waits for its ``min_seq`` (PostgreSQL nodes).
        """
        self._runner = ToolRunner(tools, host, limits=limits, min_seq_wait=min_seq_wait)
        self._host = host
        self._metrics = metrics
        self._timeout = timeout
        self._known = frozenset(known)

    @property
    def tools(self) -> list[ToolSpec]:
        """The enabled tools, in listing order."""
        return self._runner.tools

    def schema_of(self, name: str) -> Mapping[str, Any] | None:
        """A tool's input schema, or None if it is not enabled."""
        spec = self._runner.get(name)
        return None if spec is None else spec.input_schema

    async def call(self, name: str, arguments: Mapping[str, Any] | None, caller: Caller) -> Outcome:
        """Run one call; never raises for anything the tool or the caller did wrong."""
        started = time.perf_counter()
        spec = self._runner.get(name)
        try:
            if spec is None:
                raise self._unknown(name)
            result = await self._run(spec, arguments, caller)
            outcome, status = Outcome(result, is_error=False), "ok"
        except MemcoreError as exc:
            outcome, status = _failure(spec, exc), type(exc).code
        except Exception:
            outcome, status = self._internal_error(name), StorageError.code
        except BaseException as exc:
            # A Rust panic reaches Python as pyo3's PanicException, a BaseException that
            # ``except Exception`` misses: it must cost this call only, not the server.
            # Cancellation and the interpreter's own exits still propagate.
            if isinstance(exc, (*_PROPAGATED, anyio.get_cancelled_exc_class())):
                raise
            outcome, status = self._internal_error(name), StorageError.code
        seconds = time.perf_counter() - started
        tool = name if spec is not None else "unknown"
        self._metrics.observe(tool, status, seconds)
        self._log_call(spec, tool, status, seconds, arguments, caller)
        return outcome

    async def _run(
        self, spec: ToolSpec, arguments: Mapping[str, Any] | None, caller: Caller
    ) -> dict[str, Any]:
        call = self._runner.check(spec, arguments, namespace=caller.namespace, admin=caller.admin)
        if spec.needs_store:
            await self._host.wait(self._timeout)
        return await anyio.to_thread.run_sync(self._runner.run, spec, call)

    def _unknown(self, name: str) -> MemcoreError:
        if name in self._known:
            message = f"Tool '{name}' is not enabled on this server (see its --tools profile)."
        else:
            enabled = ", ".join(spec.name for spec in self._runner.tools)
            message = f"Unknown tool '{name}'. Available: {enabled}."
        return invalid("name", message)

    def _internal_error(self, name: str) -> Outcome:
        ref = secrets.token_hex(4)
        _log.exception("tool failed unexpectedly", extra={"fields": {"tool": name, "ref": ref}})
        error = {
            "code": StorageError.code,
            "message": f"{name} failed with an internal error; the server log has the "
            f"details under ref {ref}.",
            "details": {"ref": ref},
        }
        return Outcome({"error": error}, is_error=True)

    def _log_call(
        self,
        spec: ToolSpec | None,
        tool: str,
        status: str,
        seconds: float,
        arguments: Mapping[str, Any] | None,
        caller: Caller,
    ) -> None:
        level = logging.DEBUG if status == "ok" and tool not in HOOK_TOOLS else logging.INFO
        if not _log.isEnabledFor(level):
            return
        given = arguments if isinstance(arguments, Mapping) else {}
        request_id = caller.request_id
        fields: dict[str, Any] = {
            "tool": tool,
            "status": status,
            "ms": round(seconds * 1e3, 3),
            # A generated one when the transport gave none: still ties the lines of a call.
            "request_id": request_id if _loggable_id(request_id) else secrets.token_hex(4),
            "namespace": self._namespace_of(spec, given, caller),
            "caller": caller.principal,
        }
        for key in _ID_ARGUMENTS:
            if _loggable_id(value := given.get(key)):
                fields[key] = value
        # Names only: the values are what the user said. A name no one would choose (too
        # long, unprintable) is logged as its length.
        fields["argument_names"] = sorted(
            str(name) if _loggable_id(name) else f"<{len(str(name))} characters>" for name in given
        )
        _log.log(level, "tool call", extra={"fields": fields})

    def _namespace_of(
        self, spec: ToolSpec | None, arguments: Mapping[str, Any], caller: Caller
    ) -> str:
        """The namespace the call acted on: a lifecycle tool's ``project`` when the caller
        may name it, else the caller's."""
        if spec is None or spec.namespace_from is None or not arguments:
            return caller.namespace
        call = ToolCall(self._host, caller.namespace, arguments, caller.admin)
        try:
            namespace = spec.namespace_of(call)
        except MemcoreError:
            return caller.namespace
        return namespace if _loggable_id(namespace) else caller.namespace


def _loggable_id(value: object) -> bool:
    """Whether ``value`` can go in a log line as an id: a number or a short string."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, str) and 0 < len(value) <= _MAX_LOGGED_ID and value.isprintable()


def _failure(spec: ToolSpec | None, error: MemcoreError) -> Outcome:
    """The error object, with the fields the tool's contract adds to a failure."""
    payload: dict[str, Any] = {"error": error_payload(error)}
    if spec is not None and spec.error_shape is not None:
        payload = {**spec.error_shape(error), **payload}
    return Outcome(payload, is_error=True)
