"""A record altered on disk is refused, never served (rust/memcore/src/store/checksum.rs).

A few flipped bits inside a memory's text leave a page SQLite finds sound and valid UTF-8;
before per-record checksums the memory was served altered with no error. Here the text is
changed behind memcore's back (a raw UPDATE leaves the checksum as it was) and every read
of it from Python raises StorageError naming the record and the fix; `check` names it, the
next open refuses the store, and `repair_store(accept_empty=True)` keeps the sound ones.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import memcore


def _alter(data_dir: Path, memory_id: str, content: str) -> None:
    db = sqlite3.connect(data_dir / "memcore.db")
    with db:
        db.execute("UPDATE memories SET content = ? WHERE id = ?", (content, memory_id))
    db.close()


def test_an_altered_memory_raises_storage_error_and_check_names_it(data_dir: Path) -> None:
    with memcore.Memory(data_dir, model=None) as mem:
        kept = mem.store_memory("the harbour crane lifts containers")
        hit = mem.store_memory("the deploy key lives in vault path ops")
        _alter(data_dir, hit.id, "the deploy key lives in vault path oqs")
        reads = [
            lambda: mem.get_memory(hit.id),
            lambda: mem.list_memories(limit=10),
            lambda: mem.search_text("deploy key vault", limit=5),
        ]
        for read in reads:
            with pytest.raises(memcore.StorageError) as raised:
                read()
            assert raised.value.code == "STORAGE_ERROR"
            message = str(raised.value)
            assert hit.id in message
            assert "memcore check" in message
            assert "memcore repair" in message
        assert mem.get_memory(kept.id).content == "the harbour crane lifts containers"
        problems = mem.check().problems
        assert [p.area for p in problems] == ["database"]
        assert hit.id in problems[0].message

    with pytest.raises(memcore.StorageError) as refused:
        memcore.Memory(data_dir, model=None)
    assert hit.id in str(refused.value)

    report = memcore.Memory.repair_store(data_dir, accept_empty=True)
    assert report.database_set_aside is not None
    with memcore.Memory(data_dir, model=None) as mem:
        assert [m.id for m in mem.list_memories(limit=10)] == [kept.id]
        assert not mem.check().problems
