"""What a crash, or a damaged file, leaves inconsistent is verified at open: a write-ahead
log that SQLite would cut short, an operation log that disagrees with the rows, an index
that lacks what it claims. Each is refused with STORAGE_ERROR naming `memcore check`,
`repair` and `backup`, or healed with a warning; never opened quietly.

The damage is crafted, not random: the writer dies with its last writes in the WAL, and
the test flips a byte in a frame it picked, one with committed frames after it.
Opens of damaged stores run in a subprocess, as in test_store_faults.py.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

import memcore

N = 400
DIM = 8

WRITER = textwrap.dedent(
    """
    import os, sys
    import numpy as np
    import memcore

    mem = memcore.Memory(sys.argv[1], model=None)
    for i in range({n}):
        v = np.random.default_rng(i).standard_normal({dim}).astype("float32")
        mem.store_memory(f"fact number {{i}} marker zq{{i}}x", vector=v)
    os._exit(0)  # as a kill -9 leaves it: the last writes only in the WAL
    """
).format(n=N, dim=DIM)

OPEN_PROBE = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import memcore

    def top(hits):
        return hits[0].memory.content if hits else None

    try:
        with memcore.Memory(sys.argv[1], model=None) as mem:
            text = vectors = 0
            for i in range({n}):
                content = f"fact number {{i}} marker zq{{i}}x"
                text += top(mem.search_text(f"zq{{i}}x marker {{i}}", limit=1)) == content
                v = np.random.default_rng(i).standard_normal({dim}).astype("float32")
                vectors += top(mem.search(vector=v, limit=1)) == content
            warnings = list(mem._engine.index_status().warnings)
            ok = mem.check().ok
            count = mem.count_memories()
        print(json.dumps({{"opened": True, "count": count, "text": text, "vectors": vectors,
                           "warnings": warnings, "check_ok": ok}}))
    except memcore.MemcoreError as exc:
        print(json.dumps({{"opened": False, "code": exc.code, "message": str(exc)}}))
    """
).format(n=N, dim=DIM)


def probe(path: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", OPEN_PROBE, str(path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"the open crashed ({done.returncode}): {done.stderr[-2000:]}"
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memcore.cli", *args], capture_output=True, text=True, timeout=120
    )


def crashed_store(path: Path) -> None:
    """A store whose writer died with writes in its WAL."""
    subprocess.run([sys.executable, "-c", WRITER, str(path)], check=True, timeout=300)
    assert (path / "memcore.db-wal").stat().st_size > 0


def frames(wal: Path, page_size: int = 4096) -> list[tuple[int, bool, bool]]:
    """Each whole frame of the log: (offset, is a commit, carries the header's salts)."""
    data = wal.read_bytes()
    salts = data[16:24]
    size = 24 + page_size
    found = []
    for offset in range(32, len(data) - size + 1, size):
        commit = struct.unpack(">I", data[offset + 4 : offset + 8])[0] != 0
        found.append((offset, commit, data[offset + 8 : offset + 16] == salts))
    return found


def flip_a_frame_with_commits_after(wal: Path) -> None:
    """Flip one byte in the page of the earliest frame of the log that has committed
    frames of the same log after it."""
    listed = frames(wal)
    ours = [i for i, (_, _, same) in enumerate(listed) if same]
    commits = [i for i in ours if listed[i][1]]
    assert len(commits) >= 2, f"the writer left too few commits in the log: {listed[:5]}"
    victim = ours[0]
    assert commits[-1] > victim
    offset = listed[victim][0] + 24 + 200
    with wal.open("r+b") as f:
        f.seek(offset)
        byte = f.read(1)
        f.seek(offset)
        f.write(bytes([byte[0] ^ 0x08]))


def rows_sqlite_would_keep(path: Path, scratch: Path) -> int | None:
    """What SQLite itself makes of a copy of the damaged pair (None: not even readable)."""
    scratch.mkdir()
    for name in ("memcore.db", "memcore.db-wal"):
        shutil.copy(path / name, scratch / name)
    try:
        with sqlite3.connect(scratch / "memcore.db") as conn:
            return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
    except sqlite3.DatabaseError:
        return None


def test_a_wal_damaged_before_committed_frames_is_refused_then_repaired(
    data_dir: Path, tmp_path: Path
) -> None:
    crashed_store(data_dir)
    wal = data_dir / "memcore.db-wal"
    flip_a_frame_with_commits_after(wal)
    damaged = wal.read_bytes()
    # Left to itself, SQLite opens this pair without a word and loses writes.
    kept = rows_sqlite_would_keep(data_dir, tmp_path / "sqlite-alone")
    assert kept is None or kept < N, kept

    result = probe(data_dir)
    assert result["opened"] is False, result
    assert result["code"] == "STORAGE_ERROR"
    message = str(result["message"])
    assert str(wal) in message and "committed write" in message, message
    for fix in ("memcore backup", "memcore repair --accept-empty", "memcore check"):
        assert fix in message, message
    assert wal.read_bytes() == damaged, "the refused open left the log as it was"

    refused = cli("repair", "--data-dir", str(data_dir))
    assert refused.returncode == 1 and "STORAGE_ERROR" in refused.stderr, refused.stderr
    repaired = cli("repair", "--accept-empty", "--data-dir", str(data_dir))
    assert repaired.returncode == 0, repaired.stderr
    report = json.loads(repaired.stdout)
    assert Path(report["log_set_aside"]).read_bytes() == damaged
    after = probe(data_dir)
    assert after["opened"] is True and after["check_ok"] is True, after
    # What survives is what the log held before the damage, every bit of it findable.
    assert 0 < after["count"] < N, after  # type: ignore[operator]
    assert after["text"] == after["vectors"] == after["count"], after


def test_a_sound_crash_leftover_opens_with_everything(data_dir: Path) -> None:
    """The same crash without the damage: every write there, no warning (the checks at
    open do not refuse what a plain kill -9 leaves)."""
    crashed_store(data_dir)
    result = probe(data_dir)
    assert result == {
        "opened": True,
        "count": N,
        "text": N,
        "vectors": N,
        "warnings": [],
        "check_ok": True,
    }, result


def test_an_index_that_lost_documents_is_rebuilt_with_a_warning(
    data_dir: Path, tmp_path: Path
) -> None:
    """A stale copy of the index folder (fewer documents at a lower watermark than this
    store's): the open sees the index lacks what it claims, and rebuilds it."""
    with memcore.Memory(data_dir, model=None) as mem:
        for i in range(N):
            v = np.random.default_rng(i).standard_normal(DIM).astype(np.float32)
            mem.store_memory(f"fact number {i} marker zq{i}x", vector=v)
    other = tmp_path / "other"
    with memcore.Memory(other, model=None) as mem:
        for i in range(20):
            v = np.random.default_rng(1000 + i).standard_normal(DIM).astype(np.float32)
            mem.store_memory(f"another store {i}", vector=v)
    shutil.rmtree(data_dir / "index")
    shutil.copytree(other / "index", data_dir / "index")
    result = probe(data_dir)
    assert result["opened"] is True, result
    assert (result["count"], result["text"], result["vectors"]) == (N, N, N), result
    assert result["check_ok"] is True, result
    warnings = " ".join(result["warnings"])  # type: ignore[arg-type]
    assert "text index claimed" in warnings and "rebuilt" in warnings, warnings
