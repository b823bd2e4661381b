"""``python -m memcore.mcp`` / ``memcore serve``: parse settings, open the store in the
background, then serve MCP over stdio or streamable HTTP.

Start-up order is chosen for time to the first ``tools/list``: settings and the tool
registry are plain Python; the MCP SDK (by far the largest import) loads next (over stdio in
a background thread, while ``stdio`` answers the handshake from our own data), and only
then does the store start opening (and the model loading) in background threads, so their
imports do not compete with the SDK's for the interpreter.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import anyio

from memcore import __version__, logs
from memcore.mcp import maintenance, stdio
from memcore.mcp.dispatch import Caller, Dispatcher
from memcore.mcp.metrics import Metrics
from memcore.settings.options import (
    SERVER_OPTIONS,
    Settings,
    SettingsError,
    add_options,
    describe,
    resolve,
)
from memcore.settings.tokens import AuthFileError, TokenStore
from memcore.tools.groups import load_registry
from memcore.tools.host import StoreHost
from memcore.tools.limits import Limits
from memcore.tools.registry import ProfileError

if TYPE_CHECKING:
    from memcore.memory import Memory

_log = logging.getLogger("memcore.mcp")

#: Exit status for invalid settings (as argparse uses for usage errors).
EXIT_USAGE = 2


def build_parser(prog: str = "python -m memcore.mcp") -> argparse.ArgumentParser:
    """The server's command line."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="memcore MCP server: long-term memory for AI agents over stdio or HTTP.",
    )
    parser.add_argument("--version", action="version", version=f"memcore {__version__}")
    parser.add_argument(
        "--list-models", action="store_true", help="list the embedding models and exit"
    )
    add_options(parser, SERVER_OPTIONS)
    return parser


def main(argv: Sequence[str] | None = None, prog: str = "python -m memcore.mcp") -> int:
    """Run the server until its transport closes; the exit status."""
    args = build_parser(prog).parse_args(argv)
    if args.list_models:
        from memcore.settings.models import show_models

        show_models(as_json=False)
        return 0
    try:
        settings = resolve(args, SERVER_OPTIONS)
        registry = load_registry()
        tools = registry.select(settings.tools)
        tokens = _tokens(settings)
    except (SettingsError, ProfileError, AuthFileError) as exc:
        print(f"memcore: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    logs.configure(settings.log_level)
    metrics = Metrics()

    def open_memory() -> Memory:
        # Imported here, in the opening thread: the facade brings numpy and the code
        # indexer, which the first tools/list answer must not wait for.
        from memcore.memory import Memory

        # No spinning between embeddings: the store, the SDK's reply and the client's
        # next request need the cores the moment an embedding returns (0.4-0.6 ms per
        # store_memory or recall round trip over stdio, interleaved A/B).
        return Memory(**settings.memory_kwargs(), embedding_spin=False)

    host = StoreHost(open_memory)
    if settings.maintenance_interval > 0:
        namespaces = maintenance.served_namespaces(settings)
        maintenance.schedule(host, settings.maintenance_interval, namespaces)
    dispatcher = Dispatcher(
        tools,
        host,
        limits=Limits(settings.max_request_bytes, settings.max_items),
        metrics=metrics,
        timeout=settings.timeout,
        known=[spec.name for spec in registry.all()],
        min_seq_wait=settings.min_seq_wait,
    )
    _log.info(
        "memcore MCP server starting",
        extra={"fields": {**describe(settings), "tool_count": len(tools), "version": __version__}},
    )
    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(_serve, settings, dispatcher, host, metrics, tokens)
    _log.info("memcore MCP server stopped")
    return 0


def _tokens(settings: Settings) -> TokenStore | None:
    if settings.transport != "http" or settings.auth_file is None:
        return None
    if not settings.auth_file.is_file():
        raise AuthFileError(
            f"The token file {settings.auth_file} does not exist; create a token with "
            "`memcore auth add-token --auth-file FILE --namespace NAME`."
        )
    return TokenStore(settings.auth_file)


async def _serve(
    settings: Settings,
    dispatcher: Dispatcher,
    host: StoreHost,
    metrics: Metrics,
    tokens: TokenStore | None,
) -> None:
    if settings.transport == "http":
        from memcore.mcp.server import build_server

        # Opened only now: started before the SDK import, the store's and the model's own
        # imports competed with it for the GIL and delayed the first answer by a third.
        host.start()
        from memcore.mcp.http import build_app, caller_resolver, serve

        caller_of = caller_resolver(settings.namespace, tokens_required=tokens is not None)
        server = build_server(dispatcher, host, caller_of)
        await serve(build_app(server, settings, host, metrics, tokens), settings)
        return

    # stdio answers the handshake while the SDK loads, and opens the store once it has.
    caller = Caller(namespace=settings.namespace, admin=True, principal="stdio")
    await stdio.serve(dispatcher, host, caller)
