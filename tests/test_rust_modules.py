"""The Rust crates' modules import each other without circles (ARCHITECTURE.md: data and
calls flow one way). Each file's paths into its crate (``crate::a::b``, ``super::c``, ``self::d``)
name the modules it uses; a module using its own parent or children is how Rust nests modules
and does not count, a circle through siblings or other subtrees does. Unit-test code
(``#[cfg(test)]`` modules) is left out: tests may reach anywhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path

CRATES = Path(__file__).resolve().parents[1] / "rust"

_TEST_MODULE = re.compile(r"#\[cfg\(test\)\]\s*(?:pub(?:\([a-z]+\))?\s+)?mod\s+(\w+)\s*;")
_PATH = re.compile(r"\b(crate|super|self)((?:::\w+)+|::\{[^;]*?\})")


def _module_of(src: Path, file: Path) -> tuple[str, ...]:
    parts = file.relative_to(src).with_suffix("").parts
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def _sources(src: Path) -> dict[tuple[str, ...], str]:
    """Every module of a crate and its code without its unit tests."""
    files = {_module_of(src, f): f for f in src.rglob("*.rs")}
    test_only = set()
    for module, file in files.items():
        for name in _TEST_MODULE.findall(file.read_text()):
            test_only.add((*module, name))
    code = {}
    for module, file in files.items():
        if any(module[: len(t)] == t for t in test_only):
            continue
        # Comments name modules without using them.
        text = re.sub(r"//[^\n]*", "", file.read_text())
        cut = re.search(r"#\[cfg\(test\)\]\s*mod tests\s*\{", text)
        code[module] = text[: cut.start()] if cut else text
    return code


def _targets(
    module: tuple[str, ...], text: str, modules: set[tuple[str, ...]]
) -> Iterator[tuple[str, ...]]:
    for root, rest in _PATH.findall(text):
        base = () if root == "crate" else module[:-1] if root == "super" else module
        for tail in _expand(rest):
            path = (*base, *tail)
            # The longest prefix that is a module: the rest names items in it.
            while path and path not in modules:
                path = path[:-1]
            if path:
                yield path


def _expand(rest: str) -> Iterator[tuple[str, ...]]:
    """``::a::b`` -> (a, b); ``::{a::b, c}`` -> (a, b), (c,) (one level of braces)."""
    if rest.startswith("::{"):
        for part in rest[3:-1].split(","):
            words = re.findall(r"\w+", part.split(" as ")[0])
            if words and words[0] != "self":
                yield tuple(words)
        return
    yield tuple(re.findall(r"\w+", rest))


def _nested(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    shorter = min(len(a), len(b))
    return a[:shorter] == b[:shorter]


def module_graph(src: Path) -> dict[tuple[str, ...], set[tuple[str, ...]]]:
    code = _sources(src)
    modules = set(code)
    return {
        module: {t for t in _targets(module, text, modules) if not _nested(module, t)}
        for module, text in code.items()
    }


def circles(graph: Mapping[tuple[str, ...], set[tuple[str, ...]]]) -> list[list[str]]:
    """Each strongly connected group of more than one module, as names."""
    index: dict[tuple[str, ...], int] = {}
    low: dict[tuple[str, ...], int] = {}
    stack: list[tuple[str, ...]] = []
    found: list[list[str]] = []

    def visit(node: tuple[str, ...]) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                group.append("::".join(top) or "crate")
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


#: Circles known and not yet broken, each as its sorted module names: the test fails on any
#: other, and on one of these once it is gone (so the list stays true). The per-record
#: checksums (store/checksum.rs) read the record tables' column lists while those tables
#: verify their rows with it, and error.rs turns a checksum mismatch into damage.
CIRCLES_LEFT = {
    "memcore": [
        [
            "catalog",
            "code",
            "conversation",
            "error",
            "kind",
            "memory",
            "store::checksum",
            "store::code",
            "store::conversations",
            "store::memories",
            "store::table",
        ]
    ],
}


def test_no_module_circles_in_the_rust_crates() -> None:
    found = {
        crate.name: circles(module_graph(crate / "src"))
        for crate in sorted(CRATES.iterdir())
        if (crate / "src").is_dir()
    }
    new = {
        crate: [g for g in groups if g not in CIRCLES_LEFT.get(crate, [])]
        for crate, groups in found.items()
    }
    assert not any(new.values()), "\n".join(
        f"{crate}: {' <-> '.join(group)}" for crate, groups in new.items() for group in groups
    )
    gone = {
        crate: [g for g in groups if g not in found.get(crate, [])]
        for crate, groups in CIRCLES_LEFT.items()
    }
    assert not any(gone.values()), f"broken since listed, take them out of CIRCLES_LEFT: {gone}"


def test_the_check_sees_a_circle() -> None:
    graph = {("a",): {("b",)}, ("b",): {("c",)}, ("c",): {("a",)}, ("d",): {("a",)}}
    assert circles(graph) == [["a", "b", "c"]]
    assert not _nested(("engine", "search"), ("engine", "hits"))
    assert _nested(("engine",), ("engine", "hits"))
