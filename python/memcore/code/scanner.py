"""Find the source files of a project: walk, ignore rules, language, binary and size checks.

The per-file decision is split in two so that a watcher can make exactly the scan's
decision for a single path: :func:`should_index` judges the path (ignore rules, language)
and :func:`read_source_file` judges the content (symlinks, size, binary, minified).

Symlinks are not followed by default, like git, which stores a link rather than what it
points at: a target inside the root is indexed under its real path anyway, and a target
outside must not be read. With ``follow_symlinks=True`` links whose target stays inside
the root are followed; a directory is entered through links at most once and never back
into the chain of directories being walked (a loop), so the walk always ends.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from memcore.code.ignore import IgnoreRules
from memcore.code.languages import detect_language, language_from_shebang, needs_shebang_sniff
from memcore.code.sourcefile import (
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_LINE_CHARS,
    FileLoader,
    SkipHandler,
    SkipReason,
    SourceFile,
)
from memcore.errors import InvalidParameterError

logger = logging.getLogger(__name__)


def resolve_root(root: str | os.PathLike[str]) -> Path:
    """Resolve and validate a project root.

    Args:
        root: The project directory.

    Returns:
        The absolute path with symlinks resolved.

    Raises:
        InvalidParameterError: The path does not exist, is not a directory or cannot be a
            path at all (too long, say); ``details["field"]`` is ``path``.
    """
    path = Path(root).expanduser()
    try:
        exists, is_dir = path.exists(), path.is_dir()
        resolved = path.resolve() if is_dir else path
    except (OSError, ValueError) as exc:
        # The operating system refused the name itself (ENAMETOOLONG, ELOOP, ...): the
        # caller's input, not the store, is at fault.
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise _bad_root(
            path,
            f"Project root '{_shown(path)}' cannot be used: {reason}. "
            "Pass the path of an existing directory.",
        ) from exc
    if not exists:
        raise _bad_root(
            path,
            f"Project root '{_shown(path)}' does not exist. "
            "Pass the path of an existing directory.",
        )
    if not is_dir:
        raise _bad_root(
            path,
            f"Project root '{_shown(path)}' is not a directory. Pass the project's top "
            "folder, not a file inside it.",
        )
    return resolved


def _shown(path: Path, limit: int = 200) -> str:
    """``path`` for a message, cut short: an error must not echo kilobytes of input."""
    text = str(path)
    return text if len(text) <= limit else f"{text[: limit // 2]}…{text[-limit // 2 :]}"


def _bad_root(path: Path, message: str) -> InvalidParameterError:
    """The error for an unusable project root; details name the field and the path."""
    error = InvalidParameterError(message)
    error.details = {"field": "path", "path": _shown(path)}
    return error


def scan_project(
    root: str | os.PathLike[str],
    *,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    max_line_chars: int = DEFAULT_MAX_LINE_CHARS,
    follow_symlinks: bool = False,
    rules: IgnoreRules | None = None,
    on_skip: SkipHandler | None = None,
) -> Iterator[SourceFile]:
    """Yield every indexable source file under a project root, in a stable order.

    Args:
        root: The project directory.
        max_file_bytes: Larger files are skipped.
        max_line_chars: Files with a longer line are skipped as generated.
        follow_symlinks: Follow links whose target is inside the root (see module doc).
        rules: Ignore rules to reuse (a watcher shares its instance); built if None.
        on_skip: Told about files skipped for a reason other than the ignore rules.

    Returns:
        An iterator over the files in depth-first order, sorted by name within a
        directory, files before subdirectories. Files are read lazily as it advances.

    Raises:
        InvalidParameterError: The root is not an existing directory, or ``rules``
            belong to another root.
    """
    # Validate now, not at the first next(): a bad root should fail where it was passed.
    root_path = resolve_root(root)
    walk = _Walk(
        root_path,
        _checked_rules(rules, root_path),
        FileLoader(max_file_bytes, max_line_chars, on_skip or _log_skip),
        follow_symlinks=follow_symlinks,
    )
    return walk.files()


# A directory still to visit: relative parts, path, real paths of the walk's chain to it.
_PendingDir = tuple[tuple[str, ...], Path, tuple[str, ...]]


class _Walk:
    """One depth-first traversal of a project tree."""

    def __init__(
        self, root: Path, rules: IgnoreRules, loader: FileLoader, *, follow_symlinks: bool
    ) -> None:
        self._root = root
        self._rules = rules
        self._loader = loader
        self._report = loader.report
        self._follow = follow_symlinks
        self._linked_targets: set[str] = set()

    def files(self) -> Iterator[SourceFile]:
        stack: list[_PendingDir] = [((), self._root, (str(self._root),))]
        while stack:
            parts, directory, chain = stack.pop()
            subdirs: list[_PendingDir] = []
            for entry in self._entries(parts, directory):
                entry_parts = (*parts, entry.name)
                is_dir = _is_dir(entry)
                if self._rules.is_entry_ignored(parts, entry.name, is_dir=is_dir):
                    continue
                real = os.path.realpath(entry.path) if entry.is_symlink() else None
                if real is not None and not self._may_follow(real, chain, is_dir=is_dir):
                    self._report("/".join(entry_parts), SkipReason.SYMLINK)
                    continue
                if is_dir:
                    real_dir = real if real is not None else f"{chain[-1]}{os.sep}{entry.name}"
                    subdirs.append((entry_parts, Path(entry.path), (*chain, real_dir)))
                elif _is_file(entry):
                    source = self._loader.load(Path(entry.path), "/".join(entry_parts))
                    if source is not None:
                        yield source
            stack.extend(reversed(subdirs))

    def _entries(self, parts: tuple[str, ...], directory: Path) -> list[os.DirEntry[str]]:
        try:
            with os.scandir(directory) as iterator:
                return sorted(iterator, key=lambda e: e.name)
        except OSError as exc:
            logger.debug("cannot list %s: %s", directory, exc)
            self._report("/".join(parts) or ".", SkipReason.UNREADABLE)
            return []

    def _may_follow(self, real: str, chain: tuple[str, ...], *, is_dir: bool) -> bool:
        if not self._follow or not _is_inside(real, self._root):
            return False
        if not is_dir:
            return True
        # A link back into the walk's own chain (or above it) would recurse forever; a
        # target already entered through another link is not walked again, bounding work.
        if real in chain or chain[-1].startswith(real + os.sep) or real in self._linked_targets:
            return False
        self._linked_targets.add(real)
        return True


def read_source_file(
    root: str | os.PathLike[str],
    rel_path: str | os.PathLike[str],
    *,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    max_line_chars: int = DEFAULT_MAX_LINE_CHARS,
    follow_symlinks: bool = False,
    on_skip: SkipHandler | None = None,
) -> SourceFile | None:
    """Read one file the way :func:`scan_project` would (for a watcher's single change).

    The ignore rules are not applied here; ask :func:`should_index` first.

    Args:
        root: The project directory.
        rel_path: The file, relative to the root or absolute inside it.
        max_file_bytes: Larger files are skipped.
        max_line_chars: Files with a longer line are skipped as generated.
        follow_symlinks: Accept a path that goes through symlinks inside the root.
        on_skip: Told why the file was skipped.

    Returns:
        The file, or None if it is missing, not a regular file, or skipped.

    Raises:
        InvalidParameterError: The root is not an existing directory.
    """
    root_path = resolve_root(root)
    report = on_skip or _log_skip
    rel = _relative_to_root(root_path, rel_path)
    if rel is None:
        report(str(rel_path), SkipReason.OUTSIDE_ROOT)
        return None
    path = root_path / rel
    real = os.path.realpath(path)
    if real != str(path) and (not follow_symlinks or not _is_inside(real, root_path)):
        report(rel, SkipReason.SYMLINK)
        return None
    if not path.is_file():
        return None
    return FileLoader(max_file_bytes, max_line_chars, report).load(path, rel)


def should_index(
    root: str | os.PathLike[str],
    rel_path: str | os.PathLike[str],
    *,
    rules: IgnoreRules | None = None,
) -> bool:
    """Whether a file path passes the scan's path rules: ignore files and known language.

    Content checks (size, binary, symlinks) are left to :func:`read_source_file`. A path
    that no longer exists is judged by name alone, so a watcher can route deletions.

    Args:
        root: The project directory.
        rel_path: A file path relative to the root, or an absolute path inside it.
        rules: Ignore rules to reuse (cached specs); built if None.

    Returns:
        True if the file would be considered for indexing.

    Raises:
        InvalidParameterError: The root is not an existing directory, or ``rules``
            belong to another root.
    """
    rules = _checked_rules(rules, resolve_root(root))
    root_path = rules.root
    rel = _relative_to_root(root_path, rel_path)
    if rel is None or rules.is_ignored(rel, is_dir=False):
        return False
    if detect_language(rel) is not None:
        return True
    return needs_shebang_sniff(rel) and _sniff_shebang(root_path / rel) is not None


def _checked_rules(rules: IgnoreRules | None, root: Path) -> IgnoreRules:
    if rules is None:
        return IgnoreRules(root)
    if rules.root != root:
        raise InvalidParameterError(
            f"Ignore rules were built for '{rules.root}', not for '{root}'. "
            "Build IgnoreRules with the same project root."
        )
    return rules


def _is_inside(real: str, root: Path) -> bool:
    root_text = str(root)
    return real == root_text or real.startswith(root_text.rstrip(os.sep) + os.sep)


def _relative_to_root(root: Path, path: str | os.PathLike[str]) -> str | None:
    """Normalise a path given relative to the root (or absolute inside it) to posix form."""
    candidate = Path(path)
    if candidate.is_absolute():
        for base in (candidate, Path(os.path.realpath(candidate))):
            try:
                candidate = base.relative_to(root)
                break
            except ValueError:
                continue
        else:
            return None
    rel = PurePosixPath(candidate.as_posix())
    if not rel.parts or ".." in rel.parts:
        return None
    return str(rel)


def _sniff_shebang(path: Path) -> str | None:
    try:
        with path.open("rb") as handle:
            first = handle.readline(256)
    except OSError:
        return None
    return language_from_shebang(first.decode("utf-8", errors="replace"))


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def _log_skip(rel: str, reason: SkipReason) -> None:
    logger.debug("skipped %s (%s)", rel, reason)
