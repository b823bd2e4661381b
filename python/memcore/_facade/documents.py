"""Documents of the interaction log: canonical ids, content hashes and snapshots.

A document's id is what makes two reads of "the same file" meet at one hypernode
(docs/guide.md, "Conversations and documents"):

- Local mode: the path relative to the project root, with `..` and symlinks resolved
  and POSIX separators, so moving or cloning the project keeps every id valid. A path
  that resolves outside the root is refused: it could not travel with the project.
- Global mode: the absolute canonical path, so `./a.py`, `../x/a.py` and a symlink to
  it are one document.
- URLs (anything with a scheme: `https://…`, `s3://…`, `file://…`, `urn:…`) are
  normalised and stored as such in both modes; memcore never fetches them.

Content is hashed as bytes (sha256 hex). The hash is always stored; the text only when
it is small (`DEFAULT_CONTENT_LIMIT`), so large files do not bloat the store.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from memcore.errors import NotFoundError, invalid

#: Content kept with a version when its encoded size is at most this many bytes.
DEFAULT_CONTENT_LIMIT = 64 * 1024
#: The content hash recorded when a writing procedure removed the document.
DELETED_HASH = "deleted"

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")
# Schemes whose URIs carry no `//authority` but are still not file paths.
_OPAQUE_SCHEMES = frozenset({"urn", "mailto", "data", "tel", "news", "file"})
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21, "git": 9418}
_PERCENT = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

PathRef = str | os.PathLike[str]


def is_url(ref: str) -> bool:
    """Whether `ref` names a URL rather than a file path.

    A one-letter scheme is a Windows drive (`C:\\x`), and a colon later in a plain
    name (`notes:v2.txt`) is not a scheme unless `//` or a known scheme follows.
    """
    match = _SCHEME.match(ref)
    if match is None or len(match.group(1)) < 2:
        return False
    return ref[match.end() :].startswith("//") or match.group(1).lower() in _OPAQUE_SCHEMES


def normalize_url(url: str) -> str:
    """A URL in canonical form: scheme and host lower-cased, the default port and the
    fragment dropped, dot segments and percent-escapes normalised; the query is kept.

    Raises:
        InvalidParameterError: The URL has an invalid port or an http(s) URL has no host.
    """
    text = url.strip()
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if not text[len(scheme) + 1 :].startswith("//"):
        # An opaque URI (urn:, mailto:): only the scheme is case-insensitive.
        return f"{scheme}:{_percent(parts.path)}" + (f"?{parts.query}" if parts.query else "")
    try:
        port = parts.port
    except ValueError:
        raise invalid("path", f"URL {url!r} has an invalid port.") from None
    host = parts.hostname or ""
    if scheme in ("http", "https") and not host:
        raise invalid("path", f"URL {url!r} has no host.")
    if ":" in host:
        host = f"[{host}]"  # IPv6 literal
    userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    netloc = (f"{userinfo}@" if userinfo else "") + host
    if port is not None and port != _DEFAULT_PORTS.get(scheme):
        netloc += f":{port}"
    path = _remove_dot_segments(_percent(parts.path)) or "/"
    return f"{scheme}://{netloc}{path}" + (f"?{parts.query}" if parts.query else "")


def _percent(text: str) -> str:
    """Upper-case percent-escapes, and decode the ones of unreserved characters."""

    def fix(match: re.Match[str]) -> str:
        char = chr(int(match.group(1), 16))
        return char if char in _UNRESERVED else f"%{match.group(1).upper()}"

    return _PERCENT.sub(fix, text)


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4 for an absolute path: `/a/./b/../c` → `/a/c`, keeping a
    trailing slash (unlike `posixpath.normpath`, which would change the resource)."""
    segments = path.split("/")
    out: list[str] = []
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment in (".", ".."):
            if segment == ".." and len(out) > 1:
                out.pop()
            if last:
                out.append("")
            continue
        out.append(segment)
    return "/".join(out)


