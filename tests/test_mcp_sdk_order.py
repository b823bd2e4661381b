"""The stdio server opens the store and the model before it imports the MCP SDK: a client's
first tool call needs them and never the SDK, and on two cores the imports compete for the
interpreter (the first store_memory after ``tools/list`` took 0.8 s with the SDK first,
0.35 s with the store first; benches/bench_mcp.py). The import also waits for a first call
being answered. A line only the SDK can answer, or a store slow to open, must not be kept
waiting for that order."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

import memcore
from conftest import MINILM_DIR, require_model
from memcore.errors import StorageError
from memcore.mcp import stdio
from memcore.tools.host import StoreHost


@pytest.fixture
def imported(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Set when the server starts importing the SDK (the import itself is skipped)."""
    started = threading.Event()
    monkeypatch.setattr(stdio, "import_sdk", started.set)
    return started


@pytest.fixture
def slow_store() -> Iterator[tuple[StoreHost, threading.Event]]:
    """A host opening a store that takes until the test sets the event (and then fails)."""
    release = threading.Event()

    def open_slowly() -> memcore.Memory:
        release.wait(60)
        raise StorageError("the test's store never opens")

    host = StoreHost(open_slowly)
    host.start()
    yield host, release
    release.set()
    host.close()


def test_the_sdk_is_imported_once_the_store_has_opened(
    imported: threading.Event, tmp_path: Path
) -> None:
    opened = threading.Event()

    def open_store() -> memcore.Memory:
        assert not imported.is_set(), "the SDK's import began before the store had opened"
        memory = memcore.Memory(tmp_path / "store", model=None)
        opened.set()
        return memory

    host = StoreHost(open_store)
    try:
        host.start()
        stdio.SdkLoader().start_after(host, limit=60)
        assert imported.wait(30), "the SDK was not imported after the store opened"
        assert opened.is_set()
    finally:
        host.close()


def test_the_sdk_waits_for_the_model_as_well(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    model = require_model(MINILM_DIR)
    memories: list[memcore.Memory] = []
    status_at_import: list[str] = []

    def record() -> None:
        embeddings = memories[0].embeddings
        assert embeddings is not None
        status_at_import.append(embeddings.status)

    monkeypatch.setattr(stdio, "import_sdk", record)

    def open_store() -> memcore.Memory:
        memories.append(memcore.Memory(tmp_path / "store", model_path=model))
        return memories[0]

    host = StoreHost(open_store)
    try:
        host.start()
        loader = stdio.SdkLoader()
        loader.start_after(host, limit=60)
        anyio.run(_wait_imported, loader)
        assert status_at_import == ["ready"]
    finally:
        host.close()


async def _wait_imported(loader: stdio.SdkLoader) -> None:
    while not loader.done:
        await anyio.sleep(0.02)


def test_a_line_that_needs_the_sdk_imports_it_without_waiting_for_the_store(
    imported: threading.Event, slow_store: tuple[StoreHost, threading.Event]
) -> None:
    host, _ = slow_store
    loader = stdio.SdkLoader()
    loader.start_after(host, limit=60)
    assert not imported.wait(0.3), "the import did not wait for the store"
    anyio.run(loader.wait)  # what the transport does at a line the early path hands off
    assert imported.is_set()


def test_a_store_slow_to_open_holds_the_sdk_back_only_so_long(
    imported: threading.Event, slow_store: tuple[StoreHost, threading.Event]
) -> None:
    host, _ = slow_store
    stdio.SdkLoader().start_after(host, limit=0.2)
    assert imported.wait(30), "the SDK still waits for a store that is not opening"
    assert host.state == "opening"


def test_a_store_that_fails_to_open_lets_the_sdk_load(
    imported: threading.Event, slow_store: tuple[StoreHost, threading.Event]
) -> None:
    host, release = slow_store
    stdio.SdkLoader().start_after(host, limit=60)
    release.set()
    assert imported.wait(30), "a store that failed to open kept the SDK back"
    assert host.state == "error"


@contextlib.contextmanager
def _answering_a_call(tmp_path: Path, limit: float) -> Iterator[StoreHost]:
    """A text-only store opening while a call is being answered and the SDK's import waits
    (at most ``limit`` seconds) for both; the call ends when the block does."""
    host = StoreHost(lambda: memcore.Memory(tmp_path / "store", model=None))
    loader = stdio.SdkLoader()
    try:
        with loader.answering():
            host.start()
            loader.start_after(host, limit=limit)
            yield host
    finally:
        host.close()


def test_the_sdk_waits_for_a_call_being_answered(imported: threading.Event, tmp_path: Path) -> None:
    # A first call that waited for the store runs the moment it opens; an import beside it
    # would take the interpreter from it (28 ms of a first store_memory on two cores).
    with _answering_a_call(tmp_path, limit=60) as host:
        host.wait_blocking(30)
        assert not imported.wait(0.3), "the import began while a call was answered"
    assert imported.wait(30), "the import did not begin once the call was answered"


def test_a_long_call_holds_the_sdk_back_only_so_long(
    imported: threading.Event, tmp_path: Path
) -> None:
    with _answering_a_call(tmp_path, limit=0.5):
        assert imported.wait(30), "a call still being answered kept the SDK back"
