"""The code group: index projects for semantic code search (docs/guide.md,
"Code search").

``index_project`` runs its pass in a background thread and waits at most
``wait_seconds`` for it (see ``_index_jobs``): small projects answer with the finished
report, large ones with ``status: "indexing"`` to follow with ``get_index_status``. It
reads the server's disk, so over HTTP only admin tokens may call it; searching,
listing and deleting the namespace's projects is open to every caller.
"""

from __future__ import annotations

from typing import Any

from memcore.errors import NotFoundError
from memcore.tools import schema
from memcore.tools.groups._index_jobs import KEY, IndexJobs
from memcore.tools.groups._shared import HYBRID_WITHOUT_MODEL, optional, search_limit
from memcore.tools.registry import ToolCall, ToolRegistry, ToolSpec


def _jobs(call: ToolCall) -> IndexJobs:
    return call.host.attachment(KEY, IndexJobs)


def index_project(call: ToolCall) -> dict[str, Any]:
    """Start (or join) a pass over a project; its report if it ends within the wait."""
    from memcore.facade import project_identity

    args = call.arguments
    root, project_id = project_identity(args["path"], args.get("project_id") or None)
    job = _jobs(call).start(call.memory, call.namespace, str(root), project_id, watch=args["watch"])
    if job.done.wait(args["wait_seconds"]):
        if job.error is not None:
            raise job.error
        if job.report is not None:
            report = job.report.to_dict()
            return {"status": "watching" if job.report.watching else "idle", **report}
    return {
        "status": "indexing",
        "project_id": project_id,
        "root": str(root),
        "indexed_files": job.files_done,
        "total_files": job.files_total,
        "message": "Indexing goes on in the background; call get_index_status with this "
        "project_id to follow it. search_code already finds the files indexed so far.",
    }


def search_code(call: ToolCall) -> dict[str, Any]:
    """Hybrid search over code chunks."""
    args = call.arguments
    hits = call.memory.search_code(
        args["query"],
        limit=args["limit"],
        namespace=call.namespace,
        **optional(args, "project_id", "language"),
    )
    return {"results": [hit.to_dict() for hit in hits]}


def get_index_status(call: ToolCall) -> dict[str, Any]:
    """One project's indexing status."""
    project_id = call.arguments["project_id"]
    try:
        status = call.memory.get_index_status(project_id, namespace=call.namespace)
    except NotFoundError:
        # A pass that index_project just started may not have written its first status
        # row yet (it waits for the project's lock first): answer for it.
        job = _jobs(call).running(call.namespace, project_id)
        if job is None:
            raise
        return {
            "project_id": project_id,
            "root": job.root,
            "status": "indexing",
            "total_files": job.files_total,
            "indexed_files": job.files_done,
            "total_chunks": 0,
            "started_at": None,
            "completed_at": None,
            "error": None,
            "updated_at": None,
        }
    return status.to_dict()


def list_projects(call: ToolCall) -> dict[str, Any]:
    """Every indexed project of the namespace."""
    return {"projects": [p.to_dict() for p in call.memory.list_projects(namespace=call.namespace)]}


def delete_project(call: ToolCall) -> dict[str, Any]:
    """Stop a project's pass and watcher and remove its chunks."""
    project_id = call.arguments["project_id"]
    _jobs(call).stop(call.namespace, project_id)
    removed = call.memory.delete_project(project_id, namespace=call.namespace)
    return {
        "success": True,
        "project_id": project_id,
        "chunks_removed": removed,
        "message": f"Project {project_id} deleted ({removed} chunks removed).",
    }


def register(registry: ToolRegistry) -> None:
    """Add the code group."""
    for spec in _SPECS:
        registry.add(spec)


def _project_id(description: str) -> schema.Schema:
    return schema.string(description, min_length=1, max_length=128)


_SPECS = (
    ToolSpec(
        name="index_project",
        group="code",
        title="Index a project",
        description=(
            "Index a source tree on the server's disk for search_code: files under "
            ".gitignore/.memoryignore rules, split along their syntax (functions, classes, "
            "methods with their enclosing scope) and embedded; unchanged files are skipped "
            "on later passes. watch: true keeps the index current as files change. Waits up "
            "to wait_seconds: returns the report {status idle|watching, project_id, "
            "files_scanned, files_indexed, files_unchanged, files_removed, chunks, "
            "total_chunks, embedded, seconds, note}, or {status: 'indexing', project_id, "
            "indexed_files, total_files} while a long pass continues in the background "
            "(follow it with get_index_status)."
        ),
        input_schema=schema.arguments(
            {
                "path": schema.string(
                    "The project's root directory (absolute, or relative to the server).",
                    min_length=1,
                    max_length=4096,
                ),
                "project_id": _project_id(
                    "The project's id (default: folder name plus a hash of its path)."
                ),
                "watch": schema.boolean(
                    "Re-index changed files automatically (500 ms after the last change).",
                    default=False,
                ),
                "wait_seconds": schema.number(
                    "How long to wait for the pass before answering 'indexing'.",
                    minimum=0,
                    maximum=120,
                    default=20,
                ),
            },
            required=["path"],
        ),
        handler=index_project,
        idempotent=True,
        reads_server_files=True,
    ),
    ToolSpec(
        name="search_code",
        group="code",
        title="Search code",
        description=(
            "Find code by what it does ('where are tokens refreshed?', matched by meaning) "
            "or by identifiers (getUserName, parse_args, MAX_SIZE, os.path.join: matched by "
            "the whole name and its parts; the chunks that define a name you give, or a "
            "one-word query, come first) over indexed projects. Returns "
            "{results}, best first: file_path, start_line, end_line, name, chunk_type, "
            "language, parent_scope, snippet, relevance_score (0-1), scores, project_id."
            + HYBRID_WITHOUT_MODEL
        ),
        input_schema=schema.arguments(
            {
                "query": schema.string(
                    "A description of the code, or identifiers.", min_length=1, max_length=2000
                ),
                "project_id": _project_id("Only this project (default: every project)."),
                "language": schema.string(
                    "Only this language: python, rust, typescript, go, java, ...",
                    min_length=1,
                    max_length=40,
                ),
                "limit": search_limit(),
            },
            required=["query"],
        ),
        handler=search_code,
        read_only=True,
    ),
    ToolSpec(
        name="get_index_status",
        group="code",
        title="Indexing status",
        description=(
            "A project's indexing status: status (idle, indexing, watching or error), "
            "total_files, indexed_files, total_chunks, started_at, completed_at and error "
            "(or a warning such as 'indexed without vectors'). NOT_FOUND for an unknown "
            "project."
        ),
        input_schema=schema.arguments(
            {"project_id": _project_id("The project's id.")}, required=["project_id"]
        ),
        handler=get_index_status,
        read_only=True,
    ),
    ToolSpec(
        name="list_projects",
        group="code",
        title="List indexed projects",
        description=(
            "Every indexed project with its root and status (as get_index_status). Use it to "
            "find project ids for search_code. Returns {projects}."
        ),
        input_schema=schema.arguments({}),
        handler=list_projects,
        read_only=True,
    ),
    ToolSpec(
        name="delete_project",
        group="code",
        title="Delete a project's index",
        description=(
            "Stop indexing and watching a project and remove all its code chunks (files on "
            "disk are not touched). NOT_FOUND for an unknown project. Returns {success, "
            "project_id, chunks_removed, message}."
        ),
        input_schema=schema.arguments(
            {"project_id": _project_id("The project's id.")}, required=["project_id"]
        ),
        handler=delete_project,
        destructive=True,
    ),
)
