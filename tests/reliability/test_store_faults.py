"""Damage to the truth (the SQLite database) is reported, never opened as an empty store;
`check` finds index inconsistencies, `repair` fixes them, `backup` copies a live store.

Opens of damaged files run in a subprocess: if one crashed, the test sees a signal exit
instead of losing the test run.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import memcore
from memcore.errors import InvalidParameterError, StorageError

N = 300
DIM = 8

OPEN_PROBE = textwrap.dedent(
    """
    import json, sys
    import memcore

    path, read_only = sys.argv[1], sys.argv[2] == "ro"
    try:
        with memcore.Memory(path, model=None, read_only=read_only) as mem:
            found = sum(1 for i in range({n}) if mem.search_text(f"zq{{i}}x", limit=1))
            problems = [p.area for p in mem.check().problems]
            print(json.dumps({{"opened": True, "found": found, "problems": problems}}))
    except memcore.MemcoreError as exc:
        print(json.dumps({{"opened": False, "code": exc.code, "message": str(exc)}}))
    """
).format(n=N)


def vector(i: int) -> np.ndarray:
    return np.random.default_rng(i).standard_normal(DIM).astype(np.float32)


def fill(path: Path, n: int = N) -> list[str]:
    """A closed store of `n` memories, each with a vector and a unique word."""
    with memcore.Memory(path, model=None) as mem:
        ids = [
            mem.store_memory(f"fact number {i} marker zq{i}x", vector=vector(i)).id
            for i in range(n)
        ]
        mem._engine.flush()
    return ids


def probe(path: Path, *, read_only: bool = False) -> dict[str, object]:
    """Open the store in a child process; what happened (a crash fails the test)."""
    done = subprocess.run(
        [sys.executable, "-c", OPEN_PROBE, str(path), "ro" if read_only else "rw"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"the open crashed ({done.returncode}): {done.stderr[-2000:]}"
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def assert_refused_with_fix(result: dict[str, object], db: Path) -> None:
    assert result["opened"] is False, result
    assert result["code"] == "STORAGE_ERROR"
    message = str(result["message"])
    assert str(db) in message
    assert "memcore backup" in message and "--accept-empty" in message


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memcore.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


# -- the database checked on open ----------------------------------------------------------


@pytest.mark.parametrize("read_only", [False, True])
def test_a_database_truncated_to_zero_is_refused_not_opened_empty(
    data_dir: Path, read_only: bool
) -> None:
    fill(data_dir)
    db = data_dir / "memcore.db"
    os.truncate(db, 0)
    assert_refused_with_fix(probe(data_dir, read_only=read_only), db)
    assert db.stat().st_size == 0, "the refused open wrote nothing"


def test_a_database_truncated_by_half_is_refused(data_dir: Path) -> None:
    fill(data_dir)
    db = data_dir / "memcore.db"
    os.truncate(db, db.stat().st_size // 2)
    assert_refused_with_fix(probe(data_dir), db)


def test_a_damaged_table_page_is_refused(data_dir: Path) -> None:
    fill(data_dir)
    db = data_dir / "memcore.db"
    with sqlite3.connect(db) as conn:
        (root,) = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'memories'"
        ).fetchone()
        (page_size,) = conn.execute("PRAGMA page_size").fetchone()
    conn.close()
    with db.open("r+b") as f:
        f.seek((root - 1) * page_size)
        f.write(np.random.default_rng(1).bytes(page_size))
    assert_refused_with_fix(probe(data_dir), db)


@pytest.mark.parametrize("seed", range(8))
def test_a_random_damaged_page_never_opens_silently(data_dir: Path, seed: int) -> None:
    """Garbage over one page anywhere but the header: refused with the fix, or opened
    with every memory findable and `check` naming the damage; never a silent miss."""
    fill(data_dir)
    db = data_dir / "memcore.db"
    pages = db.stat().st_size // 4096
    rng = np.random.default_rng(seed)
    page = int(rng.integers(1, pages))
    with db.open("r+b") as f:
        f.seek(page * 4096)
        f.write(rng.bytes(4096))
    result = probe(data_dir)
    if result["opened"]:
        assert result["found"] == N, result
        assert "database" in result["problems"], result  # type: ignore[operator]
    else:
        assert_refused_with_fix(result, db)


def test_a_database_older_than_its_indexes_is_refused_until_they_go(
    data_dir: Path, tmp_path: Path
) -> None:
    """A database replaced by an older copy (the indexes saw later writes) is refused;
    restoring as the message says (delete the index folder) opens the copy's records."""
    ids = fill(data_dir, 20)
    with memcore.Memory(data_dir, model=None) as mem:
        mem.backup(tmp_path / "old.db")
        mem.store_memory("written after the backup", vector=vector(99))
        mem._engine.flush()
    db = data_dir / "memcore.db"
    shutil.copy(tmp_path / "old.db", db)
    result = probe(data_dir)
    assert_refused_with_fix(result, db)
    assert "lost writes" in str(result["message"])
    shutil.rmtree(data_dir / "index")
    with memcore.Memory(data_dir, model=None) as mem:
        assert mem.count_memories() == 20
        assert mem.search_text("zq7x")[0].memory.id == ids[7]


