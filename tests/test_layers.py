"""The package's layers, kept by a test rather than by memory (ARCHITECTURE.md, "Layers").

Every module under ``python/memcore`` (and ``benches``, for cycles) is parsed with `ast`;
its imports, lazy ones in functions included, make the import graph the rules below are
checked on. A failure lists each offending import as ``file:line`` with the rule it breaks,
so it says what to fix.

Layers, top to bottom, in tiers: a module may import its own layer and the layers of the
tiers below, never a layer above nor a peer (another layer of its own tier).

1. the entry points, which only pick a front: the console script ``memcore.cli:main``
   (``memcore serve`` is the MCP server, every other command the command line) and the
   ``python -m memcore`` / ``python -m memcore.cli`` modules;
2. the two fronts, peers: the command line (``memcore.cli``) and the MCP server
   (``memcore.mcp``);
3. what both fronts use, peers: the tools (``memcore.tools``: specs, schemas, argument
   checks, the runner) and the process settings (``memcore.settings``: flags,
   ``MEMCORE_*`` variables, the model list, the ``--fact-extractor`` loader, the token file);
4. the facade: ``memcore`` itself, ``memcore.memory``, its public helpers
   ``memcore.facade`` and its parts ``memcore._facade``;
5. code indexing (``memcore.code``), which embeds through the embeddings below;
6. peers: the embedding models (``memcore.embeddings``) and the fact-capture rules
   (``memcore.capture``);
7. the records the facade returns (``memcore.records``);
8. the foundations: config, errors, logs, times, lazy loading, the exit hook, the rules
   every argument meets;
9. the native core, ``memcore._core``.

Everything above the facade (the front) goes through its public face only: never
``memcore._facade.*``, the native module or code indexing's internals.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from memcore.memory import Memory

REPO = Path(__file__).resolve().parents[1]
SOURCES = REPO / "python"
BENCHES = REPO / "benches"

#: Modules that only pick a front, by exact name (the rest of their packages is a front).
ENTRY_POINTS = ("memcore.__main__", "memcore.cli", "memcore.cli.__main__")

Layer = tuple[str, tuple[str, ...]]  # a name, and the modules it holds by name prefix

#: The tiers of layers, top first; the layers of one tier are peers.
TIERS: tuple[tuple[Layer, ...], ...] = (
    (("entry points", ()),),
    (("command line", ("memcore.cli",)), ("MCP server", ("memcore.mcp",))),
    (("tools", ("memcore.tools",)), ("process settings", ("memcore.settings",))),
    (("facade", ("memcore", "memcore.memory", "memcore.facade", "memcore._facade")),),
    (("code indexing", ("memcore.code",)),),
    (("embeddings", ("memcore.embeddings",)), ("fact capture", ("memcore.capture",))),
    (("records", ("memcore.records",)),),
    (
        (
            "foundations",
            (
                "memcore.config",
                "memcore.errors",
                "memcore.logs",
                "memcore._time",
                "memcore._lazy",
                "memcore._exit",
                "memcore.arguments",
            ),
        ),
    ),
    (("native core", ("memcore._core",)),),
)
LAYERS: tuple[Layer, ...] = tuple(layer for tier in TIERS for layer in tier)
#: Each layer's tier, 0 at the top.
TIER_OF: dict[str, int] = {name: i for i, tier in enumerate(TIERS) for name, _ in tier}

CORE = "memcore._core"
#: Who may import the native module besides the facade: each with its reason.
CORE_IMPORTERS: dict[str, str] = {
    "memcore": "`__init__` reads `__version__`, which the native module carries",
    "memcore.errors": "re-exports the exception classes the core's one error mapping raises",
}
#: Layers that may import the native module (records re-export native classes).
CORE_LAYERS = ("facade",)
CORE_PREFIXES = ("memcore.records",)

#: The layers above the facade, which serve people and agents: they go through the
#: facade's public face only.
FRONT_LAYERS = ("entry points", "command line", "MCP server", "tools", "process settings")
#: What the front may not import: the engine; code indexing's internals (the facade's
#: `index_project`, `project_identity` and `search_code` are its API); and the facade's
#: parts (`memcore.Memory` and `memcore.facade` name what the front may use of them).
FRONT_FORBIDDEN = (CORE, "memcore.code", "memcore._facade")


@dataclass(frozen=True, slots=True)
class Import:
    """One import statement's edge of the graph."""

    importer: str
    target: str
    names: tuple[str, ...]
    where: str  # file:line
    typing_only: bool  # under `if TYPE_CHECKING:`: annotations, never executed


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_sources() -> dict[str, tuple[str, str]]:
    """Module name → (file relative to the repository, source) for the package."""
    return _sources(SOURCES / "memcore", SOURCES)


