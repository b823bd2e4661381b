"""Documents of the interaction log: canonical ids in local and global mode, URLs,
content hashing, the stored-content limit, and the read preview outside a turn."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import memcore
from backends import Backend, both_backends
from memcore._facade.documents import DELETED_HASH, is_url, normalize_url

pytestmark = both_backends


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "auth.py").write_text("def login(): pass\n")
    (root / "README.md").write_text("# proj\n")
    return root


@pytest.fixture
def local(backend: Backend, project: Path) -> Iterator[memcore.Memory]:
    with backend.open(mode="local", project_root=project, model=None) as m:
        yield m


def _read(mem: memcore.Memory, conversation: str, path: object) -> memcore.TurnResult:
    with mem.conversation(conversation) as conv, conv.turn(user=f"look at {path}") as turn:
        turn.read_document(path)
    return turn.result


# -- local mode ----------------------------------------------------------------------------


def test_local_ids_are_relative_posix_and_normalised(
    backend: Backend, local: memcore.Memory, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert local.path == backend.store_dir(project / ".memcore")
    expected = "src/auth.py"
    assert local.document_id("src/auth.py") == expected
    assert local.document_id("./src/pkg/../auth.py") == expected
    assert local.document_id(project / "src" / "auth.py") == expected
    # Relative paths are relative to the project root, not the process's cwd.
    monkeypatch.chdir(project / "src")
    assert local.document_id("src/auth.py") == expected
    # Files that do not exist yet still get an id (an agent may be about to create them).
    assert local.document_id("src/new/module.py") == "src/new/module.py"


def test_local_symlinks_resolve_to_their_target(local: memcore.Memory, project: Path) -> None:
    (project / "link.py").symlink_to(project / "src" / "auth.py")
    (project / "srcdir").symlink_to(project / "src", target_is_directory=True)
    assert local.document_id("link.py") == "src/auth.py"
    assert local.document_id("srcdir/auth.py") == "src/auth.py"


def test_local_ids_agree_with_realpath_for_every_shape_of_path(
    local: memcore.Memory, project: Path, tmp_path: Path
) -> None:
    """The fast path for plain relative paths must give realpath's answer, also when a
    symlink sits deep in the path, dangles, or appears after an earlier call."""
    (project / "src" / "pkg" / "deep.py").symlink_to(project / "src" / "auth.py")
    (project / "dangling.py").symlink_to(project / "nowhere.py")
    (tmp_path / "elsewhere").mkdir()
    (project / "src" / "pkg" / "out").symlink_to(tmp_path / "elsewhere")
    paths = [
        "src/auth.py",
        "src/pkg/deep.py",
        "dangling.py",
        "src/auth.py/not/a/dir.py",
        "src/missing/deeper/x.py",
        "src//auth.py",
        "src/pkg/",
    ]
    root = str(project.resolve())
    for path in paths:
        expected = Path(os.path.realpath(f"{root}/{path}")).relative_to(root)
        assert local.document_id(path) == expected.as_posix(), path
    with pytest.raises(memcore.InvalidParameterError, match="outside the project root"):
        local.document_id("src/pkg/out/x.py")
    assert local.document_id("src/later/x.py") == "src/later/x.py"
    (project / "src" / "later").symlink_to(project / "src" / "pkg", target_is_directory=True)
    assert local.document_id("src/later/x.py") == "src/pkg/x.py"


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/hostname", "src/../../x.py"])
def test_local_paths_outside_the_root_are_refused(local: memcore.Memory, path: str) -> None:
    with pytest.raises(memcore.InvalidParameterError, match="outside the project root") as info:
        local.document_id(path)
    assert info.value.details == {"field": "path"}


def test_local_symlink_leaving_the_root_is_refused(
    local: memcore.Memory, project: Path, tmp_path: Path
) -> None:
    (tmp_path / "secret.txt").write_text("x")
    (project / "escape.txt").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(memcore.InvalidParameterError, match="outside the project root"):
        local.document_id("escape.txt")
    # Nothing is recorded when a turn reads it: the turn is never committed.
    with pytest.raises(memcore.InvalidParameterError):
        _read(local, "c1", "escape.txt")
    assert local.list_turns("c1") == []


@pytest.mark.parametrize("bad", ["", "   ", ".", 42, None, "a\x00b"])
def test_bad_document_references(local: memcore.Memory, bad: object) -> None:
    with pytest.raises(memcore.InvalidParameterError):
        local.document_id(bad)


# -- global mode ---------------------------------------------------------------------------


def test_global_mode_deduplicates_one_absolute_path(
    mem: memcore.Memory, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = (project / "src" / "auth.py").resolve()
    (project / "alias.py").symlink_to(target)
    monkeypatch.chdir(project / "src" / "pkg")
    refs = ["../auth.py", str(target), str(project / "alias.py"), project / "src/./pkg/../auth.py"]
    assert {mem.document_id(r) for r in refs} == {target.as_posix()}
    for i, ref in enumerate(refs):
        _read(mem, f"conv-{i}", ref)
    history = mem.get_document_history(target)
    assert len(history.versions) == 1, "same content through four paths: one version"
    assert history.familiarity == len(refs)
    assert {t.conversation_id for t in history.versions[0].touched_by} == {
        f"conv-{i}" for i in range(len(refs))
    }


def test_global_mode_keeps_different_projects_apart(mem: memcore.Memory, tmp_path: Path) -> None:
    a, b = tmp_path / "a" / "auth.py", tmp_path / "b" / "auth.py"
    for f in (a, b):
        f.parent.mkdir()
        f.write_text("same text")
    assert mem.document_id(a) != mem.document_id(b)


# -- URLs ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("HTTPS://Example.COM:443/a/./b/../c?q=1#frag", "https://example.com/a/c?q=1"),
        ("http://example.com", "http://example.com/"),
        ("http://example.com:8080/x", "http://example.com:8080/x"),
        ("https://user@Host.io/%7euser/%2f", "https://user@host.io/~user/%2F"),
        ("https://example.com/docs/", "https://example.com/docs/"),
        ("s3://My-Bucket/key/../other.json", "s3://my-bucket/other.json"),
        ("file:///home/u/x.txt#L3", "file:///home/u/x.txt"),
        ("http://[::1]:80/", "http://[::1]/"),
        ("URN:isbn:0451450523", "urn:isbn:0451450523"),
    ],
)
def test_urls_are_normalised(raw: str, canonical: str) -> None:
    assert normalize_url(raw) == canonical


@pytest.mark.parametrize("mode", ["global", "local"])
def test_urls_are_stored_as_is_in_both_modes(backend: Backend, tmp_path: Path, mode: str) -> None:
    root = tmp_path / "p"
    root.mkdir()
    with backend.open(tmp_path / "d", mode=mode, project_root=root, model=None) as m:  # type: ignore[arg-type]
        with m.conversation("c") as conv, conv.turn(user="read the docs") as turn:
            read = turn.read_document("https://Docs.Example.com:443/api#auth", content="v1 docs")
        assert read.path == "https://docs.example.com/api"
        history = m.get_document_history("HTTPS://DOCS.example.com/./api#x")
        assert history.path == "https://docs.example.com/api"


def test_url_detection() -> None:
    assert is_url("https://x.org") and is_url("s3://b/k") and is_url("urn:x:y")
    assert not is_url("src/auth.py") and not is_url("C:\\code\\a.py") and not is_url("a:b.txt")


def test_a_url_needs_its_content(mem: memcore.Memory) -> None:
    with pytest.raises(memcore.InvalidParameterError, match="content"):
        mem.read_document("https://example.com/page")
    with pytest.raises(memcore.InvalidParameterError, match="invalid port"):
        mem.document_id("http://example.com:99999/")


# -- content -------------------------------------------------------------------------------


def test_hash_is_sha256_of_the_bytes(local: memcore.Memory, project: Path) -> None:
    raw = b"caf\xc3\xa9 \xff\xfe binary tail"
    (project / "blob.bin").write_bytes(raw)
    read = local.read_document("blob.bin")
    assert read.content_hash == hashlib.sha256(raw).hexdigest()
    assert read.size == len(raw)
    assert read.content is not None and read.content.startswith("café ")
    # Text given directly hashes like the same text read from a file.
    text = local.read_document("src/auth.py", "def login(): pass\n")
    assert text.content_hash == local.read_document("src/auth.py").content_hash


def test_large_contents_keep_only_their_hash(local: memcore.Memory, project: Path) -> None:
    (project / "big.txt").write_text("x" * (64 * 1024 + 1))
    (project / "small.txt").write_text("small")
    with local.conversation("c") as conv, conv.turn(user="read both") as turn:
        turn.read_document("big.txt")
        turn.read_document("small.txt")
    big, small = (p.documents[0] for p in turn.result.turn.procedures)
    assert not big.has_content and big.size == 64 * 1024 + 1
    assert small.has_content and local.get_document_content(small.id) == "small"
    assert local.get_document_content(big.id) is None
    local.document_content_limit = 0
    with local.conversation("c") as conv, conv.turn(user="again") as turn:
        turn.read_document("small.txt", content="changed")
    assert not turn.result.turn.procedures[0].documents[0].has_content
    local.document_content_limit = -1
    with pytest.raises(memcore.InvalidParameterError, match="document_content_limit"):
        local.conversation("c").turn(user="x")


def test_missing_files_and_directories(local: memcore.Memory) -> None:
    with pytest.raises(memcore.NotFoundError, match="not found") as info:
        local.read_document("src/nope.py")
    assert info.value.details == {"kind": "Document", "id": "src/nope.py"}
    with pytest.raises(memcore.InvalidParameterError, match="directory"):
        local.read_document("src")


def test_a_deleted_file_is_a_version_by_the_agent(local: memcore.Memory, project: Path) -> None:
    with local.conversation("c") as conv, conv.turn(user="remove the readme") as turn:
        turn.read_document("README.md")
        (project / "README.md").unlink()
        (gone,) = turn.procedure("DELETE", args={"path": "README.md"}, documents=["README.md"])
    assert gone.content_hash == DELETED_HASH and gone.content is None
    history = local.get_document_history("README.md")
    assert [(v.version, v.provenance) for v in history.versions] == [(1, "external"), (2, "agent")]


# -- the read preview ------------------------------------------------------------------------


def test_read_document_outside_a_turn_records_nothing(local: memcore.Memory, project: Path) -> None:
    first = local.read_document("src/auth.py")
    assert (first.version, first.previous_version, first.changed) == (1, None, False)
    assert first.familiarity == 0 and first.versions_since_seen is None
    with pytest.raises(memcore.NotFoundError):
        local.get_document_history("src/auth.py")
    _read(local, "c1", "src/auth.py")
    same = local.read_document("src/auth.py", conversation_id="c1")
    assert (same.version, same.changed, same.versions_since_seen) == (1, False, 0)
    (project / "src" / "auth.py").write_text("def login(): return 1\n")
    moved = local.read_document("src/auth.py", conversation_id="c1")
    assert (moved.version, moved.previous_version, moved.changed) == (2, 1, True)
    assert moved.provenance == "external" and moved.versions_since_seen == 1
    assert moved.familiarity == 1
    assert len(local.get_document_history("src/auth.py").versions) == 1
