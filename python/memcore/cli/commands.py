"""memcore: long-term memory for AI agents, from a shell.

Each command opens the store (default ~/.local/share/memcore), does one thing and prints
its result as JSON on stdout, the same JSON an agent gets from the MCP tool of that name;
progress, notes and errors go to stderr. Read commands also work while a server holds the
store: they open it read-only.

examples:
  memcore serve                                   run the MCP server (stdio)
  memcore store "User prefers TypeScript" --source explicit
  memcore store "Builds with make" --project-root .   in ./.memcore (local mode)
  memcore search "language preferences"           semantic search (--text: keywords)
  memcore recall "what does the user like?" --limit 5
  memcore graph search "payments team"            entities (save_memory, imports)
  memcore graph open Alice ACME                   entities by name, their relations
  memcore graph related Alice --depth 2           the entities around one
  memcore status                                  store, counts, embedding model
  memcore index ~/src/myproject                   index code for search_code
  memcore code search ~/src/myproject "where are tokens refreshed?"
  memcore code list                               the indexed projects and their ids
  memcore export backup.jsonl                     every record, as JSON Lines
  memcore import backup.jsonl --skip-existing     restore an export
  memcore import --from-reference-server memory.json   migrate a reference memory server

Settings: flag > MEMCORE_* variable > default (--data-dir, --model, --namespace, ...; see
any command's --help). Exit status: 0 success, 1 failed command, 2 bad usage.
Guide: docs/guide.md; migrating from the reference memory server: docs/migration.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from memcore import __version__
from memcore.cli.replica import add_replica_commands
from memcore.cli.store import add_store_commands
from memcore.errors import MemcoreError, ResourceBusyError
from memcore.settings.models import show_models
from memcore.settings.options import (
    DEFAULT_BUCKETS,
    STORE_OPTIONS,
    NamespaceRange,
    Settings,
    SettingsError,
    add_options,
    namespace_bucket,
    resolve,
)

# Only what parsing needs is imported above, so `memcore --help` and the argument errors
# answer at once; each command imports the store, the MCP tools or the code indexer (numpy,
# onnxruntime, jsonschema, tree-sitter, rich) when it runs.
if TYPE_CHECKING:
    from memcore.facade import ReferenceImportReport
    from memcore.memory import Memory
    from memcore.tools.runner import ToolRunner

EXIT_FAILED = 1
EXIT_USAGE = 2


class CommandError(Exception):
    """A command failed for a reason the user can act on; the message says which."""


class UsageError(Exception):
    """The command line asks for something that cannot be done; exit status 2."""


# -- entry point ---------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run a ``memcore`` command other than ``serve``, which the entry point
    (``memcore.cli.main``) hands to the MCP server instead; the exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(arguments)
    try:
        return int(args.run(args))
    except (SettingsError, UsageError) as exc:
        _fail(str(exc))
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader (`| head`) left; nothing more can be said on stdout.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED
    except (CommandError, MemcoreError, OSError) as exc:
        code = f"{type(exc).code}: " if isinstance(exc, MemcoreError) else ""
        _fail(f"{code}{exc}")
        return EXIT_FAILED


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memcore",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"memcore {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    # Listed for --help only: the entry point (memcore/cli/__init__.py) hands `serve` and
    # its arguments to the server's own parser before this one sees them.
    serve = commands.add_parser(
        "serve",
        help="run the MCP server, stdio or HTTP (see memcore serve --help)",
        description="Run the MCP server; the same as python -m memcore.mcp.",
        add_help=False,
    )
    serve.set_defaults(run=_serve_elsewhere)
    _status_command(commands)
    _models_command(commands)
    _store_memory_command(commands)
    _search_commands(commands)
    _graph_commands(commands)
    _export_command(commands)
    _import_command(commands)
    _index_command(commands)
    _code_commands(commands)
    add_store_commands(commands)  # check, repair, backup (memcore/cli/store.py)
    add_replica_commands(commands)  # replica reset (memcore/cli/replica.py)
    _auth_commands(commands)
    _namespace_bucket_command(commands)
    return parser


def _store_command(
    commands: Any,
    name: str,
    help_text: str,
    run: Callable[[argparse.Namespace], int],
    description: str | None = None,
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        name, help=help_text, description=description or _sentence(help_text)
    )
    add_options(parser, STORE_OPTIONS)
    parser.set_defaults(run=run)
    return parser


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + "."


def _status_command(commands: Any) -> None:
    status = _store_command(
        commands,
        "status",
        "show the store, its counts and the embedding model (JSON)",
        _status,
        "Print the version, the store, its counts and the embedding model's state as JSON. "
        "Waits for the model to load; exits 1 when the model failed to load.",
    )
    status.add_argument(
        "--no-wait", action="store_true", help="report the model as it is, even if still loading"
    )


def _serve_elsewhere(args: argparse.Namespace) -> int:
    raise UsageError("the MCP server runs through `memcore serve` (memcore.cli.main)")


def _namespace_bucket_command(commands: Any) -> None:
    bucket = commands.add_parser(
        "namespace-bucket",
        help="show the bucket of namespaces, for --namespace-range and the proxy (JSON)",
        description="Print each namespace's bucket, memcore's fixed hash that "
        "--namespace-range LO-HI/BUCKETS selects on, and with --range whether a node "
        "serving that range serves it (docs/scale-out.md). Opens no store.",
    )
    bucket.add_argument("names", nargs="+", metavar="NAME", help="namespace")
    bucket.add_argument(
        "--buckets", type=int, default=DEFAULT_BUCKETS, help=f"buckets ({DEFAULT_BUCKETS})"
    )
    bucket.add_argument("--range", metavar="LO-HI/BUCKETS", help="a node's --namespace-range")
    bucket.set_defaults(run=_namespace_bucket)


def _namespace_bucket(args: argparse.Namespace) -> int:
    served: NamespaceRange | None = None
    if args.range is not None:
        try:
            served = NamespaceRange.parse(args.range)
        except ValueError as exc:
            raise UsageError(f"Invalid --range {args.range!r}: {exc}.") from None
    buckets = args.buckets if served is None else served.buckets
    if buckets < 1:
        raise UsageError(f"Invalid --buckets {buckets}: expected at least 1.")
    rows: list[dict[str, Any]] = []
    for name in args.names:
        row: dict[str, Any] = {
            "namespace": name,
            "bucket": namespace_bucket(name, buckets),
            "buckets": buckets,
        }
        if served is not None:
            row["served"] = name in served
        rows.append(row)
    _print_json(rows)
    return 0


def _models_command(commands: Any) -> None:
    models = commands.add_parser(
        "models",
        help="list the embedding models",
        description="List the embedding models memcore knows, their size and whether they "
        "are available without a download.",
    )
    models.add_argument("--json", action="store_true", help="print JSON instead of a table")
    models.set_defaults(run=lambda a: show_models(as_json=a.json))


def _store_memory_command(commands: Any) -> None:
    store = _store_command(
        commands,
        "store",
        "store a memory (JSON result: its id and similar memories)",
        _store,
        "Store one fact, as the store_memory tool does: the result names similar memories "
        "it may replace (supersede them with the MCP tool or the Python API).",
    )
    store.add_argument("content", metavar="CONTENT", help="the fact to remember, one statement")
    store.add_argument(
        "--memory-type",
        choices=("episodic", "semantic", "procedural"),
        help="what kind of memory: an event, a lasting fact, or how to do something",
    )
    store.add_argument(
        "--source",
        choices=("explicit", "extracted", "conversation"),
        help="explicit: the user asked to remember it; extracted: inferred; conversation: "
        "captured from what the user said",
    )
    store.add_argument(
        "--tier",
        choices=("L1", "L2", "durable"),
        help="how long it holds: L1 today, L2 this week, durable (default) no expiry",
    )
    store.add_argument("--thread-id", help="a conversation or agent thread to tag it with")
    store.add_argument(
        "--confidence", type=float, help="how sure the fact is, 0 to 1 (default 1.0)"
    )
    store.add_argument("--importance", type=float, help="how much it matters, 0 to 1 (default 0.5)")


def _search_commands(commands: Any) -> None:
    for name, help_text, description in (
        (
            "search",
            "search memories by meaning, or by keywords with --text (JSON)",
            "Search the memories by meaning (vector search), or by keywords (BM25) with "
            "--text; only currently valid memories unless --include-invalid.",
        ),
        (
            "recall",
            "find memories by meaning, keywords and the graph together (JSON)",
            "Hybrid search: vectors, keywords and the knowledge graph's links, fused; falls "
            "back to keywords without an embedding model.",
        ),
    ):
        search = _store_command(commands, name, help_text, _search, description)
        search.add_argument("query", metavar="QUERY", help="what to look for, in plain words")
        search.add_argument(
            "--limit", type=int, default=10, help="how many results, 1 to 50 (default 10)"
        )
        search.add_argument("--thread-id", help="only memories tagged with this thread")
        search.add_argument(
            "--as-of", metavar="TIME", help="ISO 8601 time: search the memory as it was then"
        )
        search.add_argument(
            "--include-invalid",
            action="store_true",
            help="also return invalidated and superseded memories",
        )
        if name == "search":
            search.add_argument(
                "--text", action="store_true", help="keyword search (BM25) instead of vectors"
            )
        if name == "recall":
            search.add_argument(
                "--max-per-thread",
                type=int,
                metavar="N",
                help="spread the results: at most N from one thread before other threads' next "
                "(default: by relevance, 4 per thread for a question asking for a list)",
            )


def _graph_commands(commands: Any) -> None:
    graph = commands.add_parser(
        "graph",
        help="look at the knowledge graph: search, open, related (JSON)",
        description="The knowledge graph's entities, as save_memory and memcore import "
        "--from-reference-server write them (memcore search and recall look at memories, "
        "not entities). Each prints what the MCP tool of the same job returns: "
        "search_nodes, open_nodes, get_related.",
    )
    actions = graph.add_subparsers(dest="action", required=True, metavar="ACTION")
    search = _store_command(
        actions,
        "search",
        "find entities by meaning and keywords (search_nodes)",
        _graph_search,
    )
    search.add_argument("query", metavar="QUERY", help="what to look for, in plain words")
    search.add_argument(
        "--limit", type=int, default=10, help="how many entities, 1 to 50 (default 10)"
    )
    opened = _store_command(
        actions,
        "open",
        "show entities by name with their observations and relations (open_nodes)",
        _graph_open,
    )
    opened.add_argument("names", nargs="+", metavar="NAME", help="an entity's name (any case)")
    related = _store_command(
        actions,
        "related",
        "show the entities connected to one, nearest first (get_related)",
        _graph_related,
    )
    related.add_argument("name", metavar="NAME", help="the entity to start from")
    related.add_argument("--depth", type=int, default=2, help="hops to follow, 1 to 5 (2)")
    related.add_argument(
        "--direction",
        choices=("out", "in", "both"),
        default="both",
        help="relations from it, to it, or both (default)",
    )
    related.add_argument("--relation-type", help="follow only relations of this type")
    related.add_argument("--as-of", metavar="TIME", help="ISO 8601 time: the relations valid then")
    related.add_argument("--limit", type=int, default=100, help="most entities (100)")


def _code_commands(commands: Any) -> None:
    code = commands.add_parser(
        "code",
        help="search indexed code, list indexed projects (JSON)",
        description="Search the code that memcore index (or the index_project tool) "
        "indexed, as the search_code tool does, and list the indexed projects.",
    )
    actions = code.add_subparsers(dest="action", required=True, metavar="ACTION")
    search = _store_command(
        actions,
        "search",
        "find code by what it does or by identifiers (search_code)",
        _code_search,
        "Find code in one indexed project by a description ('where are tokens "
        "refreshed?') or by identifiers (parse_args, MAX_SIZE); the chunks defining a "
        "name you give come first.",
    )
    search.add_argument(
        "project",
        metavar="PROJECT",
        help="the project's folder as it was indexed, its id (memcore code list), or "
        "'all' for every project",
    )
    search.add_argument("query", metavar="QUERY", help="a description of the code, or names")
    search.add_argument("--language", help="only this language: python, rust, go, ...")
    search.add_argument(
        "--limit", type=int, default=10, help="how many results, 1 to 50 (default 10)"
    )
    _store_command(
        actions, "list", "list the indexed projects with their ids and roots", _code_list
    )


def _export_command(commands: Any) -> None:
    export = _store_command(
        commands,
        "export",
        "write every record as JSON Lines (all namespaces)",
        _export,
        "Write every record of the store (or of one namespace with --namespace) as JSON "
        "Lines, with ids, times and links, for memcore import.",
    )
    export.add_argument("file", metavar="FILE", help="output file, or - for stdout")
    export.add_argument(
        "--with-vectors",
        action="store_true",
        help="include embeddings (base64 float32), so an import need not embed again",
    )


def _import_command(commands: Any) -> None:
    load = _store_command(
        commands,
        "import",
        "restore a memcore export, or a reference memory server's memory.json",
        _import,
        "Restore records from a memcore export; with --from-reference-server, import the "
        "entities, observations and relations of the reference MCP memory server's "
        "memory.json (idempotent: importing again changes nothing; see docs/migration.md).",
    )
    load.add_argument("file", metavar="FILE", help="input file, or - for stdin")
    load.add_argument(
        "--from-reference-server",
        action="store_true",
        help="FILE is the reference memory server's memory.json (into --namespace)",
    )
    load.add_argument(
        "--skip-existing",
        action="store_true",
        help="keep records whose id is already stored instead of failing",
    )
    load.add_argument("--into", metavar="NAMESPACE", help="import every record into NAMESPACE")
    load.add_argument(
        "--no-embed",
        action="store_true",
        help="do not embed records that arrive without usable vectors",
    )


def _index_command(commands: Any) -> None:
    # Defined here rather than beside the indexer: importing memcore.code loads tree-sitter
    # and pathspec, which only the command itself needs.
    index = _store_command(
        commands,
        "index",
        "index a project's source code for search_code (JSON report)",
        _index,
        "Index the source files of PATH incrementally: only new or changed files are "
        "chunked and embedded; deleted files leave the index.",
    )
    index.add_argument("path", metavar="PATH", help="the project directory")
    index.add_argument("--project-id", help="the project's id (default: folder name + hash)")
    index.add_argument("--watch", action="store_true", help="keep the index current until Ctrl-C")
    index.add_argument(
        "--follow-symlinks", action="store_true", help="follow links that stay inside PATH"
    )


def _auth_commands(commands: Any) -> None:
    auth = commands.add_parser(
        "auth",
        help="manage bearer tokens for the HTTP transport",
        description="Bearer tokens for memcore serve --transport http: each maps to one "
        "namespace; the file keeps only their SHA-256.",
    )
    actions = auth.add_subparsers(dest="action", required=True, metavar="ACTION")
    add = actions.add_parser(
        "add-token",
        help="make a token for a namespace (printed once)",
        description="Make a token for a namespace and print it; it is shown only this once.",
    )
    add.add_argument("--namespace", required=True, help="the namespace the token may use")
    add.add_argument(
        "--admin",
        action="store_true",
        help="may also call store-wide tools (reset_all_memory, index_project)",
    )
    add.add_argument("--label", help="a note to recognise the token by")
    add.set_defaults(run=_auth_add)
    listing = actions.add_parser(
        "list",
        help="list tokens (ids and namespaces, never secrets)",
        description="List the tokens: ids, namespaces, roles, labels; never the secrets.",
    )
    listing.set_defaults(run=_auth_list)
    revoke = actions.add_parser(
        "revoke",
        help="remove a token by id",
        description="Remove a token; a running server refuses it within a second.",
    )
    revoke.add_argument(
        "token_id", metavar="TOKEN_ID", help="the token's id, as memcore auth list shows it"
    )
    revoke.set_defaults(run=_auth_revoke)
    for sub in (add, listing, revoke):
        sub.add_argument("--auth-file", help="token file [MEMCORE_AUTH_FILE]")


# -- commands ------------------------------------------------------------------------------


def _status(args: argparse.Namespace) -> int:
    settings = _settings(args)
    with _opened(settings, read=True, model=not args.no_wait) as opened:
        status = opened.tool("get_status", {})
    _print_json(status)
    embedding = status.get("embedding") or {}
    if embedding.get("status") == "error":
        # Scripts and health checks read the exit status: a store without its model
        # cannot embed, so it is not "fine".
        _note(f"the embedding model failed to load: {embedding.get('error')}")
        return EXIT_FAILED
    return 0


def _store(args: argparse.Namespace) -> int:
    arguments = {"content": args.content}
    for name in ("memory_type", "source", "thread_id", "confidence", "importance", "tier"):
        if getattr(args, name) is not None:
            arguments[name] = getattr(args, name)
    with _opened(_settings(args), read=False, model=True) as opened:
        _print_json(opened.tool("store_memory", arguments))
    return 0


def _search(args: argparse.Namespace) -> int:
    tool = "search_text" if getattr(args, "text", False) else args.command
    arguments: dict[str, Any] = {"query": args.query, "limit": args.limit}
    arguments["include_invalid"] = args.include_invalid
    for name in ("thread_id", "as_of", "max_per_thread"):
        if getattr(args, name, None) is not None:
            arguments[name] = getattr(args, name)
    with _opened(_settings(args), read=True, model=tool != "search_text") as opened:
        _print_json(opened.tool(tool, arguments))
    return 0


def _graph_search(args: argparse.Namespace) -> int:
    arguments = {"query": args.query, "limit": args.limit}
    with _opened(_settings(args), read=True, model=True) as opened:
        _print_json(opened.tool("search_nodes", arguments))
    return 0


def _graph_open(args: argparse.Namespace) -> int:
    with _opened(_settings(args), read=True, model=False) as opened:
        _print_json(opened.tool("open_nodes", {"names": args.names}))
    return 0


def _graph_related(args: argparse.Namespace) -> int:
    arguments: dict[str, Any] = {
        "entityName": args.name,
        "depth": args.depth,
        "direction": args.direction,
        "limit": args.limit,
    }
    for flag, name in (("relation_type", "relationType"), ("as_of", "asOf")):
        if getattr(args, flag) is not None:
            arguments[name] = getattr(args, flag)
    with _opened(_settings(args), read=True, model=False) as opened:
        _print_json(opened.tool("get_related", arguments))
    return 0


def _code_search(args: argparse.Namespace) -> int:
    arguments: dict[str, Any] = {"query": args.query, "limit": args.limit}
    if args.language is not None:
        arguments["language"] = args.language
    with _opened(_settings(args), read=True, model=True) as opened:
        if args.project != "all":
            arguments["project_id"] = _project_id(args.project, opened)
        _print_json(opened.tool("search_code", arguments))
    return 0


def _code_list(args: argparse.Namespace) -> int:
    with _opened(_settings(args), read=True, model=False) as opened:
        _print_json(opened.tool("list_projects", {}))
    return 0


def _project_id(project: str, opened: OpenedStore) -> str:
    """The id of PROJECT: an indexed project's id, or the folder it was indexed from."""
    projects = opened.tool("list_projects", {})["projects"]
    if any(p["project_id"] == project for p in projects):
        return project
    folder = Path(project).expanduser()
    if folder.is_dir():
        root = str(folder.resolve())
        for p in projects:
            if p["root"] == root:
                return str(p["project_id"])
    known = ", ".join(f"{p['project_id']} ({p['root']})" for p in projects) or "none yet"
    raise CommandError(
        f"no indexed project {project!r}; index it with `memcore index PATH`, or give one of "
        f"these ids or folders: {known}"
    )


