"""Scanning a project: ignore rules, language detection, skipped files, symlinks."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from memcore.code import (
    IgnoreRules,
    SkipReason,
    SourceFile,
    detect_language,
    read_source_file,
    scan_project,
    should_index,
)
from memcore.errors import InvalidParameterError


def make_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def scanned(root: Path, **kwargs: Any) -> list[str]:
    return [f.rel_path for f in scan_project(root, **kwargs)]


def all_files(root: Path) -> list[str]:
    found = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        found += [Path(directory, f).relative_to(root).as_posix() for f in files]
    return sorted(found)


# --- ignore rules ---------------------------------------------------------------------


@pytest.fixture
def gitignored(tmp_path: Path) -> Path:
    return make_tree(
        tmp_path,
        {
            ".gitignore": "*.gen.py\nbuild/\n/top_only.py\ndocs/*.md\n!docs/keep.md\nlogs/\n",
            "app.py": "x = 1\n",
            "top_only.py": "x = 1\n",
            "build/out.py": "x = 1\n",
            "build.py": "x = 1\n",
            "docs/a.md": "# a\n",
            "docs/keep.md": "# keep\n",
            "logs": "#!/bin/sh\necho log\n",  # a file: `logs/` only matches directories
            "pkg/.gitignore": "!special.gen.py\nlocal.py\n",
            "pkg/a.py": "x = 1\n",
            "pkg/local.py": "x = 1\n",
            "pkg/other.gen.py": "x = 1\n",
            "pkg/special.gen.py": "x = 1\n",
            "pkg/top_only.py": "x = 1\n",
            "pkg/build/deep.py": "x = 1\n",
            "pkg/sub/special.gen.py": "x = 1\n",
            "pkg/sub/deeper.gen.py": "x = 1\n",
        },
    )


def test_gitignore_rules_nested_negation_anchoring_and_directories(gitignored: Path) -> None:
    assert scanned(gitignored) == [
        "app.py",
        "build.py",
        "logs",
        "docs/keep.md",
        "pkg/a.py",
        "pkg/special.gen.py",
        "pkg/top_only.py",
        # the nested negation covers its whole subtree, as in git
        "pkg/sub/special.gen.py",
    ]


def test_should_index_matches_the_scan_for_every_file(gitignored: Path) -> None:
    found = set(scanned(gitignored))
    rules = IgnoreRules(gitignored)
    for rel in all_files(gitignored):
        decided = should_index(gitignored, rel, rules=rules) and (
            read_source_file(gitignored, rel) is not None
        )
        assert decided == (rel in found), rel


def test_file_in_excluded_directory_cannot_be_reincluded(tmp_path: Path) -> None:
    make_tree(tmp_path, {".gitignore": "build/\n!build/keep.py\n", "build/keep.py": "x = 1\n"})
    assert scanned(tmp_path) == []
    make_tree(tmp_path, {".gitignore": "build/*\n!build/keep.py\n", "build/drop.py": "x\n"})
    assert scanned(tmp_path) == ["build/keep.py"]


def test_memoryignore_applies_like_gitignore_and_overrides_it(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        {
            ".gitignore": "generated/\n",
            ".memoryignore": "secret.py\n!generated/\n",
            "secret.py": "KEY = 1\n",
            "generated/api.py": "x = 1\n",
            "lib/.memoryignore": "*.py\n!keep.py\n",
            "lib/drop.py": "x = 1\n",
            "lib/keep.py": "x = 1\n",
        },
    )
    assert scanned(tmp_path) == ["generated/api.py", "lib/keep.py"]


def test_always_skipped_and_default_excludes(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        {
            ".git/hooks/pre-commit.py": "x = 1\n",
            ".memcore/cache.py": "x = 1\n",
            "node_modules/left-pad/index.js": "module.exports = 1;\n",
            "web/node_modules/x/index.js": "module.exports = 1;\n",
            "__pycache__/m.py": "x = 1\n",
            "package-lock.json": "{}\n",
            "app.min.js": "var a=1;\n",
            "main.py": "x = 1\n",
        },
    )
    assert scanned(tmp_path) == ["main.py"]
    # defaults sit beneath the project's own rules, so they can be negated
    (tmp_path / ".gitignore").write_text("!node_modules/\n!.git/\n")
    assert "node_modules/left-pad/index.js" in scanned(tmp_path)
    assert not any(p.startswith(".git/") for p in scanned(tmp_path))


def test_invalidate_rereads_changed_ignore_files(tmp_path: Path) -> None:
    make_tree(tmp_path, {"a.py": "x = 1\n", "b.py": "x = 1\n"})
    rules = IgnoreRules(tmp_path)
    assert should_index(tmp_path, "a.py", rules=rules)
    (tmp_path / ".gitignore").write_text("a.py\n")
    assert should_index(tmp_path, "a.py", rules=rules)  # cached until told
    rules.invalidate()
    assert not should_index(tmp_path, "a.py", rules=rules)
    assert scanned(tmp_path, rules=rules) == ["b.py"]


def test_should_index_path_forms(tmp_path: Path) -> None:
    make_tree(tmp_path, {"src/a.py": "x = 1\n", "notes.xyz": "?\n"})
    assert should_index(tmp_path, "src/a.py")
    assert should_index(tmp_path, tmp_path / "src" / "a.py")
    assert should_index(tmp_path, "src/deleted_since.py")  # judged by name alone
    assert not should_index(tmp_path, "notes.xyz")  # unknown language
    assert not should_index(tmp_path, "../elsewhere.py")
    assert not should_index(tmp_path, tmp_path.parent / "elsewhere.py")
    assert not should_index(tmp_path, ".git/x.py")


# --- content checks -----------------------------------------------------------------


def test_binary_huge_generated_and_unknown_files_are_skipped(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        {
            "ok.py": "x = 1\n",
            "nul.py": b"x = 1\n\x00\x01\x02",
            "latin1.py": "caf\xe9 = 1\n".encode("latin-1"),
            "big.py": "x = 1\n" * 400,
            "minified.js": "var a=1;" * 200,
            "image.png": b"\x89PNG\r\n",
            "data.xyz": "1,2,3\n",
        },
    )
    skipped: dict[str, SkipReason] = {}
    found = scanned(
        tmp_path,
        max_file_bytes=2000,
        max_line_chars=1000,
        on_skip=lambda rel, reason: skipped.__setitem__(rel, reason),
    )
    assert found == ["ok.py"]
    assert skipped == {
        "nul.py": SkipReason.BINARY,
        "latin1.py": SkipReason.BINARY,
        "big.py": SkipReason.TOO_LARGE,
        "minified.js": SkipReason.GENERATED,
        "image.png": SkipReason.UNKNOWN_LANGUAGE,
        "data.xyz": SkipReason.UNKNOWN_LANGUAGE,
    }


def test_source_file_fields(tmp_path: Path) -> None:
    raw = "\ufeffdef f():\r\n    return 1\r\n".encode()
    make_tree(tmp_path, {"pkg/mod.py": raw, "bin/tool": "#!/usr/bin/env python3\nprint(1)\n"})
    files = {f.rel_path: f for f in scan_project(tmp_path)}
    source = files["pkg/mod.py"]
    assert isinstance(source, SourceFile)
    assert source.language == "python"
    assert source.abs_path == tmp_path.resolve() / "pkg" / "mod.py"
    assert source.size == len(raw)
    assert source.content_hash == hashlib.sha256(raw).hexdigest()
    assert source.mtime_ns == (tmp_path / "pkg/mod.py").stat().st_mtime_ns
    assert source.text == "def f():\n    return 1\n"  # BOM dropped, LF line endings
    assert files["bin/tool"].language == "python"  # from the shebang


def test_scan_order_is_stable_files_before_subdirectories(tmp_path: Path) -> None:
    make_tree(tmp_path, {"b.py": "", "a/z.py": "", "a.py": "", "a/b/c.py": "", "c/d.py": ""})
    assert scanned(tmp_path) == ["a.py", "b.py", "a/z.py", "a/b/c.py", "c/d.py"]


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("src/lib.rs", "rust"),
        ("a/b.tsx", "tsx"),
        ("x.PY", "python"),
        ("Dockerfile", "dockerfile"),
        ("include/x.hpp", "cpp"),
        ("Program.cs", "c_sharp"),
        ("README", None),
        ("data.bin", None),
    ],
)
def test_detect_language(path: str, language: str | None) -> None:
    assert detect_language(path) == language


# --- roots and symlinks -------------------------------------------------------------


def test_root_must_be_an_existing_directory(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match="does not exist") as info:
        list(scan_project(tmp_path / "missing"))
    assert info.value.code == "INVALID_PARAMETER"
    (tmp_path / "file.py").write_text("x = 1\n")
    with pytest.raises(InvalidParameterError, match="not a directory"):
        list(scan_project(tmp_path / "file.py"))
    with pytest.raises(InvalidParameterError):
        should_index(tmp_path / "missing", "a.py")


def test_rules_of_another_root_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with pytest.raises(InvalidParameterError, match="same project root"):
        list(scan_project(tmp_path / "a", rules=IgnoreRules(tmp_path / "b")))


@pytest.mark.timeout(20)
@pytest.mark.parametrize("follow", [False, True])
def test_symlink_loops_terminate(tmp_path: Path, follow: bool) -> None:
    make_tree(tmp_path, {"a/x.py": "x = 1\n", "b/y.py": "y = 1\n"})
    (tmp_path / "a" / "up").symlink_to("..", target_is_directory=True)
    (tmp_path / "a" / "self").symlink_to(".", target_is_directory=True)
    (tmp_path / "a" / "to_b").symlink_to("../b", target_is_directory=True)
    (tmp_path / "b" / "to_a").symlink_to("../a", target_is_directory=True)
    (tmp_path / "a" / "dangling.py").symlink_to("nowhere.py")
    found = scanned(tmp_path, follow_symlinks=follow)
    if follow:
        # each directory is entered through links at most once, and never from inside itself
        assert found == ["a/x.py", "a/to_b/y.py", "b/y.py", "b/to_a/x.py"]
    else:
        assert found == ["a/x.py", "b/y.py"]


@pytest.mark.parametrize("follow", [False, True])
def test_symlinks_leaving_the_root_are_not_followed(tmp_path: Path, follow: bool) -> None:
    outside = make_tree(tmp_path / "outside", {"secret.py": "KEY = 1\n"})
    root = make_tree(tmp_path / "root", {"main.py": "x = 1\n", "pkg/inner.py": "y = 1\n"})
    (root / "ext").symlink_to(outside, target_is_directory=True)
    (root / "leak.py").symlink_to(outside / "secret.py")
    (root / "alias").symlink_to(root / "pkg", target_is_directory=True)
    skipped: dict[str, SkipReason] = {}
    found = scanned(root, follow_symlinks=follow, on_skip=lambda r, s: skipped.__setitem__(r, s))
    assert skipped["ext"] == skipped["leak.py"] == SkipReason.SYMLINK
    assert not any("secret" in p for p in found)
    expected = (
        ["main.py", "alias/inner.py", "pkg/inner.py"] if follow else ["main.py", "pkg/inner.py"]
    )
    assert found == expected
    assert read_source_file(root, "leak.py", follow_symlinks=follow) is None
    assert read_source_file(root, "ext/secret.py", follow_symlinks=follow) is None
    reasons: list[SkipReason] = []
    assert (
        read_source_file(root, "../outside/secret.py", on_skip=lambda _, r: reasons.append(r))
        is None
    )
    assert (
        read_source_file(root, outside / "secret.py", on_skip=lambda _, r: reasons.append(r))
        is None
    )
    assert reasons == [SkipReason.OUTSIDE_ROOT, SkipReason.OUTSIDE_ROOT]
    through_link = read_source_file(root, "alias/inner.py", follow_symlinks=follow)
    assert (through_link.rel_path if through_link else None) == (
        "alias/inner.py" if follow else None
    )
