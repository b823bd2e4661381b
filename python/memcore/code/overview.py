"""Code projects in the memory overview (``memory_list_dir_with_abstract``).

The core's overview lists namespaces, threads and conversations; indexed projects are
added here from what the engine already exposes: a project's status row (chunk count,
last pass) and its indexed file paths. The abstract needs no LLM and no chunk text:
the file count, the languages (from file names, as the scanner detects them), the words
that recur in the file paths (folders and file names split like identifiers) and the
root, so that an agent can tell one project from another at a glance.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any

from memcore.code.languages import detect_language

#: The path segment under a namespace that holds its projects: ``/<ns>/projects/<id>``.
PROJECTS_SEGMENT = "projects"
#: Most projects listed per namespace (the core lists at most 100 threads and
#: conversations each, for the same reason: the listing is for orientation).
MAX_PROJECTS = 100
#: Languages and path terms shown in an abstract.
MAX_LANGUAGES = 4
MAX_TERMS = 5
#: Path words every project has: they would crowd out the ones that tell projects apart.
LAYOUT_WORDS = frozenset(
    {"src", "lib", "libs", "pkg", "test", "tests", "spec", "index", "main", "mod", "init"}
)

# The words of a path segment: an acronym before a capitalised word, a capitalised or
# lower-case word, a trailing acronym (the identifier splitting of the BM25 side).
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")


def with_projects(
    engine: Any,
    entries: list[dict[str, Any]],
    own_namespace: str,
    *,
    depth: int,
    complete: bool,
) -> list[dict[str, Any]]:
    """The core's overview entries with each namespace's projects woven in.

    A namespace's projects follow its threads and conversations, and its own entry's
    abstract ends with its number of projects. ``own_namespace`` (the caller's) gets an
    entry even when it holds nothing but projects, which the core does not list.

    Args:
        engine: The native engine.
        entries: The core's entries (times in microseconds), namespace by namespace,
            each namespace's own entry first.
        own_namespace: The namespace of the call.
        depth: The listing depth: 1 adds no project entries, only the counts.
        complete: The core listed everything (not cut at the limit), so a namespace
            missing from ``entries`` holds no memories, entities or conversations.

    Returns:
        ``{path, kind, count, updated_at, abstract}`` in listing order, times in
        microseconds (the caller filters by path, cuts at the limit and formats).
    """
    blocks: dict[str, list[dict[str, Any]]] = {}
    current: list[dict[str, Any]] = []
    for entry in entries:
        # Each namespace's own entry opens its block (a namespace may hold a "/").
        if entry["kind"] == "namespace":
            current = blocks.setdefault(entry["path"][1:], [])
        current.append(entry)
    if complete:
        blocks.setdefault(own_namespace, [])
    listed: list[dict[str, Any]] = []
    for namespace, block in blocks.items():
        rows = _projects(engine, namespace)
        if rows and not block:
            block = [_namespace_entry(namespace, rows)]
        elif rows and block[0]["kind"] == "namespace":
            head = block[0]
            block[0] = {
                **head,
                "updated_at": max(head["updated_at"] or 0, _last_indexed(rows[0])),
                "abstract": namespace_note(head["abstract"], len(rows)),
            }
        listed.extend(block)
        if depth >= 2:
            listed.extend(project_entry(engine, namespace, row) for row in rows[:MAX_PROJECTS])
    return listed


def project_entry(engine: Any, namespace: str, row: Mapping[str, Any]) -> dict[str, Any]:
    """The listing entry of one indexed project.

    Args:
        engine: The native engine (its ``indexed_files`` gives the file paths).
        namespace: The project's namespace.
        row: The project's status row, as ``list_projects`` returns it.

    Returns:
        ``{path, kind: "project", count, updated_at, abstract}``, where ``count`` is the
        project's chunks and ``updated_at`` its last completed pass (microseconds).
    """
    files = engine.indexed_files(namespace, row["project_id"])
    return {
        "path": f"/{namespace}/{PROJECTS_SEGMENT}/{row['project_id']}",
        "kind": "project",
        "count": row["total_chunks"],
        "updated_at": _last_indexed(row),
        "abstract": project_abstract(row, files),
    }


def _projects(engine: Any, namespace: str) -> list[Mapping[str, Any]]:
    rows: list[Mapping[str, Any]] = list(engine.list_projects(namespace))
    rows.sort(key=_last_indexed, reverse=True)  # most recently indexed first
    return rows


def _namespace_entry(namespace: str, rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The entry of a namespace that holds code projects only."""
    return {
        "path": f"/{namespace}",
        "kind": "namespace",
        "count": 0,
        "updated_at": _last_indexed(rows[0]),
        "abstract": namespace_note("0 memories, 0 entities, 0 conversations", len(rows)),
    }


def project_abstract(row: Mapping[str, Any], files: Iterable[str]) -> str:
    """A one-line description of a project from its status row and file paths.

    Example: ``3 files, 4 chunks; languages: python 2, rust 1; top terms: auth, parse,
    util; root: /home/me/proj``.
    """
    paths = list(files)
    text = f"{len(paths)} files, {row['total_chunks']} chunks"
    languages = Counter(detect_language(p) or "other" for p in paths)
    if languages:
        ranked = _ranked(languages, MAX_LANGUAGES)
        text += "; languages: " + ", ".join(f"{name} {n}" for name, n in ranked)
    terms = path_terms(paths, MAX_TERMS)
    if terms:
        text += "; top terms: " + ", ".join(terms)
    text += f"; root: {row['root']}"
    if row.get("status") == "error" and row.get("error"):
        text += f"; last pass failed: {row['error']}"
    return text


def path_terms(paths: Iterable[str], n: int) -> list[str]:
    """The words found in the most file paths (folders and file names without their
    extension, split like identifiers), most frequent first, ties alphabetical."""
    counts: Counter[str] = Counter()
    for path in paths:
        pure = PurePosixPath(path)
        segments = [*pure.parent.parts, pure.stem]
        words = {w.lower() for s in segments for w in _WORD.findall(s)}
        counts.update(w for w in words if len(w) >= 3 and w not in LAYOUT_WORDS)
    return [word for word, _ in _ranked(counts, n)]


def namespace_note(abstract: str, projects: int) -> str:
    """A namespace's abstract with its number of code projects appended."""
    if not projects:
        return abstract
    return f"{abstract}; {projects} code project{'s' if projects != 1 else ''}"


def _ranked(counts: Counter[str], n: int) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:n]


def _last_indexed(row: Mapping[str, Any]) -> int:
    completed: int | None = row["completed_at"]
    return completed if completed is not None else int(row["updated_at"])