def _export(args: argparse.Namespace) -> int:
    from memcore.facade import export_store

    # Vectors are read from the store as they are: no model is loaded.
    settings = replace(_settings(args), model=None, model_path=None)
    # Only the flag restricts an export: MEMCORE_NAMESPACE names the default namespace of
    # calls, and an export of "everything" must not shrink because it is set.
    namespace = settings.namespace if args.namespace is not None else None
    with (
        _opened(settings, read=True, model=False) as opened,
        _output(args.file) as out,
        _kind_progress("exporting") as advance,
    ):
        counts = export_store(
            opened.memory,
            out,
            namespace=namespace,
            with_vectors=args.with_vectors,
            progress=advance,
        )
    where = f"namespace {namespace!r}" if namespace is not None else "every namespace"
    detail = ", ".join(f"{kind} {n}" for kind, n in counts.items() if n)
    _note(f"exported {sum(counts.values())} records from {where} ({detail or 'empty'})")
    return 0


def _import(args: argparse.Namespace) -> int:
    if args.from_reference_server:
        return _import_reference(args)
    from memcore.facade import TransferError, import_store

    settings = _settings(args)
    with (
        _opened(settings, read=False, model=not args.no_embed) as opened,
        _input(args.file) as (source, size),
        _progress("importing", size) as advance,
    ):
        try:
            report = import_store(
                opened.memory,
                source,
                skip_existing=args.skip_existing,
                into=args.into,
                embed=not args.no_embed,
                progress=advance,
            )
        except TransferError as exc:
            message = str(exc)
            if exc.field == "id":  # the library's advice names the Python keyword
                message = message.replace("skip_existing", "--skip-existing")
            elif exc.field == "type":
                message += "; import it with --from-reference-server"
            raise CommandError(message) from None
    # Skipped records are never embedded, so "embedded" is a part of "imported".
    embedded = f" ({report.embedded} embedded by this store's model)" if report.embedded else ""
    _note(f"imported {report.restored} records{embedded}, skipped {report.skipped} already present")
    for note in report.notes:
        _note(note)
    return 0


