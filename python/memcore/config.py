"""Where data lives. Precedence: an explicit path, then (global mode) the
`MEMCORE_DATA_DIR` environment variable, then the default location.

- Global mode: `~/.local/share/memcore` (or `$XDG_DATA_HOME/memcore`).
- Local mode: `<project_root>/.memcore/`, so the memory travels with the
  project when it is moved or cloned. Without an explicit root, the nearest
  ancestor of the working directory holding `.memcore/` or `.git` is used.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from memcore.errors import invalid

Mode = Literal["global", "local"]
LOCAL_DIR_NAME = ".memcore"
ENV_DATA_DIR = "MEMCORE_DATA_DIR"


def default_data_dir() -> Path:
    """The per-user data directory for global mode."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "memcore"


def find_project_root(start: Path | None = None) -> Path:
    """The nearest ancestor of `start` (default: cwd) that holds `.memcore/` or
    `.git`; `start` itself when none does."""
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / LOCAL_DIR_NAME).is_dir() or (candidate / ".git").exists():
            return candidate
    return here


def resolve_data_dir(
    path: str | os.PathLike[str] | None,
    mode: str,
    project_root: str | os.PathLike[str] | None,
) -> tuple[Path, Path | None]:
    """The data directory and, in local mode, the project root.

    Raises:
        InvalidParameterError: Unknown mode, or a project root that is not a directory.
    """
    if mode not in ("global", "local"):
        raise invalid("mode", f"Unknown mode {mode!r}. Use 'global' or 'local'.")
    root: Path | None = None
    if mode == "local":
        root = Path(project_root).resolve() if project_root else find_project_root()
        if not root.is_dir():
            raise invalid("project_root", f"Project root {root} is not a directory.")
    if path is not None:
        return Path(path).expanduser().resolve(), root
    if root is not None:
        return root / LOCAL_DIR_NAME, root
    env = os.environ.get(ENV_DATA_DIR)
    if env:
        return Path(env).expanduser().resolve(), None
    return default_data_dir(), None
