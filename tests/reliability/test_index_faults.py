"""Faults in the derived indexes: damaged files, a full index disk, panics.

The indexes (`index/text`, `index/vectors`) are derived from SQLite, so no fault
in them may crash the process, lose an acknowledged memory from search, or pass
silently. Every victim that opens damaged files runs in a subprocess, so a
SIGSEGV is a failed test rather than a dead pytest.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import random
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

import memcore

DIM = 16
COUNT = 60


def vector_for(i: int) -> npt.NDArray[np.float32]:
    v = np.random.default_rng(i).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def build_store(path: Path, count: int = COUNT) -> list[str]:
    """A store of `count` memories, each with its own vector and word; indexes flushed."""
    with memcore.Memory(path, model=None) as mem:
        ids = [
            mem.store_memory(f"fact {i} carries the marker zq{i}x", vector=vector_for(i)).id
            for i in range(count)
        ]
        mem._engine.flush()
    return ids


# The victim: opens the store (read-only, then for writing, then again), checks
# every memory is found by its vector and by its word, stores one more, flushes,
# and prints what it saw as JSON. Any crash shows as a non-zero exit.
VICTIM = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import memcore

    path, count, dim = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

    def vec(i):
        v = np.random.default_rng(i).standard_normal(dim).astype(np.float32)
        return v / np.linalg.norm(v)

    def misses(mem, n):
        missed = []
        for i in range(n):
            by_vector = mem.search(vector=vec(i), limit=1)
            by_word = mem.search_text(f"zq{i}x", limit=1)
            if not by_vector or f"zq{i}x" not in by_vector[0].memory.content:
                missed.append(f"vector {i}")
            if not by_word or f"zq{i}x" not in by_word[0].memory.content:
                missed.append(f"word {i}")
        return missed

    report = {}
    with memcore.Memory(path, model=None, read_only=True) as mem:
        report["read_only"] = {
            "misses": misses(mem, count),
            "warnings": list(mem.index_health().warnings),
        }
    with memcore.Memory(path, model=None) as mem:
        first = {"misses": misses(mem, count), "warnings": list(mem.index_health().warnings)}
        first["status"] = mem.status()["store"]["indexes"]["status"]
        mem.store_memory(f"fact {count} carries the marker zq{count}x", vector=vec(count))
        mem._engine.flush()
        health = mem.index_health()
        first["after_flush"] = [health.text_pending, health.vectors_pending, health.last_error]
        first["misses_after_write"] = misses(mem, count + 1)
        report["writable"] = first
    with memcore.Memory(path, model=None) as mem:
        report["reopened"] = {
            "misses": misses(mem, count + 1),
            "warnings": list(mem.index_health().warnings),
            "text_documents": mem.index_health().text_documents,
            "vectors": mem.index_health().vectors,
        }
    print(json.dumps(report))
    """
)


