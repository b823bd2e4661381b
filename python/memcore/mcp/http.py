"""The streamable HTTP transport: ``/mcp`` behind a body-size cap and bearer tokens,
``/healthz`` and ``/metrics`` (per-tool calls and the automatic path's ``mcp_memory_*``)
beside it, served by uvicorn.

Each request is authenticated on its own and its tool calls run in its token's namespace,
so a tenant cannot reach another's data even by replaying a session id (the SDK also binds
each session to the credential that opened it). Each token also has its own caps on open
sessions and request rate (``tenancy``), so no tenant can exhaust another's. Without
``--auth-file`` (allowed on a loopback address, or with ``--allow-no-auth``) every request
uses ``--namespace``.
"""

from __future__ import annotations

import signal
from typing import Any

import uvicorn
from mcp.server import Server, ServerRequestContext
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.authentication import AuthCredentials
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memcore.errors import UnauthorizedError
from memcore.mcp import malformed
from memcore.mcp.dispatch import Caller
from memcore.mcp.metrics import Metrics, render_lifecycle
from memcore.mcp.server import CallerOf
from memcore.mcp.tenancy import TenantGate, TenantLimits
from memcore.settings.options import Settings, is_loopback
from memcore.settings.tokens import TokenStore
from memcore.tools.host import StoreHost

#: Scope granted to admin tokens (store-wide tools).
ADMIN_SCOPE = "memcore:admin"

#: Seconds an idle keep-alive connection stays open. It must outlast the clients' own
#: pools: uvicorn's default (5 s) equals httpx's pool expiry, so a client reusing a
#: connection idle for about 5 s raced the server closing it and got a ReadError for a
#: request the server never read (benches/reliability/load.py counted them). 75 s outlasts
#: httpx (5 s), undici (4 s) and aiohttp (15 s), as nginx's default does.
KEEP_ALIVE_SECONDS = 75


def caller_resolver(default_namespace: str, *, tokens_required: bool) -> CallerOf:
    """Turn a request context into the caller: the token's namespace, else (no token file)
    the default namespace with full rights, as on stdio; with the request's JSON-RPC id."""
    local = Caller(namespace=default_namespace, admin=True, principal="local")

    def caller_of(ctx: ServerRequestContext[Any, Any]) -> Caller:
        request = ctx.request
        user = request.scope.get("user") if isinstance(request, Request) else None
        if not isinstance(user, AuthenticatedUser):
            if tokens_required:
                # BearerAuth guards /mcp, so this is unreachable; fail closed all the same.
                raise UnauthorizedError("This request carries no authenticated token.")
            return local.answering(ctx.request_id)
        token = user.access_token
        claims = token.claims or {}
        return Caller(
            namespace=str(claims["namespace"]),
            admin=ADMIN_SCOPE in token.scopes,
            principal=token.client_id,
            request_id=ctx.request_id,
        )

    return caller_of


def _error_response(status: int, code: str, message: str, **headers: str) -> Response:
    body = {"error": {"code": code, "message": message, "details": {}}}
    return JSONResponse(body, status_code=status, headers=headers)


