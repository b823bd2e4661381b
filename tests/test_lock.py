"""Several writers per data directory, across processes (every agent window starts its
own server): each writes and reads the others' writes; read-only opens work beside the
writers and see their commits; a process killed while writing loses nothing it
acknowledged, and the others carry on."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from memcore import Memory, MemoryNotFoundError, NotFoundError, StorageError

# A memcore process driven over stdin/stdout, one JSON object per line.
PEER = r"""
import json, os, sys
import memcore

def reply(**fields):
    print(json.dumps(fields), flush=True)

try:
    mem = memcore.Memory(sys.argv[1], model=None, read_only=sys.argv[2] == "ro")
except memcore.MemcoreError as e:
    reply(error=type(e).__name__, code=type(e).code, message=str(e), pid=os.getpid())
    sys.exit(0)
reply(pid=os.getpid())
for line in sys.stdin:
    cmd = json.loads(line)
    try:
        if cmd["op"] == "store":
            reply(id=mem.store_memory(cmd["content"]).id)
        elif cmd["op"] == "list":
            reply(contents=[m.content for m in mem.list_memories(limit=1000)])
        elif cmd["op"] == "get":
            reply(content=mem.get_memory(cmd["id"]).content)
        elif cmd["op"] == "close":
            mem.close()
            reply(closed=True)
            break
    except memcore.MemcoreError as e:
        reply(error=type(e).__name__, code=type(e).code, message=str(e))