def content_hash(data: bytes) -> str:
    """The sha256 hex digest of a document's bytes."""
    return hashlib.sha256(data).hexdigest()


class DocumentResolver:
    """Turns paths and URLs into canonical document ids, and ids back into files.

    Args:
        mode: "local" or "global".
        project_root: The project root (required in local mode).
    """

    def __init__(self, mode: str, project_root: Path | None) -> None:
        if mode == "local" and project_root is None:
            raise invalid("mode", "Local mode needs a project root.")
        self.mode = mode
        self.root = project_root.resolve() if project_root is not None else None
        # String operations: pathlib costs several times more per call, and every
        # document of every procedure passes through here.
        self._root = str(self.root) if self.root is not None else None
        self._prefix = (
            self._root
            if self._root is None or self._root.endswith(os.sep)
            else (self._root + os.sep)
        )

    def canonical(self, ref: Any, field: str = "path", *, on_disk: bool = True) -> str:
        """The canonical id of a path or URL.

        Relative paths are taken relative to the project root in local mode (an agent's
        tools speak relative to its workspace). In global mode there is no such root: a
        relative path memcore reads from disk (``on_disk``) is the file under the working
        directory, recorded by its absolute path; one that is only named (its content or
        hash given, or a lookup) is kept as given, normalised, since the working directory
        of a server has nothing to do with the agent's workspace.

        Raises:
            InvalidParameterError: Not a path, or (local mode) outside the project root.
        """
        text = _ref_text(ref, field)
        if is_url(text):
            return normalize_url(text)
        path = os.path.expanduser(text) if text.startswith("~") else text  # noqa: PTH111
        if self._root is None or self._prefix is None:
            if not on_disk and not os.path.isabs(path):  # noqa: PTH117
                return _as_given(path, text, field)
            return _realpath(path, text, field).replace(os.sep, "/")
        if _plainly_below(self._prefix, path):
            return path.replace(os.sep, "/")
        full = _realpath(os.path.join(self._root, path), text, field)  # noqa: PTH118
        if full == self._root:
            raise invalid(field, f"{text!r} is the project root itself, not a document.")
        if not full.startswith(self._prefix):
            raise invalid(
                field,
                f"{text!r} resolves to {full}, which is outside the project root {self._root}. "
                "In local mode documents must live under the project root (they travel with "
                "it); use global mode for files elsewhere, or pass a URL.",
            )
        return full[len(self._prefix) :].replace(os.sep, "/")

    def locate(self, canonical: str) -> Path | None:
        """The file behind a canonical id, or None for a URL."""
        if is_url(canonical):
            return None
        return self.root / canonical if self.root is not None else Path(canonical)


def _as_given(path: str, text: str, field: str) -> str:
    """A relative path's id without the file system: POSIX separators, ``.`` and ``..``
    collapsed lexically (a leading ``..`` stays: it is what the agent said)."""
    normal = posixpath.normpath(path.replace(os.sep, "/"))
    if normal == ".":
        raise invalid(field, f"{text!r} names a folder, not a document.")
    return normal


def _plainly_below(prefix: str, path: str) -> bool:
    """Whether `path` is plainly below the resolved root `prefix` (ending in a
    separator): relative, without `.`, `..` or empty parts, and no existing part a
    symlink. Then `path` is its own canonical id, as realpath would say; otherwise
    realpath decides. realpath also lstats every part of the root on every call:
    that was most of record_turn's facade time."""
    # String operations, not pathlib: this runs for every document of every procedure.
    if not path or os.path.isabs(path) or (os.altsep and os.altsep in path):  # noqa: PTH117
        return False
    parts = path.split(os.sep)  # noqa: PTH206
    if any(p in _NOT_PLAIN for p in parts):
        return False
    current = prefix[:-1]
    for part in parts:
        current = f"{current}{os.sep}{part}"
        try:
            mode = os.lstat(current).st_mode
        except OSError:
            break  # a missing part: realpath keeps it and what follows as given
        if stat.S_ISLNK(mode):
            return False
    return True


