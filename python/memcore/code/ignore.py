"""Which paths of a project are left out of the code index: gitignore semantics via pathspec.

Rules, lowest precedence first (a later rule overrides an earlier one, as in git):

1. built-in default excludes (:data:`DEFAULT_EXCLUDES`): dependency trees, caches and
   lock files that are rarely meant to be searched; overridable with ``!`` in any ignore file;
2. ``.git/info/exclude`` of the root;
3. in every directory, its ``.gitignore`` then its ``.memoryignore``, applying to that
   directory's subtree; a deeper directory's files override a shallower one's, and
   ``.memoryignore`` overrides ``.gitignore`` of the same directory.

As in git, a file inside an excluded directory cannot be re-included: the walk never
enters the directory. VCS metadata and memcore's own data directory
(:data:`ALWAYS_SKIPPED`) are skipped whatever the rules say.
"""

from __future__ import annotations

import logging
from pathlib import Path, PurePosixPath

from pathspec import GitIgnoreSpec

logger = logging.getLogger(__name__)

IGNORE_FILE_NAMES: tuple[str, ...] = (".gitignore", ".memoryignore")
"""Per-directory ignore files, in increasing precedence. A watcher that sees one of these
change should call :meth:`IgnoreRules.invalidate`."""

ALWAYS_SKIPPED: frozenset[str] = frozenset({".git", ".hg", ".svn", ".jj", ".memcore"})
"""Names never indexed at any depth: version-control metadata and memcore's data folder
(local mode keeps it in ``<root>/.memcore``; indexing it would index the index)."""

DEFAULT_EXCLUDES: tuple[str, ...] = (
    # node_modules is usually gitignored but not always (and not in non-git folders); it is
    # third-party code that would outnumber the project's own files many times over.
    "node_modules/",
    "__pycache__/",
    ".venv/",
    ".tox/",
    ".nox/",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    ".hypothesis/",
    ".idea/",
    # Generated or minified artefacts: long, repetitive, never what a search is after.
    "*.min.js",
    "*.min.css",
    "*.map",
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "Cargo.lock",
    "poetry.lock",
    "uv.lock",
    "Pipfile.lock",
    "composer.lock",
    "Gemfile.lock",
)
"""Gitignore patterns applied beneath every other rule; ``!node_modules/`` re-includes."""


class IgnoreRules:
    """The ignore decision for one project root, with compiled specs cached per directory.

    One instance serves both the full scan and single-path checks from a watcher, so the
    two can never disagree. The cache is filled lazily; call :meth:`invalidate` after an
    ignore file changes. Sharing an instance across threads is safe: a race only compiles
    the same spec twice.
    """

    def __init__(
        self,
        root: Path,
        *,
        default_excludes: bool = True,
        extra_patterns: tuple[str, ...] = (),
    ) -> None:
        """Create the rules for a project.

        Args:
            root: The project root (resolved here).
            default_excludes: Apply :data:`DEFAULT_EXCLUDES` beneath the project's rules.
            extra_patterns: More gitignore lines applied at the root, above the defaults
                and below the project's own files.
        """
        self.root = root.resolve()
        self._base_lines: tuple[str, ...] = (
            *(DEFAULT_EXCLUDES if default_excludes else ()),
            *extra_patterns,
        )
        self._specs: dict[str, GitIgnoreSpec | None] = {}

    def invalidate(self) -> None:
        """Forget every compiled spec, so that edited ignore files are read again."""
        self._specs.clear()

    def is_ignored(self, rel_path: str, *, is_dir: bool = False) -> bool:
        """Whether a path is excluded, itself or through any ancestor directory.

        Args:
            rel_path: Path relative to the root, ``/``-separated.
            is_dir: The path names a directory (matters for patterns ending in ``/``).

        Returns:
            True when the path is skipped.
        """
        parts = PurePosixPath(rel_path).parts
        for depth in range(1, len(parts)):
            if self.is_entry_ignored(parts[: depth - 1], parts[depth - 1], is_dir=True):
                return True
        return bool(parts) and self.is_entry_ignored(parts[:-1], parts[-1], is_dir=is_dir)

    def is_entry_ignored(self, parent: tuple[str, ...], name: str, *, is_dir: bool) -> bool:
        """Whether one directory entry is excluded, assuming its parent is not.

        This is the walk's step: the scanner prunes excluded directories, so checking
        ancestors again for every file would be wasted work.

        Args:
            parent: The entry's directory as path parts relative to the root.
            name: The entry's name.
            is_dir: The entry is a directory.

        Returns:
            True when the entry is skipped.
        """
        if name in ALWAYS_SKIPPED:
            return True
        parts = (*parent, name)
        suffix = "/" if is_dir else ""
        # The deepest ignore file with a matching pattern decides.
        for level in range(len(parent), -1, -1):
            spec = self._spec_for("/".join(parent[:level]))
            if spec is None:
                continue
            decision = spec.check_file("/".join(parts[level:]) + suffix).include
            if decision is not None:
                return decision
        return False

    def _spec_for(self, rel_dir: str) -> GitIgnoreSpec | None:
        try:
            return self._specs[rel_dir]
        except KeyError:
            pass
        directory = self.root / rel_dir if rel_dir else self.root
        lines: list[str] = []
        if not rel_dir:
            lines.extend(self._base_lines)
            lines.extend(_read_lines(self.root / ".git" / "info" / "exclude"))
        for file_name in IGNORE_FILE_NAMES:
            lines.extend(_read_lines(directory / file_name))
        spec: GitIgnoreSpec | None = GitIgnoreSpec.from_lines(lines)
        # Comments and blank lines compile to patterns that never match; skip such files.
        if spec is not None and all(p.include is None for p in spec.patterns):
            spec = None
        self._specs[rel_dir] = spec
        return spec


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return []
    except OSError as exc:
        # An unreadable ignore file must not stop indexing; the files it would have
        # excluded get indexed, which is the visible, recoverable failure.
        logger.warning("cannot read ignore file %s: %s", path, exc)
        return []
