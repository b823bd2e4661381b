"""Per-tenant limits over HTTP: open sessions and request rate, counted per token.

The SDK's session manager has one global cap (10,000 sessions by default) and a 30-minute
idle timeout, so one tenant opening sessions without closing them grew the server by
hundreds of MB and then locked every other tenant out with 503. ``TenantGate`` sits in
front of the SDK and keeps, for each tenant (the token's id; ``local`` without a token
file):

- its open sessions, capped at ``max_sessions``. A tenant at its cap that opens another
  session ends its own oldest idle one first (a ``DELETE`` for that session, the MCP
  protocol's own way to end it, sent to the SDK on the tenant's behalf); if all of them
  are busy it gets 429. Sessions idle for ``idle_seconds`` are ended by the SDK, which is
  given the same timeout, and forgotten here by the same rule.
- a token bucket of ``burst`` requests refilled at ``rate`` per second; an empty bucket
  answers 429 with ``Retry-After``. Without a token file there is one tenant and nobody to
  protect from it, so the rate is not limited (a local client is never throttled).

Whatever one tenant does, it only ever spends its own sessions and its own bucket.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memcore.mcp.handshake import HANDSHAKE_PROTOCOL_VERSIONS
from memcore.mcp.metrics import Metrics

#: The tenant of requests without a token (no token file).
LOCAL = "local"
_SESSION_HEADER = "mcp-session-id"
_VERSION_HEADER = "mcp-protocol-version"


@dataclass(frozen=True, slots=True)
class TenantLimits:
    """The limits each tenant gets."""

    max_sessions: int = 64
    idle_seconds: float = 600.0
    rate: float = 100.0
    burst: int = 200


class TokenBucket:
    """``burst`` requests at once, refilled at ``rate`` per second."""

    def __init__(self, rate: float, burst: int, now: float) -> None:
        self.rate, self.burst = rate, burst
        self.level, self._updated = float(burst), now

    def take(self, now: float) -> float:
        """Spend one request: 0.0 if allowed, else the seconds until one is available."""
        self.level = min(self.burst, self.level + (now - self._updated) * self.rate)
        self._updated = now
        if self.level >= 1.0:
            self.level -= 1.0
            return 0.0
        return (1.0 - self.level) / self.rate


@dataclass(slots=True)
class _Session:
    """What the gate knows of one open session."""

    owner: Scope  # the opening request's scope: who to end the session as
    last_active: float
    in_flight: int = 0


@dataclass(slots=True)
class _Tenant:
    sessions: dict[str, _Session] = field(default_factory=dict)
    opening: int = 0  # session-opening requests admitted and not yet answered
    bucket: TokenBucket | None = None
    evicted: int = 0
    rate_limited: int = 0


class TenantGate:
    """ASGI middleware enforcing :class:`TenantLimits` per tenant, in front of the SDK's
    ``/mcp`` app (behind authentication, which sets the user it keys on)."""

    def __init__(
        self,
        app: ASGIApp,
        limits: TenantLimits,
        metrics: Metrics,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._app, self._limits, self._metrics, self._clock = app, limits, metrics, clock
        self._tenants: dict[str, _Tenant] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        name = _tenant_of(scope)
        tenant = self._tenants.setdefault(name, _Tenant())
        wait = self._spend(name, tenant)
        if wait > 0.0:
            await self._refuse_rate(name, tenant, wait, scope, receive, send)
            return
        headers = Headers(scope=scope)
        session_id = headers.get(_SESSION_HEADER)
        if session_id is not None:
            await self._in_session(tenant, session_id, scope, receive, send)
        elif scope["method"] == "POST" and _opens_session(headers):
            await self._open_session(name, tenant, scope, receive, send)
        else:
            await self._app(scope, receive, send)

    def exposition(self) -> str:
        """The gate's sizes in the Prometheus text format."""
        now = self._clock()
        lines = [
            "# HELP memcore_http_sessions Open MCP sessions per tenant.",
            "# TYPE memcore_http_sessions gauge",
        ]
        for name, tenant in sorted(self._tenants.items()):
            self._expire(tenant, now)
            lines.append(f'memcore_http_sessions{{tenant="{name}"}} {len(tenant.sessions)}')
        lines += [
            "# HELP memcore_http_session_limit Open sessions allowed per tenant.",
            "# TYPE memcore_http_session_limit gauge",
            f"memcore_http_session_limit {self._limits.max_sessions}",
            "# HELP memcore_http_sessions_evicted_total Idle sessions ended to admit a new one.",
            "# TYPE memcore_http_sessions_evicted_total counter",
        ]
        for name, tenant in sorted(self._tenants.items()):
            lines.append(f'memcore_http_sessions_evicted_total{{tenant="{name}"}} {tenant.evicted}')
        buckets = {n: t for n, t in sorted(self._tenants.items()) if t.bucket is not None}
        lines += [
            "# HELP memcore_http_rate_buckets Request-rate buckets (one per token seen).",
            "# TYPE memcore_http_rate_buckets gauge",
            f"memcore_http_rate_buckets {len(buckets)}",
            "# HELP memcore_http_rate_tokens Requests a tenant may still send at once.",
            "# TYPE memcore_http_rate_tokens gauge",
        ]
        for name, tenant in buckets.items():
            assert tenant.bucket is not None
            level = min(tenant.bucket.burst, tenant.bucket.level)
            lines.append(f'memcore_http_rate_tokens{{tenant="{name}"}} {math.floor(level)}')
        lines += [
            "# HELP memcore_http_rate_limited_total Requests refused with 429 per tenant.",
            "# TYPE memcore_http_rate_limited_total counter",
        ]
        for name, tenant in buckets.items():
            lines.append(
                f'memcore_http_rate_limited_total{{tenant="{name}"}} {tenant.rate_limited}'
            )
        return "\n".join(lines) + "\n"

    # -- rate ----------------------------------------------------------------------------

    def _spend(self, name: str, tenant: _Tenant) -> float:
        if name == LOCAL or self._limits.rate <= 0:
            return 0.0
        now = self._clock()
        if tenant.bucket is None:
            tenant.bucket = TokenBucket(self._limits.rate, self._limits.burst, now)
        return tenant.bucket.take(now)

    async def _refuse_rate(
        self, name: str, tenant: _Tenant, wait: float, scope: Scope, receive: Receive, send: Send
    ) -> None:
        tenant.rate_limited += 1
        self._metrics.reject("rate_limited")
        seconds = max(1, math.ceil(wait))
        message = (
            f"Too many requests for token '{name}': at most {self._limits.rate:g} per second "
            f"(bursts of {self._limits.burst}). Retry after {seconds} s."
        )
        await _refusal(message, seconds)(scope, receive, send)

    # -- sessions ------------------------------------------------------------------------

    async def _in_session(
        self, tenant: _Tenant, session_id: str, scope: Scope, receive: Receive, send: Send
    ) -> None:
        session = tenant.sessions.get(session_id)
        if session is not None:
            session.in_flight += 1
        status = await _answered(self._app, scope, receive, send)
        if session is None:
            return
        session.in_flight -= 1
        session.last_active = self._clock()
        ended = status == 404 or (scope["method"] == "DELETE" and status is not None)
        if ended and status is not None and status < 500:
            tenant.sessions.pop(session_id, None)

    async def _open_session(
        self, name: str, tenant: _Tenant, scope: Scope, receive: Receive, send: Send
    ) -> None:
        self._expire(tenant, self._clock())
        evicted: tuple[str, _Session] | None = None
        if len(tenant.sessions) + tenant.opening >= self._limits.max_sessions:
            victim = self._oldest_idle(tenant)
            if victim is None:
                self._metrics.reject("session_limit")
                message = (
                    f"Token '{name}' has {self._limits.max_sessions} sessions open, all busy; "
                    "close one (DELETE) or retry when one is idle."
                )
                await _refusal(message, 1)(scope, receive, send)
                return
            # Freed and taken before the first await, so concurrent openings never pass
            # the cap between the check and the registration.
            evicted = victim, tenant.sessions.pop(victim)
            tenant.evicted += 1
        tenant.opening += 1
        opened: list[str] = []
        try:
            if evicted is not None:
                await self._end(*evicted)
            status = await _answered(self._app, scope, receive, send, opened)
        finally:
            tenant.opening -= 1
        if opened and status is not None and status < 400:
            tenant.sessions[opened[0]] = _Session(owner=scope, last_active=self._clock())

    def _oldest_idle(self, tenant: _Tenant) -> str | None:
        idle = [(s.last_active, sid) for sid, s in tenant.sessions.items() if not s.in_flight]
        return min(idle)[1] if idle else None

    async def _end(self, session_id: str, session: _Session) -> None:
        """End a session as its owner would: ``DELETE`` with its id, sent to the SDK."""
        owner = session.owner
        host = Headers(scope=owner).get("host", "")
        scope: Scope = {
            **owner,
            "method": "DELETE",
            "headers": [
                (b"host", host.encode("latin-1")),
                (b"mcp-session-id", session_id.encode()),
            ],
        }

        async def receive() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def discard(message: Message) -> None:
            pass

        await self._app(scope, receive, discard)

    def _expire(self, tenant: _Tenant, now: float) -> None:
        """Forget sessions the SDK ends for idleness (same timeout, same rule)."""
        limit = self._limits.idle_seconds
        stale = [
            sid
            for sid, s in tenant.sessions.items()
            if not s.in_flight and now - s.last_active > limit
        ]
        for sid in stale:
            del tenant.sessions[sid]


