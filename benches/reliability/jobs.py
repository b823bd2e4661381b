"""Fuzzing with several stdio servers at once (``--jobs N``).

Profiled on the project's machine, one fuzz case costs about as much in the client
(hypothesis drawing the arguments, the SDK's client) as in the server's round trip, and a
writing tool pays a second round trip for the store's count. The calls go through a client
that writes raw JSON (``client.WireClient``), so that the near misses may hold the values
no store can take, a lone surrogate among them (``fuzz``, ``hostile``). One client process and one
server therefore keep about one core busy; N worker processes, each with a server and a
store of its own, take the tools one at a time from a shared list, so nothing about a case
changes but how many run at once.

A worker starts its server on its first tool and keeps it for the next; a server that no
longer answers after a tool is reported (``server_alive_after``) and replaced, so one
crash does not count against the tools fuzzed after it.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from multiprocessing import util
from pathlib import Path
from typing import Any

from benches.reliability import fuzz
from benches.reliability.client import WireClient, stdio_client_session, stdio_wire_session

#: Something to find, update and delete in every fresh store, so valid ids are not all
#: there is.
SEED = "the fuzz sandbox holds a small python app"

_worker: dict[str, Any] = {}


def server_args(store: Path) -> list[str]:
    """The fuzzed server: every tool, text only."""
    return ["--data-dir", str(store), "--model", "none", "--tools", "all"]


def schemas(home: Path) -> dict[str, dict[str, Any]]:
    """Every tool's input schema, in the server's order (from a short-lived server)."""
    home.mkdir(parents=True, exist_ok=True)
    with stdio_client_session(server_args(home / "store"), home) as client:
        return client.schemas()


def run(
    home: Path, plan: Iterable[tuple[str, dict[str, Any]]], *, cases: int, seconds: float, jobs: int
) -> Iterator[dict[str, Any]]:
    """Fuzz each ``(tool, schema)`` of ``plan`` with up to ``cases`` cases in ``seconds``;
    one tally per tool, yielded as each finishes (in no fixed order)."""
    sandbox = fuzz.make_sandbox(home / "sandbox")
    tasks = [(name, schema, cases, seconds) for name, schema in plan]
    if not tasks:
        return
    context = multiprocessing.get_context("spawn")
    with context.Pool(
        processes=max(1, min(jobs, len(tasks))),
        initializer=_init,
        initargs=(home, sandbox),
        maxtasksperchild=None,
    ) as pool:
        yield from pool.imap_unordered(_fuzz_one, tasks)
        pool.close()
        pool.join()


def _init(home: Path, sandbox: Path) -> None:
    _worker.update(home=home, sandbox=sandbox)
    # Close the server when the worker exits (the pool's workers return normally).
    util.Finalize(None, _close, exitpriority=10)


def _client() -> WireClient:
    client = _worker.get("client")
    if client is None:
        _worker["servers"] = _worker.get("servers", 0) + 1
        home = Path(_worker["home"]) / f"job-{os.getpid()}-{_worker['servers']}"
        home.mkdir(parents=True)
        stack = ExitStack()
        client = stack.enter_context(stdio_wire_session(server_args(home / "store"), home))
        client.call("store_memory", {"content": SEED})
        _worker.update(client=client, stack=stack)
    return client


def _close() -> None:
    stack = _worker.pop("stack", None)
    _worker.pop("client", None)
    if stack is not None:
        with contextlib.suppress(Exception):  # a dead server: nothing left to close
            stack.close()


def _fuzz_one(task: tuple[str, dict[str, Any], int, float]) -> dict[str, Any]:
    name, schema, cases, seconds = task
    client = _client()
    tally = fuzz.fuzz_tool(
        client, name, schema, Path(_worker["sandbox"]), cases=cases, seconds=seconds, hostile=True
    )
    try:
        alive = fuzz.memory_count(client) is not None
    except Exception:
        alive = False
    if not alive:
        _close()  # the next tool gets a new server
    return {**tally.to_dict(), "server_alive_after": alive}
