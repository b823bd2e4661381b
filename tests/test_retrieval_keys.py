"""What recall ranks by: a turn found through its context and its day while the hit is
the turn itself, facts keyed by their own text only, a memory or turn that only asks
ranked below one that tells, a question asking for a list spread across threads, and
the fusion weights (the measured default, the first design's preset, RRF honouring
them). The numbers behind each choice are in benches/results/quality.md."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

import memcore
from backends import Backend, both_backends
from conftest import unit

pytestmark = both_backends


def _turn_ids(result: memcore.ContextResult) -> list[str]:
    return [item.turn.turn_id for item in result.items]


def test_a_turn_is_found_through_the_turns_before_it(mem: memcore.Memory) -> None:
    # The answer names nothing; its subject is two turns earlier.
    mem.record_turn("s1", "We met the greyhound at the shelter.", turn_id="q")
    mem.record_turn("s1", "I am thinking about it.", turn_id="mid")
    mem.record_turn("s1", "We adopt her on Saturday!", turn_id="answer")
    mem.record_turn("s1", "Nice weather today.", turn_id="later1")
    mem.record_turn("s1", "Indeed, very sunny.", turn_id="later2")
    mem.record_turn("s1", "Off to the gym now.", turn_id="later3")
    found = _turn_ids(mem.retrieve_context("greyhound", limit=10))
    assert found[0] == "q"  # its own words rank first
    assert set(found) == {"q", "mid", "answer"}  # the window is two turns, not more
    by_id = {i.turn.turn_id: i.turn for i in mem.retrieve_context("greyhound").items}
    assert by_id["answer"].user_text == "We adopt her on Saturday!"  # the hit is the turn itself


def test_a_turn_outranks_the_turns_after_it_on_its_own_words(mem: memcore.Memory) -> None:
    # The two turns after the answer hold its words in their keys too, and theirs are
    # shorter: counted once, the turn's own text lost to "Cool." (its key the shortest).
    mem.record_turn("s1", "Morning!", turn_id="t0")
    mem.record_turn("s1", "Hi, how was your weekend?", turn_id="t1")
    mem.record_turn("s1", "We adopted a greyhound from the shelter.", turn_id="answer")
    mem.record_turn("s1", "Wow.", turn_id="t3")
    mem.record_turn("s1", "Cool.", turn_id="t4")
    found = _turn_ids(mem.retrieve_context("greyhound", limit=5))
    assert found[0] == "answer"
    assert set(found) == {"answer", "t3", "t4"}


def test_turns_lean_on_their_keys_more_than_memories_do(mem: memcore.Memory) -> None:
    # One turn the query's vector points at, one that holds the query's word with a
    # vector pointing away. recall's default weights pick the first; a turn's key
    # (its words, weighted, and its context) weighs more in retrieve_context.
    query = unit(1)
    near = query * 0.9 + unit(2) * 0.1
    at = datetime(2023, 5, 8, 14, tzinfo=UTC)
    mem.record_turn("a", "We talked about the weather", turn_id="near", vector=near, at=at)
    mem.record_turn("b", "We adopted a greyhound", turn_id="word", vector=-query, at=at)
    for i in range(10):
        mem.record_turn(f"c{i}", f"small talk number {i}", vector=unit(10 + i), at=at)
    result = mem.retrieve_context("greyhound", limit=3, vector=query, recency_half_life_days=36_500)
    assert _turn_ids(result)[:2] == ["word", "near"]
    # The same texts and vectors as memories: the default weights rank the other way.
    by_vector = mem.store_memory("We talked about the weather", vector=near).id
    mem.store_memory("We adopted a greyhound", vector=-query)
    for i in range(10):
        mem.store_memory(f"small talk number {i}", vector=unit(10 + i))
    assert mem.recall("greyhound", 3, vector=query)[0].memory.id == by_vector


def test_the_window_stays_in_its_conversation(mem: memcore.Memory) -> None:
    mem.record_turn("a", "The greyhound came home with us.", turn_id="t1")
    mem.record_turn("b", "Unrelated small talk.", turn_id="t1")
    found = mem.retrieve_context("greyhound").items
    assert [(i.turn.conversation_id, i.turn.turn_id) for i in found] == [("a", "t1")]


def test_a_turn_is_found_by_its_day(mem: memcore.Memory) -> None:
    mem.record_turn("s1", "We went hiking.", turn_id="may", at=datetime(2023, 5, 8, 14, tzinfo=UTC))
    mem.record_turn("s2", "We went hiking.", turn_id="june", at=datetime(2023, 6, 9, tzinfo=UTC))
    # Recency off: the June turn is newer and would win on age alone.
    result = mem.retrieve_context("hiking in May 2023", recency_half_life_days=36_500)
    assert _turn_ids(result)[0] == "may"


def test_the_context_survives_a_rebuild_of_the_indexes(backend: Backend, data_dir: object) -> None:
    import shutil
    from pathlib import Path

    path = Path(str(data_dir))
    with backend.open(path, model=None) as mem:
        mem.record_turn("s1", "Did you adopt the greyhound?", turn_id="q")
        mem.record_turn("s1", "Yes, last Saturday!", turn_id="answer")
    shutil.rmtree(path / "index")
    with backend.open(path, model=None) as mem:
        assert set(_turn_ids(mem.retrieve_context("greyhound"))) == {"q", "answer"}


def _camping(mem: memcore.Memory) -> tuple[str, str]:
    """A question and the memory that answers it; the question holds more of the query's
    words."""
    asked = mem.store_memory("When did you go camping with the kids?").id
    told = mem.store_memory("We went camping at the lake with the kids in June.").id
    for i in range(10):
        mem.store_memory(f"filler memory {i} about the garden")
    return asked, told


QUESTION = "when did Melanie go camping with the kids"


def test_a_memory_that_only_asks_ranks_below_the_one_that_tells(mem: memcore.Memory) -> None:
    asked, told = _camping(mem)
    assert mem.search_text(QUESTION)[0].memory.id == asked  # BM25 alone: the question
    ranked = [h.memory.id for h in mem.recall(QUESTION)]
    assert ranked.index(told) < ranked.index(asked)
    # Rank fusion has no z-scores to lower, so BM25's order stands there.
    by_rank = [h.memory.id for h in mem.recall(QUESTION, mode="rrf")]
    assert by_rank.index(asked) < by_rank.index(told)


def test_the_question_penalty_is_asked_per_call(mem: memcore.Memory) -> None:
    asked, _told = _camping(mem)
    assert pytest.approx(4.0) == memcore._core.DEFAULT_QUESTION_PENALTY
    assert mem.recall(QUESTION, question_penalty=0)[0].memory.id == asked
    default = [h.scores.fused for h in mem.recall(QUESTION)]
    named = [h.scores.fused for h in mem.recall(QUESTION, question_penalty=4.0)]
    assert default == named
    for bad in (-1.0, float("nan")):
        with pytest.raises(memcore.InvalidParameterError, match="question_penalty"):
            mem.recall(QUESTION, question_penalty=bad)


def test_what_a_memory_asks_is_known_after_reopening(backend: Backend, data_dir: object) -> None:
    with backend.open(data_dir, model=None) as mem:
        asked, told = _camping(mem)
    with backend.open(data_dir, model=None) as mem:
        ranked = [h.memory.id for h in mem.recall(QUESTION)]
        assert ranked.index(told) < ranked.index(asked)


def test_the_reply_to_a_matching_question_is_found_through_it(mem: memcore.Memory) -> None:
    texts = ["When did you go camping with the kids?", "Last weekend, at the lake!"]
    texts += [f"small talk number {i} about the garden" for i in range(12)]
    ids = [
        m.id
        for m in mem.store_memories(texts, thread_ids=["chat"] * len(texts), memory_type="episodic")
    ]
    reply = ids[1]  # it holds none of the query's words

    def found(**options: Any) -> list[str]:
        return [h.memory.id for h in mem.recall(QUESTION, 5, **options)]

    assert reply in found()
    assert reply not in found(question_penalty=0)


def test_a_question_asking_for_a_list_spreads_across_threads(mem: memcore.Memory) -> None:
    texts = [f"books, books and more books: shelf {i}" for i in range(6)]
    texts.append("Finished two books on the flight")
    mem.store_memories(texts, thread_ids=["march"] * 6 + ["june"], memory_type="episodic")

    def june_at(question: str, **options: Any) -> int:
        threads = [h.memory.thread_id for h in mem.recall(question, 10, **options)]
        return threads.index("june")

    assert june_at("What book did the user read?") == 6  # by score
    assert june_at("What books did the user read?") == 4  # four per thread first
    assert june_at("What books did the user read?", max_per_thread=10) == 6


def test_a_question_turn_ranks_below_its_answer_unless_it_holds_the_reply(
    mem: memcore.Memory,
) -> None:
    mem.record_turn("s1", "When did you go camping with the kids?", turn_id="q")
    mem.record_turn("s1", "We went camping at the lake with the kids in June.", turn_id="a")
    found = _turn_ids(mem.retrieve_context(QUESTION, limit=5))
    assert found[0] == "a"
    mem.record_turn(
        "s2",
        "When did you go camping with the kids?",
        agent_text="You went in June, to the lake.",
        turn_id="answered",
    )
    assert _turn_ids(mem.retrieve_context(QUESTION, limit=5))[0] == "answered"


def test_facts_are_keyed_by_their_own_text(mem: memcore.Memory) -> None:
    mem.store_memory("Caroline adopted a greyhound")
    neighbour = mem.store_memory("Yes, last Saturday")
    hits = mem.search_text("greyhound")
    assert neighbour.id not in [h.memory.id for h in hits]


def _two_signal_store(mem: memcore.Memory) -> tuple[str, str]:
    """Two memories: one the vector prefers, one BM25 prefers."""
    by_vector = mem.store_memory("alpha beta", vector=unit(1)).id
    by_bm25 = mem.store_memory("alpha alpha gamma", vector=unit(2)).id
    for i in range(8):  # background, so the z-scores have a spread
        mem.store_memory(f"filler text {i} alpha", vector=unit(10 + i))
    return by_vector, by_bm25


@pytest.mark.parametrize("mode", ["zscore", "rrf"])
def test_the_weights_decide_between_signals(mem: memcore.Memory, mode: str) -> None:
    by_vector, by_bm25 = _two_signal_store(mem)
    query = unit(1) * 0.9 + unit(2) * 0.1

    def top(weights: tuple[float, float, float]) -> str:
        return mem.recall("alpha", 3, vector=query, weights=weights, mode=mode)[0].memory.id  # type: ignore[arg-type]

    assert top((0.9, 0.1, 0.0)) == by_vector
    assert top((0.05, 0.95, 0.0)) == by_bm25


def test_weight_presets(mem: memcore.Memory) -> None:
    mem.store_memory("alpha", vector=unit(1))
    assert pytest.approx((0.40, 0.15, 0.45)) == memcore._core.DESIGN_WEIGHTS
    # Measured with z-scores clipped at ±6: vector and BM25 share the non-graph weight.
    assert pytest.approx((0.275, 0.275, 0.45)) == memcore._core.DEFAULT_WEIGHTS
    default = mem.recall("alpha", vector=unit(1))
    named = mem.recall("alpha", vector=unit(1), weights="default")
    assert [h.scores.fused for h in default] == [h.scores.fused for h in named]
    mem.recall("alpha", vector=unit(1), weights="design")
    with pytest.raises(memcore.InvalidParameterError, match="design"):
        mem.recall("alpha", weights="nonsense")


def test_the_context_block_gives_each_turn_its_day(mem: memcore.Memory) -> None:
    mem.record_turn("s1", "We went hiking.", turn_id="t", at=datetime(2023, 5, 8, 14, tzinfo=UTC))
    text = mem.retrieve_context("hiking").text
    assert "8 May 2023 (" in text  # the date, then the age
