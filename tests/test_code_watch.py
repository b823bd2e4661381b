"""The watcher: changed, deleted, renamed-over and re-created files reach the index after
the debounce; ignore-file edits and new directories too; it stops with delete_project and
close, and survives its own errors."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

import memcore
from memcore.code.indexer import ProjectIndexer

DEADLINE = 8.0  # generous for a loaded CI machine; the debounce itself is 0.5 s


def watchers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("memcore-watch")]


def eventually(check: Callable[[], bool], timeout: float = DEADLINE) -> float:
    """Seconds until ``check()`` held; fails the test after ``timeout``."""
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > timeout:
            pytest.fail(f"not true within {timeout} s")
        time.sleep(0.05)
    return time.monotonic() - started


def names(mem: memcore.Memory, words: str) -> set[str | None]:
    """Names of the chunks of project "p" matching ``words``.

    Each function version has a word of its own, so that what a query finds says which
    version of the file is indexed.
    """
    return {h.name for h in mem.search_code(words, project_id="p", limit=50)}


def paths(mem: memcore.Memory) -> set[str]:
    """Where the two starting functions live now (each has a word of its own)."""
    return {h.file_path for h in mem.search_code("original function", project_id="p")}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "alpha.py").write_text("def alpha_original():\n    return 1\n")
    (root / "pkg" / "beta.py").write_text("def beta_function():\n    return 2\n")
    return root


@pytest.fixture
def watched(mem: memcore.Memory, root: Path) -> Iterator[memcore.Memory]:
    report = mem.index_project(root, project_id="p", watch=True)
    assert report.watching and mem.get_index_status("p").status == "watching"
    yield mem
    assert mem.get_index_status("p").status in {"watching", "indexing"}


def test_a_modified_file_is_reindexed_after_the_debounce(
    watched: memcore.Memory, root: Path
) -> None:
    (root / "pkg" / "alpha.py").write_text("def alpha_renamed():\n    return 3\n")
    waited = eventually(lambda: names(watched, "renamed") == {"alpha_renamed"})
    assert waited >= 0.4  # nothing happens before the 500 ms of quiet
    assert names(watched, "original") == set()
    # The file's chunks are searchable as soon as they are written; the pass's closing
    # status comes after (it also tops up the hubness values), so wait for it.
    eventually(lambda: watched.get_index_status("p").status == "watching")
    status = watched.get_index_status("p")
    assert (status.status, status.total_files, status.indexed_files) == ("watching", 2, 2)


def test_a_deleted_file_leaves_the_index(watched: memcore.Memory, root: Path) -> None:
    (root / "pkg" / "beta.py").unlink()
    eventually(lambda: names(watched, "function") == set())
    eventually(lambda: watched.get_index_status("p").total_files == 1)


def test_editor_save_patterns(watched: memcore.Memory, root: Path) -> None:
    # Write a temporary file and rename it over the original (vim, VS Code, JetBrains).
    temp = root / "pkg" / ".alpha.py.tmp1234"
    temp.write_text("def alpha_atomic():\n    return 4\n")
    temp.replace(root / "pkg" / "alpha.py")  # one rename(2), atomic
    # Delete and re-create within the debounce window.
    (root / "pkg" / "beta.py").unlink()
    (root / "pkg" / "beta.py").write_text("def beta_recreated():\n    return 5\n")
    eventually(lambda: names(watched, "atomic recreated") == {"alpha_atomic", "beta_recreated"})
    assert names(watched, "original function") == set()
    # The pass's counts are written with its closing status, after the chunks.
    eventually(lambda: watched.get_index_status("p").status == "watching")
    assert watched.get_index_status("p").total_files == 2  # the temp file never counted


def test_new_directories_and_ignore_file_edits(watched: memcore.Memory, root: Path) -> None:
    (root / "extra" / "deep").mkdir(parents=True)
    (root / "extra" / "deep" / "gamma.py").write_text("def gamma_added():\n    pass\n")
    eventually(lambda: names(watched, "gamma") == {"gamma_added"})
    (root / ".gitignore").write_text("extra/\n")
    eventually(lambda: names(watched, "gamma") == set())
    (root / ".gitignore").write_text("")
    eventually(lambda: names(watched, "gamma") == {"gamma_added"})
    shutil.rmtree(root / "extra")
    eventually(lambda: names(watched, "gamma") == set())


def test_a_renamed_directory_moves_its_files(watched: memcore.Memory, root: Path) -> None:
    (root / "pkg").rename(root / "lib")
    eventually(
        lambda: (
            watched.get_index_status("p").total_files == 2
            and paths(watched) == {"lib/alpha.py", "lib/beta.py"}
        )
    )


def test_watcher_stops_on_delete_project(watched: memcore.Memory, root: Path) -> None:
    assert len(watchers()) == 1
    watched.delete_project("p")
    assert watchers() == []
    (root / "pkg" / "alpha.py").write_text("def after_delete():\n    pass\n")
    time.sleep(1.0)
    assert watched.search_code("alpha") == []
    watched.index_project(root, project_id="p", watch=True)  # so the fixture's check holds


def test_watcher_stops_on_close(data_dir: Path, root: Path) -> None:
    mem = memcore.Memory(data_dir, model=None)
    mem.index_project(root, project_id="p", watch=True)
    assert len(watchers()) == 1
    mem.close()
    assert watchers() == []
    with memcore.Memory(data_dir, model=None) as again:
        assert again.get_index_status("p").status == "idle"  # settled on close


def test_a_crashed_watcher_status_reads_idle(data_dir: Path, root: Path) -> None:
    with memcore.Memory(data_dir, model=None) as mem:
        mem.index_project(root, project_id="p")
        # What a process killed while watching leaves behind.
        mem._engine.put_project_status("default", "p", str(root), "watching")
    with memcore.Memory(data_dir, model=None) as mem:
        assert mem.get_index_status("p").status == "idle"
        assert [p.status for p in mem.list_projects()] == ["idle"]


def test_reindexing_a_watched_project_replaces_its_watcher(
    watched: memcore.Memory, root: Path
) -> None:
    watched.index_project(root, project_id="p", watch=True)
    assert len(watchers()) == 1
    watched.index_project(root, project_id="p")  # watch=False ends the watching
    assert watchers() == [] and watched.get_index_status("p").status == "idle"
    watched.index_project(root, project_id="p", watch=True)


def test_errors_are_recorded_and_the_watcher_goes_on(
    watched: memcore.Memory, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = ProjectIndexer.apply_changes
    calls = 0

    def flaky(self: ProjectIndexer, paths: object) -> object:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("disk on fire")
        return real(self, paths)  # type: ignore[arg-type]

    monkeypatch.setattr(ProjectIndexer, "apply_changes", flaky)
    (root / "pkg" / "alpha.py").write_text("def alpha_first():\n    pass\n")
    eventually(lambda: watched.get_index_status("p").status == "error")
    assert "disk on fire" in (watched.get_index_status("p").error or "")
    assert len(watchers()) == 1
    (root / "pkg" / "alpha.py").write_text("def alpha_second():\n    pass\n")
    eventually(lambda: names(watched, "second") == {"alpha_second"})
    # Searchable before the pass closes; its closing status clears the error.
    eventually(lambda: watched.get_index_status("p").status == "watching")
    assert watched.get_index_status("p").error is None


def test_an_edit_reembeds_only_the_chunks_it_changed(data_dir: Path, tmp_path: Path) -> None:
    embedded: list[str] = []

    def chunk_embedder(texts: list[str]) -> npt.NDArray[np.float32]:
        embedded.extend(t for t in texts if "def part_" in t)  # chunks, not queries or probes
        return np.array([[len(t) % 7 + 1.0, t.count("e") + 1.0, 1.0] for t in texts], np.float32)

    root = tmp_path / "proj"
    root.mkdir()
    body = "".join(f"def part_{n}():\n    return {n}\n\n\n" for n in ("one", "two", "three"))
    (root / "mod.py").write_text(body)
    with memcore.Memory(data_dir, embedder=chunk_embedder) as mem:
        mem.index_project(root, project_id="p", watch=True)
        assert len(embedded) == 3
        embedded.clear()
        (root / "mod.py").write_text(body.replace("return two", "return 'edited'"))
        eventually(lambda: any("edited" in h.snippet for h in mem.search_code("edited")))
        assert len(embedded) == 1 and "edited" in embedded[0]