def bench_sources() -> dict[str, tuple[str, str]]:
    return _sources(BENCHES, REPO)


def _sources(folder: Path, root: Path) -> dict[str, tuple[str, str]]:
    return {
        module_name(path, root): (str(path.relative_to(REPO)), path.read_text(encoding="utf-8"))
        for path in sorted(folder.rglob("*.py"))
    }


def imports(sources: Mapping[str, tuple[str, str]], known: Iterable[str]) -> list[Import]:
    """Every import between the known modules, lazy ones included."""
    modules = set(known)
    found: list[Import] = []
    for module, (file, text) in sources.items():
        package = module if file.endswith("__init__.py") else module.rpartition(".")[0]
        for node, typing_only in _import_nodes(ast.parse(text, file)):
            for target, names in _targets(node, package, modules):
                where = f"{file}:{node.lineno}"
                found.append(Import(module, target, names, where, typing_only))
    return found


def _import_nodes(tree: ast.AST, typing_only: bool = False) -> Iterator[tuple[ast.stmt, bool]]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, typing_only
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                yield from _import_nodes(ast.Module(body=[child], type_ignores=[]), True)
            for child in node.orelse:
                yield from _import_nodes(ast.Module(body=[child], type_ignores=[]), typing_only)
        else:
            yield from _import_nodes(node, typing_only)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _targets(
    node: ast.stmt, package: str, modules: set[str]
) -> Iterator[tuple[str, tuple[str, ...]]]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name in modules:
                yield alias.name, ()
        return
    assert isinstance(node, ast.ImportFrom)
    base = node.module or ""
    if node.level:
        anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join([*anchor, *([base] if base else [])])
    plain: list[str] = []
    for alias in node.names:
        if f"{base}.{alias.name}" in modules:
            yield f"{base}.{alias.name}", ()  # `from memcore import _core` imports a module
        else:
            plain.append(alias.name)
    if plain and base in modules:
        yield base, tuple(plain)


def layer_of(module: str) -> str | None:
    """The layer of a module: an entry point by its name, else the layer naming its
    longest prefix."""
    if module in ENTRY_POINTS:
        return "entry points"
    best: tuple[int, str] | None = None
    for name, prefixes in LAYERS:
        for prefix in prefixes:
            matches = module == prefix or (prefix != "memcore" and module.startswith(prefix + "."))
            if matches and (best is None or len(prefix) > best[0]):
                best = (len(prefix), name)
    return None if best is None else best[1]


# -- the rules -------------------------------------------------------------------------------


def layer_violations(graph: Iterable[Import]) -> list[str]:
    """Imports of a layer above or of a peer, of the native module, and the front's
    reach-arounds."""
    found = []
    for edge in graph:
        source, target = layer_of(edge.importer), layer_of(edge.target)
        assert source is not None and target is not None  # test_every_module_has_a_layer
        what = f"{edge.where}: {edge.importer} imports {edge.target}"
        if TIER_OF[target] < TIER_OF[source]:
            found.append(f"{what}: the {source} layer may not import the {target} layer above it")
        elif TIER_OF[target] == TIER_OF[source] and target != source:
            found.append(
                f"{what}: the {source} and the {target} are peers: neither imports the other"
            )
        if edge.target == CORE and not _may_import_core(edge.importer, source):
            found.append(f"{what}: only the facade and the records import the native module")
        if source in FRONT_LAYERS:
            if any(edge.target == f or edge.target.startswith(f + ".") for f in FRONT_FORBIDDEN):
                public = "memcore.Memory, memcore.facade"
                found.append(
                    f"{what}: the {source} goes through the facade's public face ({public})"
                )
            private = [n for n in edge.names if n.startswith("_") and not n.startswith("__")]
            if target == "facade" and private:
                found.append(f"{what}: {', '.join(private)} is private to the facade")
    return found


def _may_import_core(module: str, layer: str) -> bool:
    return (
        layer in CORE_LAYERS
        or module in CORE_IMPORTERS
        or any(module == p or module.startswith(p + ".") for p in CORE_PREFIXES)
    )