"""

TIMEOUT = 60.0


class Peer:
    """Another process with its own Memory on the same directory."""

    def __init__(self, data_dir: Path, *, read_only: bool = False) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", PEER, str(data_dir), "ro" if read_only else "rw"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._lines: queue.Queue[str] = queue.Queue()
        assert self.proc.stdout is not None
        self._pump = threading.Thread(
            target=_pump, args=(self.proc.stdout, self._lines), daemon=True
        )
        self._pump.start()
        self.hello: dict[str, Any] = {}

    @property
    def pid(self) -> int:
        return self.proc.pid

    def receive(self) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=TIMEOUT)
        except queue.Empty:
            self.proc.kill()
            raise AssertionError(f"peer sent nothing; stderr: {self._stderr()}") from None
        if not line:
            raise AssertionError(f"peer exited early; stderr: {self._stderr()}")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def ask(self, op: str, **fields: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"op": op, **fields}) + "\n")
        self.proc.stdin.flush()
        return self.receive()

    def close(self) -> None:
        """Ask the peer to close its Memory and exit."""
        assert self.ask("close") == {"closed": True}
        assert self.proc.wait(TIMEOUT) == 0

    def kill(self) -> None:
        """SIGKILL: no cleanup of any kind runs in the peer."""
        os.kill(self.proc.pid, signal.SIGKILL)
        assert self.proc.wait(TIMEOUT) == -signal.SIGKILL

    def reap(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(TIMEOUT)
        self._pump.join(TIMEOUT)  # reads to EOF; closing its pipe under it would raise
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()

    def _stderr(self) -> str:
        if self.proc.poll() is None:
            return "(still running)"
        assert self.proc.stderr is not None
        return self.proc.stderr.read()


def _pump(stream: IO[str], lines: queue.Queue[str]) -> None:
    for line in stream:
        lines.put(line)
    lines.put("")


@pytest.fixture
def peers() -> Iterator[Callable[..., Peer]]:
    """Start peers; every one is reaped after the test, whatever happens."""
    started: list[Peer] = []

    def start(data_dir: Path, *, read_only: bool = False) -> Peer:
        peer = Peer(data_dir, read_only=read_only)
        started.append(peer)
        peer.hello = peer.receive()  # its first line: its pid, or why it could not open
        return peer

    yield start
    for peer in started:
        peer.reap()


def contents(mem: Memory) -> set[str]:
    return {m.content for m in mem.list_memories(limit=1000)}


# -- a second writer ----------------------------------------------------------------------


def test_a_writer_in_another_process_writes_beside_us(
    mem: Memory, data_dir: Path, peers: Callable[..., Peer]
) -> None:
    mem.store_memory("ours")
    peer = peers(data_dir)
    assert peer.hello == {"pid": peer.pid}
    assert "id" in peer.ask("store", content="theirs")
    assert contents(mem) == {"ours", "theirs"}
    mem.store_memory("ours again")
    assert set(peer.ask("list")["contents"]) == {"ours", "theirs", "ours again"}


def test_we_write_beside_another_process_that_writes(
    data_dir: Path, peers: Callable[..., Peer]
) -> None:
    holder = peers(data_dir)
    assert holder.hello == {"pid": holder.pid}
    holder.ask("store", content="theirs")
    with Memory(data_dir, model=None) as mem:
        mem.store_memory("ours")
        assert contents(mem) == {"theirs", "ours"}
        assert "id" in holder.ask("store", content="still writing")
        assert contents(mem) == {"theirs", "ours", "still writing"}


# -- read-only beside a writer -------------------------------------------------------------


def test_read_only_beside_a_writer_in_another_process(
    data_dir: Path, peers: Callable[..., Peer]
) -> None:
    holder = peers(data_dir)
    first = holder.ask("store", content="committed by the writer")["id"]
    with Memory(data_dir, model=None, read_only=True) as reader:
        assert reader.status()["store"]["read_only"] is True
        assert contents(reader) == {"committed by the writer"}
        got = reader.get_memory(first)
        assert got.content == "committed by the writer"
        # A read-only get does not write the access time.
        assert got.accessed_at == got.created_at

        holder.ask("store", content="committed later")
        assert contents(reader) == {"committed by the writer", "committed later"}
        assert reader.status()["counts"]["memories"] == 2


READ_ONLY_WRITES: dict[str, Callable[[Memory, str], object]] = {
    "store": lambda m, i: m.store_memory("refused"),
    "update": lambda m, i: m.update_memory(i, content="refused"),
    "delete": lambda m, i: m.delete_memory(i),
    "invalidate": lambda m, i: m.invalidate(i, "refused"),
    "supersede": lambda m, i: m.supersede_memory(i, m.list_memories()[0].id),
}


def test_read_only_writes_raise_storage_error(data_dir: Path, peers: Callable[..., Peer]) -> None:
    holder = peers(data_dir)
    target = holder.ask("store", content="one")["id"]
    holder.ask("store", content="two")
    with Memory(data_dir, model=None, read_only=True) as reader:
        before = [r.to_dict() for r in reader.list_memories()]
        for name, write in READ_ONLY_WRITES.items():
            with pytest.raises(StorageError, match="read-only") as info:
                write(reader, target)
            assert type(info.value).code == "STORAGE_ERROR", name
            assert [r.to_dict() for r in reader.list_memories()] == before, name
    assert holder.ask("list")["contents"] == ["two", "one"]


def test_a_read_only_process_beside_our_writer(
    mem: Memory, data_dir: Path, peers: Callable[..., Peer]
) -> None:
    ours = mem.store_memory("written here").id
    reader = peers(data_dir, read_only=True)
    assert reader.hello == {"pid": reader.pid}
    assert reader.ask("list")["contents"] == ["written here"]
    assert reader.ask("get", id=ours) == {"content": "written here"}
    refused = reader.ask("store", content="from the reader")
    assert (refused["error"], refused["code"]) == ("StorageError", "STORAGE_ERROR")
    assert "read-only" in refused["message"]

    mem.store_memory("written after the reader opened")
    assert reader.ask("list")["contents"] == ["written after the reader opened", "written here"]
    assert contents(mem) == {"written here", "written after the reader opened"}


def test_a_read_only_open_of_a_missing_store_is_not_found(tmp_path: Path) -> None:
    missing = tmp_path / "never-created"
    with pytest.raises(NotFoundError) as info:
        Memory(missing, model=None, read_only=True)
    assert not isinstance(info.value, MemoryNotFoundError)
    assert type(info.value).code == "NOT_FOUND"
    assert not missing.exists()


# -- the lock goes away with its holder ------------------------------------------------------


def test_a_new_writer_opens_after_the_holder_closes(
    data_dir: Path, peers: Callable[..., Peer]
) -> None:
    holder = peers(data_dir)
    holder.ask("store", content="before closing")
    holder.close()
    with Memory(data_dir, model=None) as mem:
        assert contents(mem) == {"before closing"}
        mem.store_memory("after the handover")


def test_a_new_writer_opens_after_the_holder_is_killed(
    data_dir: Path, peers: Callable[..., Peer]
) -> None:
    holder = peers(data_dir)
    for i in range(20):
        holder.ask("store", content=f"acknowledged {i}")
    holder.kill()
    with Memory(data_dir, model=None) as mem:
        # Every acknowledged write survived the kill.
        assert contents(mem) == {f"acknowledged {i}" for i in range(20)}
        mem.store_memory("after the crash")
        # Another writer opens beside us, whatever the killed one left behind.
        other = peers(data_dir)
        assert other.hello == {"pid": other.pid}
        assert len(other.ask("list")["contents"]) == 21
