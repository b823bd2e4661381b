"""Calls made while the embedding model loads: the library waits for it, the MCP server
waits a few seconds and then ranks by keywords (saying so) or explains the error.

A load is slowed for real, not by replacing memcore's code: the first load on a machine
derives MiniLM's int8 graph under ``MEMCORE_CACHE_DIR``, and that derivation takes the
cache folder's lock file first (two processes must not derive at once). A test that holds
the lock keeps the model loading for as long as it likes, then lets it finish.
"""

from __future__ import annotations

import fcntl
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import memcore
from embeddings_support.hub_env import use_hub
from memcore.embeddings.int8_graph import DERIVE_LOCK
from test_mcp_support import MINILM_DIR, SyncClient, server_env, stdio_server

READY_TIMEOUT = 120.0
FACT = "The deploy key for the billing service rotates every Friday"


@contextmanager
def held_derivation(cache: Path) -> Iterator[Callable[[], None]]:
    """Hold the int8 derivation lock of ``cache`` (a MEMCORE_CACHE_DIR) until the returned
    function is called or the block ends."""
    graphs = cache / "graphs"
    graphs.mkdir(parents=True, exist_ok=True)
    with (graphs / DERIVE_LOCK).open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield lambda: fcntl.flock(handle, fcntl.LOCK_UN)
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _require_minilm() -> None:
    if not (MINILM_DIR / "model.onnx").is_file():
        pytest.skip(f"test model not found at {MINILM_DIR}")


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No hub, an empty derived-graph cache (so the model takes its first-start path) and
    the default data directory in tmp_path; returns the cache folder."""
    use_hub(monkeypatch, hf_home=tmp_path / "hf", offline=True)
    cache = tmp_path / "cache"
    monkeypatch.setenv("MEMCORE_CACHE_DIR", str(cache))
    monkeypatch.setenv("MEMCORE_DATA_DIR", str(tmp_path / "data"))
    return cache


# -- the library -------------------------------------------------------------------------


def test_the_readme_quick_start_works_verbatim(offline: Path) -> None:
    # The default model comes from its PyPI packages; the call right after Memory()
    # waits for it instead of raising "not ready".
    mem = memcore.Memory()
    try:
        r = mem.store_memory("User prefers TypeScript")
        assert r.id.startswith("mem_") and r.similar == [] and r.action_required is None
        assert mem.embeddings is not None and mem.embeddings.status == "ready"
        hits = mem.recall("what language does the user like?")
        assert [h.memory.content for h in hits] == ["User prefers TypeScript"]
        assert hits[0].scores.vector is not None
    finally:
        mem.close()


def test_a_load_still_running_after_the_wait_is_explained(offline: Path, tmp_path: Path) -> None:
    _require_minilm()
    store = tmp_path / "store"
    with (
        held_derivation(offline) as release,
        memcore.Memory(store, model_path=MINILM_DIR, embedding_wait=0.2) as mem,
    ):
        # Stored anyway, without its vector; the result says why it is pending.
        early = mem.store_memory(FACT)
        assert early.embedding == "pending" and early.pending_reason is not None
        assert "'minilm' is still loading (waited 0.2 s)" in early.pending_reason
        assert "embedding_wait" in early.pending_reason  # how to wait longer
        assert [h.memory.id for h in mem.recall("deploy key", semantic=False)] == [early.id]
        release()  # the derivation goes on
        assert mem.embeddings is not None and mem.embeddings.wait_ready(READY_TIMEOUT)
        assert mem._backfill is not None and mem._backfill.wait_idle(READY_TIMEOUT)
        assert [h.memory.id for h in mem.search(FACT, limit=1)] == [early.id]
        assert mem.store_memory("The user likes green tea").embedding == "stored"


# -- the MCP server ----------------------------------------------------------------------


def _server_args(store: Path, *extra: str) -> list[str]:
    return ["--data-dir", str(store), "--model-path", str(MINILM_DIR), *extra]


def _wait_ready(client: SyncClient) -> dict[str, Any]:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        embedding = client.ok("get_status")["embedding"]
        if embedding["status"] != "loading":
            return dict(embedding)
        time.sleep(0.05)
    raise AssertionError(f"the model did not load within {READY_TIMEOUT} s")


def test_an_mcp_store_right_after_initialize_succeeds(tmp_path: Path) -> None:
    _require_minilm()
    home = tmp_path / "home"
    env = server_env(home, MEMCORE_CACHE_DIR=str(tmp_path / "cache"))
    # A generous wait: on a busy machine the first start's derivation may take a while.
    args = _server_args(tmp_path / "store", "--embedding-wait", str(READY_TIMEOUT))
    with stdio_server(args, env, tmp_path / "server.log") as client:
        stored = client.ok("store_memory", {"content": FACT})
        assert stored["created"]["content"] == FACT
        found = client.ok("search_memories", {"query": "when is the deploy key rotated?"})
        assert "degraded" not in found
        assert [m["content"] for m in found["memories"]] == [FACT]


def test_recall_during_a_slow_load_is_degraded_then_whole(tmp_path: Path) -> None:
    _require_minilm()
    store, cache = tmp_path / "store", tmp_path / "cache"
    with memcore.Memory(store, model=None) as seed:  # a memory to find by keywords
        seed.store_memory(FACT)
    env = server_env(tmp_path / "home", MEMCORE_CACHE_DIR=str(cache))
    args = _server_args(store, "--embedding-wait", "0.2")
    with held_derivation(cache), stdio_server(args, env, tmp_path / "server.log") as client:
        assert client.ok("get_status")["embedding"]["status"] == "loading"
        recalled = client.ok("recall", {"query": "deploy key"})
        assert recalled["degraded"] == "keywords only: embedding model loading"
        assert [r["content"] for r in recalled["results"]] == [FACT]
        found = client.ok("search_memories", {"query": "deploy key"})
        assert found["degraded"] == "keywords only: embedding model loading"
        stored = client.ok("store_memory", {"content": "The user likes green tea"})
        assert stored["embedding"] == "pending"
        assert "still loading (waited 0.2 s)" in stored["pending_reason"]
    with stdio_server(args, env, tmp_path / "server.log") as client:
        assert _wait_ready(client)["status"] == "ready"
        recalled = client.ok("recall", {"query": "deploy key"})
        assert "degraded" not in recalled
        assert client.ok("store_memory", {"content": "The user likes green tea"})["id"]


def test_recall_without_a_model_says_keywords_only(tmp_path: Path) -> None:
    env = server_env(tmp_path / "home")
    args = ["--data-dir", str(tmp_path / "store"), "--model", "none"]
    with stdio_server(args, env, tmp_path / "server.log") as client:
        client.ok("store_memory", {"content": FACT})
        recalled = client.ok("recall", {"query": "deploy key"})
        assert recalled["degraded"] == "keywords only: no embedding model"
        assert [r["content"] for r in recalled["results"]] == [FACT]


def test_recall_after_a_failed_load_names_the_failure(tmp_path: Path) -> None:
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "model.onnx").write_bytes(b"not an onnx graph")
    (broken / "tokenizer.json").write_text("{}")
    (broken / "config.json").write_text('{"dim": 8}')
    env = server_env(tmp_path / "home")
    args = ["--data-dir", str(tmp_path / "store"), "--model-path", str(broken)]
    with stdio_server(args, env, tmp_path / "server.log") as client:
        assert _wait_ready(client)["status"] == "error"
        recalled = client.ok("recall", {"query": "deploy key"})
        assert recalled["degraded"].startswith("keywords only: embedding model failed: ")
        stored = client.ok("store_memory", {"content": FACT})
        assert stored["embedding"] == "pending" and "--model-path DIR" in stored["pending_reason"]
        found = client.ok("search_memories", {"query": "deploy key"})
        assert [m["id"] for m in found["memories"]] == [stored["id"]]
