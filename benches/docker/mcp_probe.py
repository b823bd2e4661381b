"""Talk MCP to a memcore server started by a command (the Docker image's check).

Standard library only, so it runs on the host beside buildah without the project installed.

    python3 mcp_probe.py stdio --store TEXT -- CMD...
        start CMD, speak MCP over its stdin/stdout: initialize, tools/list, get_status until
        the embedding model is ready, store_memory TEXT, search_memories finds it; close
        stdin and expect a clean exit. Writes the stored memory's id to --id-file.
    python3 mcp_probe.py http --port N --token T --find ID [--find-text TEXT] -- CMD...
        start CMD (a server on 127.0.0.1:N), wait for /healthz, check that /mcp refuses a
        request without a valid bearer token (401), then with T: initialize, tools/list,
        search_memories TEXT finds the memory ID, /metrics; SIGTERM to the server process
        (as `docker stop` sends it) must end it with status 0.

Every check that fails raises; the exit status is 0 only when all passed.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

PROTOCOL = "2025-11-25"
CLIENT = {"name": "memcore-image-check", "version": "1"}


class ProbeError(RuntimeError):
    """A check failed."""


def say(text: str) -> None:
    print(text, flush=True)


def tool_payload(reply: dict[str, Any], name: str) -> dict[str, Any]:
    """The JSON payload of a tools/call reply; raises on protocol or tool errors."""
    if "error" in reply:
        raise ProbeError(f"{name}: protocol error {reply['error']}")
    result = reply["result"]
    payload = result.get("structuredContent") or json.loads(result["content"][0]["text"])
    if result.get("isError"):
        raise ProbeError(f"{name}: tool error {payload}")
    return payload


def check_tools(reply: dict[str, Any]) -> list[str]:
    tools = [t["name"] for t in reply["result"]["tools"]]
    for needed in ("store_memory", "search_memories", "recall", "get_status"):
        if needed not in tools:
            raise ProbeError(f"tools/list lacks {needed}: {tools}")
    for tool in reply["result"]["tools"]:
        if tool.get("inputSchema", {}).get("type") != "object":
            raise ProbeError(f"tool {tool['name']} has no object input schema")
    return tools


# -- stdio ---------------------------------------------------------------------------------


class StdioPeer:
    """A server process spoken to line by line over its stdin/stdout."""

    def __init__(self, command: list[str], log: Path) -> None:
        self._log = log.open("wb")
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            start_new_session=True,
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(b"")

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
        self._next_id += 1
        wanted = self._next_id
        self.send({"jsonrpc": "2.0", "id": wanted, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ProbeError(f"no reply to {method} within {timeout:.0f} s")
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                continue
            if not line:
                raise ProbeError(f"the server closed stdout before answering {method}")
            try:
                message = json.loads(line)
            except json.JSONDecodeError:
                raise ProbeError(f"stdout is not JSON-RPC: {line[:200]!r}") from None
            if message.get("id") == wanted:
                return message
            # Notifications and server requests are not part of this check.

    def call(self, name: str, arguments: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
        reply = self.request("tools/call", {"name": name, "arguments": arguments}, timeout)
        return tool_payload(reply, name)

    def finish(self, timeout: float) -> int:
        """Close stdin (the client went away) and wait for the server to exit."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            stop_group(self.proc)
            raise ProbeError(f"the server did not exit within {timeout:.0f} s of EOF") from None
        finally:
            self._log.close()


def stop_group(proc: subprocess.Popen[bytes], grace: float = 20) -> int:
    """SIGTERM the process group that ``proc`` leads; SIGKILL it after ``grace`` seconds."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            return proc.wait(grace)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise ProbeError(f"the server ignored SIGTERM for {grace:.0f} s") from None
    return proc.returncode


def server_process(root: int) -> int | None:
    """The pid of the Python process under ``root`` (buildah run's chroot runtime and exec
    helpers sit between them), or None once it has gone."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    pending, found = [root], None
    while pending:
        pid = pending.pop()
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if Path(argv[0].decode(errors="replace")).name.startswith("python"):
            found = pid
        pending.extend(children.get(pid, []))
    return found