def cycles(graph: Iterable[Import], *, annotations: bool = False) -> list[list[str]]:
    """The import cycles between modules: those that run, or with ``annotations`` also
    those closed by imports under TYPE_CHECKING (never run, but still two modules that
    each need the other to be read)."""
    edges: dict[str, set[str]] = {}
    for edge in graph:
        if (annotations or not edge.typing_only) and edge.importer != edge.target:
            edges.setdefault(edge.importer, set()).add(edge.target)
    found: list[list[str]] = []
    seen: set[frozenset[str]] = set()
    for start in sorted(edges):
        path = _cycle_from(start, edges)
        if path is not None and frozenset(path) not in seen:
            seen.add(frozenset(path))
            found.append(path)
    return found


def _cycle_from(start: str, edges: Mapping[str, set[str]]) -> list[str] | None:
    """A shortest path from `start` back to itself (breadth first)."""
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for module in frontier:
            for target in sorted(edges.get(module, ())):
                if target == start:
                    path = [module]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if target not in previous:
                    previous[target] = module
                    following.append(target)
        frontier = following
    return None


def facade_private_members() -> dict[str, set[str]]:
    """Private attributes and methods of `Memory` and the facade parts it is made of, each
    with the modules of the classes that define it (their owners)."""
    owners: dict[str, set[str]] = {}
    for klass in Memory.__mro__[:-1]:
        names = {*vars(klass), *getattr(klass, "__annotations__", {})}
        tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _is_self(node.value):
                names.add(node.attr)
        for name in names:
            if name.startswith("_") and not name.startswith("__"):
                owners.setdefault(name, set()).add(klass.__module__)
    return owners


def private_reaches(
    sources: Mapping[str, tuple[str, str]], owners: Mapping[str, set[str]]
) -> list[str]:
    """Reads of the facade's private members through anything but `self`, outside the
    modules that define them: another object's internals, which its owner should offer as
    an API instead (as `_facade/base.py` offers `native_engine`)."""
    found = []
    for module, (file, text) in sources.items():
        for node in ast.walk(ast.parse(text, file)):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in owners
                and module not in owners[node.attr]
                and not _is_self(node.value)
            ):
                found.append(
                    f"{file}:{node.lineno}: {module} reads {ast.unparse(node)}: "
                    f"{node.attr} is private to the facade"
                )
    return found


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


# -- the tree --------------------------------------------------------------------------------


def _package_graph(sources: Mapping[str, tuple[str, str]]) -> list[Import]:
    return imports(sources, [*sources, CORE])


def test_every_module_has_a_layer() -> None:
    unplaced = [m for m in [*package_sources(), CORE] if layer_of(m) is None]
    assert not unplaced, f"add these modules to a layer in LAYERS: {unplaced}"


def test_no_module_breaks_the_layers() -> None:
    found = layer_violations(_package_graph(package_sources()))
    assert not found, "\n".join(found)


def test_no_import_cycles() -> None:
    package, benches = package_sources(), bench_sources()
    found = [
        *cycles(_package_graph(package)),
        *cycles(imports(benches, benches)),
    ]
    assert not found, "\n".join(" -> ".join(cycle) for cycle in found)


#: Circles closed only by imports under TYPE_CHECKING that are still to be broken (issue
#: 46, item 6: its two, conversation <-> conversation_handles and benches building <->
#: context, are); the test fails on any other, and on these once they are gone.
ANNOTATION_CYCLES_LEFT = (
    frozenset({"memcore._facade.base", "memcore._facade.pending_vectors"}),
    frozenset({"benches.quality.hooks", "benches.quality.locomo"}),
)


def test_no_import_cycles_in_annotations() -> None:
    package, benches = package_sources(), bench_sources()
    found = {
        frozenset(cycle): cycle
        for cycle in (
            *cycles(_package_graph(package), annotations=True),
            *cycles(imports(benches, benches), annotations=True),
        )
    }
    new = [" -> ".join(cycle) for key, cycle in found.items() if key not in ANNOTATION_CYCLES_LEFT]
    assert not new, "\n".join(new)
    gone = [sorted(left) for left in ANNOTATION_CYCLES_LEFT if left not in found]
    assert not gone, f"no longer circles, remove them from ANNOTATION_CYCLES_LEFT: {gone}"


def test_nothing_reaches_into_the_facade() -> None:
    found = private_reaches(package_sources(), facade_private_members())
    assert not found, "\n".join(found)


# -- the rules catch the reach-arounds issues 22 and 46 removed --------------------------------


