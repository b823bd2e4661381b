"""A local HTTP server speaking enough of the Hugging Face hub for ``hf_hub_download``.

It serves ``/{repo_id}/resolve/{revision}/{filename}`` for HEAD and GET with the headers the
client relies on: ``X-Repo-Commit`` (the commit the revision resolves to), ``ETag`` and
``Content-Length``. Large files behave like LFS files on the real hub: the resolve URL
answers 302 with ``X-Linked-Etag``/``X-Linked-Size`` and a ``Location`` on another host
(``localhost`` instead of ``127.0.0.1``, so the client treats it as a CDN), from which the
bytes are then fetched. Missing repos and files answer 404 with the hub's ``X-Error-Code``.
"""

from __future__ import annotations

import hashlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from urllib.parse import unquote, urlsplit

COMMIT = "0123456789abcdef0123456789abcdef01234567"
LFS_THRESHOLD = 1 << 20


class FakeHub:
    """Serve ``{repo_id: {repo_path: local_file}}`` on 127.0.0.1 at a free port."""

    def __init__(self, repos: dict[str, dict[str, Path]]) -> None:
        self.repos = repos
        self.requests: list[tuple[str, str]] = []
        self._blobs: dict[str, Path] = {}
        for files in repos.values():
            for local in files.values():
                self._blobs[_sha256(local)] = local
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        """Base URL to put in ``HF_ENDPOINT``."""
        return f"http://127.0.0.1:{self._server.server_port}"

    def start(self) -> FakeHub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeHub:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def lookup(self, url_path: str) -> tuple[str, Path | None, str | None]:
        """Resolve a request path to ``(kind, local file, error code)``."""
        if url_path.startswith("/cdn/"):
            blob = self._blobs.get(url_path.removeprefix("/cdn/"))
            return "cdn", blob, None if blob else "EntryNotFound"
        head, sep, tail = url_path.lstrip("/").partition("/resolve/")
        if not sep:
            return "other", None, None
        files = self.repos.get(head)
        if files is None:
            return "resolve", None, "RepoNotFound"
        _revision, _, filename = tail.partition("/")
        local = files.get(filename)
        return "resolve", local, None if local else "EntryNotFound"

    def cdn_url(self, blob: Path) -> str:
        return f"http://localhost:{self._server.server_port}/cdn/{_sha256(blob)}"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _handler_for(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:
            self._respond(send_body=False)

        def do_GET(self) -> None:
            self._respond(send_body=True)

        def _respond(self, *, send_body: bool) -> None:
            path = unquote(urlsplit(self.path).path)
            hub.requests.append((self.command, path))
            kind, local, error = hub.lookup(path)
            if local is None:
                self.send_response(404)
                if error:
                    self.send_header("X-Error-Code", error)
                if kind == "resolve" and error == "EntryNotFound":
                    self.send_header("X-Repo-Commit", COMMIT)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            etag = f'"{_sha256(local)}"'
            size = str(local.stat().st_size)
            if kind == "resolve" and local.stat().st_size >= LFS_THRESHOLD:
                self.send_response(302)
                self.send_header("Location", hub.cdn_url(local))
                self.send_header("X-Repo-Commit", COMMIT)
                self.send_header("X-Linked-Etag", etag)
                self.send_header("X-Linked-Size", size)
                self.send_header("ETag", etag)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            if kind == "resolve":
                self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("ETag", etag)
            self.send_header("Content-Length", size)
            self.send_header("Content-Type", "application/octet-stream")
            self.end_headers()
            if send_body:
                self.wfile.write(local.read_bytes())

        def log_message(self, format: str, *args: object) -> None:
            """Keep the test output clean; ``hub.requests`` records what was asked."""

    return Handler