def _import_reference(args: argparse.Namespace) -> int:
    from memcore.facade import import_reference_graph

    for flag, given in (("--skip-existing", args.skip_existing), ("--no-embed", args.no_embed)):
        if given:
            raise UsageError(
                f"{flag} does not apply to --from-reference-server (that import skips what "
                "the store holds already and embeds like any other write)"
            )
    if args.into is not None:  # the graph has one namespace: --into is --namespace here
        args.namespace = args.into
    settings = _settings(args)
    with (
        _opened(settings, read=False, model=True) as opened,
        _input(args.file) as (source, size),
        _progress("importing", size) as advance,
    ):
        report = import_reference_graph(
            opened.memory, source, namespace=settings.namespace, progress=advance
        )
    _print_json(report.to_dict())
    _note(_reference_summary(report, settings.namespace))
    for skipped in report.skipped:
        _note(f"line {skipped.line} skipped: {skipped.reason}")
    if report.rejected:
        _note(
            f"{len(report.rejected)} line(s) were not imported; fix them and import the file "
            "again (what is already imported stays as it is)"
        )
        return EXIT_FAILED
    return 0


def _reference_summary(report: ReferenceImportReport, namespace: str) -> str:
    where = "" if namespace == "default" else f" --namespace {namespace}"
    return (
        f"namespace {namespace!r}: {report.entities_created} entities created "
        f"({report.entities_existing} already present), {report.observations_added} "
        f"observations added, {report.relations_created} relations created "
        f"({report.relations_existing} already present). They are knowledge-graph "
        f"entities: see them with `memcore graph search QUERY{where}`, `memcore graph open "
        f"NAME{where}` and `memcore graph related NAME{where}` (memcore search and recall "
        "look at memories)"
    )


