"""A panic inside the engine costs one call, never the server: pyo3 raises it in Python as
``PanicException``, a BaseException that ``except Exception`` misses. Here a facade method
raises such an exception inside a real stdio server; the call is answered with a coded error
and the server keeps serving."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from test_mcp_support import SyncClient, server_env, stdio_server

# The server with ``Memory.search_text`` replaced by one that panics as damaged text index
# segments made it panic (issue: "index out of bounds" from tantivy).
PANICKING_LAUNCHER = """
import sys
import memcore

class PanicException(BaseException):  # what pyo3_runtime.PanicException derives from
    pass

def panicking(self, *args, **kwargs):
    raise PanicException("index out of bounds: the len is 3 but the index is 7")

memcore.Memory.search_text = panicking
from memcore.mcp.main import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("reliability-panics")


@pytest.fixture(scope="module")
def server(home: Path) -> Iterator[SyncClient]:
    args = ["--data-dir", str(home / "store"), "--model", "none", "--tools", "all"]
    launcher = ["-c", PANICKING_LAUNCHER]
    with stdio_server(args, server_env(home), home / "server.log", launcher=launcher) as client:
        yield client


def test_a_panicking_call_is_answered_with_a_code_and_the_server_serves_on(
    server: SyncClient, home: Path
) -> None:
    stored = server.ok("store_memory", {"content": "the build server is called hopper"})

    first = server.error("search_text", {"query": "hopper"})
    assert first["code"] == "STORAGE_ERROR"
    ref = first["details"]["ref"]
    assert ref in first["message"]

    # The next calls, panicking or not, are served by the same process.
    assert server.error("search_text", {"query": "build"})["code"] == "STORAGE_ERROR"
    got = server.ok("get_memory", {"memory_id": stored["id"]})
    assert got["content"] == "the build server is called hopper"
    assert server.ok("get_status")["counts"]["memories"] == 1

    # The operator finds the panic in the log under the ref the caller was given.
    entries = [json.loads(line) for line in (home / "server.log").read_text().splitlines()]
    failed = [e for e in entries if e.get("ref") == ref]
    assert len(failed) == 1
    assert failed[0]["msg"] == "tool failed unexpectedly"
    assert "PanicException: index out of bounds" in failed[0]["exc"]