# Path parts that need realpath's full treatment.
_NOT_PLAIN = frozenset({"", ".", ".."})


def _ref_text(ref: Any, field: str) -> str:
    if isinstance(ref, os.PathLike):
        ref = os.fspath(ref)
    if not isinstance(ref, str) or not ref.strip():
        raise invalid(field, f"A document must be a non-empty path or URL, got {ref!r}.")
    if "\x00" in ref:
        raise invalid(field, "A document path must not contain NUL characters.")
    return ref.strip()


def _realpath(path: str, text: str, field: str) -> str:
    """The absolute path with `..` and symlinks resolved (missing parts kept as given)."""
    try:
        return os.path.realpath(path)
    except (OSError, RuntimeError) as exc:  # a symlink loop on some Python versions
        raise invalid(field, f"Cannot resolve {text!r}: {exc}.") from None


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A document's content as seen at one moment.

    `text` is None when only a hash is known (the caller passed `content_hash`) or the
    document was deleted (`content_hash == DELETED_HASH`).
    """

    path: str
    content_hash: str
    text: str | None
    size: int | None

    def observation(self, written: bool, content_limit: int) -> dict[str, Any]:
        """The document as the native `record_turn` takes it: the hash always, the
        content only when at most `content_limit` bytes."""
        keep = self.text is not None and self.size is not None and self.size <= content_limit
        return {
            "canonical": self.path,
            "content_hash": self.content_hash,
            "content": self.text if keep else None,
            "size": self.size,
            "written": written,
        }


def snapshot(
    resolver: DocumentResolver,
    ref: Any,
    content: str | bytes | None = None,
    *,
    known_hash: str | None = None,
    missing_ok: bool = False,
) -> Snapshot:
    """A document's current content: the one given, else the file read from disk.

    Args:
        resolver: Canonicalises `ref` and finds its file.
        ref: A path or URL.
        content: The content as the agent saw it (text or bytes); read from disk if None.
        known_hash: A content hash computed elsewhere (no content needed then).
        missing_ok: Record a missing file as deleted instead of raising (a writing
            procedure may have removed it).

    Raises:
        InvalidParameterError: A URL without content, a directory, an unreadable file.
        NotFoundError: The file does not exist and `missing_ok` is False.
    """
    canonical = resolver.canonical(ref, on_disk=content is None and known_hash is None)
    if content is not None:
        return _of_content(canonical, content)
    if known_hash is not None:
        if not isinstance(known_hash, str) or not known_hash.strip():
            raise invalid("content_hash", "content_hash must be a non-empty string.")
        return Snapshot(canonical, known_hash.strip(), None, None)
    file = resolver.locate(canonical)
    if file is None:
        raise invalid(
            "content",
            f"{canonical} is a URL; pass the content you fetched (content=…), "
            "memcore does not fetch URLs.",
        )
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        if missing_ok:
            return Snapshot(canonical, DELETED_HASH, None, None)
        err = NotFoundError(f"Document file not found: {file}")
        err.details = {"kind": "Document", "id": canonical}
        raise err from None
    except IsADirectoryError:
        raise invalid("path", f"{file} is a directory, not a document.") from None
    except OSError as exc:
        raise invalid("path", f"Cannot read {file}: {exc.strerror or exc}.") from None
    return Snapshot(canonical, content_hash(data), data.decode("utf-8", "replace"), len(data))


def _of_content(canonical: str, content: Any) -> Snapshot:
    if isinstance(content, str):
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError:
            # Lone surrogates (text decoded with surrogateescape) cannot be stored as
            # text; hash and keep what a UTF-8 reader would see.
            data = content.encode("utf-8", "replace")
            content = data.decode("utf-8")
        return Snapshot(canonical, content_hash(data), content, len(data))
    if isinstance(content, bytes | bytearray | memoryview):
        data = bytes(content)
        return Snapshot(canonical, content_hash(data), data.decode("utf-8", "replace"), len(data))
    raise invalid("content", f"content must be str or bytes, got {type(content).__name__}.")