def _tenant_of(scope: Scope) -> str:
    user = scope.get("user")
    return user.access_token.client_id if isinstance(user, AuthenticatedUser) else LOCAL


def _opens_session(headers: Headers) -> bool:
    """Whether the SDK would open a session for this POST: a handshake-era request without a
    session id (requests of the stateless 2026 era carry a newer version header)."""
    version = headers.get(_VERSION_HEADER)
    return version is None or version in HANDSHAKE_PROTOCOL_VERSIONS


def _refusal(message: str, retry_after: int) -> JSONResponse:
    body: dict[str, Any] = {"error": {"code": "RESOURCE_BUSY", "message": message, "details": {}}}
    body["error"]["details"] = {"retry_after": retry_after}
    return JSONResponse(body, status_code=429, headers={"Retry-After": str(retry_after)})


async def _answered(
    app: ASGIApp, scope: Scope, receive: Receive, send: Send, session: list[str] | None = None
) -> int | None:
    """Run ``app``; the status it answered with (None if none), and into ``session`` the
    session id its response announced."""
    status: int | None = None

    async def watch(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = int(message["status"])
            if session is not None:
                for key, value in message.get("headers", []):
                    if key.lower() == _SESSION_HEADER.encode():
                        session.append(value.decode("latin-1"))
        await send(message)

    await app(scope, receive, watch)
    return status
