"""The automatic path through the facade (docs/guide.md, "The automatic path"): a client
that only calls memory_before_turn and memory_after_turn gets facts captured (with their
tiers, deduplicated, superseding what they update), facts that expire in UTC, a session
compacted to fit, maintenance that finishes what a killed run left, a custom extractor
that never fails a turn, the seven counters, and store_memory that never fails over a
model still loading. Real store, real MiniLM model."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import memcore
from conftest import MINILM_DIR, require_model
from memcore._facade.compaction import DIGEST_TAG, item_tokens

estimate = memcore._core.Engine.estimate_tokens


@pytest.fixture
def model_mem(data_dir: Path) -> Iterator[memcore.Memory]:
    with memcore.Memory(data_dir, model_path=require_model(MINILM_DIR)) as mem:
        yield mem


def _after(mem: memcore.Memory, turn: str, text: str, **kwargs: Any) -> dict[str, Any]:
    return dict(mem.memory_after_turn("s1", turn, text, "Noted.", **kwargs))


def _contents(result: dict[str, Any]) -> list[str]:
    return [fact["content"] for fact in result["captured"]]


# -- capture ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("utterance", "words"),
    [
        ("I moved to Austin last month", ("austin",)),
        ("my manager is Daniel now", ("manager", "daniel")),
        ("we deploy with Argo", ("deploy", "argo")),
        ("call me Sam", ("sam",)),
        ("I don't eat pork", ("pork",)),
    ],
)
def test_after_turn_captures_what_the_user_states(
    model_mem: memcore.Memory, utterance: str, words: tuple[str, ...]
) -> None:
    result = _after(model_mem, "t1", utterance)
    assert result["created"] and len(result["captured"]) == 1, result
    fact = result["captured"][0]
    assert all(w in fact["content"].lower() for w in words), fact
    stored = model_mem.get_memory(fact["id"])
    assert stored.source == "conversation" and stored.thread_id == "s1"
    assert stored.metadata == {"session_id": "s1", "turn_id": "t1"}
    assert stored.tier == fact["tier"] == "durable" and stored.expires_at is None
    # Found again by what the agent will ask.
    assert model_mem.recall(words[-1])[0].memory.id == fact["id"]


@pytest.mark.parametrize(
    ("utterance", "reason"),
    [
        ("Where should I move to next year?", "question"),
        ("Hi there!", "greeting"),
        ("Thanks a lot!", "thanks"),
        ("If I were rich I would buy a boat.", "hypothetical"),
        ("Please write a function that parses dates.", "instruction"),
        ("> I live in Paris and love it", "quote"),
        ("```python\nmy_city = 'Austin'\n```", "code"),
    ],
)
def test_after_turn_skips_what_is_no_fact_and_says_why(
    model_mem: memcore.Memory, utterance: str, reason: str
) -> None:
    result = _after(model_mem, "t1", utterance)
    assert result["captured"] == [] and result["created"]
    assert [s["reason"] for s in result["skipped"]] == [reason], result
    assert model_mem.list_memories() == []


def test_a_fact_about_today_or_this_week_is_tiered(model_mem: memcore.Memory) -> None:
    at = datetime(2026, 11, 27, 15, 30, tzinfo=UTC)
    today = _after(model_mem, "t1", "I'm working from home today", at=at)
    week = _after(model_mem, "t2", "This week I'm in Berlin", at=at)
    sick = _after(model_mem, "t3", "I'm sick these days", at=at)
    assert [f["tier"] for r in (today, week, sick) for f in r["captured"]] == ["L1", "L2", "L2"]
    day_end = datetime(2026, 11, 28, tzinfo=UTC)
    assert model_mem.get_memory(today["captured"][0]["id"]).expires_at == day_end
    assert model_mem.get_memory(week["captured"][0]["id"]).expires_at == day_end + timedelta(6)
    assert model_mem.turn_metrics()["fact_write_total"] == {"L1": 1, "L2": 2, "durable": 0}


def test_an_l1_fact_expires_at_the_utc_day_boundary(data_dir: Path) -> None:
    with memcore.Memory(data_dir, model=None, l1_retention_days=1) as mem:
        at = datetime(2026, 11, 27, 23, 59, 59, tzinfo=UTC)
        fact = _after(mem, "t1", "Tonight I'm at the gym", at=at)["captured"][0]
        assert fact["tier"] == "L1"

        def found(as_of: datetime) -> bool:
            return fact["id"] in {m.id for m in mem.get_valid_at(as_of)}

        boundary = datetime(2026, 11, 28, tzinfo=UTC)
        assert found(boundary - timedelta(microseconds=1))
        assert not found(boundary)
        # Leaves search at once (the read-time filter), before any maintenance.
        assert mem.search_text("gym") == []
        # Maintenance turns the expiry into an invalidation history keeps.
        report = mem.memory_run_maintenance(now=boundary + timedelta(seconds=1))
        assert report["memories_expired"] == 1
        kept = mem.get_memory(fact["id"])
        assert kept.invalidated_at is not None and kept.invalidation_reason == "expired"


def test_a_longer_retention_setting_moves_the_expiry(data_dir: Path) -> None:
    with memcore.Memory(data_dir, model=None, l2_retention_days=3) as mem:
        at = datetime(2026, 11, 27, 8, tzinfo=UTC)
        fact = _after(mem, "t1", "This week I'm in Berlin", at=at)["captured"][0]
        assert mem.get_memory(fact["id"]).expires_at == datetime(2026, 11, 30, tzinfo=UTC)


def test_a_fact_already_stored_is_not_stored_twice(model_mem: memcore.Memory) -> None:
    first = _after(model_mem, "t1", "I'm allergic to penicillin.")
    again = _after(model_mem, "t2", "I am allergic to penicillin")
    assert len(first["captured"]) == 1 and again["captured"] == []
    assert again["skipped"] == [
        {
            "text": again["skipped"][0]["text"],
            "reason": "duplicate",
            "existing_id": first["captured"][0]["id"],
        }
    ]
    assert len(model_mem.list_memories()) == 1


def test_a_near_copy_with_another_number_is_a_fact_of_its_own(
    model_mem: memcore.Memory,
) -> None:
    """Nearly the same sentence (cosine 0.985 with MiniLM) with another number: not a
    repeat; the update rule decides whether it replaces the old one."""
    stay = "I'm staying at the Hilton in Nairobi for the data engineering workshop in room"
    first = _after(model_mem, "t1", f"{stay} 1300.")
    other = _after(model_mem, "t2", f"{stay} 1302.")
    assert len(first["captured"]) == 1 and len(other["captured"]) == 1, other
    assert other["captured"][0]["content"].endswith("room 1302")
    # The same sentence again is a repeat.
    again = _after(model_mem, "t3", f"{stay} 1302.")
    assert again["captured"] == [] and again["skipped"][0]["reason"] == "duplicate"


def test_an_update_supersedes_the_old_fact_and_history_keeps_it(
    model_mem: memcore.Memory,
) -> None:
    two_days_ago = datetime.now(UTC) - timedelta(days=2)
    old = model_mem.store_memory("User lives in Seattle", valid_from=two_days_ago).id
    moved = _after(model_mem, "t1", "I moved to Austin last month")["captured"][0]
    assert moved["supersedes"] == old
    current = model_mem.get_memory(moved["id"])
    assert current.supersedes == old and current.is_valid
    previous = model_mem.get_memory(old)
    assert previous.superseded_by == moved["id"] and not previous.is_valid
    assert [h.memory.id for h in model_mem.recall("Where does the user live?")][:1] == [moved["id"]]
    assert old in {m.id for m in model_mem.get_valid_at(datetime.now(UTC) - timedelta(hours=1))}


def test_a_passing_state_never_replaces_a_durable_fact(model_mem: memcore.Memory) -> None:
    office = model_mem.store_memory("User works from the Berlin office").id
    today = _after(model_mem, "t1", "I'm working from home today")["captured"][0]
    assert today["supersedes"] is None
    assert model_mem.get_memory(office).is_valid


def test_a_repeated_turn_gets_the_first_result_and_captures_nothing_again(
    model_mem: memcore.Memory,
) -> None:
    first = _after(model_mem, "t1", "We deploy with Argo. What should I cache?")
    again = _after(model_mem, "t1", "We deploy with Argo. What should I cache?")
    assert first["created"] and not again["created"]
    assert again["captured"] == first["captured"] and again["skipped"] == first["skipped"]
    assert len(model_mem.list_memories()) == 1
    assert model_mem.turn_metrics()["idempotency_conflicts_total"] == 1


def test_only_the_user_messages_of_the_turn_are_read(model_mem: memcore.Memory) -> None:
    history = [
        {"role": "user", "content": "I live in Oslo."},
        {"role": "assistant", "content": "Nice. I live in the cloud."},
        {"role": "system", "content": "## Relevant facts\n- I live in Lima"},
        {"role": "user", "content": "I work at Equinor."},
    ]
    result = model_mem.memory_after_turn("s", "t", history, "ok")
    assert [c.lower() for c in _contents(dict(result))] == ["user works at equinor"]


# -- the opt-in extractor -----------------------------------------------------------------


def test_a_custom_extractor_replaces_the_rules(data_dir: Path) -> None:
    seen: list[list[dict[str, Any]]] = []

    def extractor(items: list[dict[str, Any]]) -> list[Any]:
        seen.append(items)
        return ["User keeps bees", {"content": "User is at a conference", "tier": "L2"}]

    with memcore.Memory(data_dir, model=None, fact_extractor=extractor) as mem:
        result = dict(mem.memory_after_turn("s", "t", "hello", "hi there"))
        assert result["extractor"] == "custom"
        assert [(f["content"], f["tier"]) for f in result["captured"]] == [
            ("User keeps bees", "durable"),
            ("User is at a conference", "L2"),
        ]
        assert seen == [
            [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi there"}]
        ]


@pytest.mark.parametrize("behaviour", ["raises", "returns garbage", "bad tier", "too slow"])
def test_a_failing_extractor_never_fails_the_turn(
    data_dir: Path, behaviour: str, caplog: pytest.LogCaptureFixture
) -> None:
    release = threading.Event()

    def extractor(items: list[dict[str, Any]]) -> Any:
        if behaviour == "raises":
            raise ConnectionError("endpoint unreachable")
        if behaviour == "returns garbage":
            return 42
        if behaviour == "bad tier":
            return [{"content": "User keeps bees", "tier": "forever"}]
        release.wait(10)
        return ["User keeps bees"]

    with memcore.Memory(
        data_dir, model=None, fact_extractor=extractor, fact_extractor_timeout=0.3
    ) as mem:
        try:
            result = dict(mem.memory_after_turn("s", "t", "I live in Lisbon.", "ok"))
        finally:
            release.set()
        assert result["created"] and result["extractor"].startswith("rules (fact_extractor")
        assert [c.lower() for c in _contents(result)] == ["user lives in lisbon"]
        assert "fact_extractor failed" in caplog.text


# -- compaction ---------------------------------------------------------------------------


def _session(n: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for i in range(n):
        if i % 5 == 4:
            items.append(
                {
                    "type": "function_call",
                    "name": "read_file",
                    "arguments": f'{{"path": "src/m{i}.py"}}',
                }
            )
        elif i % 2 == 0:
            items.append({"role": "user", "content": f"Step {i}: please look at module {i}. " * 20})
        else:
            items.append({"role": "assistant", "content": f"Module {i} looks fine to me. " * 20})
    items.append({"role": "user", "content": "We decided to ship on Friday; what is left?"})
    return items


def test_a_long_session_is_compacted_to_fit(model_mem: memcore.Memory) -> None:
    items = _session(500)
    max_tok = 20_000
    out = model_mem.memory_before_turn("long", "t", items, max_input_tok=max_tok)
    assert out["compacted"] is True
    sent = out["input_items"]
    assert out["context_token_count"] == sum(item_tokens(i, estimate) for i in sent)
    assert out["context_token_count"] <= 0.8 * max_tok
    digest = next(i for i in sent if str(i.get("content", "")).startswith(DIGEST_TAG))
    assert "read_file" in digest["content"]
    # The 30 latest items, verbatim and in order, end the input.
    assert sent[-30:] == items[-30:]
    assert model_mem.turn_metrics()["compaction_total"] == 1
    # A short session passes through unchanged.
    short = model_mem.memory_before_turn("short", "t", items[-3:], max_input_tok=max_tok)
    assert short["compacted"] is False and short["input_items"][-3:] == items[-3:]


def test_a_single_item_larger_than_the_budget_is_cut_with_a_marker(
    model_mem: memcore.Memory,
) -> None:
    huge = "A pasted log line that goes on and on. " * 5000
    out = model_mem.memory_before_turn("s", "t", huge, max_input_tok=4000)
    assert out["compacted"] and out["context_token_count"] <= 4000
    text = out["input_items"][-1]["content"]
    assert "cut by memcore" in text and text.startswith("A pasted log line")


def test_the_recent_items_setting_decides_what_stays_verbatim(data_dir: Path) -> None:
    with memcore.Memory(data_dir, model=None, recent_context_items=5) as mem:
        items = _session(200)
        out = mem.memory_before_turn("s", "t", items, max_input_tok=20_000)
        assert out["compacted"] and out["input_items"][-5:] == items[-5:]
        assert out["input_items"][-6] != items[-6]


# -- maintenance --------------------------------------------------------------------------

_FILL = """
import sys
from datetime import UTC, datetime, timedelta
import memcore
with memcore.Memory(sys.argv[1], model=None) as mem:
    for c in range(40):
        for t in range(5):
            mem.record_turn(f"c{c}", f"conversation {c} turn {t} about billing export {c}")
        mem.memory_after_turn(f"c{c}", "after", f"I use editor number {c}.", "ok")
    for i in range(400):
        mem.store_memory(f"a fact {i}", ttl=0.5 if i % 2 else None)