class BodyLimit:
    """Refuse request bodies over the limit with 413 and PAYLOAD_TOO_LARGE, before any
    parsing (declared length first, then the bytes actually received)."""

    def __init__(self, app: ASGIApp, limit: int, metrics: Metrics) -> None:
        self._app, self._limit, self._metrics = app, limit, metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self._limit:
            await self._refuse(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self._limit:
                await self._refuse(scope, receive, send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        await self._app(scope, _replaying(b"".join(chunks), receive), send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        self._metrics.reject("payload_too_large")
        response = _error_response(
            413,
            "PAYLOAD_TOO_LARGE",
            f"The request body exceeds {self._limit} bytes; send less per call.",
        )
        await response(scope, receive, send)


def _replaying(body: bytes, receive: Receive) -> Receive:
    """``receive`` for an application downstream of one that already read the body."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class JsonRpcScreen:
    """Answer a POST body the SDK cannot read as a JSON-RPC message with 400 and the
    spec's error (-32700 or -32600, see ``malformed``), logged and counted, or hand it on
    repaired (a tool call whose arguments hold a lone surrogate); the SDK
    answers a well-formed non-message with -32602 and logs nothing. Runs behind
    ``BodyLimit``, so the body is bounded and arrives in one piece."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self._app, self._metrics = app, metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self._app(scope, receive, send)
            return
        chunks: list[bytes] = []
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        rejection = malformed.screen(body)
        if isinstance(rejection, malformed.Repaired):
            body, rejection = rejection.text.encode(), None
        if rejection is None:
            await self._app(scope, _replaying(body, receive), send)
            return
        malformed.log_rejection(rejection, "http", len(body))
        self._metrics.reject("malformed")
        response = JSONResponse(rejection.reply(), status_code=400)
        await response(scope, receive, send)


class BearerAuth:
    """Require ``Authorization: Bearer <token>`` with a token from the token file; the
    token's entry becomes the request's user (namespace and admin scope)."""

    def __init__(self, app: ASGIApp, tokens: TokenStore, metrics: Metrics) -> None:
        self._app, self._tokens, self._metrics = app, tokens, metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        header = Headers(scope=scope).get("authorization", "")
        scheme, _, token = header.partition(" ")
        entry = self._tokens.lookup(token.strip()) if scheme.lower() == "bearer" else None
        if entry is None:
            self._metrics.reject("unauthorized")
            response = _error_response(
                401,
                "UNAUTHORIZED",
                "A valid bearer token is required (Authorization: Bearer <token>).",
                **{"WWW-Authenticate": 'Bearer realm="memcore"'},
            )
            await response(scope, receive, send)
            return
        scopes = [ADMIN_SCOPE] if entry.admin else []
        # The id, not the secret, is the principal; the SDK ties sessions to it.
        access = AccessToken(
            token=entry.id, client_id=entry.id, scopes=scopes, claims={"namespace": entry.namespace}
        )
        scope["user"] = AuthenticatedUser(access)
        scope["auth"] = AuthCredentials(scopes)
        await self._app(scope, receive, send)


def build_app(
    server: Server[None],
    settings: Settings,
    host: StoreHost,
    metrics: Metrics,
    tokens: TokenStore | None,
) -> Starlette:
    """The ASGI application of the HTTP transport."""
    security = None
    if is_loopback(settings.host):
        # DNS-rebinding protection only makes sense where the host names are known.
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )
    sessions = StreamableHTTPSessionManager(
        app=server,
        json_response=True,
        security_settings=security,
        max_request_body_size=settings.max_request_bytes,
        # The gate forgets sessions by the same rule; the SDK's global cap stays as a
        # backstop behind the per-token ones.
        session_idle_timeout=settings.session_idle_timeout,
    )
    limits = TenantLimits(
        max_sessions=settings.max_sessions_per_token,
        idle_seconds=settings.session_idle_timeout,
        rate=settings.rate_limit,
        burst=settings.rate_burst,
    )
    gate = TenantGate(JsonRpcScreen(StreamableHTTPASGIApp(sessions), metrics), limits, metrics)
    mcp_app: ASGIApp = gate
    if tokens is not None:
        mcp_app = BearerAuth(mcp_app, tokens, metrics)
    mcp_app = BodyLimit(mcp_app, settings.max_request_bytes, metrics)

    async def healthz(request: Request) -> Response:
        state = host.state
        code = 503 if state in ("error", "closed") else 200
        body: dict[str, Any] = {"status": "ok" if state == "open" else state, "store": state}
        if host.error is not None:
            body["error"] = type(host.error).code
        return JSONResponse(body, status_code=code)

    async def metrics_page(request: Request) -> Response:
        text = (
            metrics.render(lambda: _gauges(host))
            + render_lifecycle(host.turn_metrics())
            + gate.exposition()
        )
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4")

    return Starlette(
        routes=[
            Route("/mcp", endpoint=mcp_app),
            Route("/healthz", endpoint=healthz, methods=["GET"]),
            Route("/metrics", endpoint=metrics_page, methods=["GET"]),
        ],
        lifespan=lambda app: sessions.run(),
    )


def _gauges(host: StoreHost) -> dict[str, float]:
    gauges = {"memcore_store_open": 1.0 if host.state == "open" else 0.0}
    if host.state == "open":
        service = host.memory().embeddings
        ready = service is not None and service.status == "ready"
        gauges["memcore_embedding_ready"] = 1.0 if ready else 0.0
    return gauges


async def serve(app: Starlette, settings: Settings) -> None:
    """Run uvicorn until SIGINT/SIGTERM; logging stays with memcore's JSON handler."""
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_config=None,
        access_log=False,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        lifespan="on",
        timeout_graceful_shutdown=5,
    )
    # uvicorn re-raises the signal that stopped it once it has shut down gracefully; with
    # the default SIGTERM disposition that kills the process (status 143) before memcore
    # logs its exit. A no-op handler lets serve() return instead.
    signal.signal(signal.SIGTERM, lambda signum, frame: None)
    await uvicorn.Server(config).serve()