def _index(args: argparse.Namespace) -> int:
    from memcore.cli.code import run_index

    return run_index(args, _settings(args))


def _auth_file(args: argparse.Namespace) -> Path:
    raw = args.auth_file or os.environ.get("MEMCORE_AUTH_FILE")
    if not raw:
        raise SettingsError("Pass --auth-file FILE or set MEMCORE_AUTH_FILE.")
    return Path(raw).expanduser().resolve()


def _auth_add(args: argparse.Namespace) -> int:
    from memcore.settings.tokens import add_token

    path = _auth_file(args)
    token, entry = add_token(path, args.namespace, admin=args.admin, label=args.label)
    print(token)
    _note(f"token {entry.id} for namespace {entry.namespace!r} stored in {path}; it is shown once")
    return 0


def _auth_list(args: argparse.Namespace) -> int:
    from memcore.settings.tokens import load

    for entry in load(_auth_file(args)):
        role = " admin" if entry.admin else ""
        label = f"  {entry.label}" if entry.label else ""
        print(f"{entry.id}  {entry.namespace}{role}  {entry.created_at or ''}{label}")
    return 0


def _auth_revoke(args: argparse.Namespace) -> int:
    from memcore.settings.tokens import revoke

    if not revoke(_auth_file(args), args.token_id):
        raise CommandError(f"no token with id {args.token_id}")
    _note(f"revoked {args.token_id}")
    return 0


