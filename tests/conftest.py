"""Shared fixtures: a fresh data directory per test, and the real test models
from ../shared/models (tests that need one skip with a reason when absent;
the locations live in embeddings_support.models)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

import memcore
from embeddings_support.models import MINILM_DIR, POTION_DIR, require_model

__all__ = ["MINILM_DIR", "POTION_DIR", "require_model", "unit"]


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """An empty data directory for one test."""
    return tmp_path / "store"


@pytest.fixture
def mem(data_dir: Path) -> Iterator[memcore.Memory]:
    """A text-only Memory (no embedding model) on a fresh directory; vectors
    can still be passed explicitly."""
    with memcore.Memory(data_dir, model=None) as m:
        yield m


@pytest.fixture(scope="session")
def _graph_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache of derived model graphs for the whole run: MiniLM's int8 graph is made
    once (about 2 s), as it is once per machine outside the tests."""
    return tmp_path_factory.mktemp("memcore-cache")


@pytest.fixture(autouse=True)
def _isolated_data_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, _graph_cache: Path
) -> None:
    """Never touch the real ~/.local/share/memcore or ~/.cache/memcore from a test."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.delenv("MEMCORE_DATA_DIR", raising=False)
    monkeypatch.setenv("MEMCORE_CACHE_DIR", str(_graph_cache))


def unit(seed: int, dim: int = 8) -> npt.NDArray[np.float32]:
    """A deterministic random unit vector."""
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)
