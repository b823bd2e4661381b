"""Bearer tokens for the HTTP transport, each mapped to one namespace.

The token file (``--auth-file``) is JSON, written only by ``memcore auth``::

    {
      "version": 1,
      "tokens": [
        {"id": "tok_3f9c0a1b", "sha256": "<hex digest of the token>", "namespace": "alice",
         "admin": false, "label": "alice's laptop", "created_at": "2026-01-31T12:00:00Z"}
      ]
    }

Only the SHA-256 of a token is stored (tokens are 256-bit random, so a plain hash is as good
as a slow one and keeps every request's check to one digest); the token itself is printed
once when it is made. ``admin`` tokens may also call store-wide tools (``reset_all_memory``).
The server re-reads the file when it changes, so tokens can be added or revoked while it
runs. The file is created mode 0600.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

TOKEN_PREFIX = "mct_"
FILE_VERSION = 1
# How often (seconds) a running server looks at the file's modification time.
_RECHECK_SECONDS = 1.0


class AuthFileError(ValueError):
    """The token file cannot be read or is malformed."""


@dataclass(frozen=True, slots=True)
class TokenEntry:
    """One token as stored: never the token itself."""

    id: str
    sha256: str
    namespace: str
    admin: bool = False
    label: str | None = None
    created_at: str | None = None


def digest(token: str) -> str:
    """The stored form of a token."""
    return hashlib.sha256(token.encode()).hexdigest()


def load(path: Path) -> list[TokenEntry]:
    """The entries of a token file (an absent file has none).

    Raises:
        AuthFileError: The file is not a valid token file.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise AuthFileError(f"Cannot read the token file {path}: {exc}") from None
    if not isinstance(data, dict) or data.get("version") != FILE_VERSION:
        raise AuthFileError(f"{path} is not a memcore token file (version {FILE_VERSION}).")
    try:
        return [_entry(raw) for raw in data.get("tokens", [])]
    except (TypeError, KeyError, ValueError) as exc:
        raise AuthFileError(f"{path} has a malformed token entry: {exc}") from None


def _entry(raw: Mapping[str, Any]) -> TokenEntry:
    entry = TokenEntry(
        id=str(raw["id"]),
        sha256=str(raw["sha256"]).lower(),
        namespace=str(raw["namespace"]),
        admin=bool(raw.get("admin", False)),
        label=None if raw.get("label") is None else str(raw["label"]),
        created_at=None if raw.get("created_at") is None else str(raw["created_at"]),
    )
    if len(entry.sha256) != 64 or not entry.namespace.strip():
        raise ValueError(f"entry {entry.id!r} needs a 64-hex-digit sha256 and a namespace")
    return entry


def save(path: Path, entries: list[TokenEntry]) -> None:
    """Write the token file atomically, readable by its owner only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = json.dumps({"version": FILE_VERSION, "tokens": [asdict(e) for e in entries]}, indent=2)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(body + "\n")
        out.flush()
        os.fsync(out.fileno())
    temporary.replace(path)


def add_token(
    path: Path, namespace: str, *, admin: bool = False, label: str | None = None
) -> tuple[str, TokenEntry]:
    """Make a new token for ``namespace``, store its hash, and return it (shown once).

    Raises:
        AuthFileError: The existing file is malformed.
        ValueError: The namespace is empty.
    """
    if not namespace.strip():
        raise ValueError("The namespace must not be empty.")
    entries = load(path)
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    entry = TokenEntry(
        id="tok_" + secrets.token_hex(4),
        sha256=digest(token),
        namespace=namespace.strip(),
        admin=admin,
        label=label,
        created_at=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
    )
    save(path, [*entries, entry])
    return token, entry


def revoke(path: Path, token_id: str) -> bool:
    """Remove a token by its id; whether one was removed."""
    entries = load(path)
    kept = [e for e in entries if e.id != token_id]
    if len(kept) == len(entries):
        return False
    save(path, kept)
    return True


class TokenStore:
    """The tokens of a file, looked up by digest, re-read when the file changes."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._by_digest: dict[str, TokenEntry] = {}
        self._stamp: tuple[int, int] | None = None
        self._checked = 0.0
        self._reload()

    def lookup(self, token: str) -> TokenEntry | None:
        """The entry a presented token belongs to, or None."""
        now = time.monotonic()
        if now - self._checked > _RECHECK_SECONDS:
            self._checked = now
            self._reload()
        return self._by_digest.get(digest(token))

    def _reload(self) -> None:
        try:
            stat = self._path.stat()
            stamp = (stat.st_mtime_ns, stat.st_size)
        except FileNotFoundError:
            stamp = None
        with self._lock:
            if stamp == self._stamp and self._by_digest:
                return
            # A file broken by a hand edit keeps the last good tokens rather than locking
            # everyone out (or letting everyone in); the error reaches the log at start-up.
            try:
                entries = load(self._path)
            except AuthFileError:
                if self._stamp is None:
                    raise
                return
            self._by_digest = {e.sha256: e for e in entries}
            self._stamp = stamp
