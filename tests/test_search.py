"""Search through the facade: vector, BM25 and hybrid recall, with filters,
as_of, read-your-writes from many threads, supersede hints and recovery."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

import memcore
from conftest import unit


def test_vector_search_ranks_by_cosine(mem: memcore.Memory) -> None:
    ids = [mem.store_memory(f"memory {i}", vector=unit(i)).id for i in range(20)]
    hits = mem.search(vector=unit(7), limit=5)
    assert hits[0].memory.id == ids[7]
    assert hits[0].scores.vector == pytest.approx(1.0, abs=1e-5)
    sims = [h.scores.vector for h in hits]
    assert sims == sorted(sims, reverse=True)
    assert "embedding" not in hits[0].to_dict() and "vector" not in hits[0].memory.to_dict()


def test_search_needs_a_model_or_a_vector(mem: memcore.Memory) -> None:
    with pytest.raises(memcore.EmbeddingError):
        mem.search("anything")


def test_bm25_finds_words_and_stems(mem: memcore.Memory) -> None:
    a = mem.store_memory("The user is running a marathon in April").id
    mem.store_memory("Completely unrelated sentence about cooking pasta")
    hits = mem.search_text("runs marathons")
    assert [h.memory.id for h in hits] == [a]
    assert hits[0].scores.bm25 is not None and hits[0].scores.bm25 > 0


def test_camel_case_identifiers_match_words(mem: memcore.Memory) -> None:
    a = mem.store_memory("Call getUserName before rendering the header").id
    assert [h.memory.id for h in mem.search_text("user name")] == [a]


def test_filters_thread_and_validity_inside_search(mem: memcore.Memory) -> None:
    in_thread = mem.store_memory("shared topic alpha", thread_id="t1", vector=unit(1)).id
    other = mem.store_memory("shared topic beta", thread_id="t2", vector=unit(2)).id
    assert [h.memory.id for h in mem.search_text("shared topic", thread_id="t1")] == [in_thread]
    assert [h.memory.id for h in mem.search(vector=unit(2), thread_id="t1")] == [in_thread]
    mem.invalidate(other)
    assert [h.memory.id for h in mem.search_text("shared topic")] == [in_thread]
    both = mem.search_text("shared topic", include_invalid=True)
    assert {h.memory.id for h in both} == {in_thread, other}


def test_as_of_sees_superseded_facts_in_the_past(mem: memcore.Memory) -> None:
    old = mem.store_memory("User lives in Seattle", vector=unit(1))
    new = mem.store_memory("User lives in Austin", vector=unit(2))
    mem.supersede_memory(old.id, new.id)
    now_hits = mem.recall("user lives", vector=unit(1))
    assert [h.memory.id for h in now_hits] == [new.id]
    before = old.created.created_at + timedelta(microseconds=1)
    past = mem.recall("user lives", vector=unit(1), as_of=before)
    assert [h.memory.id for h in past] == [old.id]
    assert [h.memory.id for h in mem.search_text("seattle", as_of=before)] == [old.id]


def test_namespaces_never_cross_in_search(data_dir: Path) -> None:
    with memcore.Memory(data_dir, model=None, namespace="alice") as alice:
        alice.store_memory("secret plan zebra", vector=unit(3))
        assert alice.search_text("zebra", namespace="bob") == []
        assert alice.search(vector=unit(3), namespace="bob") == []
        assert len(alice.search_text("zebra")) == 1


def test_selective_filter_still_returns_k(mem: memcore.Memory) -> None:
    vectors = np.stack([unit(i) for i in range(3000)])
    contents = [f"bulk memory {i}" for i in range(3000)]
    mem.store_memories(contents, vectors=vectors)
    for i in range(8):
        mem.store_memory(f"rare thread memory {i}", thread_id="rare", vector=unit(10_000 + i))
    hits = mem.search(vector=unit(1), limit=5, thread_id="rare")
    assert len(hits) == 5
    assert all(h.memory.thread_id == "rare" for h in hits)


def test_store_reports_similar_memories_with_the_supersede_call(mem: memcore.Memory) -> None:
    base = unit(5, 16)
    old = mem.store_memory("User lives in Seattle", vector=base)
    nudge = unit(6, 16) * 0.1
    new = mem.store_memory("User moved to Austin", vector=base + nudge)
    assert [m.id for m in new.similar] == [old.id]
    assert new.action_required is not None
    assert f'supersede_memory("{old.id}", "{new.id}")' in new.action_required
    unrelated = mem.store_memory("Cats purr", vector=unit(99, 16))
    assert unrelated.similar == [] and unrelated.action_required is None
    payload = new.to_dict()
    assert set(payload) >= {"id", "created", "similar", "action_required"}


def test_search_memories_limits_and_filters_superseded(mem: memcore.Memory) -> None:
    old = mem.store_memory("Favourite colour is blue")
    new = mem.store_memory("Favourite colour is green")
    mem.supersede_memory(old.id, new.id)
    hits = mem.search_memories("favourite colour")
    assert [h.memory.id for h in hits] == [new.id]
    assert 0.0 <= hits[0].relevance_score <= 1.0
    for bad in (0, 21):
        with pytest.raises(memcore.InvalidParameterError):
            mem.search_memories("x", limit=bad)


def test_recall_modes_and_weights(mem: memcore.Memory) -> None:
    a = mem.store_memory("python packaging with maturin", vector=unit(1)).id
    mem.store_memory("gardening tips for spring", vector=unit(2))
    for mode in ("zscore", "rrf"):
        hits = mem.recall("maturin packaging", vector=unit(1), mode=mode)  # type: ignore[arg-type]
        assert hits[0].memory.id == a
        assert hits[0].scores.vector is not None and hits[0].scores.bm25 is not None
    with pytest.raises(memcore.InvalidParameterError):
        mem.recall("x", mode="bogus")  # type: ignore[arg-type]
    with pytest.raises(memcore.InvalidParameterError):
        mem.recall("x", weights=(-1.0, 0.1, 0.1))


def test_limits_are_enforced(mem: memcore.Memory) -> None:
    mem.store_memory("x y z", vector=unit(1))
    for bad in (0, 51):
        with pytest.raises(memcore.InvalidParameterError):
            mem.search_text("x", bad)
    with pytest.raises(memcore.InvalidParameterError):
        mem.search(vector=unit(1, 4))  # wrong dimension


def test_read_your_writes_from_many_threads(mem: memcore.Memory) -> None:
    errors: list[str] = []

    def worker(t: int) -> None:
        for i in range(40):
            n = t * 1000 + i
            r = mem.store_memory(f"thread {t} item wq{n}z", vector=unit(n, 16))
            got = [h.memory.id for h in mem.search_text(f"wq{n}z", 1)]
            if got != [r.id]:
                errors.append(f"text {n}: {got}")
            got = [h.memory.id for h in mem.search(vector=unit(n, 16), limit=1)]
            if got != [r.id]:
                errors.append(f"vector {n}: {got}")

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []


def test_index_folder_deleted_is_rebuilt(data_dir: Path) -> None:
    with memcore.Memory(data_dir, model=None) as mem:
        ids = [mem.store_memory(f"durable fact kq{i}y", vector=unit(i)).id for i in range(30)]
    import shutil

    shutil.rmtree(data_dir / "index")
    with memcore.Memory(data_dir, model=None) as mem:
        for i, mem_id in enumerate(ids):
            assert [h.memory.id for h in mem.search_text(f"kq{i}y", 1)] == [mem_id]
            assert [h.memory.id for h in mem.search(vector=unit(i), limit=1)] == [mem_id]
        mem._engine.flush()
        status = mem._engine.index_status()
        assert status["vectors"] == 30 and status["text_documents"] == 30


def test_expired_memories_leave_search(mem: memcore.Memory) -> None:
    past = datetime.now(UTC) - timedelta(seconds=1)
    mem.store_memory(
        "ephemeral note", valid_from=past - timedelta(hours=1), expires_at=past, vector=unit(1)
    )
    assert mem.search_text("ephemeral") == []
    assert len(mem.search_text("ephemeral", as_of=past - timedelta(minutes=1))) == 1
