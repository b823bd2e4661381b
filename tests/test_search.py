"""Search through the facade: vector, BM25 and hybrid recall, with filters,
as_of, read-your-writes from many threads, supersede hints, recovery and index
maintenance, and a quality sanity check with the real MiniLM model."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

import memcore
from backends import Backend, both_backends, sqlite_only
from conftest import MINILM_DIR, require_model, unit

pytestmark = both_backends


def test_vector_search_ranks_by_cosine(mem: memcore.Memory) -> None:
    ids = [mem.store_memory(f"memory {i}", vector=unit(i)).id for i in range(20)]
    hits = mem.search(vector=unit(7), limit=5)
    assert hits[0].memory.id == ids[7]
    # The vector graph stores f16: cosines are good to about three decimals.
    assert hits[0].scores.vector == pytest.approx(1.0, abs=1e-3)
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


def test_a_question_is_searched_by_its_content_words(mem: memcore.Memory) -> None:
    mem.store_memory("The rate limit for the API is set in the gateway")
    job = mem.store_memory("User works as a backend engineer").id
    # "what", "is", "the", "for" and the possessive's "s" would match the first fact.
    assert [h.memory.id for h in mem.search_text("what is the user's job for now")] == [job]
    # A query of stop words only still searches them.
    band = mem.store_memory("The Who played at the festival").id
    assert mem.search_text("the who")[0].memory.id == band


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


def test_namespaces_never_cross_in_search(backend: Backend, data_dir: Path) -> None:
    with backend.open(data_dir, model=None, namespace="alice") as alice:
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


def _two_threads(mem: memcore.Memory, memory_type: str) -> Callable[..., float]:
    """The same answer in two threads; the question names what one thread is about.
    Returns how far the trip thread's answer leads the chores thread's in fused score
    (without the prior they tie, up to the vector index's precision)."""
    mem.store_memories(
        [
            "We sorted out the garage and the recycling",
            "It was booked on Saturday",
            "The flights to Lisbon leave in May",
            "The Lisbon hotel is near the old town",
            "It was booked on Saturday",
        ],
        vectors=np.stack([unit(10), unit(1), unit(11), unit(12), unit(1)]),
        thread_ids=["chores", "chores", "trip", "trip", "trip"],
        memory_type=memory_type,
    )

    def trip_lead(**options: float) -> float:
        hits = mem.recall("When was the Lisbon trip booked?", vector=unit(1), **options)  # type: ignore[arg-type]
        fused = {
            h.memory.thread_id: h.scores.fused
            for h in hits
            if h.memory.content.startswith("It was")
        }
        return fused["trip"] - fused["chores"]

    return trip_lead


def test_recall_ranks_an_episode_by_its_thread_as_well(mem: memcore.Memory) -> None:
    trip_lead = _two_threads(mem, "episodic")
    assert trip_lead() > 0.5
    assert trip_lead(thread_prior=0.0) == pytest.approx(0.0, abs=0.01)  # a tie
    assert memcore._core.DEFAULT_THREAD_PRIOR > 0
    for bad in (-0.5, float("nan")):
        with pytest.raises(memcore.InvalidParameterError, match="thread_prior"):
            mem.recall("x", thread_prior=bad)


def test_recall_spreads_across_threads_when_asked(mem: memcore.Memory) -> None:
    # The planning thread holds the three best matches for "budget".
    mem.store_memories(
        [
            "budget budget: the budget review",
            "budget budget: cut the budget",
            "budget budget: a budget for hiring",
            "The trip has a small budget and two cities",
        ],
        thread_ids=["planning", "planning", "planning", "travel"],
    )
    mem.store_memory("Ask about the budget of the garden project sometime soon")

    def threads(**options: int) -> list[str | None]:
        return [h.memory.thread_id for h in mem.recall("budget", semantic=False, **options)]

    assert threads()[:3] == ["planning"] * 3
    spread = threads(max_per_thread=1)
    assert spread[0] == "planning" and set(spread[1:3]) == {"travel", None}
    assert spread[3:] == ["planning"] * 2  # held back, not dropped
    assert threads(max_per_thread=2**63 - 1) == threads()  # any cap past the list is no cap
    for bad in (0, -1, 1.5, True, "2", 10**30):  # past 64 bits: an integer no store takes
        with pytest.raises(memcore.InvalidParameterError, match="max_per_thread"):
            mem.recall("budget", max_per_thread=bad)  # type: ignore[arg-type]


def test_recall_ranks_a_fact_by_itself_whatever_its_thread(mem: memcore.Memory) -> None:
    # Standing facts (the default type) say all they mean themselves.
    trip_lead = _two_threads(mem, "semantic")
    assert trip_lead() == pytest.approx(0.0, abs=0.01)


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


def test_index_folder_deleted_is_rebuilt(backend: Backend, data_dir: Path) -> None:
    with backend.open(data_dir, model=None) as mem:
        ids = [mem.store_memory(f"durable fact kq{i}y", vector=unit(i)).id for i in range(30)]
    import shutil

    shutil.rmtree(data_dir / "index")
    with backend.open(data_dir, model=None) as mem:
        for i, mem_id in enumerate(ids):
            assert [h.memory.id for h in mem.search_text(f"kq{i}y", 1)] == [mem_id]
            assert [h.memory.id for h in mem.search(vector=unit(i), limit=1)] == [mem_id]
        mem._engine.flush()
        status = mem._engine.index_status()
        assert status.vectors == 30 and status.text_documents == 30


def test_expired_memories_leave_search(mem: memcore.Memory) -> None:
    past = datetime.now(UTC) - timedelta(seconds=1)
    mem.store_memory(
        "ephemeral note", valid_from=past - timedelta(hours=1), expires_at=past, vector=unit(1)
    )
    assert mem.search_text("ephemeral") == []
    assert len(mem.search_text("ephemeral", as_of=past - timedelta(minutes=1))) == 1


def test_compact_after_deletes_keeps_the_rest_searchable(mem: memcore.Memory) -> None:
    ids = [mem.store_memory(f"durable fact cq{i}y", vector=unit(i, 16)).id for i in range(40)]
    deleted, kept = ids[::2], ids[1::2]
    for memory_id in deleted:
        mem.delete_memory(memory_id)
    report = mem.compact(force=True)
    assert report.vectors_rebuilt and 0 < report.tombstones_dropped <= len(deleted)
    health = mem.index_health()
    assert (health.vectors, health.vector_tombstones, health.documents) == (20, 0, 20)
    assert health.last_error is None
    for i, memory_id in enumerate(ids):
        by_text = [h.memory.id for h in mem.search_text(f"cq{i}y", 50)]
        by_vector = [h.memory.id for h in mem.search(vector=unit(i, 16), limit=50)]
        if memory_id in kept:
            assert by_text[0] == by_vector[0] == memory_id, i
        else:
            assert memory_id not in by_text + by_vector, i
    # Nothing left to reclaim: an unforced compaction leaves the graph alone.
    assert not mem.compact().vectors_rebuilt
    assert set(mem.compact().to_dict()) == {"vectors_rebuilt", "tombstones_dropped", "text_merged"}


def test_rebuild_indexes_rebuilds_from_the_store(mem: memcore.Memory) -> None:
    ids = [mem.store_memory(f"rebuilt fact rq{i}y", vector=unit(i, 16)).id for i in range(12)]
    mem.delete_memory(ids[0])
    health = mem.rebuild_indexes()
    assert (health.documents, health.vectors, health.text_documents) == (11, 11, 11)
    assert (health.vector_tombstones, health.dim) == (0, 16)
    for i, memory_id in enumerate(ids[1:], start=1):
        assert [h.memory.id for h in mem.search_text(f"rq{i}y", 1)] == [memory_id]
        assert [h.memory.id for h in mem.search(vector=unit(i, 16), limit=1)] == [memory_id]


@sqlite_only("a node always writes its replica: read_only is refused by name")
def test_a_read_only_instance_cannot_rebuild(backend: Backend, data_dir: Path) -> None:
    with backend.open(data_dir, model=None) as writer:
        writer.store_memory("a fact", vector=unit(1))
        with backend.open(data_dir, model=None, read_only=True) as reader:
            with pytest.raises(memcore.StorageError):
                reader.rebuild_indexes()
            assert not reader.compact(force=True).vectors_rebuilt


# -- quality sanity check with the real model ------------------------------------------------

FAVOURITE_LANGUAGE = "The user's favourite programming language is TypeScript"
DISTRACTORS = [
    "The user lives in Lisbon with two cats",
    "The user's favourite food is ramen from the place near the station",
    "The user drinks black coffee without sugar",
    "The user prefers dark mode in every editor",
    # Shares "language" with the query: BM25 alone would rank it first.
    "The user is learning Portuguese as a second language",
    "The user's favourite band is Radiohead",
    "The user runs five kilometres every Saturday morning",
    "The user's laptop is a ThinkPad X1 Carbon",
    "The user works remotely for a logistics company",
    "The user's daughter starts school in September",
    "The user is allergic to peanuts",
    "The user's favourite season is autumn",
    "The weekly team meeting is on Tuesdays at 10:00",
    "The production database runs on PostgreSQL 16",
    "Deployments go through GitHub Actions and need two approvals",
    "The user reads science fiction, mostly Ursula K. Le Guin",
    "The user wants answers short and without emojis",
    "The user's birthday is on the 14th of March",
    "The user plays chess online in the evenings",
    "The user's car is a blue Skoda Octavia",
]


def test_minilm_finds_a_paraphrased_fact_among_distractors(
    backend: Backend, data_dir: Path
) -> None:
    with backend.open(data_dir, model_path=require_model(MINILM_DIR)) as mem:
        assert mem.embeddings is not None and mem.embeddings.wait_ready(60)
        mem.store_memories(DISTRACTORS[:10])
        target = mem.store_memory(FAVOURITE_LANGUAGE).id
        mem.store_memories(DISTRACTORS[10:])
        query = "which coding language does the user like best?"
        searched = mem.search(query, limit=5)
        assert searched[0].memory.id == target
        first, second = (h.scores.vector or 0.0 for h in searched[:2])
        assert first > second + 0.1  # clearly, not by a rounding error
        assert mem.recall(query, limit=5)[0].memory.id == target