def test_repair_refuses_a_damaged_database_unless_accept_empty(data_dir: Path) -> None:
    fill(data_dir, 10)
    db = data_dir / "memcore.db"
    os.truncate(db, 0)
    refused = cli("repair", "--data-dir", str(data_dir))
    assert refused.returncode == 1
    assert "STORAGE_ERROR" in refused.stderr and "--accept-empty" in refused.stderr
    accepted = cli("repair", "--accept-empty", "--data-dir", str(data_dir))
    assert accepted.returncode == 0, accepted.stderr
    report = json.loads(accepted.stdout)
    assert report["indexes_rebuilt"] is True and report["documents"] == 0
    assert Path(report["database_set_aside"]).exists()
    with memcore.Memory(data_dir, model=None) as mem:
        assert mem.count_memories() == 0
        assert mem.search_text("zq3x") == []


# -- check and repair --------------------------------------------------------------------


def test_a_healthy_store_checks_clean(data_dir: Path) -> None:
    fill(data_dir, 30)
    with memcore.Memory(data_dir, model=None) as mem:
        report = mem.check()
    assert report.ok and report.integrity == ["ok"] and report.problems == []
    by_index = {i.index: i for i in report.indexes}
    assert by_index["text"].expected == 30 and by_index["text"].missing == 0
    assert by_index["vectors"].expected == 30 and by_index["vectors"].missing == 0
    done = cli("check", "--data-dir", str(data_dir))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ok"] is True


def test_an_index_out_of_step_is_rebuilt_at_open_and_repair_rebuilds_on_demand(
    data_dir: Path, tmp_path: Path
) -> None:
    """Injected inconsistency: the index folder of another, smaller store whose watermark
    is behind this one's log (as a stale copy of the folder would be). The open replays
    the later ops, so counts look plausible, but this store's early documents are absent:
    the open samples documents up to the watermark, sees them missing, and rebuilds the
    indexes from the database with a warning (`check` finds what the sample misses:
    engine/check.rs, `check_finds_a_document_missing_from_a_live_index`)."""
    ids = fill(data_dir, 20)
    other = tmp_path / "other"
    with memcore.Memory(other, model=None) as mem:
        made = [
            mem.store_memory(f"another store {i}", vector=vector(1000 + i)).id for i in range(5)
        ]
        mem.delete_memory(made[0])
        mem.delete_memory(made[1])
        mem._engine.flush()
    shutil.rmtree(data_dir / "index")
    shutil.copytree(other / "index", data_dir / "index")

    with memcore.Memory(data_dir, model=None) as mem:
        warnings = " ".join(mem._engine.index_status().warnings)
        assert "text index claimed" in warnings and "vector index claimed" in warnings
        assert mem.search_text("zq0x")[0].memory.id == ids[0]
        assert mem.search(vector=vector(5), limit=1)[0].memory.id == ids[5]
        assert mem.check().ok
    done = cli("check", "--data-dir", str(data_dir))
    assert done.returncode == 0, done.stderr

    done = cli("repair", "--data-dir", str(data_dir))
    assert done.returncode == 0, done.stderr
    with memcore.Memory(data_dir, model=None) as mem:
        assert mem.check().ok
        assert mem.search_text("zq0x")[0].memory.id == ids[0]
        assert mem.search(vector=vector(5), limit=1)[0].memory.id == ids[5]


