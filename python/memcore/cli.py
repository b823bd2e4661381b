"""The ``memcore`` command.

``serve`` runs the MCP server (same as ``python -m memcore.mcp``); ``status``, ``store``,
``search`` and ``recall`` run the MCP tool of that name on a store and print the same JSON
an agent would get; ``models`` lists the embedding models; ``export``/``import`` move
records as JSON Lines; ``auth`` manages the HTTP bearer tokens. Settings work as for the
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
from typing import IO, Any

from memcore import __version__
from memcore.errors import MemcoreError, ResourceBusyError
from memcore.mcp import logs
from memcore.mcp.host import StoreHost
from memcore.mcp.registry import ToolCall
from memcore.mcp.tools import load_registry
from memcore.mcp.validation import ArgumentChecker
from memcore.memory import Memory
from memcore.settings import STORE_OPTIONS, Settings, SettingsError, add_options, resolve

EXIT_FAILED = 1
EXIT_USAGE = 2
#: Format marker and version of ``memcore export`` files.
EXPORT_FORMAT = "memcore-export"
EXPORT_VERSION = 1
#: Records per page when exporting and per native call when importing.
BATCH = 500


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
    except (CommandError, MemcoreError, NotImplementedError, OSError) as exc:
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

    export = _store_command(commands, "export", "write memories as JSON Lines", _export)
    export.add_argument("file", help="output file, or - for stdout")

    load = _store_command(commands, "import", "read memories from JSON Lines", _import)
    load.add_argument("file", help="input file, or - for stdin")
    load.add_argument("--skip-existing", action="store_true", help="skip ids already stored")
    load.add_argument("--into", metavar="NAMESPACE", help="import every record into NAMESPACE")

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
    # Records hold no vectors, so the model is not needed (nor loaded).
    settings = replace(_settings(args), model=None, model_path=None)
    with _opened(settings, read=True, model=False) as call, _output(args.file) as out:
        memory, namespace = call.memory, call.namespace
        total = memory.count_memories(namespace=namespace)
        header = {
            "type": "header",
            "format": EXPORT_FORMAT,
            "version": EXPORT_VERSION,
            "memcore_version": __version__,
            "namespace": namespace,
            "counts": {"memory": total},
        }
        out.write(json.dumps(header, ensure_ascii=False) + "\n")
        written = 0
        with _progress("exporting", total) as advance:
            while True:
                page = memory.list_memories(BATCH, written, namespace=namespace)
                for record in page:
                    line = {"type": "memory", **record.to_dict()}
                    out.write(json.dumps(line, ensure_ascii=False) + "\n")
                written += len(page)
                advance(len(page))
                if len(page) < BATCH:
                    break
    _note(f"exported {written} memories from namespace {namespace!r}")
    return 0


def _import(args: argparse.Namespace) -> int:
    settings = _settings(args)
    imported = skipped = 0
    with (
        _opened(settings, read=False, model=True) as call,
        _input(args.file) as source,
        _progress("importing", None) as advance,
    ):
        for batch in _batches(_records(source, args.into), BATCH):
            done, skip = call.memory._import_memories(batch, skip_existing=args.skip_existing)
            imported, skipped = imported + done, skipped + skip
            advance(len(batch))
    _note(f"imported {imported} memories, skipped {skipped} already present")
    return 0


def _batches(records: Iterator[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for record in records:
        batch.append(record)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _records(source: IO[str], into: str | None) -> Iterator[dict[str, Any]]:
    """The memory records of an export, checked line by line."""
    for number, line in enumerate(source, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise CommandError(f"line {number} is not JSON: {exc}") from None
        kind = record.get("type") if isinstance(record, dict) else None
        if kind == "header":
            if record.get("format") != EXPORT_FORMAT or record.get("version") != EXPORT_VERSION:
                raise CommandError(f"line {number}: not a {EXPORT_FORMAT} v{EXPORT_VERSION} file")
            continue
        if kind != "memory":
            raise CommandError(
                f"line {number}: record type {kind!r} is not supported by memcore {__version__}"
            )
        fields = {key: value for key, value in record.items() if key != "type"}
        if into is not None:
            fields["namespace"] = into
        yield fields


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
    host = StoreHost(lambda: Memory(**settings.memory_kwargs()))
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
def _output(file: str) -> Iterator[IO[str]]:
    if file == "-":
        yield sys.stdout
        sys.stdout.flush()
        return
    with Path(file).open("w", encoding="utf-8") as out:
        yield out


@contextmanager
def _input(file: str) -> Iterator[IO[str]]:
    if file == "-":
        yield sys.stdin
        return
    with Path(file).open(encoding="utf-8") as source:
        yield source


def _print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


def _note(message: str) -> None:
    print(f"memcore: {message}", file=sys.stderr)


def _fail(message: str) -> None:
    print(f"memcore: error: {message}", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
