"""One memcore node of a PostgreSQL database in a process of its own, driven over pipes.

The multi-node tests (test_pg_nodes.py) start several of these on one database, so each
node is a real process with its own replica, follower and indexes, and one can be killed
with SIGKILL. The parent writes one JSON command per line to the process's stdin and reads
one JSON answer per line from its stdout; `stream` answers once per acknowledged write, so
the parent knows exactly which writes were acknowledged when it kills the process.

Run as a script: ``python pg_node_process.py URL REPLICA_DIR [NAMESPACE ...]``.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

#: How long a node retries a write another node's write of the same namespace overtook
#: (ResourceBusyError, nothing written: the documented client answer is to retry).
WRITE_RETRY_SECONDS = 30.0


def vector(seed: int, dim: int = 8) -> list[float]:
    """A deterministic unit vector: every node embeds nothing, the tests pass vectors."""
    import random

    rng = random.Random(seed)
    values = [rng.gauss(0.0, 1.0) for _ in range(dim)]
    norm = sum(v * v for v in values) ** 0.5
    return [v / norm for v in values]


# -- the node (child process) -------------------------------------------------------------


def _serve(url: str, replica: str, namespaces: list[str]) -> None:
    import memcore
    from memcore._facade.base import native_engine
    from memcore._facade.transfer import export_store
    from memcore.errors import MemcoreError, ResourceBusyError

    mem = memcore.Memory(url, replica_dir=replica, model=None, namespaces=namespaces or None)

    def retried(write: Callable[[], Any]) -> Any:
        deadline = time.monotonic() + WRITE_RETRY_SECONDS
        while True:
            try:
                return write()
            except ResourceBusyError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def store(cmd: dict[str, Any]) -> dict[str, Any]:
        ns = cmd.get("namespace")
        record = retried(
            lambda: mem.store_memory(cmd["content"], vector=cmd.get("vector"), namespace=ns)
        )
        return {"id": record.id, "seq": mem.last_write_seq()}

    def export(cmd: dict[str, Any]) -> dict[str, Any]:
        out = io.StringIO()
        export_store(mem, out, namespace=cmd.get("namespace"), with_vectors=True)
        lines = [json.loads(line) for line in out.getvalue().splitlines()]
        return {"records": lines[1:-1], "end": lines[-1]}

    def settle(cmd: dict[str, Any]) -> dict[str, Any]:
        # Until the indexer committed what the node applied: a document still pending is
        # scored by the in-memory pending index (exact lengths) rather than tantivy's
        # quantized ones, so two equal nodes rank alike only once both are settled. So
        # do the vectors' hubness values, computed in the background as they came in.
        native_engine(mem).settle_hubness()
        deadline = time.monotonic() + cmd.get("timeout", 60.0)
        while True:
            health = native_engine(mem).index_status()
            if health.text_pending == 0 and health.vectors_pending == 0:
                return health.to_dict()
            if time.monotonic() > deadline:
                return {"error": {"code": "TIMEOUT", "message": str(health.to_dict())}}
            time.sleep(0.05)

    def hits(found: list[Any]) -> dict[str, Any]:
        scores = [[h.scores.vector, h.scores.bm25, h.scores.fused] for h in found]
        return {"ids": [h.memory.id for h in found], "scores": scores}

    commands: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
        "store": store,
        "wait": lambda c: {
            "applied": mem.wait_for_seq(
                c["seq"], namespace=c.get("namespace"), timeout=c.get("timeout", 30.0)
            )
        },
        "get": lambda c: {"content": mem.get_memory(c["id"], namespace=c.get("namespace")).content},
        "search_text": lambda c: hits(
            mem.search_text(c["query"], c.get("limit", 10), namespace=c.get("namespace"))
        ),
        "recall": lambda c: hits(
            mem.recall(
                c["query"], c.get("limit", 10), vector=c.get("vector"), namespace=c.get("namespace")
            )
        ),
        "delete": lambda c: {
            "deleted": retried(lambda: mem.delete_memory(c["id"], namespace=c.get("namespace")))
            is None
        },
        "count": lambda c: {"count": mem.count_memories(namespace=c.get("namespace"))},
        "export": export,
        "compact": lambda c: {"compacted": str(mem.compact(force=True))},
        "settle": settle,
    }
    _answer({"ready": True})
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["op"] == "close":
            break
        if cmd["op"] == "stream":
            # Write until killed (or `count` writes); one answer per acknowledged write.
            for i in range(cmd["count"]):
                text = f"{cmd['prefix']} write {i} about the {_WORDS[i % len(_WORDS)]}"
                _answer(store({"content": text, "vector": vector(cmd["seed"] + i)}))
            continue
        try:
            _answer(commands[cmd["op"]](cmd))
        except MemcoreError as error:
            _answer({"error": {"code": type(error).code, "message": str(error)}})
    mem.close()
    _answer({"closed": True})


_WORDS = ("harbour", "lantern", "granite", "orchid", "meteor", "violin", "glacier", "saffron")


def _answer(value: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


# -- the parent's handle --------------------------------------------------------------------


class NodeProcess:
    """A running node: `call` sends a command and returns its answer."""

    def __init__(self, url: str, replica: Path, log: Path, namespaces: list[str]) -> None:
        argv = [sys.executable, str(Path(__file__).resolve()), url, str(replica), *namespaces]
        self.log = log
        self._log_file = log.open("ab")
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log_file, text=True
        )
        assert self.read() == {"ready": True}, self._failure("did not start")

    def call(self, op: str, **args: Any) -> dict[str, Any]:
        """Run one command; a coded error comes back as {"error": {"code", "message"}}."""
        self.send(op, **args)
        return self.read()

    def ok(self, op: str, **args: Any) -> dict[str, Any]:
        """Run one command that must succeed."""
        answer = self.call(op, **args)
        assert "error" not in answer, self._failure(f"{op} failed: {answer}")
        return answer

    def send(self, op: str, **args: Any) -> None:
        stdin = self._pipe(self.proc.stdin)
        stdin.write(json.dumps({"op": op, **args}) + "\n")
        stdin.flush()

    def read(self) -> dict[str, Any]:
        """The next answer (the process must be alive to give one)."""
        line = self._pipe(self.proc.stdout).readline()
        assert line, self._failure("ended without answering")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def kill(self) -> None:
        """SIGKILL: no close, no flush, no snapshot."""
        self.proc.kill()
        self.proc.wait(timeout=30)
        self._release()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.send("close")
            assert self.read() == {"closed": True}, self._failure("did not close")
            self.proc.wait(timeout=60)
        self._release()

    def _release(self) -> None:
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()
        self._log_file.close()

    def _pipe(self, pipe: IO[str] | None) -> IO[str]:
        assert pipe is not None
        return pipe

    def _failure(self, what: str) -> str:
        self._log_file.flush()
        return f"node {what}; its stderr:\n{self.log.read_text(errors='replace')[-3000:]}"


@contextmanager
def started(
    url: str, replica: Path, log: Path, namespaces: list[str] | None = None
) -> Iterator[NodeProcess]:
    """A node for the length of the block, closed (or killed, if it hangs) at the end."""
    node = NodeProcess(url, replica, log, namespaces or [])
    try:
        yield node
    finally:
        try:
            node.close()
        except (AssertionError, OSError, subprocess.TimeoutExpired):
            node.kill()


if __name__ == "__main__":
    _serve(sys.argv[1], sys.argv[2], sys.argv[3:])