def test_repair_on_an_open_store_rebuilds_in_place(data_dir: Path) -> None:
    ids = fill(data_dir, 15)
    with memcore.Memory(data_dir, model=None) as mem:
        report = mem.repair()
        assert report.indexes_rebuilt and report.documents == 15
        assert report.database_set_aside is None
        assert mem.search_text("zq4x")[0].memory.id == ids[4]
        assert mem.check().ok


def test_check_store_is_an_admin_tool() -> None:
    from memcore.tools.groups import load_registry

    spec = load_registry().get("check_store")
    assert spec is not None and spec.store_wide and spec.read_only and spec.group == "admin"


# -- backup ---------------------------------------------------------------------------------

WRITER = textwrap.dedent(
    """
    import sys
    import numpy as np
    import memcore

    with memcore.Memory(sys.argv[1], model=None) as mem:
        i = 0
        while True:
            v = np.random.default_rng(i).standard_normal({dim}).astype("float32")
            r = mem.store_memory(f"fact number {{i}} marker zq{{i}}x", vector=v)
            print(i, r.id, flush=True)
            i += 1
    """
).format(dim=DIM)


def test_backup_while_another_process_writes_holds_every_acknowledged_memory(
    data_dir: Path, tmp_path: Path
) -> None:
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(data_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    acknowledged: dict[int, str] = {}
    try:
        assert writer.stdout is not None
        while len(acknowledged) < 200:
            line = writer.stdout.readline()
            assert line, writer.stderr.read() if writer.stderr else "writer died"
            i, memory_id = line.split()
            acknowledged[int(i)] = memory_id
        # The writer holds the store: the command falls back to a read-only open and
        # copies while stores go on.
        dest = tmp_path / "backup"
        dest.mkdir()
        done = cli("backup", str(dest), "--data-dir", str(data_dir))
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["path"] == str(dest / "memcore.db")
        assert report["last_seq"] >= len(acknowledged)
        # A check beside the live writer (read-only, a poll behind it) finds nothing
        # wrong: writes newer than what it follows are not counted as missing.
        checked = cli("check", "--data-dir", str(data_dir))
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert writer.poll() is None, "the writer kept running"
    finally:
        writer.kill()
        writer.wait()
        if writer.stdout is not None:
            writer.stdout.close()
        if writer.stderr is not None:
            writer.stderr.close()

    assert sorted(p.name for p in dest.iterdir()) == ["memcore.db"], "one file, no WAL"
    with memcore.Memory(dest, model=None) as restored:
        assert restored.check().ok
        for i, memory_id in acknowledged.items():
            assert restored.get_memory(memory_id).content == f"fact number {i} marker zq{i}x"
        for i in (0, 99, 199):
            assert restored.search_text(f"zq{i}x")[0].memory.id == acknowledged[i]


def test_check_and_backup_never_create_a_store(tmp_path: Path) -> None:
    missing = tmp_path / "nothing"
    for command in (["check"], ["backup", str(tmp_path / "b.db")]):
        done = cli(*command, "--data-dir", str(missing))
        assert done.returncode == 1 and "NOT_FOUND" in done.stderr, done.stderr
    assert not missing.exists()


def test_backup_never_overwrites(data_dir: Path, tmp_path: Path) -> None:
    fill(data_dir, 3)
    target = tmp_path / "b.db"
    target.write_bytes(b"precious")
    with memcore.Memory(data_dir, model=None) as mem, pytest.raises(InvalidParameterError):
        mem.backup(target)
    assert target.read_bytes() == b"precious"


def test_a_read_only_instance_cannot_repair(data_dir: Path) -> None:
    fill(data_dir, 3)
    with memcore.Memory(data_dir, model=None, read_only=True) as mem, pytest.raises(StorageError):
        mem.repair()
