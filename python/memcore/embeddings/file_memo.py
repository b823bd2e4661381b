"""What was measured of a model file, remembered across processes while the file is unchanged.

Hashing a model's graph (23 MB for MiniLM) or listing its operators costs tens of
milliseconds at every start, before the first text can be embedded. A small JSON file in
the cache folder remembers such facts, keyed by the file's absolute path, size and
modification time, so a warm start reads only the memo. A file changed in place (another
install of the package, an edit) gets a new mtime and is measured again; this is how git
tells an unchanged file without reading it. Best effort throughout: a memo that cannot be
read or written only costs the next start its measurement. Entries of files that no longer
exist are dropped whenever the memo is written, so it does not grow with every path seen.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path

MEMO_FILE = "sources.json"
"""The memo, in :func:`cache_dir`."""

_CHUNK = 1 << 20

Fact = tuple[type, Callable[[Path], object]]
"""A fact's type (a remembered value of another type is measured again) and its measure."""


def cache_dir() -> Path:
    """memcore's cache folder for model files: ``MEMCORE_CACHE_DIR``, else the user's cache
    folder (derived graphs and the memo live here)."""
    override = os.environ.get("MEMCORE_CACHE_DIR")
    if override:
        return Path(override).expanduser() / "graphs"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "memcore" / "graphs"


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file, read in chunks so large graphs do not need to fit in memory."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def remembered(
    path: Path,
    facts: Mapping[str, Fact],
    *,
    folder: Path | None = None,
    keep: Callable[[Mapping[str, object]], bool] = lambda _: True,
) -> dict[str, object]:
    """The named facts of ``path``: from the memo while its size and mtime are unchanged,
    else measured; what was measured is remembered when ``keep`` says so.

    Raises:
        OSError: ``path`` cannot be read (from ``stat`` or a measure).
    """
    folder = folder or cache_dir()
    stat = path.stat()
    key, stamp = str(path.absolute()), [stat.st_size, stat.st_mtime_ns]
    known = _read(folder)
    entry = known.get(key)
    found: dict[str, object] = (
        dict(entry) if isinstance(entry, dict) and entry.get("stamp") == stamp else {}
    )
    values: dict[str, object] = {}
    measured = False
    for name, (kind, measure) in facts.items():
        value = found.get(name)
        if not isinstance(value, kind):
            value, measured = measure(path), True
        values[name] = value
    if measured and keep(values):
        known[key] = {**found, **values, "stamp": stamp}
        _write(folder, known)
    return values


def _read(folder: Path) -> dict[str, object]:
    try:
        known = json.loads((folder / MEMO_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return known if isinstance(known, dict) else {}


def _write(folder: Path, known: dict[str, object]) -> None:
    """Replace the memo atomically (a reader sees the old or the new, whole)."""
    live = {path: entry for path, entry in known.items() if Path(path).exists()}
    staged = folder / f".{MEMO_FILE}.{os.getpid()}.tmp"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        staged.write_text(json.dumps(live, indent=1) + "\n", encoding="utf-8")
        staged.replace(folder / MEMO_FILE)
    except OSError:
        with contextlib.suppress(OSError):
            staged.unlink()