@pytest.mark.parametrize(
    ("module", "source"),
    [
        # the front reaching the engine, code indexing or the facade's parts
        ("memcore.tools.groups.conversation", "from memcore._core import Engine\n"),
        ("memcore.tools.groups.code", "def f():\n    from memcore.code.indexer import x\n"),
        ("memcore.tools.groups.code", "from memcore.code.scanner import resolve_root\n"),
        ("memcore.cli.code", "from memcore._core import Engine\n"),
        ("memcore.cli.commands", "from memcore._facade.conversation import _count\n"),
        ("memcore.cli.commands", "from memcore._facade.base import native_engine\n"),
        ("memcore.cli.commands", "def f():\n    from memcore._facade.transfer import x\n"),
        ("memcore.mcp.metrics", "from memcore._facade import turn_metrics\n"),
        ("memcore.settings.options", "from memcore._facade.turn_settings import TurnSettings\n"),
        ("memcore.tools.host", "from memcore.facade import _private\n"),
        # the fronts are peers: neither imports the other
        ("memcore.mcp.main", "def f():\n    from memcore.cli.commands import show_models\n"),
        ("memcore.mcp.http", "from memcore.cli.commands import main\n"),
        ("memcore.cli.commands", "def f():\n    from memcore.mcp.main import main\n"),
        ("memcore.cli.commands", "from memcore.mcp.dispatch import Dispatcher\n"),
        # what both fronts use imports neither, nor each other
        ("memcore.tools.runner", "from memcore.mcp.dispatch import Caller\n"),
        ("memcore.settings.options", "from memcore.cli import commands\n"),
        ("memcore.tools.groups.admin", "from memcore.settings.options import Settings\n"),
        ("memcore.settings.models", "from memcore.tools.registry import ToolSpec\n"),
        # the building blocks against each other and the layers above them
        ("memcore.code.cli", "from memcore.mcp import logs\n"),
        (
            "memcore.code.indexer",
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from memcore._core import Engine\n",
        ),
        ("memcore.records.facts", "from memcore.memory import Memory\n"),
        ("memcore.embeddings.service", "def f():\n    from memcore.code.chunker import x\n"),
        ("memcore.capture.rules", "from memcore.embeddings import EmbeddingService\n"),
        ("memcore.embeddings.service", "from memcore.capture.rules import x\n"),
        ("memcore.records.facts", "from memcore.embeddings.registry import REGISTRY\n"),
        ("memcore.errors", "from memcore.records.facts import MemoryRecord\n"),
    ],
)
def test_layer_rules_catch_a_reach_around(module: str, source: str) -> None:
    sources = {**package_sources(), module: (f"{module}.py", source)}
    found = layer_violations(_package_graph(sources))
    assert [v for v in found if v.startswith(f"{module}.py:")], found


def test_cycle_rule_catches_a_loop() -> None:
    """A loop inside one layer, which the layer rules alone allow: mcp.main imports
    mcp.maintenance, and here mcp.maintenance imports mcp.main back (lazily)."""
    sources = {
        **package_sources(),
        "memcore.mcp.maintenance": (
            "memcore/mcp/maintenance.py",
            "def f():\n    from memcore.mcp.main import main\n",
        ),
    }
    assert not layer_violations(_package_graph(sources))
    found = cycles(_package_graph(sources))
    assert ["memcore.mcp.main", "memcore.mcp.maintenance", "memcore.mcp.main"] in found, found


@pytest.mark.parametrize(
    "source",
    [
        "def f(memory):\n    return memory._engine\n",  # transfer, before
        "class T:\n    def f(self):\n        return self._api._record(1)\n",  # Turn, before
    ],
)
def test_private_rule_catches_a_reach_into_the_facade(source: str) -> None:
    found = private_reaches({"memcore.x": ("x.py", source)}, facade_private_members())
    assert found, source


def test_the_architecture_names_every_facade_module() -> None:
    """ARCHITECTURE.md's drawing names each module of `_facade/`, so a reader finds the
    one a change goes to (a module it does not name has to be found by reading code)."""
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    drawing = text[text.index("## Layers") : text.index("## The write path")]
    named = set(re.findall(r"[a-z_]+", drawing))
    facade = sorted((SOURCES / "memcore" / "_facade").glob("*.py"))
    missing = [path.stem for path in facade if path.stem != "__init__" and path.stem not in named]
    assert not missing, f"name these facade modules in ARCHITECTURE.md, Layers: {missing}"
