"""A read-only Memory follows the writer: what another process stores, invalidates or
deletes shows in its searches (search_text, search, recall) without reopening.

The writer is a separate process driven over stdin, as a `--read-only` server runs beside
a writing one. The follower polls every 200 ms; the tests wait with a generous deadline
(timings are for benches, not tests on a shared machine) and assert what is seen.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

import memcore

DIM = 8
DEADLINE_S = 20.0

WRITER = textwrap.dedent(
    """
    import sys
    import numpy as np
    import memcore

    def vector(i):
        return np.random.default_rng(i).standard_normal({dim}).astype("float32")

    with memcore.Memory(sys.argv[1], model=None) as mem:
        print("ready", mem.store_memory("a first fact", vector=vector(0)).id, flush=True)
        for line in sys.stdin:
            verb, _, arg = line.strip().partition(" ")
            if verb == "store":
                i, _, text = arg.partition(" ")
                print(mem.store_memory(text, vector=vector(int(i))).id, flush=True)
            elif verb == "invalidate":
                mem.invalidate(arg, "changed")
                print("ok", flush=True)
            elif verb == "delete":
                mem.delete_memory(arg)
                print("ok", flush=True)
            elif verb == "bulk":
                n = int(arg)
                texts = [f"bulk fact {{i}} " + "".join(chr(97 + int(c)) for c in str(i))
                         for i in range(n)]
                mem.store_memories(texts, vectors=np.stack([vector(100 + i) for i in range(n)]))
                mem._engine.flush()
                print("ok", flush=True)
            elif verb == "entities":
                a, b = arg.split()
                def person(name, fact, friend):
                    return {{
                        "name": name,
                        "entityType": "Person",
                        "observations": [fact],
                        "relations": [{{"targetEntity": friend, "relationType": "knows"}}],
                    }}

                people = [person(a, f"{{a}} keeps bees.", b), person(b, f"{{b}} sells honey.", a)]
                mem.save_memory(entities=people, thread_id="t1")
                print("ok", flush=True)
    """
).format(dim=DIM)


def vector(i: int) -> np.ndarray:
    return np.random.default_rng(i).standard_normal(DIM).astype(np.float32)


class Writer:
    """The writing process: each command returns the writer's reply line."""

    def __init__(self, path: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        verb, self.first_id = self._reply().split()
        assert verb == "ready"

    def _reply(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            assert self.process.stderr is not None
            raise AssertionError(f"the writer died: {self.process.stderr.read()[-2000:]}")
        return line.strip()

    def send(self, command: str) -> str:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        return self._reply()

    def close(self) -> None:
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        self.process.wait(timeout=60)


@pytest.fixture
def writer(data_dir: Path) -> Iterator[Writer]:
    w = Writer(data_dir)
    try:
        yield w
    finally:
        w.close()


def eventually(check: Callable[[], bool]) -> bool:
    """Whether `check` holds before the deadline (polled)."""
    end = time.monotonic() + DEADLINE_S
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.05)
    return check()


def test_a_read_only_memory_sees_new_memories_in_every_search(
    data_dir: Path, writer: Writer
) -> None:
    with memcore.Memory(data_dir, model=None, read_only=True) as reader:
        assert reader.search_text("zebra") == []
        new_id = writer.send("store 7 the zebra crossed the quartz river")

        def text_hits() -> list[str]:
            return [h.memory.id for h in reader.search_text("zebra quartz")]

        assert eventually(lambda: text_hits() == [new_id])
        assert reader.search(vector=vector(7), limit=1)[0].memory.id == new_id
        recalled = reader.recall("zebra quartz", vector=vector(7), limit=3)
        assert recalled[0].memory.id == new_id
        assert reader.get_memory(new_id).content == "the zebra crossed the quartz river"


def test_invalidations_and_deletes_reach_a_read_only_memory(data_dir: Path, writer: Writer) -> None:
    kept = writer.send("store 11 the heron nests by the mill")
    gone = writer.send("store 12 the heron fishes at the weir")
    with memcore.Memory(data_dir, model=None, read_only=True) as reader:
        assert {h.memory.id for h in reader.search_text("heron")} == {kept, gone}
        assert writer.send(f"invalidate {kept}") == "ok"
        assert writer.send(f"delete {gone}") == "ok"

        def heron_hits() -> set[str]:
            return {h.memory.id for h in reader.search_text("heron")}

        assert eventually(lambda: heron_hits() == set())
        assert [h.memory.id for h in reader.search_text("heron", include_invalid=True)] == [kept]
        assert all(h.memory.id != gone for h in reader.search(vector=vector(12), limit=5))
        assert all(
            h.memory.id not in {kept, gone} for h in reader.recall("heron", vector=vector(11))
        )


def test_a_read_only_memory_opened_before_any_vector_finds_the_first_ones(
    data_dir: Path,
) -> None:
    """A store without vectors has no vector index when opened read-only; the follower
    makes one when the writer stores the first vector."""
    with memcore.Memory(data_dir, model=None) as mem:
        mem.store_memory("a text-only fact")
    with memcore.Memory(data_dir, model=None, read_only=True) as reader:
        assert reader.search(vector=vector(0)) == []
        late = Writer(data_dir)
        try:
            new_id = late.send("store 41 the otter slid down the bank")

            def vector_hits() -> list[str]:
                return [h.memory.id for h in reader.search(vector=vector(41), limit=1)]

            assert eventually(lambda: vector_hits() == [new_id])
            assert reader.search(vector=vector(0), limit=1)[0].memory.id == late.first_id
        finally:
            late.close()


def test_a_long_lived_reader_loads_the_writers_text_commits(data_dir: Path, writer: Writer) -> None:
    """The documents a reader follows wait in a pending buffer; once there are many it
    loads the writer's newest text commit instead of holding them all."""
    with memcore.Memory(data_dir, model=None, read_only=True) as reader:
        assert writer.send("bulk 1500") == "ok"
        assert eventually(lambda: reader.index_health().documents == 1501)

        def shed_and_whole() -> bool:
            # The catalog is applied before the documents are staged: wait for both,
            # every document searchable with fewer than 1024 of them still pending.
            health = reader.index_health()
            return health.text_pending < 1024 and (
                health.text_documents + health.text_pending >= 1500
            )

        assert eventually(shed_and_whole)
        # "bcd" spells 123: found in the loaded commit or the buffer, as one document.
        hits = reader.search_text("bcd", limit=5)
        assert [h.memory.content for h in hits] == ["bulk fact 123 bcd"]


def test_a_read_only_memory_follows_graph_writes_and_mentions(
    data_dir: Path, writer: Writer
) -> None:
    """Entities make the follower rescan the graph; a later memory naming one is applied
    on its own, linked to the entity, so recall's graph signal reaches it."""
    with memcore.Memory(data_dir, model=None, read_only=True) as reader:
        assert writer.send("entities Ottoline Barnaby") == "ok"

        def names() -> set[str]:
            return {hit.view.entity.name for hit in reader.search_nodes("Ottoline")}

        assert eventually(lambda: "Ottoline" in names())
        assert {r.entity.name for r in reader.get_related("Ottoline", depth=1)} == {"Barnaby"}
        mentioning = writer.send("store 31 Ottoline moved the hives to the orchard")
        assert eventually(lambda: bool(reader.search_text("hives orchard")))
        hits = reader.recall("what does Barnaby's friend do with hives", vector=vector(31))
        assert hits[0].memory.id == mentioning
        assert hits[0].scores.ppr is not None and hits[0].scores.ppr > 0


def test_a_read_only_server_follows_the_writer_and_checks_the_store(
    data_dir: Path, writer: Writer, tmp_path: Path
) -> None:
    """The case of issue 20: a long-lived `--read-only` MCP server beside a writer."""
    from test_mcp_support import server_env, stdio_server

    args = ["--data-dir", str(data_dir), "--model", "none", "--read-only", "--tools", "all"]
    with stdio_server(args, server_env(tmp_path), tmp_path / "ro.log") as server:
        assert server.ok("search_text", {"query": "lighthouse"})["results"] == []
        new_id = writer.send("store 21 the lighthouse keeper logs the storm")

        def found() -> list[str]:
            return [r["id"] for r in server.ok("search_text", {"query": "lighthouse"})["results"]]

        assert eventually(lambda: found() == [new_id])
        report = server.ok("check_store")
        assert report["ok"] is True and report["integrity"] == ["ok"]
