"""One tool call, checked and run, whichever front asked for it.

The steps every call takes: the arguments hold nothing memcore cannot take whatever the
tool (``memcore.arguments``: a lone surrogate, an integer past 64 bits, a float that is
no number, nesting past 64 levels, an over-long key), they fit the size limits, they meet
the tool's schema (defaults filled in), the caller has the rights the tool needs; then the
handler runs at the log position the call asks for (``memcore.tools.positions``).

The MCP server (memcore/mcp/dispatch.py) adds what a server needs around that: the profile,
a worker thread, the error shape, metrics and logs. The ``memcore`` command
(memcore/cli/commands.py) calls :meth:`ToolRunner.call`, so a command prints what the tool
of its name returns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memcore.arguments import check_arguments
from memcore.errors import UnauthorizedError, invalid
from memcore.tools import positions
from memcore.tools.host import StoreHost
from memcore.tools.limits import Limits
from memcore.tools.registry import ToolCall, ToolSpec
from memcore.tools.validation import ArgumentChecker


class ToolRunner:
    """Checks and runs the calls to a set of tools against one store."""

    def __init__(
        self,
        tools: Sequence[ToolSpec],
        host: StoreHost,
        *,
        limits: Limits | None = None,
        min_seq_wait: float = positions.MIN_SEQ_WAIT,
    ) -> None:
        """
        Args:
            tools: The tools that may be called.
            host: The store they run against.
            limits: Size limits on a call's arguments; None for none (the command line,
                whose arguments are the user's own flags).
            min_seq_wait: Seconds a read waits for its ``min_seq`` (PostgreSQL nodes).
        """
        self._tools = {spec.name: spec for spec in tools}
        # Compiled on first use (validation.py): building them is cheap.
        self._checkers = {
            spec.name: ArgumentChecker(spec.argument_schema or spec.input_schema) for spec in tools
        }
        self._host = host
        self._limits = limits
        self._min_seq_wait = min_seq_wait

    @property
    def tools(self) -> list[ToolSpec]:
        """The tools, in the order given."""
        return list(self._tools.values())

    def get(self, name: str) -> ToolSpec | None:
        """The tool called ``name``, if it is one of these."""
        return self._tools.get(name)

    def check(
        self, spec: ToolSpec, arguments: Mapping[str, Any] | None, *, namespace: str, admin: bool
    ) -> ToolCall:
        """The call of ``spec`` with ``arguments`` checked and completed.

        Args:
            spec: One of these tools.
            arguments: As the caller sent them.
            namespace: The caller's namespace.
            admin: Whether the caller may act on every namespace and read the server's files.

        Raises:
            InvalidParameterError: An argument breaks a rule; the error names it.
            PayloadTooLargeError: The arguments exceed the size limits.
            UnauthorizedError: The tool needs admin rights the caller lacks.
        """
        if arguments:
            check_arguments(arguments)
        if self._limits is not None:
            self._limits.check(dict(arguments) if arguments else None)
        checked = self._checkers[spec.name].check(arguments)
        if spec.store_wide and not admin:
            raise UnauthorizedError(
                f"{spec.name} acts on every namespace; this caller's token is not an admin token."
            )
        if spec.reads_server_files and not admin:
            raise UnauthorizedError(
                f"{spec.name} reads files on the server's disk; only admin tokens may call it."
            )
        return ToolCall(self._host, namespace, checked, admin)

    def run(self, spec: ToolSpec, call: ToolCall) -> dict[str, Any]:
        """Run a checked call in this thread (engine calls block), the store open.

        Raises:
            MemcoreError: What the handler raised.
        """
        return positions.run(spec, call, self._min_seq_wait)

    def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        *,
        namespace: str,
        admin: bool,
        timeout: float,
    ) -> dict[str, Any]:
        """Check and run one call in this thread, waiting up to ``timeout`` seconds for
        the store to open.

        Raises:
            InvalidParameterError: No such tool, or an argument breaks a rule.
            MemcoreError: What the checks or the handler raised.
        """
        spec = self.get(name)
        if spec is None:
            raise invalid("name", f"Unknown tool '{name}'. Available: {', '.join(self._tools)}.")
        call = self.check(spec, arguments, namespace=namespace, admin=admin)
        if spec.needs_store:
            self._host.wait_blocking(timeout)
        return self.run(spec, call)
