"""The tool registry: what a tool is, and which tools a ``--tools`` profile selects.

A tool group is one module in ``memcore.tools.groups`` with a ``register(registry)`` function;
adding a capability's tools (graph, conversation, code) is adding that one file. Nothing
here imports the MCP SDK or opens a store, so the tool list is known before either is ready.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memcore.errors import MemcoreError
    from memcore.memory import Memory
    from memcore.tools.host import StoreHost

#: The default profile (docs/guide.md, "Tool profiles"): the tools a weaker model needs,
#: in this order.
#: Tools whose capability has not landed yet are skipped until their group registers them.
CORE_TOOLS = (
    "store_memory",
    "search_memories",
    "recall",
    "supersede_memory",
    "invalidate",
    "save_memory",
    "search_nodes",
    "get_related",
    "retrieve_context",
    "get_status",
)
#: Listing order of the groups (docs/guide.md); groups not named here come last.
GROUP_ORDER = ("facts", "search", "temporal", "graph", "legacy", "conversation", "code", "admin")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """What a handler gets: the store, the caller's namespace and checked arguments.

    Attributes:
        host: The store's owner; ``memory`` is the open store itself.
        namespace: The caller's namespace: the token's over HTTP, ``--namespace`` on stdio.
        arguments: Arguments after the schema check, with schema defaults filled in.
        admin: Whether the caller may run store-wide operations (every namespace).
    """

    host: StoreHost
    namespace: str
    arguments: Mapping[str, Any]
    admin: bool

    @property
    def memory(self) -> Memory:
        """The open store (shared by every caller: always pass ``namespace``)."""
        return self.host.memory()


Handler = Callable[[ToolCall], dict[str, Any]]
"""Runs in a worker thread (engine calls block); returns the JSON-ready result object."""

ErrorShape = Callable[["MemcoreError"], dict[str, Any]]
"""Fields a tool's contract puts beside ``error`` when a call fails (``{}`` for none)."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One MCP tool.

    Attributes:
        name: The fixed tool name (docs/guide.md, "Tool profiles").
        group: Its capability group, selectable in ``--tools``.
        title: A short human-readable name.
        description: For the model: what it does, when to call it, what comes back.
        input_schema: A complete JSON Schema (draft 2020-12) of the arguments object.
        handler: The implementation.
        read_only: Changes nothing (MCP ``readOnlyHint``).
        destructive: May delete or overwrite (MCP ``destructiveHint``).
        idempotent: Repeating the call changes nothing more (MCP ``idempotentHint``).
        store_wide: Acts on every namespace; refused to callers without admin rights.
        needs_store: Waits for the store to open (``get_status`` answers without it).
        also_in: Further groups the tool belongs to (a tool shared by two groups is
            registered once, under ``group``, and selected by either name).
        reads_server_files: Reads files on the server's disk; refused to callers without
            admin rights (an HTTP tenant must not read the server's files).
        argument_schema: The schema arguments are checked against when it must differ from
            the published one (``save_memory`` leaves its content rules to the core, which
            answers with the contract's wording); None checks ``input_schema``.
        error_shape: Builds the contract's fields that accompany ``error`` on failure.
        namespace_from: The namespace a call acts on, for a tool that lets the caller
            name it (the lifecycle tools' ``project``); None: the caller's namespace.
    """

    name: str
    group: str
    title: str
    description: str
    input_schema: Mapping[str, Any]
    handler: Handler
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    store_wide: bool = False
    needs_store: bool = True
    also_in: tuple[str, ...] = ()
    reads_server_files: bool = False
    argument_schema: Mapping[str, Any] | None = None
    error_shape: ErrorShape | None = None
    namespace_from: Callable[[ToolCall], str] | None = None

    def namespace_of(self, call: ToolCall) -> str:
        """The namespace ``call`` acts on (where its ``min_seq`` and ``seq`` are)."""
        return call.namespace if self.namespace_from is None else self.namespace_from(call)

    def in_group(self, group: str) -> bool:
        """Whether the tool belongs to ``group``."""
        return group == self.group or group in self.also_in

    @property
    def admin_only(self) -> bool:
        """Whether only admin callers may call it (stdio, or an admin token over HTTP):
        it acts on every namespace or reads the server's files. Other callers neither see
        it in ``tools/list`` nor may call it."""
        return self.store_wide or self.reads_server_files


class ProfileError(ValueError):
    """A ``--tools`` profile names a group or tool that does not exist."""


class ToolRegistry:
    """Every tool, by name, in registration order."""

    def __init__(self, publish: Callable[[ToolSpec], ToolSpec] | None = None) -> None:
        """
        Args:
            publish: Turns each tool as its group registers it into the tool as listed
                and run (what every tool shares, such as ``min_seq``); None keeps it.
        """
        self._tools: dict[str, ToolSpec] = {}
        self._publish = publish

    def add(self, spec: ToolSpec) -> None:
        """Register a tool.

        Raises:
            ValueError: A tool with that name is already registered.
        """
        if spec.name in self._tools:
            raise ValueError(f"tool {spec.name!r} is registered twice")
        self._tools[spec.name] = spec if self._publish is None else self._publish(spec)

    def get(self, name: str) -> ToolSpec | None:
        """The tool called ``name``, if registered."""
        return self._tools.get(name)

    @property
    def groups(self) -> list[str]:
        """Group names in listing order."""
        present = {g for spec in self._tools.values() for g in (spec.group, *spec.also_in)}
        known = [g for g in GROUP_ORDER if g in present]
        return known + sorted(present - set(GROUP_ORDER))

    def all(self) -> list[ToolSpec]:
        """Every tool, grouped in listing order."""
        rank = {group: i for i, group in enumerate(self.groups)}
        return sorted(self._tools.values(), key=lambda spec: rank[spec.group])

    def core(self) -> list[ToolSpec]:
        """The default profile: the registered tools of :data:`CORE_TOOLS`."""
        return [self._tools[name] for name in CORE_TOOLS if name in self._tools]

    def select(self, profile: str) -> list[ToolSpec]:
        """The tools of a profile: ``core``, ``all``, or a comma list of groups and tools.

        ``core`` and ``all`` may be combined with names (``core,get_memory``).

        Raises:
            ProfileError: A name is neither a profile, a group nor a tool; the message lists
                what exists.
        """
        chosen: dict[str, ToolSpec] = {}
        unknown: list[str] = []
        for word in (w.strip() for w in profile.split(",")):
            found = self._expand(word)
            if found is None:
                unknown.append(word)
            else:
                chosen.update((spec.name, spec) for spec in found)
        if unknown:
            raise ProfileError(
                f"Unknown tool or group in --tools: {', '.join(unknown)}. Use 'core', 'all', "
                f"groups ({', '.join(self.groups)}) or tools "
                f"({', '.join(spec.name for spec in self.all())})."
            )
        return _in_order(chosen.values(), self.all())

    def _expand(self, word: str) -> list[ToolSpec] | None:
        if word == "core":
            return self.core()
        if word == "all":
            return self.all()
        if word in self._tools:
            return [self._tools[word]]
        group = [spec for spec in self._tools.values() if spec.in_group(word)]
        return group or None


def _in_order(chosen: Iterable[ToolSpec], order: list[ToolSpec]) -> list[ToolSpec]:
    names = {spec.name for spec in chosen}
    return [spec for spec in order if spec.name in names]
