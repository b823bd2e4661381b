"""The ``memcore`` command.

``serve`` runs the MCP server (same as ``python -m memcore.mcp``); ``status``, ``store``,
``search`` and ``recall`` run the MCP tool of that name on a store and print the same JSON
an agent would get; ``models`` lists the embedding models; ``index`` indexes a project's
source code for ``search_code`` (see :mod:`memcore.code.cli`); ``export``/``import`` move
every record as JSON Lines (see :mod:`memcore.transfer`); ``auth`` manages the HTTP bearer
tokens. Settings work as for the
server (flag > ``MEMCORE_*`` variable > default). Results go to stdout, progress and
errors to stderr; the exit status is 0 on success, 1 on a failed command, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from memcore import __version__
from memcore.errors import MemcoreError, ResourceBusyError
from memcore.mcp import logs
from memcore.mcp.host import StoreHost
from memcore.mcp.registry import ToolCall
from memcore.mcp.tools import load_registry
from memcore.mcp.validation import ArgumentChecker
from memcore.settings import STORE_OPTIONS, Settings, SettingsError, add_options, resolve

if TYPE_CHECKING:
    from memcore.memory import Memory

EXIT_FAILED = 1
EXIT_USAGE = 2


class CommandError(Exception):
    """A command failed for a reason the user can act on; the message says which."""


# -- entry point ---------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``memcore``; the exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["serve"]:
        from memcore.mcp.main import main as serve

        return serve(arguments[1:], prog="memcore serve")
    args = _parser().parse_args(arguments)
    try:
        return int(args.run(args))
    except SettingsError as exc:
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
    parser = argparse.ArgumentParser(prog="memcore", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=f"memcore {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.add_parser("serve", help="run the MCP server (see memcore serve --help)")

    status = _store_command(commands, "status", "store and embedding status (JSON)", _status)
    status.add_argument("--no-wait", action="store_true", help="do not wait for the model")

    models = commands.add_parser("models", help="list the embedding models")
    models.add_argument("--json", action="store_true", help="print JSON instead of a table")
    models.set_defaults(run=lambda a: show_models(as_json=a.json))

    store = _store_command(commands, "store", "store a memory (JSON result)", _store)
    store.add_argument("content", help="the fact to remember")
    store.add_argument("--memory-type", choices=("episodic", "semantic", "procedural"))
    store.add_argument("--source", choices=("explicit", "extracted"))
    store.add_argument("--thread-id")
    store.add_argument("--confidence", type=float)
    store.add_argument("--importance", type=float)

    for name, help_text in (
        ("search", "semantic search, or keywords with --text (JSON)"),
        ("recall", "hybrid search: vectors, keywords and graph (JSON)"),
    ):
        search = _store_command(commands, name, help_text, _search)
        search.add_argument("query")
        search.add_argument("--limit", type=int, default=10, help="1-50 (10)")
        search.add_argument("--thread-id")
        search.add_argument("--as-of", help="ISO 8601: search memory as it was then")
        search.add_argument("--include-invalid", action="store_true")
        if name == "search":
            search.add_argument("--text", action="store_true", help="BM25 keyword search")

    export = _store_command(
        commands, "export", "write every record as JSON Lines (all namespaces)", _export
    )
    export.add_argument("file", help="output file, or - for stdout")
    export.add_argument(
        "--with-vectors", action="store_true", help="include embeddings (base64 float32)"
    )
    export.epilog = "--namespace NAME exports one namespace only."

    load = _store_command(commands, "import", "restore records from a memcore export", _import)
    load.add_argument("file", help="input file, or - for stdin")
    load.add_argument("--skip-existing", action="store_true", help="skip ids already stored")
    load.add_argument("--into", metavar="NAMESPACE", help="import every record into NAMESPACE")
    load.add_argument(
        "--no-embed",
        action="store_true",
        help="do not embed records that arrive without usable vectors",
    )

    # Imported here, not at the top: `memcore serve` must not pay for the code package
    # (tree-sitter) before the server answers tools/list.
    from memcore.code.cli import add_index_command

    add_index_command(commands)
    from memcore.store_cli import add_store_commands

    add_store_commands(commands)
    _auth_commands(commands)
    return parser


def _store_command(
    commands: Any, name: str, help_text: str, run: Callable[[argparse.Namespace], int]
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(name, help=help_text)
    add_options(parser, STORE_OPTIONS)
    parser.set_defaults(run=run)
    return parser


def _auth_commands(commands: Any) -> None:
    auth = commands.add_parser("auth", help="bearer tokens for the HTTP transport")
    actions = auth.add_subparsers(dest="action", required=True, metavar="ACTION")
    add = actions.add_parser("add-token", help="make a token for a namespace (printed once)")
    add.add_argument("--namespace", required=True)
    add.add_argument("--admin", action="store_true", help="may also call store-wide tools")
    add.add_argument("--label", help="a note to recognise the token by")
    add.set_defaults(run=_auth_add)
    listing = actions.add_parser("list", help="list tokens (ids and namespaces, never secrets)")
    listing.set_defaults(run=_auth_list)
    revoke = actions.add_parser("revoke", help="remove a token by id")
    revoke.add_argument("token_id")
    revoke.set_defaults(run=_auth_revoke)
    for sub in (add, listing, revoke):
        sub.add_argument("--auth-file", help="token file [MEMCORE_AUTH_FILE]")


# -- commands ------------------------------------------------------------------------------


def _status(args: argparse.Namespace) -> int:
    settings = _settings(args)
    with _opened(settings, read=True, model=not args.no_wait) as call:
        _print_json(_run_tool("get_status", {}, call))
    return 0


def _store(args: argparse.Namespace) -> int:
    arguments = {"content": args.content}
    for name in ("memory_type", "source", "thread_id", "confidence", "importance"):
        if getattr(args, name) is not None:
            arguments[name] = getattr(args, name)
    with _opened(_settings(args), read=False, model=True) as call:
        _print_json(_run_tool("store_memory", arguments, call))
    return 0


def _search(args: argparse.Namespace) -> int:
    tool = "search_text" if getattr(args, "text", False) else args.command
    arguments: dict[str, Any] = {"query": args.query, "limit": args.limit}
    arguments["include_invalid"] = args.include_invalid
    for name in ("thread_id", "as_of"):
        if getattr(args, name) is not None:
            arguments[name] = getattr(args, name)
    with _opened(_settings(args), read=True, model=tool != "search_text") as call:
        _print_json(_run_tool(tool, arguments, call))
    return 0


def _export(args: argparse.Namespace) -> int:
    from memcore.transfer import export_store

    # Vectors are read from the store as they are: no model is loaded.
    settings = replace(_settings(args), model=None, model_path=None)
    # Only the flag restricts an export: MEMCORE_NAMESPACE names the default namespace of
    # calls, and an export of "everything" must not shrink because it is set.
    namespace = settings.namespace if args.namespace is not None else None
    with (
        _opened(settings, read=True, model=False) as call,
        _output(args.file) as out,
        _kind_progress("exporting") as advance,
    ):
        counts = export_store(
            call.memory, out, namespace=namespace, with_vectors=args.with_vectors, progress=advance
        )
    where = f"namespace {namespace!r}" if namespace is not None else "every namespace"
    detail = ", ".join(f"{kind} {n}" for kind, n in counts.items() if n)
    _note(f"exported {sum(counts.values())} records from {where} ({detail or 'empty'})")
    return 0


def _import(args: argparse.Namespace) -> int:
    from memcore.transfer import TransferError, import_store

    settings = _settings(args)
    with (
        _opened(settings, read=False, model=not args.no_embed) as call,
        _input(args.file) as (source, size),
        _progress("importing", size) as advance,
    ):
        try:
            report = import_store(
                call.memory,
                source,
                skip_existing=args.skip_existing,
                into=args.into,
                embed=not args.no_embed,
                progress=advance,
            )
        except TransferError as exc:
            raise CommandError(str(exc)) from None
    embedded = f", embedded {report.embedded}" if report.embedded else ""
    _note(f"imported {report.restored} records, skipped {report.skipped} already present{embedded}")
    for note in report.notes:
        _note(note)
    return 0


def _auth_file(args: argparse.Namespace) -> Path:
    raw = args.auth_file or os.environ.get("MEMCORE_AUTH_FILE")
    if not raw:
        raise SettingsError("Pass --auth-file FILE or set MEMCORE_AUTH_FILE.")
    return Path(raw).expanduser().resolve()


def _auth_add(args: argparse.Namespace) -> int:
    from memcore.mcp.auth import add_token

    path = _auth_file(args)
    token, entry = add_token(path, args.namespace, admin=args.admin, label=args.label)
    print(token)
    _note(f"token {entry.id} for namespace {entry.namespace!r} stored in {path}; it is shown once")
    return 0


def _auth_list(args: argparse.Namespace) -> int:
    from memcore.mcp.auth import load

    for entry in load(_auth_file(args)):
        role = " admin" if entry.admin else ""
        label = f"  {entry.label}" if entry.label else ""
        print(f"{entry.id}  {entry.namespace}{role}  {entry.created_at or ''}{label}")
    return 0


def _auth_revoke(args: argparse.Namespace) -> int:
    from memcore.mcp.auth import revoke

    if not revoke(_auth_file(args), args.token_id):
        raise CommandError(f"no token with id {args.token_id}")
    _note(f"revoked {args.token_id}")
    return 0


def show_models(*, as_json: bool) -> int:
    """Print the embedding model registry (``memcore models``, ``--list-models``)."""
    from memcore.embeddings import list_models

    models = list_models()
    if as_json:
        _print_json(models)
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table("name", "dim", "size", "local", "description")
    for m in models:
        name = m["name"] + (" (default)" if m["default"] else "")
        local = "yes" if m["available_locally"] else "no"
        table.add_row(name, str(m["dim"]), f"{m['size_mb']} MB", local, m["description"])
    Console().print(table)
    return 0


# -- helpers -------------------------------------------------------------------------------


def _settings(args: argparse.Namespace) -> Settings:
    settings = resolve(args, STORE_OPTIONS)
    explicit = args.log_level is not None or "MEMCORE_LOG_LEVEL" in os.environ
    # A command line tool stays quiet unless asked: warnings and errors only.
    logs.configure(settings.log_level if explicit else "warn")
    return settings


@contextmanager
def _opened(settings: Settings, *, read: bool, model: bool) -> Iterator[ToolCall]:
    """The store as a tool call context; read commands fall back to a read-only open when
    another process (a running server) holds the store for writing."""
    host = _host(settings)
    try:
        memory = host.wait_blocking(settings.timeout)
    except ResourceBusyError:
        if not read:
            raise
        host.close()
        _note("the store is in use by another process; reading it read-only")
        host = _host(replace(settings, read_only=True))
        memory = host.wait_blocking(settings.timeout)
    try:
        if model and memory.embeddings is not None:
            _wait_for_model(memory, settings.timeout)
        yield ToolCall(host, settings.namespace, {}, admin=True)
    finally:
        host.close()


def _host(settings: Settings) -> StoreHost:
    def open_memory() -> Memory:
        from memcore.memory import Memory

        return Memory(**settings.memory_kwargs())

    host = StoreHost(open_memory)
    host.start()
    return host


def _wait_for_model(memory: Memory, timeout: float) -> None:
    service = memory.embeddings
    if service is None or service.status != "loading":
        return
    from rich.console import Console

    with Console(stderr=True).status(f"loading embedding model {service.model_id}…"):
        service.wait_ready(timeout)


def _run_tool(name: str, arguments: dict[str, Any], context: ToolCall) -> dict[str, Any]:
    spec = load_registry().get(name)
    if spec is None:
        raise CommandError(f"no tool {name}")
    checked = ArgumentChecker(spec.input_schema).check(arguments)
    return spec.handler(replace(context, arguments=checked))


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
