"""Where data lives: explicit path > MEMCORE_DATA_DIR > the per-user default,
and local mode's <project_root>/.memcore/. Bad options fail fast."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memcore import InvalidParameterError, Memory
from memcore.config import default_data_dir, find_project_root


def test_default_data_dir_follows_xdg_data_home(tmp_path: Path) -> None:
    # conftest points XDG_DATA_HOME at tmp_path / "xdg-data".
    expected = tmp_path / "xdg-data" / "memcore"
    assert default_data_dir() == expected
    with Memory(model=None) as mem:
        assert mem.path == expected
        assert mem.project_root is None
        mem.store_memory("in the default place")
    assert (expected / "memcore.db").is_file()
    with Memory(model=None) as mem:
        assert [m.content for m in mem.list_memories()] == ["in the default place"]


def test_default_data_dir_without_xdg_is_under_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    expected = tmp_path / "home" / ".local" / "share" / "memcore"
    assert default_data_dir() == expected
    with Memory(model=None) as mem:
        assert mem.path == expected
    assert (expected / "memcore.db").is_file()


def test_memcore_data_dir_overrides_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCORE_DATA_DIR", str(tmp_path / "from-env"))
    with Memory(model=None) as mem:
        assert mem.path == tmp_path / "from-env"
    assert (tmp_path / "from-env" / "memcore.db").is_file()
    assert not (tmp_path / "xdg-data").exists()


def test_memcore_data_dir_expands_the_home_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MEMCORE_DATA_DIR", "~/memories")
    with Memory(model=None) as mem:
        assert mem.path == tmp_path / "home" / "memories"


def test_an_explicit_path_wins_over_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCORE_DATA_DIR", str(tmp_path / "from-env"))
    with Memory(tmp_path / "explicit", model=None) as mem:
        assert mem.path == tmp_path / "explicit"
    assert (tmp_path / "explicit" / "memcore.db").is_file()
    assert not (tmp_path / "from-env").exists()


def test_a_relative_explicit_path_is_resolved_against_the_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with Memory("relative/store", model=None) as mem:
        assert mem.path == tmp_path / "relative" / "store"
        assert mem.path.is_absolute()


def test_an_empty_memcore_data_dir_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCORE_DATA_DIR", "")
    with Memory(model=None) as mem:
        assert mem.path == tmp_path / "xdg-data" / "memcore"


# -- local mode ---------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project root marked by .git, with a nested source folder."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "src" / "pkg" / "deep").mkdir(parents=True)
    return root


def test_local_mode_finds_the_root_from_a_nested_cwd(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project / "src" / "pkg" / "deep")
    with Memory(mode="local", model=None) as mem:
        assert mem.project_root == project
        assert mem.path == project / ".memcore"
        mem.store_memory("lives with the project")
    assert (project / ".memcore" / "memcore.db").is_file()
    assert not (project / "src" / "pkg" / "deep" / ".memcore").exists()


def test_local_mode_with_an_explicit_root(project: Path, tmp_path: Path) -> None:
    with Memory(mode="local", project_root=project / "src", model=None) as mem:
        assert mem.project_root == project / "src"
        assert mem.path == project / "src" / ".memcore"


def test_local_mode_ignores_memcore_data_dir(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCORE_DATA_DIR", str(tmp_path / "from-env"))
    with Memory(mode="local", project_root=project, model=None) as mem:
        assert mem.path == project / ".memcore"
    assert not (tmp_path / "from-env").exists()


def test_local_mode_with_an_explicit_path(project: Path, tmp_path: Path) -> None:
    with Memory(tmp_path / "elsewhere", mode="local", project_root=project, model=None) as mem:
        assert mem.path == tmp_path / "elsewhere"
        assert mem.project_root == project


def test_an_existing_memcore_folder_marks_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "no-git"
    (root / ".memcore").mkdir(parents=True)
    (root / "a" / "b").mkdir(parents=True)
    monkeypatch.chdir(root / "a" / "b")
    assert find_project_root() == root
    with Memory(mode="local", model=None) as mem:
        assert mem.path == root / ".memcore"


def test_a_git_file_marks_the_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Worktrees and submodules have a .git file, not a folder."""
    root = tmp_path / "worktree"
    (root / "src").mkdir(parents=True)
    (root / ".git").write_text("gitdir: /somewhere/else\n")
    monkeypatch.chdir(root / "src")
    assert find_project_root() == root


def test_the_nearest_root_wins(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inner = project / "src" / "pkg"
    (inner / ".git").mkdir()
    monkeypatch.chdir(inner / "deep")
    assert find_project_root() == inner


def test_without_a_marker_the_cwd_is_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    monkeypatch.chdir(bare)
    if find_project_root() != bare:
        pytest.skip("a .git or .memcore above the temporary directory marks another root")
    with Memory(mode="local", model=None) as mem:
        assert mem.path == bare / ".memcore"


def test_moving_the_project_keeps_its_memory(project: Path, tmp_path: Path) -> None:
    with Memory(mode="local", project_root=project, model=None) as mem:
        m = mem.store_memory("the build uses make").id
    moved = tmp_path / "moved" / "project"
    moved.parent.mkdir()
    shutil.move(project, moved)
    with Memory(mode="local", project_root=moved, model=None) as mem:
        assert mem.get_memory(m).content == "the build uses make"


def test_a_project_root_that_is_not_a_directory_is_refused(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file.txt"
    not_a_dir.write_text("x")
    for root in (not_a_dir, tmp_path / "missing"):
        with pytest.raises(InvalidParameterError, match="not a directory") as info:
            Memory(mode="local", project_root=root, model=None)
        assert info.value.details == {"field": "project_root"}
    assert not (tmp_path / "missing").exists()


# -- bad options ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["cloud", "", "LOCAL", None])
def test_a_bad_mode_is_refused_before_anything_is_created(tmp_path: Path, mode: object) -> None:
    with pytest.raises(InvalidParameterError, match="Use 'global' or 'local'") as info:
        Memory(tmp_path / "store", mode=mode, model=None)  # type: ignore[arg-type]
    assert info.value.details == {"field": "mode"}
    assert not (tmp_path / "store").exists()
    assert not (tmp_path / "xdg-data").exists()


def test_a_bad_durability_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match="Use 'normal' or 'full'") as info:
        Memory(tmp_path / "store", durability="fast", model=None)  # type: ignore[arg-type]
    assert info.value.details == {"field": "durability"}
    assert not (tmp_path / "store").exists()


def test_force_model_and_reset_memory_together_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match="not both"):
        Memory(tmp_path / "store", model=None, force_model=True, reset_memory=True)
    assert not (tmp_path / "store").exists()
