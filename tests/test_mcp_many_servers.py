"""Every agent window gets memory: several `python -m memcore.mcp` servers over stdio on one
data folder (as two editor windows start them), each talked to with the official SDK. Each
stores and finds the others' memories within a second, a turn sent to several of them at
once is recorded once, the CLI writes beside a running server, and a server killed while
everyone writes loses nothing it acknowledged."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import pytest

import memcore
from test_mcp_support import REPO_ROOT, SyncClient, payload_of, server_env, stdio_server


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path


def _servers(home: Path, n: int, stack: ExitStack) -> list[SyncClient]:
    args = ["--data-dir", str(home / "store"), "--model", "none", "--tools", "all"]
    return [
        stack.enter_context(stdio_server(args, server_env(home), home / f"server-{i}.log"))
        for i in range(n)
    ]


def _contents(client: SyncClient, query: str) -> list[str]:
    found = client.ok("search_text", {"query": query, "limit": 50})
    return [m["content"] for m in found["results"]]


def _soon(check: Callable[[], bool], seconds: float = 1.0) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_two_servers_each_store_and_find_the_others(home: Path) -> None:
    with ExitStack() as stack:
        a, b = _servers(home, 2, stack)
        a.ok("store_memory", {"content": "The user drinks oolong tea"})
        b.ok("store_memory", {"content": "The user rides a blue bicycle"})
        # Own writes at once; the other's within a second.
        assert _contents(a, "oolong") == ["The user drinks oolong tea"]
        assert _contents(b, "bicycle") == ["The user rides a blue bicycle"]
        assert _soon(lambda: _contents(a, "bicycle") == ["The user rides a blue bicycle"])
        assert _soon(lambda: _contents(b, "oolong") == ["The user drinks oolong tea"])
        owners = [c.ok("get_status")["store"]["indexes"]["owner"] for c in (a, b)]
        assert sorted(owners) == [False, True], "one of them writes the index files"


def test_four_servers_record_a_turn_sent_to_all_of_them_once(home: Path) -> None:
    turn = {
        "session_id": "window-race",
        "turn_id": "t1",
        "input_items": [{"role": "user", "content": "I keep my notes in Obsidian."}],
        "output_items": [{"role": "assistant", "content": "Noted."}],
    }
    with ExitStack() as stack:
        clients = _servers(home, 4, stack)
        with ThreadPoolExecutor(4) as pool:
            results = [
                payload_of(r)
                for r in pool.map(lambda c: c.call("memory_after_turn", turn), clients)
            ]
        created = [r for r in results if r.get("created") is True]
        assert len(created) == 1, results
        for r in results:
            assert r.get("ok") is True or r["error"]["code"] == "RESOURCE_BUSY", r
        # A retry anywhere gets the first result, and the fact is stored once.
        for client in clients:
            again = client.ok("memory_after_turn", turn)
            assert again["created"] is False and again["captured"] == created[0]["captured"]
        assert _soon(lambda: all(len(_contents(c, "Obsidian")) == 1 for c in clients))


def test_the_cli_writes_beside_a_running_server(home: Path) -> None:
    with ExitStack() as stack:
        (server,) = _servers(home, 1, stack)
        server.ok("store_memory", {"content": "The user lives in Porto"})
        stored = subprocess.run(
            [
                sys.executable,
                "-m",
                "memcore",
                "store",
                "The user surfs at Matosinhos",
                "--data-dir",
                str(home / "store"),
                "--model",
                "none",
            ],
            capture_output=True,
            text=True,
            env=server_env(home),
            cwd=REPO_ROOT,
            timeout=120,
        )
        assert stored.returncode == 0, stored.stderr
        assert json.loads(stored.stdout)["created"]["content"] == "The user surfs at Matosinhos"
        assert _soon(lambda: _contents(server, "Matosinhos") == ["The user surfs at Matosinhos"])


WRITER = r"""
import json, sys
import memcore
mem = memcore.Memory(sys.argv[1], model=None)
print(json.dumps({"ready": True}), flush=True)
for i in range(100000):
    m = mem.store_memory(f"{sys.argv[2]} fact {i}")
    print(json.dumps({"id": m.id}), flush=True)
"""


def test_a_process_killed_while_four_write_loses_nothing_acknowledged(home: Path) -> None:
    store = home / "store"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(store), f"writer{i}"],
            stdout=subprocess.PIPE,
            text=True,
            env=server_env(home),
        )
        for i in range(4)
    ]
    acknowledged: list[str] = []
    try:
        for p in procs:
            assert p.stdout is not None and json.loads(p.stdout.readline())["ready"]
        time.sleep(1.0)
        # The first to open owns the index files: kill it mid-write.
        os.kill(procs[0].pid, signal.SIGKILL)
        time.sleep(0.5)
        for p in procs[1:]:
            p.terminate()
    finally:
        for p in procs:
            p.wait(60)
            assert p.stdout is not None
            acknowledged += [json.loads(line)["id"] for line in p.stdout if line.strip()]
            p.stdout.close()
    assert len(acknowledged) > 40
    # It reopens without a repair: the index files the dead owner (and each
    # process that took them over) committed hold one document per write.
    mem = memcore.Memory(store, model=None)
    mem.close()
    _check_nothing_lost(store, acknowledged)


def _check_nothing_lost(store: Path, acknowledged: list[str]) -> None:
    with memcore.Memory(store, model=None) as mem:
        stored = {m.id for m in mem.list_memories(limit=1000)}
        for offset in range(1000, len(acknowledged) + 1000, 1000):
            stored |= {m.id for m in mem.list_memories(limit=1000, offset=offset)}
        assert set(acknowledged) <= stored
        # Found by keywords too: the indexes hold them, rebuilt from the log.
        assert len(mem.search_text("writer1 fact", limit=50)) == 50
