"""Every tool of ``--tools all`` fuzzed from its own input schema through a real stdio
server: arguments drawn from the schema and near misses of them (see
``benches/reliability/fuzz.py``). Every reply must be a tool result, an error result must
carry a public code, a refused call must leave the store's count as it was, and the server
must serve on. ``python -m benches.reliability --long`` runs the same with 10,000 cases per
tool; here a few hundred per tool, bounded in time so the file stays near two minutes.

Then the values no store can take (a lone surrogate anywhere, an integer past 64 bits,
nesting 100 deep, a key of 1,500 characters) through a client that writes raw JSON, as
only such a client can send a lone surrogate: each of those calls must get
INVALID_PARAMETER."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from benches.reliability import fuzz
from benches.reliability.client import WireClient, stdio_wire_session

from test_mcp_support import ALL_TOOLS, SyncClient, server_env, stdio_server

CASES_PER_TOOL = int(os.environ.get("MEMCORE_FUZZ_CASES", "200"))
#: The whole file's fuzzing time; each tool gets an even share (slow tools get fewer cases).
TOTAL_SECONDS = float(os.environ.get("MEMCORE_FUZZ_SECONDS", "90"))
#: The same for the values no store can take (half the near misses hold one).
HOSTILE_SECONDS = float(os.environ.get("MEMCORE_FUZZ_HOSTILE_SECONDS", "30"))


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("reliability-fuzz")


@pytest.fixture(scope="module")
def server(home: Path) -> Iterator[SyncClient]:
    args = ["--data-dir", str(home / "store"), "--model", "none", "--tools", "all"]
    with stdio_server(args, server_env(home), home / "server.log") as client:
        # Something to find, update and delete, so valid ids are not all there is.
        client.ok("store_memory", {"content": "the fuzz sandbox holds a small python app"})
        yield client


@pytest.fixture(scope="module")
def schemas(server: SyncClient) -> dict[str, dict[str, object]]:
    tools = server.tools()
    assert list(tools) == ALL_TOOLS
    return {name: dict(tool.input_schema) for name, tool in tools.items()}


@pytest.mark.parametrize("tool", ALL_TOOLS)
def test_every_reply_is_a_coded_result(
    tool: str, server: SyncClient, schemas: dict[str, dict[str, object]], home: Path
) -> None:
    sandbox = fuzz.make_sandbox(home / "sandbox")
    seconds = fuzz.per_tool_seconds(TOTAL_SECONDS, len(ALL_TOOLS))
    tally = fuzz.fuzz_tool(
        server, tool, schemas[tool], sandbox, cases=CASES_PER_TOOL, seconds=seconds
    )
    assert tally.violations == [], tally.to_dict()
    assert tally.cases > 0
    assert "crash" not in tally.outcomes
    # Still serving.
    assert fuzz.memory_count(server) is not None


@pytest.fixture(scope="module")
def wire(home: Path) -> Iterator[WireClient]:
    (home / "wire").mkdir()
    args = ["--data-dir", str(home / "wire" / "store"), "--model", "none", "--tools", "all"]
    with stdio_wire_session(args, home / "wire") as client:
        client.call("store_memory", {"content": "the fuzz sandbox holds a small python app"})
        yield client


@pytest.mark.parametrize("tool", ALL_TOOLS)
def test_values_no_store_can_take_get_invalid_parameter(
    tool: str, wire: WireClient, schemas: dict[str, dict[str, object]], home: Path
) -> None:
    sandbox = fuzz.make_sandbox(home / "sandbox")
    seconds = fuzz.per_tool_seconds(HOSTILE_SECONDS, len(ALL_TOOLS))
    tally = fuzz.fuzz_tool(
        wire, tool, schemas[tool], sandbox, cases=CASES_PER_TOOL, seconds=seconds, hostile=True
    )
    assert tally.violations == [], tally.to_dict()
    assert tally.hostile > 0, tally.to_dict()  # each of them refused: no violation above
    assert fuzz.memory_count(wire) is not None
