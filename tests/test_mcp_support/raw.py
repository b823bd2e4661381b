"""A stdio server driven with raw JSON-RPC lines, for tests about exactly what is written on
the wire (each request answered once, nothing answered too early), and launchers that hold
the MCP SDK's import back so that a test can look at the server before the SDK has loaded."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from test_mcp_support import REPO_ROOT

# Runs the server with the SDK import held until a gate file appears: whatever is answered
# before the test creates the file was answered without the SDK.
GATED_SDK_LAUNCHER = """
import pathlib, sys, time
import memcore.mcp.stdio as stdio
gate, real = pathlib.Path(sys.argv[1]), stdio.import_sdk
def gated():
    while not gate.exists():
        time.sleep(0.02)
    real()
stdio.import_sdk = gated
from memcore.mcp.main import main
sys.exit(main(sys.argv[2:]))
"""

# Runs the server with the early answers switched off: the SDK answers everything, as
# before they existed (the reference the early answers are compared with).
SDK_ONLY_LAUNCHER = """
import sys
from memcore.mcp import handshake
handshake.EarlyAnswers.step = lambda self, line: handshake.HAND_OFF
from memcore.mcp.main import main
sys.exit(main(sys.argv[1:]))
"""


def initialize(request_id: int | str = 1, version: str = "2025-11-25") -> dict[str, Any]:
    """An ``initialize`` request as a handshake-era client sends it."""
    return request(
        request_id,
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": {"roots": {"listChanged": True}, "sampling": {}},
            "clientInfo": {"name": "raw-test", "version": "1.0"},
        },
    )


def request(request_id: int | str, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method}


class RawServer:
    """``python LAUNCHER ARGS`` over pipes; replies are read in a thread as they arrive."""

    def __init__(self, command: Sequence[str], env: dict[str, str], log: Path) -> None:
        with log.open("a", encoding="utf-8") as errors:
            self.proc = subprocess.Popen(
                [sys.executable, *command],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errors,
                cwd=REPO_ROOT,
                env=env,
            )
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(b"")  # end of output

    def send(self, *messages: Any) -> None:
        """Write messages (dicts as JSON, strings as they are) in one write."""
        assert self.proc.stdin is not None
        text = "".join((m if isinstance(m, str) else json.dumps(m)) + "\n" for m in messages)
        self.proc.stdin.write(text.encode())
        self.proc.stdin.flush()

    def replies(self, count: int, timeout: float = 60) -> list[dict[str, Any]]:
        """The next ``count`` lines of output, parsed."""
        out = []
        for _ in range(count):
            line = self._lines.get(timeout=timeout)
            assert line, f"the server closed stdout after {out}"
            out.append(json.loads(line))
        return out

    def silent_for(self, seconds: float) -> bool:
        """Whether nothing is written for ``seconds``."""
        try:
            line = self._lines.get(timeout=seconds)
        except queue.Empty:
            return True
        self._lines.put(line)  # not lost: order does not matter to the callers
        return False

    def finish(self, timeout: float = 60) -> tuple[int, list[dict[str, Any]]]:
        """Close stdin; the exit status and whatever else was written."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        status = self.proc.wait(timeout=timeout)
        rest = []
        while (line := self._lines.get(timeout=timeout)) != b"":
            rest.append(json.loads(line))
        return status, rest

    def kill(self) -> None:
        """Stop the server if it still runs, and close the pipes."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(timeout=10)  # the process is gone: its output ends
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()