# -- helpers -------------------------------------------------------------------------------


def _settings(args: argparse.Namespace) -> Settings:
    from memcore import logs

    settings = resolve(args, STORE_OPTIONS)
    explicit = args.log_level is not None or "MEMCORE_LOG_LEVEL" in os.environ
    # A command line tool stays quiet unless asked: warnings and errors only.
    logs.configure(settings.log_level if explicit else "warn")
    return settings


@dataclass(frozen=True, slots=True)
class OpenedStore:
    """The store a command opened, and the tools it runs on it (as an admin caller:
    whoever runs the command owns the store)."""

    memory: Memory
    runner: ToolRunner
    namespace: str
    timeout: float

    def tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """What the tool ``name`` returns for ``arguments``, checked as the MCP server
        checks them."""
        return self.runner.call(
            name, arguments, namespace=self.namespace, admin=True, timeout=self.timeout
        )


@contextmanager
def _opened(settings: Settings, *, read: bool, model: bool) -> Iterator[OpenedStore]:
    """The store and its tools; read commands fall back to a read-only open when another
    process (a running server) holds the store for writing."""
    from memcore.memory import Memory
    from memcore.tools.groups import load_registry
    from memcore.tools.host import StoreHost
    from memcore.tools.runner import ToolRunner

    # Opened here, not in the host's background thread as the server does: a busy store is
    # then a note for read commands, not an error the host would log first.
    try:
        memory = Memory(**settings.memory_kwargs())
    except ResourceBusyError:
        if not read:
            raise
        _note("the store is in use by another process; reading it read-only")
        memory = Memory(**replace(settings, read_only=True).memory_kwargs())
    host = StoreHost(lambda: memory)
    try:
        host.wait_blocking(settings.timeout)
        if model and memory.embeddings is not None:
            _wait_for_model(memory, settings.timeout)
        runner = ToolRunner(load_registry().all(), host, min_seq_wait=settings.min_seq_wait)
        yield OpenedStore(memory, runner, settings.namespace, settings.timeout)
    finally:
        host.close()


