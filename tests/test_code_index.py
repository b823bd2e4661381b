"""Indexing a project: incremental passes, removals, status, ignore rules, symlinks and
what happens when embeddings are missing, slow or failing."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

import memcore
from backends import Backend, both_backends
from memcore.code.indexer import CHUNKING_VERSION, default_project_id

pytestmark = both_backends

PROBE = "memcore dimension probe"  # the service's probe call, not indexing work


class CountingEmbedder:
    """A deterministic bag-of-words embedder that records what it was asked to embed."""

    __name__ = "counting"

    def __init__(self, delay: float = 0.0) -> None:
        self.texts: list[str] = []
        self.fail = False
        self._delay = delay
        self._lock = threading.Lock()

    def __call__(self, texts: list[str]) -> npt.NDArray[np.float32]:
        if texts == [PROBE]:
            time.sleep(self._delay)  # a slow model load
        elif self.fail:
            raise RuntimeError("model crashed")
        else:
            with self._lock:
                self.texts.extend(texts)
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"[a-z]+", text.lower()):
                out[row, hash(word) % 64] += 1.0
            out[row, 63] += 1.0  # never an all-zero row
        return out

    def files(self, root: Path) -> set[str]:
        """The files under ``root`` whose chunks were embedded: those holding the last
        line of an embedded text (its code; the path is not embedded)."""
        sources = {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*.*")}
        last_lines = {t.splitlines()[-1] for t in self.texts}
        return {rel for rel, text in sources.items() if any(line in text for line in last_lines)}


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


PROJECT = {
    "app/auth.py": "class Auth:\n    def login(self, user):\n        return user.token\n",
    "app/util.py": "def slugify(text):\n    return text.lower().replace(' ', '-')\n",
    "lib/parse.rs": (
        "pub fn parse_header(line: &str) -> Option<&str> {\n    line.split(':').next()\n}\n"
    ),
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write(tmp_path / "proj", PROJECT)


@pytest.fixture
def embedder() -> CountingEmbedder:
    return CountingEmbedder()


@pytest.fixture
def emem(backend: Backend, data_dir: Path, embedder: CountingEmbedder) -> Iterator[memcore.Memory]:
    with backend.open(data_dir, embedder=embedder) as m:
        yield m


def chunk_files(mem: memcore.Memory, query: str, project_id: str) -> set[str]:
    return {h.file_path for h in mem.search_code(query, project_id=project_id, limit=50)}


# --- incremental passes ---------------------------------------------------------------


def test_reindex_touches_only_changed_files(
    emem: memcore.Memory, embedder: CountingEmbedder, project: Path
) -> None:
    first = emem.index_project(project)
    assert (first.files_scanned, first.files_indexed, first.files_unchanged) == (3, 3, 0)
    assert first.embedded and first.chunks == first.total_chunks > 0
    assert embedder.files(project) == set(PROJECT)

    embedder.texts.clear()
    again = emem.index_project(project)
    assert (again.files_indexed, again.files_unchanged, again.chunks) == (0, 3, 0)
    assert embedder.texts == []  # nothing re-chunked or re-embedded
    assert again.total_chunks == first.total_chunks

    (project / "app/util.py").write_text("def slugify(text):\n    return text.strip()\n")
    write(project, {"app/new.py": "def fresh():\n    return 1\n"})
    changed = emem.index_project(project)
    assert (changed.files_indexed, changed.files_unchanged, changed.files_removed) == (2, 2, 0)
    assert embedder.files(project) == {"app/util.py", "app/new.py"}


def test_a_text_repeated_across_files_is_embedded_once(
    emem: memcore.Memory, embedder: CountingEmbedder, tmp_path: Path
) -> None:
    # Generated code: each model file has the same helper, which the vector embeds
    # without the header's file line, so one embedding serves every copy.
    helper = "def to_plain(value):\n    return {k: v for k, v in value.items()}\n"
    files = {
        f"models/model_{i:02d}.py": f"{helper}\n\ndef model_{i:02d}_fields():\n    return {i}\n"
        for i in range(40)
    }
    root = write(tmp_path / "generated", files)
    report = emem.index_project(root)
    assert report.embedded and report.files_indexed == 40
    helper_texts = [t for t in embedder.texts if "to_plain" in t]
    assert len(helper_texts) == 1, f"the helper was embedded {len(helper_texts)} times"
    assert len(embedder.texts) == report.total_chunks - 39
    hits = emem.search_code("to_plain value items", project_id=report.project_id, limit=50)
    assert {h.file_path for h in hits if h.name == "to_plain"} == set(files)


def test_deleted_files_drop_their_chunks(mem: memcore.Memory, project: Path) -> None:
    report = mem.index_project(project)
    assert "app/util.py" in chunk_files(mem, "slugify", report.project_id)
    (project / "app/util.py").unlink()
    again = mem.index_project(project)
    assert (again.files_removed, again.files_scanned) == (1, 2)
    assert chunk_files(mem, "slugify", report.project_id) == set()
    assert again.total_chunks < report.total_chunks


def test_files_that_become_ignored_are_removed(mem: memcore.Memory, project: Path) -> None:
    pid = mem.index_project(project).project_id
    (project / ".memoryignore").write_text("lib/\n")
    report = mem.index_project(project)
    assert report.files_removed == 1
    assert chunk_files(mem, "parse header", pid) == set()


def test_delete_project_removes_every_chunk(mem: memcore.Memory, project: Path) -> None:
    report = mem.index_project(project, project_id="p1")
    other = mem.index_project(write(project.parent / "other", {"x.py": "def login(): pass\n"}))
    assert mem.delete_project("p1") == report.total_chunks
    assert mem.search_code("login", project_id="p1") == []
    assert {h.file_path for h in mem.search_code("login")} == {"x.py"}
    assert [p.project_id for p in mem.list_projects()] == [other.project_id]
    with pytest.raises(memcore.NotFoundError):
        mem.get_index_status("p1")
    with pytest.raises(memcore.NotFoundError):
        mem.delete_project("p1")


def test_projects_are_isolated_by_namespace(mem: memcore.Memory, project: Path) -> None:
    mem.index_project(project, project_id="p", namespace="team-a")
    assert mem.search_code("slugify", namespace="team-b") == []
    assert mem.list_projects() == []
    assert [h.name for h in mem.search_code("slugify", namespace="team-a")] == ["slugify"]


# --- project ids and status -------------------------------------------------------------


def test_default_project_id_is_stable_and_readable(mem: memcore.Memory, project: Path) -> None:
    report = mem.index_project(project)
    assert re.fullmatch(r"proj-[0-9a-f]{8}", report.project_id)
    assert report.project_id == default_project_id(project.resolve())
    assert mem.index_project(str(project) + "/").project_id == report.project_id
    twin = write(project.parent / "elsewhere" / "proj", {"a.py": "x = 1\n"})
    assert mem.index_project(twin).project_id != report.project_id


def test_status_goes_from_indexing_to_idle(mem: memcore.Memory, project: Path) -> None:
    seen: list[tuple[str, int, int]] = []

    def progress(p: memcore.IndexProgress) -> None:
        status = mem.get_index_status(pid)
        seen.append((status.status, p.done, p.total))

    pid = default_project_id(project.resolve())
    report = mem.index_project(project, progress=progress)
    assert {s for s, _, _ in seen} == {"indexing"}
    assert seen[-1][1:] == (3, 3)  # the last progress call: every file done
    status = mem.get_index_status(pid)
    assert (status.status, status.total_files, status.indexed_files) == ("idle", 3, 3)
    assert status.total_chunks == report.total_chunks
    assert status.started_at is not None and status.completed_at is not None
    assert status.started_at <= status.completed_at and status.error is None
    assert status.root == str(project.resolve())
    assert status.to_dict()["completed_at"].endswith("Z")
    assert [p.project_id for p in mem.list_projects()] == [pid]


def test_a_failed_pass_is_recorded_as_error(mem: memcore.Memory, project: Path) -> None:
    def broken(_: memcore.IndexProgress) -> None:
        raise RuntimeError("progress bar exploded")

    with pytest.raises(RuntimeError):
        mem.index_project(project, project_id="p", progress=broken)
    status = mem.get_index_status("p")
    assert status.status == "error" and "exploded" in (status.error or "")
    assert mem.index_project(project, project_id="p").files_scanned == 3
    assert mem.get_index_status("p").status == "idle"


def test_a_file_the_core_refuses_is_reported_not_fatal(mem: memcore.Memory, tmp_path: Path) -> None:
    # The core rejects any path containing "..", even inside a file name (a core bug:
    # it should look at path components); until fixed, that is a file it refuses.
    try:
        mem._engine.index_file("default", "probe", "odd..name.py", "python", "h", [])
        pytest.skip("the core accepts '..' inside names now; this test needs another trigger")
    except memcore.InvalidParameterError:
        pass
    root = write(tmp_path / "p", {"ok.py": "def fine(): pass\n", "odd..name.py": "x = 1\n"})
    report = mem.index_project(root, project_id="p")
    assert (report.files_indexed, report.files_failed) == (1, 1)
    assert report.note is not None and "odd..name.py" in report.note
    status = mem.get_index_status("p")
    assert status.status == "idle" and status.indexed_files == 1 and status.total_files == 2


def test_bad_arguments(mem: memcore.Memory, tmp_path: Path) -> None:
    (tmp_path / "file.py").write_text("x = 1\n")
    with pytest.raises(memcore.InvalidParameterError):
        mem.index_project(tmp_path / "missing")
    with pytest.raises(memcore.InvalidParameterError):
        mem.index_project(tmp_path / "file.py")
    with pytest.raises(memcore.InvalidParameterError):
        mem.index_project(tmp_path, project_id="")
    with pytest.raises(memcore.InvalidParameterError):
        mem.index_project(tmp_path, project_id="bad\nid")


# --- embeddings missing, slow or failing ---------------------------------------------------


def test_text_only_store_indexes_for_keywords(mem: memcore.Memory, project: Path) -> None:
    report = mem.index_project(project)
    assert not report.embedded and report.note is None  # no model by choice: no warning
    hit = mem.search_code("slugify")[0]
    assert hit.scores.vector is None and hit.scores.bm25 is not None


def test_a_failing_model_falls_back_to_keywords_then_catches_up(
    emem: memcore.Memory, embedder: CountingEmbedder, project: Path
) -> None:
    assert emem.embeddings is not None and emem.embeddings.wait_ready(10)
    embedder.fail = True
    report = emem.index_project(project, project_id="p")
    assert not report.embedded and report.files_indexed == 3
    assert report.note is not None and "without vectors" in report.note
    status = emem.get_index_status("p")
    assert status.status == "idle" and "without vectors" in (status.error or "")

    embedder.fail = False
    hit = emem.search_code("slugify", project_id="p")[0]  # chunks have no vectors yet
    assert hit.name == "slugify" and hit.scores.vector is None
    healed = emem.index_project(project, project_id="p")
    assert healed.embedded and healed.files_indexed == 3  # vectors added now
    assert emem.get_index_status("p").error is None
    assert emem.index_project(project, project_id="p").files_indexed == 0


def test_a_loading_model_is_waited_for(backend: Backend, data_dir: Path, project: Path) -> None:
    slow = CountingEmbedder(delay=0.5)
    with backend.open(data_dir, embedder=slow) as m:
        report = m.index_project(project, embed_wait=30)
        assert report.embedded and slow.files(project) == set(PROJECT)


def test_a_model_still_loading_after_the_wait_gives_keywords_only(
    backend: Backend, data_dir: Path, project: Path
) -> None:
    slow = CountingEmbedder(delay=1.0)
    with backend.open(data_dir, embedder=slow) as m:
        report = m.index_project(project, embed_wait=0.05)
        assert not report.embedded and "still loading" in (report.note or "")
        assert m.embeddings is not None and m.embeddings.wait_ready(10)
        assert m.index_project(project).files_indexed == 3  # now with vectors


def test_keyword_pass_never_discards_stored_vectors(
    backend: Backend, data_dir: Path, project: Path
) -> None:
    with backend.open(data_dir, embedder=CountingEmbedder()) as m:
        pid = m.index_project(project).project_id
    with backend.open(data_dir, model=None) as m:
        assert m.index_project(project).files_indexed == 0
        stored = m._engine.indexed_files("default", pid)
    assert all(value.endswith(f":{CHUNKING_VERSION}v") for value in stored.values())


# --- ignore rules and symlinks, end to end ---------------------------------------------------


def test_ignore_rules_nested_and_negated(mem: memcore.Memory, tmp_path: Path) -> None:
    root = write(
        tmp_path / "p",
        {
            ".gitignore": "*.gen.py\nbuild/\n",
            "main.py": "def main(): pass\n",
            "schema.gen.py": "def generated(): pass\n",
            "build/out.py": "def built(): pass\n",
            "pkg/.gitignore": "secret_*.py\n!keep.gen.py\n",
            "pkg/secret_key.py": "def secret(): pass\n",
            "pkg/keep.gen.py": "def kept(): pass\n",
            "pkg/other.gen.py": "def other(): pass\n",
            "docs/.memoryignore": "*.md\n",
            "docs/guide.md": "# guide\n",
            "node_modules/dep/index.js": "function dep() {}\n",
        },
    )
    report = mem.index_project(root, project_id="p")
    files = {h.file_path for h in mem.search_code("def function pass", project_id="p", limit=50)}
    assert files == {"main.py", "pkg/keep.gen.py"}
    assert report.files_scanned == 2


def test_symlinks_outside_the_root_and_loops(mem: memcore.Memory, tmp_path: Path) -> None:
    outside = write(tmp_path / "outside", {"secret.py": "def leaked_secret(): pass\n"})
    root = write(tmp_path / "p", {"pkg/inner.py": "def inner_function(): pass\n"})
    (root / "ext").symlink_to(outside, target_is_directory=True)
    (root / "leak.py").symlink_to(outside / "secret.py")
    (root / "pkg" / "loop").symlink_to("..", target_is_directory=True)
    (root / "pkg" / "self").symlink_to(".", target_is_directory=True)
    for follow in (False, True):
        report = mem.index_project(root, project_id=f"p{follow}", follow_symlinks=follow)
        assert report.files_scanned == 1
        assert mem.search_code("leaked secret", project_id=f"p{follow}") == []
        names = {h.name for h in mem.search_code("inner function", project_id=f"p{follow}")}
        assert names == {"inner_function"}


def test_project_root_through_a_symlink(mem: memcore.Memory, project: Path) -> None:
    link = project.parent / "link"
    link.symlink_to(project, target_is_directory=True)
    assert mem.index_project(link).root == str(project.resolve())
    assert mem.index_project(link).project_id == default_project_id(project.resolve())


def test_bm25_after_deletions_with_pending_chunks(mem: memcore.Memory, tmp_path: Path) -> None:
    root = write(tmp_path / "p", {f"{n}.py": f"def {n}_fn():\n    pass\n" for n in "abcd"})
    mem.index_project(root, project_id="p")
    mem._engine.flush()  # one segment: four chunks holding "def"
    for n in "abc":
        (root / f"{n}.py").unlink()
    mem.index_project(root, project_id="p")
    mem._engine.flush()  # three of them deleted, still counted by doc_freq
    write(root, {"e.py": "def e_fn():\n    pass\n"})
    mem.index_project(root, project_id="p")  # one pending chunk
    assert {h.name for h in mem.search_code("def", project_id="p")} == {"d_fn", "e_fn"}


def test_chunks_are_searchable_after_reopening(
    backend: Backend, data_dir: Path, project: Path
) -> None:
    with backend.open(data_dir, model=None) as m:
        m.index_project(project, project_id="p")
        assert [h.name for h in m.search_code("slugify")] == ["slugify"]
    with backend.open(data_dir, model=None) as m:
        assert [h.name for h in m.search_code("slugify")] == ["slugify"]
