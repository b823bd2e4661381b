"""An idle keep-alive connection outlives the clients' own connection pools.

uvicorn closes an idle connection after 5 s by default, exactly when httpx's pool still
considers it reusable; under the 8-client HTTP load of ``python -m benches.reliability`` a
client that reused a connection at that moment had its request dropped (``ReadError``
from inside the SDK's client). Here a real HTTP server is asked once on a raw socket and
the connection must still be open after httpx's pool expiry has passed."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from test_mcp_support import free_port, server_env, start_http_server, stop

#: httpx's default keep-alive expiry: a pooled connection idle for less is reused.
HTTPX_POOL_EXPIRY = httpx2.Limits().keepalive_expiry or 5.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Any]]:
    home = tmp_path_factory.mktemp("reliability-keepalive")
    port = free_port()
    args = ["--data-dir", str(home / "store"), "--model", "none", "--tools", "core"]
    proc = start_http_server(args, server_env(home), home / "server.log", port)
    yield port, proc
    stop(proc)


def _get(sock: socket.socket) -> bytes:
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    reply = b""
    while b"\r\n\r\n" not in reply or not reply.rstrip().endswith(b"}"):
        chunk = sock.recv(4096)
        assert chunk, f"closed mid-reply: {reply!r}"
        reply += chunk
    return reply


def test_an_idle_connection_outlives_the_client_pool(server: tuple[int, Any]) -> None:
    port, _ = server
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        assert _get(sock).startswith(b"HTTP/1.1 200")
        time.sleep(HTTPX_POOL_EXPIRY + 1.0)
        # Still open: no EOF waiting (a closed connection reads b"" at once).
        sock.setblocking(False)
        with pytest.raises(BlockingIOError):
            sock.recv(1, socket.MSG_PEEK)
        sock.setblocking(True)
        # And it serves the next request.
        assert _get(sock).startswith(b"HTTP/1.1 200")