def _wait_for_model(memory: Memory, timeout: float) -> None:
    service = memory.embeddings
    if service is None or service.status != "loading":
        return
    from rich.console import Console

    with Console(stderr=True).status(f"loading embedding model {service.model_id}…"):
        service.wait_ready(timeout)


@contextmanager
def _progress(label: str, total: int | None) -> Iterator[Callable[[int], None]]:
    from rich.console import Console
    from rich.progress import Progress

    console = Console(stderr=True)
    with Progress(console=console, transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task(label, total=total)
        yield lambda n: bar.advance(task, n)


@contextmanager
def _kind_progress(label: str) -> Iterator[Callable[[str, int], None]]:
    """Progress by record kind (totals are not known before a kind is read)."""
    from rich.console import Console
    from rich.progress import Progress

    console = Console(stderr=True)
    with Progress(console=console, transient=True, disable=not console.is_terminal) as bar:
        tasks: dict[str, Any] = {}

        def advance(kind: str, n: int) -> None:
            if kind not in tasks:
                tasks[kind] = bar.add_task(f"{label} {kind}", total=None)
            bar.advance(tasks[kind], n)

        yield advance


@contextmanager
def _output(file: str) -> Iterator[IO[str]]:
    if file == "-":
        yield sys.stdout
        sys.stdout.flush()
        return
    with Path(file).open("w", encoding="utf-8") as out:
        yield out


@contextmanager
def _input(file: str) -> Iterator[tuple[IO[bytes], int | None]]:
    """The input as bytes (lines are decoded one by one) and its size, when known."""
    if file == "-":
        yield sys.stdin.buffer, None
        return
    path = Path(file)
    with path.open("rb") as source:
        yield source, path.stat().st_size


def _print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


def _note(message: str) -> None:
    print(f"memcore: {message}", file=sys.stderr)


def _fail(message: str) -> None:
    print(f"memcore: error: {message}", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
