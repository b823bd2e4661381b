"""Export pages and restore batches of the native engine: every record type
round-trips with its ids, times, links and vectors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import memcore
from backends import Backend
from memcore import _core


def _populate(engine: _core.Engine) -> None:
    engine.store_memory(
        "default", "User likes tea", vector=np.ones(4, dtype=np.float32), entities=["Bob"]
    )
    engine.save_memory(
        "default",
        "t1",
        [
            {
                "name": "Alice",
                "entityType": "Person",
                "observations": ["Works at ACME"],
                "relations": [{"targetEntity": "Bob", "relationType": "knows"}],
            }
        ],
    )
    engine.record_turn(
        "default",
        "c1",
        "t1",
        "fix the bug",
        agent_text="fixed",
        procedures=[
            {
                "tool": "EDIT",
                "documents": [
                    {"canonical": "a.py", "content_hash": "h", "content": "x=1", "written": True}
                ],
            }
        ],
    )
    engine.index_file(
        "default",
        "proj",
        "a.py",
        "python",
        "fh",
        [
            {
                "start_line": 1,
                "end_line": 2,
                "chunk_type": "function",
                "content": "def f(): pass",
                "content_hash": "c",
            }
        ],
    )


def _dump(engine: _core.Engine) -> list[dict[str, object]]:
    records: list[dict[str, object]] = []
    for kind in _core.Engine.export_kinds():
        after = ""
        while page := engine.export_page(kind, after=after, limit=2, with_vectors=True):
            records += page
            last = page[-1]
            is_mention = kind == "mention"
            after = f"{last['memory_id']}\t{last['entity_id']}" if is_mention else str(last["id"])
    return records


def test_every_record_type_round_trips(backend: Backend, tmp_path: Path) -> None:
    source = backend.engine(tmp_path / "a")
    _populate(source)
    records = _dump(source)
    assert {r["type"] for r in records} == set(_core.Engine.export_kinds())
    target = backend.engine(tmp_path / "b")
    assert target.restore(records) == {"restored": len(records), "skipped": 0}
    assert _dump(target) == records
    # Restored records are searchable and linked like the originals.
    assert [h.memory.content for h in target.search_text("default", "tea")] == ["User likes tea"]
    assert [r.name for r in target.get_related("default", "Alice")] == ["Bob"]
    hits = target.search_vector("default", np.ones(4, dtype=np.float32), limit=1)
    assert hits[0].memory.content == "User likes tea"
    assert target.search_code("default", "f", project_id="proj")[0].file_path == "a.py"
    assert target.get_turn("default", "c1", "t1").procedures[0].tool == "EDIT"
    if backend.on_postgres:  # the restored rows are PostgreSQL's: a new node has them all
        assert _dump(backend.engine(tmp_path / "b2", node_of=tmp_path / "b")) == records


def test_existing_ids_fail_the_batch_unless_skipped(backend: Backend, tmp_path: Path) -> None:
    source = backend.engine(tmp_path / "a")
    _populate(source)
    records = _dump(source)
    with pytest.raises(memcore.InvalidParameterError, match="already exists"):
        source.restore(records)
    assert source.restore(records, skip_existing=True) == {
        "restored": 0,
        "skipped": len(records),
    }


def test_malformed_records_are_refused_with_their_position(
    backend: Backend, tmp_path: Path
) -> None:
    engine = backend.engine(tmp_path / "a")
    with pytest.raises(memcore.InvalidParameterError, match="record 0"):
        engine.restore([{"type": "memory", "id": "mem_x"}])
    with pytest.raises(memcore.InvalidParameterError, match="Unknown record type"):
        engine.restore([{"type": "spaceship"}])
    assert engine.count_memories("default") == 0