def stop_server(proc: subprocess.Popen[bytes], grace: float = 30) -> int:
    """Stop the server as ``docker stop`` does: SIGTERM to the server process itself (a
    signal to buildah would make its runtime SIGKILL the child), then wait."""
    pid = server_process(proc.pid)
    if pid is None or proc.poll() is not None:
        return stop_group(proc, grace)
    os.kill(pid, signal.SIGTERM)
    try:
        return proc.wait(grace)
    except subprocess.TimeoutExpired:
        stop_group(proc, 5)
        raise ProbeError(f"the server ignored SIGTERM for {grace:.0f} s") from None


def wait_embedding(get_status: Any, timeout: float) -> dict[str, Any]:
    """Poll get_status until the model is ready; raise if it fails or takes too long."""
    deadline = time.monotonic() + timeout
    while True:
        status = get_status()
        embedding = status["embedding"]
        if embedding["status"] == "ready":
            return status
        if embedding["status"] == "error" or status["store"]["status"] == "error":
            raise ProbeError(f"the store or the model failed to load: {status}")
        if time.monotonic() > deadline:
            raise ProbeError(f"the model was not ready within {timeout:.0f} s: {status}")
        time.sleep(0.5)


def run_stdio(args: argparse.Namespace) -> None:
    started = time.monotonic()
    peer = StdioPeer(args.command, Path(args.log))
    try:
        init = peer.request(
            "initialize",
            {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": CLIENT},
            timeout=120,
        )
        server = init["result"]["serverInfo"]
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = check_tools(peer.request("tools/list", {}, timeout=60))
        first = time.monotonic() - started
        say(
            f"stdio: {server['name']} {server.get('version', '')}: tools/list answered "
            f"{len(tools)} tools {first:.1f} s after start: {', '.join(tools)}"
        )
        status = wait_embedding(lambda: peer.call("get_status", {}), args.model_wait)
        say(
            f"stdio: store {status['store']['status']} at {status['store'].get('path')}; "
            f"embedding {status['embedding']['status']} ({status['embedding']['model']}, "
            f"{status['embedding']['dim']}d) {time.monotonic() - started:.1f} s after start"
        )
        stored = peer.call("store_memory", {"content": args.store})
        hits = peer.call("search_memories", {"query": args.store, "limit": 3})["memories"]
        if not hits or hits[0]["id"] != stored["id"]:
            raise ProbeError(f"search_memories did not find {stored['id']} first: {hits}")
        say(f"stdio: store_memory -> {stored['id']}; search_memories finds it first")
    except BaseException:
        stop_group(peer.proc)
        raise
    code = peer.finish(timeout=60)
    if code != 0:
        raise ProbeError(f"the server exited with status {code} after EOF")
    say("stdio: the server exited 0 when its stdin closed")
    Path(args.id_file).write_text(stored["id"] + "\n")


# -- HTTP ----------------------------------------------------------------------------------


class HttpPeer:
    """A streamable-HTTP MCP session (JSON responses) with one bearer token."""

    def __init__(self, url: str, token: str | None) -> None:
        self.url, self.token = url, token
        self.session: str | None = None
        self._next_id = 0

    def post(self, message: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": PROTOCOL,
        }
        if self.token is not None:
            headers["Authorization"] = f"Bearer {self.token}"
        if self.session is not None:
            headers["Mcp-Session-Id"] = self.session
        request = urllib.request.Request(
            self.url, data=json.dumps(message).encode(), headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, dict(exc.headers), exc.read()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        message = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        status, headers, body = self.post(message)
        if status != 200:
            raise ProbeError(f"{method}: HTTP {status}: {body[:300]!r}")
        if self.session is None:
            self.session = {k.lower(): v for k, v in headers.items()}.get("mcp-session-id")
        return json.loads(body)

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        reply = self.request("tools/call", {"name": name, "arguments": arguments})
        return tool_payload(reply, name)


def get_json(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, None


def wait_healthy(proc: subprocess.Popen[bytes], base: str, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise ProbeError(f"the HTTP server exited with status {proc.returncode}")
        try:
            status, body = get_json(base + "/healthz")
            if status == 200 and body.get("store") == "open":
                return body
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        if time.monotonic() > deadline:
            raise ProbeError(f"/healthz did not report an open store within {timeout:.0f} s")
        time.sleep(0.25)


def port_closed(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def run_http(args: argparse.Namespace) -> None:
    base = f"http://127.0.0.1:{args.port}"
    if not port_closed(args.port):
        raise ProbeError(f"port {args.port} is already in use")
    started = time.monotonic()
    with Path(args.log).open("wb") as log:
        proc = subprocess.Popen(
            args.command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
        )
    try:
        health = wait_healthy(proc, base, args.model_wait)
        say(f"http: /healthz {health} {time.monotonic() - started:.1f} s after start")
        hello = {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": CLIENT}
        for token, what in ((None, "no token"), ("mct_not-a-real-token", "a wrong token")):
            status, _, _ = HttpPeer(base + "/mcp", token).post(
                {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}
            )
            if status != 401:
                raise ProbeError(f"/mcp with {what} answered HTTP {status}, not 401")
        say("http: /mcp answers 401 without a token and with a wrong one")
        peer = HttpPeer(base + "/mcp", args.token)
        server = peer.request("initialize", hello)["result"]["serverInfo"]
        status, _, body = peer.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if status not in (200, 202):
            raise ProbeError(f"notifications/initialized: HTTP {status}: {body[:300]!r}")
        tools = check_tools(peer.request("tools/list", {}))
        say(
            f"http: {server['name']} {server.get('version', '')} with the token: tools/list "
            f"answered {len(tools)} tools: {', '.join(tools)}"
        )
        ready = wait_embedding(lambda: peer.call("get_status", {}), args.model_wait)
        hits = peer.call("search_memories", {"query": args.find_text, "limit": 3})["memories"]
        if not any(hit["id"] == args.find for hit in hits):
            raise ProbeError(f"search_memories over HTTP did not find {args.find}: {hits}")
        say(
            f"http: namespace {ready['namespace']!r} holds {ready['counts']['memories']} "
            f"memories; search_memories finds {args.find}, stored by the earlier stdio run"
        )
        status, metrics = 0, b""
        with urllib.request.urlopen(base + "/metrics", timeout=5) as response:
            status, metrics = response.status, response.read()
        if status != 200 or b"search_memories" not in metrics:
            raise ProbeError("/metrics does not count the search_memories call")
        say("http: /metrics counts the calls")
    except BaseException:
        stop_group(proc)
        raise
    code = stop_server(proc)
    if code != 0:
        raise ProbeError(f"the server exited with status {code} on SIGTERM")
    if not port_closed(args.port):
        raise ProbeError(f"something still listens on port {args.port} after the stop")
    say(f"http: the server stopped cleanly on SIGTERM (status 0) and released port {args.port}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    modes = parser.add_subparsers(dest="mode", required=True)
    stdio = modes.add_parser("stdio")
    stdio.add_argument("--store", required=True, help="text of the memory to store")
    stdio.add_argument("--id-file", required=True, help="where to write the memory's id")
    http = modes.add_parser("http")
    http.add_argument("--port", type=int, required=True)
    http.add_argument("--token", required=True)
    http.add_argument("--find", required=True, help="id of a memory that must be found")
    http.add_argument("--find-text", required=True, help="query that must find it")
    for mode in (stdio, http):
        mode.add_argument("--log", required=True, help="file for the server's output")
        mode.add_argument("--model-wait", type=float, default=180, help="seconds (180)")
        mode.add_argument("command", nargs="+", help="the server's command, after --")
    args = parser.parse_args(argv)
    try:
        (run_stdio if args.mode == "stdio" else run_http)(args)
    except ProbeError as exc:
        print(f"{args.mode}: FAILED: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