"""
_RUN = """
import sys
from datetime import UTC, datetime, timedelta
import memcore
with memcore.Memory(sys.argv[1], model=None, compaction_min_age_hours=0,
                    summary_refresh_interval_minutes=0, max_processed_turns=1) as mem:
    print("running", flush=True)
    report = mem.memory_run_maintenance(now=datetime.now(UTC) + timedelta(minutes=1))
    print("REPORT", __import__("json").dumps(report), flush=True)
"""


def test_maintenance_killed_midway_is_finished_by_the_next_run(data_dir: Path) -> None:
    subprocess.run([sys.executable, "-c", _FILL, str(data_dir)], check=True, timeout=300)
    time.sleep(0.6)  # the short-lived facts expire
    killed = subprocess.Popen(
        [sys.executable, "-c", _RUN, str(data_dir)], stdout=subprocess.PIPE, text=True
    )
    assert killed.stdout is not None and killed.stdout.readline().strip() == "running"
    time.sleep(0.05)
    killed.kill()
    killed.wait(30)
    killed.stdout.close()
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(data_dir)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.split("REPORT", 1)[1])
    with memcore.Memory(data_dir, model=None) as mem:
        valid = mem.get_valid(limit=1000)
        assert len(valid) == 200 + 40  # the durable facts and the captured ones
        assert all(m.is_valid for m in valid)
        assert len(mem.list_memories(limit=1000)) == 440, "expiry archives, never deletes"
        listing = mem.memory_list_dir_with_abstract(depth=2, limit=1000)["summaries"]
        summaries = [s for s in listing if s["kind"] == "conversation"]
        assert len(summaries) == 40 and all("summary: " in s["abstract"] for s in summaries)
        assert len(mem.retrieve_context("billing export 7").items) >= 1
        again = mem.memory_run_maintenance()
    assert again["memories_expired"] == 0 and again["summaries_refreshed"] == 0
    assert report["ok"] is True


# -- counters -----------------------------------------------------------------------------


def test_the_seven_counters_move_with_their_events(model_mem: memcore.Memory) -> None:
    before = model_mem.turn_metrics()
    assert before["before_turn_total"] == {} and before["compaction_total"] == 0
    model_mem.memory_before_turn("s", "t", "hello")
    model_mem.memory_before_turn("s", "t", _session(300), max_input_tok=10_000)
    _after(model_mem, "t1", "I'm working from home today. I live in Porto.")
    _after(model_mem, "t1", "I'm working from home today. I live in Porto.")
    with pytest.raises(memcore.InvalidParameterError):
        model_mem.memory_after_turn("s1", "t2", [{"role": "assistant", "content": "x"}], "y")
    model_mem.memory_run_maintenance()
    with pytest.raises(memcore.InvalidParameterError):
        model_mem.memory_run_maintenance(archive_after_days=-1)
    after = model_mem.turn_metrics()
    assert after["before_turn_total"] == {"ok": 2}
    assert after["after_turn_total"] == {"ok": 2, "INVALID_PARAMETER": 1}
    assert after["after_turn_duration_ms"]["count"] == 3
    assert after["maintenance_total"] == {"ok": 1, "INVALID_PARAMETER": 1}
    assert after["compaction_total"] == 1
    assert after["fact_write_total"] == {"L1": 1, "L2": 0, "durable": 1}
    assert after["idempotency_conflicts_total"] == 1


# -- settings -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("compact_threshold", 1.5),
        ("compact_threshold", 0),
        ("l1_retention_days", -1),
        ("l2_retention_days", 0),
        ("recent_context_items", 0),
        ("compaction_min_age_hours", -0.5),
        ("summary_refresh_interval_minutes", float("nan")),
        ("max_processed_turns", 2.5),
        ("l1_retention_days", True),
    ],
)
def test_every_setting_is_checked_at_start(data_dir: Path, setting: str, value: Any) -> None:
    with pytest.raises(memcore.InvalidParameterError, match=setting) as info:
        memcore.Memory(data_dir, model=None, **{setting: value})
    assert info.value.details == {"field": setting}
    assert not (data_dir / "memcore.db").exists(), "nothing opened"


def test_a_week_cannot_be_shorter_than_a_day(data_dir: Path) -> None:
    with pytest.raises(memcore.InvalidParameterError, match="l2_retention_days"):
        memcore.Memory(data_dir, model=None, l1_retention_days=7, l2_retention_days=2)


# -- store_memory always succeeds ---------------------------------------------------------


def test_store_memory_while_the_model_loads_is_pending_then_embedded(data_dir: Path) -> None:
    loading = threading.Event()

    def slow_model(texts: list[str]) -> np.ndarray:
        loading.wait(30)  # the dimension probe waits too: the model is "loading"
        rows = np.zeros((len(texts), 4), dtype=np.float32)
        for i, text in enumerate(texts):
            rows[i, hash(text) % 4] = 1.0
        rows[:, 0] += 0.1
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    with memcore.Memory(data_dir, embedder=slow_model, embedding_wait=0.1) as mem:
        result = mem.store_memory("User plays the cello on Sundays")
        assert result.embedding == "pending" and result.to_dict()["embedding"] == "pending"
        # Found by keywords at once.
        assert [h.memory.id for h in mem.search_text("cello")] == [result.id]
        loading.set()
        assert mem.embeddings is not None and mem.embeddings.wait_ready(30)
        assert mem._backfill is not None and mem._backfill.wait_idle(30)
        vector = slow_model(["User plays the cello on Sundays"])[0]
        assert mem.search(vector=vector)[0].memory.id == result.id
        assert mem._engine.count_pending_vectors() == 0
        later = mem.store_memory("User drinks green tea")
        assert later.embedding == "stored"


def test_memories_left_pending_are_embedded_at_the_next_open(data_dir: Path) -> None:
    with memcore.Memory(data_dir, model=None) as text_only:
        ids = [text_only.store_memory(f"User visited city number {i}").id for i in range(3)]
    with memcore.Memory(data_dir, model_path=require_model(MINILM_DIR)) as mem:
        assert mem._backfill is not None and mem._backfill.wait_idle(60)
        assert mem._engine.count_pending_vectors() == 0
        found = {h.memory.id for h in mem.search("Which cities did the user visit?", limit=5)}
        assert set(ids) <= found