def run_victim(path: Path, count: int = COUNT) -> dict[str, dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-c", VICTIM, str(path), str(count), str(DIM)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"victim died ({done.returncode}): {done.stderr[-3000:]}"
    report: dict[str, dict[str, object]] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def damage(path: Path, kind: str, rng: random.Random) -> None:
    """Flip bits in, overwrite with garbage, or truncate the file at `path`."""
    data = bytearray(path.read_bytes())
    if kind == "bitflip":
        for _ in range(max(1, len(data) // 200)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif kind == "garbage":
        start = rng.randrange(len(data))
        end = min(len(data), start + rng.randrange(1, 4096))
        data[start:end] = bytes(rng.randrange(256) for _ in range(end - start))
    else:
        del data[rng.randrange(len(data)) :]
    path.write_bytes(bytes(data))


def index_files(store: Path) -> list[Path]:
    """Every non-empty file of the derived indexes, but locks (the owner's lock file holds
    its pid: no index data)."""
    return sorted(
        p
        for p in (store / "index").rglob("*")
        if p.is_file() and p.stat().st_size and p.suffix != ".lock"
    )


# Files whose damage must be detected (and reported); in the others (tantivy's
# bookkeeping JSON) a change may be harmless, and then nothing needs rebuilding.
def must_be_detected(path: Path) -> bool:
    return path.suffix not in {".json"} or path.name == "vectors.json"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("pristine") / "store"
    build_store(store)
    return store


def test_the_pristine_store_reports_no_warnings(pristine: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    shutil.copytree(pristine, store)
    report = run_victim(store)
    for phase in ("read_only", "writable", "reopened"):
        assert report[phase]["misses"] == [], phase
        assert report[phase].get("warnings", []) == [], phase


def test_a_damaged_index_file_is_logged_as_one_short_line(
    pristine: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The open's warning names the file and the check it failed, nothing more (a damaged
    meta.json was logged whole, ~2 KB of JSON in one warning line)."""
    store = tmp_path / "store"
    shutil.copytree(pristine, store)
    meta = store / "index" / "text" / "meta.json"
    content = meta.read_text()
    meta.write_text(content[: len(content) // 2])
    with (
        caplog.at_level(logging.WARNING, logger="memcore.indexes"),
        memcore.Memory(store, model=None) as mem,
    ):
        assert mem.search_text("zq7x")[0].memory.content.endswith("zq7x")
    lines = [r.getMessage() for r in caplog.records if r.name == "memcore.indexes"]
    assert len(lines) == 1, lines
    line = lines[0]
    assert "(meta.json failed the open check)" in line, line
    assert "\n" not in line and "segments" not in line, line
    # The store's path twice (where, and where the folder went), and one sentence.
    assert len(line) < 2 * len(str(store)) + 250, line


def test_damage_to_any_index_file_never_crashes_or_loses_a_memory(
    pristine: Path, tmp_path: Path
) -> None:
    rng = random.Random(20)
    kinds = ["bitflip", "garbage", "truncate"]
    files = [p.relative_to(pristine) for p in index_files(pristine)]
    assert any(p.suffix == ".usearch" for p in files) and any(
        p.parent.name == "text" for p in files
    ), files
    for n, relative in enumerate(files):
        kind = kinds[n % len(kinds)]
        store = tmp_path / f"case{n}"
        shutil.copytree(pristine, store)
        damage(store / relative, kind, rng)
        report = run_victim(store)
        case = f"{kind} of {relative}"
        for phase in ("read_only", "writable", "reopened"):
            assert report[phase]["misses"] == [], f"{case}: {phase}: {report[phase]}"
        writable = report["writable"]
        assert writable["misses_after_write"] == [], case
        assert writable["after_flush"] == [0, 0, None], f"{case}: rebuilt and committed"
        if must_be_detected(relative):
            assert report["read_only"]["warnings"], f"{case}: read-only open must say so"
            assert writable["warnings"], f"{case}: the set-aside must be reported"
            assert writable["status"] == "degraded", case
            aside = list((store / "index").rglob("*.corrupt-*"))
            assert aside, f"{case}: the damaged files are kept aside"
        # Healed: the next open finds sound files and says nothing.
        reopened = report["reopened"]
        assert reopened["warnings"] == [], f"{case}: {reopened['warnings']}"
        assert reopened["text_documents"] == COUNT + 1, case
        assert reopened["vectors"] == COUNT + 1, case


def test_every_kind_of_damage_to_the_vector_graph_is_caught(pristine: Path, tmp_path: Path) -> None:
    rng = random.Random(7)
    for kind in ("bitflip", "garbage", "truncate"):
        store = tmp_path / kind
        shutil.copytree(pristine, store)
        (graph,) = (store / "index" / "vectors").glob("*.usearch")
        damage(graph, kind, rng)
        report = run_victim(store)
        assert report["read_only"]["misses"] == [], kind
        assert any("vector index" in w for w in report["writable"]["warnings"]), kind
        assert report["reopened"]["misses"] == [] and report["reopened"]["warnings"] == []


# A panic inside tantivy: segment files damaged under an open store (tantivy maps
# them into memory), then searches. Some damage makes tantivy panic, which
# reached Python as PanicException (a BaseException the MCP server did not
# catch); seeds are tried until one does.
PANICKER = textwrap.dedent(
    """
    import glob, json, os, random, sys
    import numpy as np
    import memcore

    path, seed = sys.argv[1], int(sys.argv[2])
    mem = memcore.Memory(path, model=None)
    for i in range(400):
        mem.store_memory(f"note {i} about topic{i % 7} and word{i} plus filler")
    mem._engine.flush()
    rng = random.Random(seed)
    for name in glob.glob(os.path.join(path, "index", "text", "*")):
        if name.endswith(".json") or "lock" in name or not os.path.getsize(name):
            continue
        with open(name, "r+b") as f:
            data = bytearray(f.read())
            for _ in range(len(data) // 8):
                data[rng.randrange(len(data))] = rng.randrange(256)
            f.seek(0)
            f.write(data)
    outcomes = []
    for query in ["topic1", "word5", "note filler", "word399"]:
        try:
            mem.search_text(query, limit=5)
            outcomes.append("ok")
        except memcore.MemcoreError as e:
            outcomes.append(f"{e.code}: {e}")
    outcomes.append(mem.store_memory("written after the panic marker zqafterx").id)
    print(json.dumps({"outcomes": outcomes, "warnings": list(mem.index_health().warnings)}))
    mem.close()
    """
)


def test_a_panic_in_the_core_becomes_a_storage_error_and_a_rebuild(tmp_path: Path) -> None:
    # Which bytes a seed hits differs from run to run (segment names and sizes), so
    # enough seeds are tried that one makes tantivy panic every time.
    for seed in range(1, 41):
        store = tmp_path / f"seed{seed}"
        done = subprocess.run(
            [sys.executable, "-c", PANICKER, str(store), str(seed)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, f"seed {seed} died: {done.stderr[-3000:]}"
        report = json.loads(done.stdout.strip().splitlines()[-1])
        panicked = [o for o in report["outcomes"] if "internal error" in o]
        if panicked:
            break
    else:
        pytest.skip("no seed made tantivy panic on this build")
    assert all(o.startswith("STORAGE_ERROR") for o in panicked), panicked
    assert "rebuilt from the database" in panicked[0]
    assert any("rebuilt from the database at the next open" in w for w in report["warnings"])
    # The next open honours the mark: every memory findable again, the rebuild said.
    with memcore.Memory(store, model=None) as mem:
        assert any("rebuilt" in w for w in mem.index_health().warnings)
        for i in (1, 5, 399):
            hits = mem.search_text(f"word{i}", limit=3)
            assert any(f"word{i} " in h.memory.content for h in hits), i
        assert mem.search_text("zqafterx", limit=1)
    with memcore.Memory(store, model=None) as mem:
        assert mem.index_health().warnings == ()


# -- a full disk under the index folder ------------------------------------------------


@contextlib.contextmanager
def small_disk(mountpoint: Path, size: str) -> Iterator[None]:
    """A tmpfs of `size` at `mountpoint` (root only; skips elsewhere)."""
    mountpoint.mkdir(parents=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mountpoint)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr!r}")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(mountpoint)], check=False)


def fill(folder: Path) -> Path:
    """Write a ballast file until the disk under `folder` is full."""
    ballast = folder / "ballast"
    fd = os.open(ballast, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for chunk in (1 << 20, 1 << 16, 1 << 12, 1 << 8, 1):
            try:
                while True:
                    os.write(fd, b"\0" * chunk)
            except OSError as e:
                assert e.errno == errno.ENOSPC, e
    finally:
        os.close(fd)
    return ballast


def words_missing(mem: memcore.Memory, start: int, end: int) -> list[int]:
    return [
        i
        for i in range(start, end)
        if not any(f"zq{i}x" in h.memory.content for h in mem.search_text(f"zq{i}x", limit=1))
    ]


def test_a_full_index_disk_loses_nothing_from_search(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with small_disk(store / "index", "8m"):
        before, during = 50, 300
        with memcore.Memory(store, model=None) as mem:
            for i in range(before):
                mem.store_memory(f"fact {i} carries the marker zq{i}x", vector=vector_for(i))
            mem._engine.flush()
            ballast = fill(store / "index")
            for i in range(before, before + during):
                mem.store_memory(f"fact {i} carries the marker zq{i}x", vector=vector_for(i))
            with pytest.raises(memcore.StorageError):
                mem._engine.flush()
            health = mem.index_health()
            assert health.last_error is not None
            assert health.text_pending >= during, health
            assert mem.status()["store"]["indexes"]["status"] == "failing"
            # Every acknowledged memory stays findable while the disk is full.
            assert words_missing(mem, 0, before + during) == []
        # Reopened while still full: replayed from what the index really holds.
        with memcore.Memory(store, model=None) as mem:
            assert words_missing(mem, 0, before + during) == []
            assert mem.index_health().text_pending >= during
            with pytest.raises(memcore.StorageError):
                mem._engine.flush()
            assert mem.index_health().last_error is not None
            ballast.unlink()
            mem._engine.flush()
            health = mem.index_health()
            assert health.last_error is None, health
            assert (health.text_pending, health.vectors_pending) == (0, 0)
            assert health.text_documents == before + during
            assert words_missing(mem, 0, before + during) == []
        with memcore.Memory(store, model=None) as mem:
            health = mem.index_health()
            assert (health.text_documents, health.vectors) == (before + during,) * 2
            assert health.last_error is None and health.text_pending == 0
            assert words_missing(mem, 0, before + during) == []
            hits = mem.search(vector=vector_for(before + 7), limit=1)
            assert f"zq{before + 7}x" in hits[0].memory.content
