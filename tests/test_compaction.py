"""Context compaction for memory_before_turn (memcore._facade.compaction): the latest items
kept verbatim, the older ones as one extractive digest, everything within the room; a
too-large item cut with a marker, never dropped; every client's tool-call shape."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from memcore._facade.compaction import (
    CUT_TAG,
    DIGEST_TAG,
    ITEM_OVERHEAD,
    MIN_ROOM,
    Compacted,
    compact_items,
    item_tokens,
)
from memcore._facade.lifecycle import MEMORY_ROLE

Item = dict[str, Any]


def estimate(text: str) -> int:
    """The core's estimate, ceil(characters / 4), so no native call is needed."""
    return -(-len(text) // 4)


def compact(items: list[Item], room: int, *, recent: int = 30, query: str = "") -> Compacted:
    return compact_items(items, room=room, recent=recent, query=query, estimate=estimate)


def total(items: list[Item]) -> int:
    return sum(item_tokens(item, estimate) for item in items)


def assert_consistent(result: Compacted, room: int) -> None:
    assert result.tokens == total(result.items)
    assert result.tokens <= room


def digest_lines(result: Compacted) -> list[str]:
    digest = result.items[0]
    assert digest["role"] == MEMORY_ROLE
    assert digest["content"].startswith(DIGEST_TAG)
    return list(digest["content"].splitlines()[1:])


FILLER = [
    "Sure, happy to help with that.",
    "Thanks, that sounds good to me.",
    "Let me know if anything else comes up.",
    "Okay, that makes sense now.",
]
FACTS = [
    "The staging database runs Postgres 16 on port 5433.",
    "We decided to move the nightly build to the new runner.",
    "The invoice exporter is owned by Maria from billing.",
    "The deadline for the migration is the 14th of June.",
    "My laptop has 32 GB of memory, so the full index fits.",
]


def session(turns: int, seed: int = 0) -> list[Item]:
    """A coding session of `turns` turns of five items each: a request, an answer, a
    function call and its output, and a closing remark; texts of 200-2000 characters."""
    rng = random.Random(seed)
    items: list[Item] = []
    for turn in range(turns):
        words = rng.randint(30, 300)
        prose = " ".join(rng.choice(FILLER) for _ in range(words // 6))
        items.append({"role": "user", "content": f"Request number {turn}. {prose}"[:2000]})
        fact = FACTS[turn % len(FACTS)]
        answer = f"{prose} {fact} {rng.choice(FILLER)}"
        items.append({"role": "assistant", "content": answer[-2000:]})
        call_id = f"call_{turn}"
        arguments = json.dumps({"path": f"src/module_{turn}.py", "limit": 400})
        items.append(
            {
                "type": "function_call",
                "call_id": call_id,
                "name": "read_file",
                "arguments": arguments,
            }
        )
        output = f"def handler_{turn}(request):\n    return request\n" * rng.randint(4, 40)
        items.append({"type": "function_call_output", "call_id": call_id, "output": output})
        closing = " ".join([rng.choice(FILLER)] * rng.randint(7, 60))
        items.append({"role": "assistant", "content": closing})
    return items


# -- the 500-item session ----------------------------------------------------------------------


def test_500_item_session_keeps_the_30_latest_verbatim_and_fits() -> None:
    items = session(100)
    assert len(items) == 500
    room = total(items) // 4
    result = compact(items, room, query="Where does the staging database run?")
    assert result.compacted
    assert_consistent(result, room)
    assert result.items[-30:] == items[-30:]
    assert len(result.items) == 31
    assert result.replaced == 470
    assert result.cut == 0
    assert "The 470 earlier items of this session" in result.items[0]["content"]


def test_digest_has_one_line_per_tool_call_of_the_older_part() -> None:
    items = session(100)
    result = compact(items, total(items) // 4)
    tools = [line for line in digest_lines(result) if line.startswith("- tool ")]
    assert tools == [f"- tool read_file: src/module_{turn}.py" for turn in range(94)]


def test_digest_keeps_sentences_with_facts_and_drops_filler() -> None:
    items = session(100)
    result = compact(items, total(items) // 4)
    text = result.items[0]["content"]
    for fact in FACTS:
        assert f"assistant: {fact}\n" in text
    for filler in FILLER:
        assert filler not in text
    # Near-duplicates are listed once: every fact is said nearly 20 times.
    assert text.count(FACTS[0]) == 1


def test_sentence_closest_to_the_query_wins_over_an_equally_scored_one() -> None:
    # Each carries a number and nothing else; the digest has room for one of them.
    said = "for the spring order of garden chairs came to 120 {} after the small fix at the shop"
    invoice = "The invoice total " + said.format("euros") + ", as noted on the second page."
    parcel = "The parcel weight " + said.format("grams") + ", as noted on the second label."
    last = {"role": "user", "content": "Please continue with the next step now. " * 20}
    chat = " ".join(FILLER * 5)
    items: list[Item] = [
        {"role": "assistant", "content": f"{chat} {invoice} {chat}"},
        {"role": "assistant", "content": f"{chat} {parcel} {chat}"},
        last,
    ]
    header = compact(items, MIN_ROOM).items[0]["content"].splitlines()[0] + "\n"
    one_line = ITEM_OVERHEAD + estimate(header) + estimate(f"assistant: {invoice}\n")
    room = item_tokens(last, estimate) + one_line + 2
    assert room >= MIN_ROOM and room // 4 <= one_line  # the reserve lets the last item fit

    with_query = compact(items, room, recent=1, query="What was the invoice total?")
    assert_consistent(with_query, room)
    assert digest_lines(with_query) == [f"assistant: {invoice}"]
    # Without the query the later sentence wins the tie.
    without = compact(items, room, recent=1)
    assert digest_lines(without) == [f"assistant: {parcel}"]


# -- items too large, items that fit -----------------------------------------------------------


def test_a_single_oversized_last_item_is_cut_with_a_marker_and_kept() -> None:
    items = session(4)
    head, tail = "HEAD " * 2000, " TAIL" * 2000
    items.append({"role": "user", "content": head + "middle " * 20_000 + tail})
    room = 3000
    result = compact(items, room)
    assert_consistent(result, room)
    assert result.cut == 1
    last = result.items[-1]
    assert last["role"] == "user"
    content = last["content"]
    assert content.startswith("HEAD HEAD")
    assert content.endswith("TAIL TAIL")
    assert f"\n{CUT_TAG}" in content
    assert "tokens left out; the whole turn is recorded]" in content
    assert result.items[0]["content"].startswith(DIGEST_TAG)


def test_items_that_fit_are_returned_unchanged() -> None:
    items = session(3)
    result = compact(items, total(items))
    assert not result.compacted
    assert result.items == items
    assert (result.replaced, result.cut, result.tokens) == (0, 0, total(items))
    assert compact([], 0) == Compacted([], False, 0, 0, 0)


def test_recent_larger_than_the_number_of_items() -> None:
    items = session(4)  # 20 items
    room = total(items) // 2
    result = compact(items, room, recent=100)
    assert result.compacted
    assert_consistent(result, room)
    assert result.items[0]["content"].startswith(DIGEST_TAG)
    kept = len(result.items) - 1
    assert result.replaced + kept == len(items)
    assert result.items[1:] == items[-kept:]


def test_below_the_minimum_room_the_last_item_alone_is_cut_to_it() -> None:
    items = session(3)
    items.append({"role": "user", "content": "question " * 400})
    result = compact(items, 100)
    assert len(result.items) == 1
    assert result.items[0]["role"] == "user"
    assert CUT_TAG in result.items[0]["content"]
    assert result.tokens <= 100
    assert result.replaced == len(items) - 1


def test_a_leading_system_prompt_stays_in_front() -> None:
    system = {"role": "system", "content": "You are a careful coding agent."}
    items = [system, *session(40)]
    room = total(items) // 3
    result = compact(items, room)
    assert_consistent(result, room)
    assert result.items[0] == system
    assert result.items[1]["content"].startswith(DIGEST_TAG)
    assert result.items[-30:] == items[-30:]


def test_repeated_tool_calls_are_listed_once_with_their_count() -> None:
    call = {
        "type": "function_call",
        "call_id": "c",
        "name": "run",
        "arguments": '{"command": "pytest -q"}',
    }
    items: list[Item] = []
    for i in range(6):
        items += [dict(call, call_id=f"c{i}"), {"role": "user", "content": "again " * 200}]
    result = compact(items, MIN_ROOM + 200, recent=2)
    assert_consistent(result, MIN_ROOM + 200)
    assert result.items[-2:] == items[-2:]
    assert digest_lines(result) == ["- tool run: pytest -q (×5)"]


# -- every client's tool-call shape ------------------------------------------------------------


def openai_responses(turn: int) -> list[Item]:
    arguments = json.dumps({"file_path": f"src/a{turn}.py"})
    return [
        {"role": "user", "content": [{"type": "input_text", "text": f"Open file {turn}."}]},
        {"type": "function_call", "call_id": f"fc{turn}", "name": "open", "arguments": arguments},
        {"type": "function_call_output", "call_id": f"fc{turn}", "output": "x = 1\n" * 300},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "ok"}],
        },
    ]


def anthropic(turn: int) -> list[Item]:
    use = {
        "type": "tool_use",
        "id": f"tu{turn}",
        "name": "open",
        "input": {"file_path": f"src/a{turn}.py"},
    }
    result = {"type": "tool_result", "tool_use_id": f"tu{turn}", "content": "x = 1\n" * 300}
    return [
        {"role": "user", "content": f"Open file {turn}."},
        {"role": "assistant", "content": [{"type": "text", "text": "Opening it."}, use]},
        {"role": "user", "content": [result]},
        {"role": "assistant", "content": "ok"},
    ]


def chat_completions(turn: int) -> list[Item]:
    function = {"name": "open", "arguments": json.dumps({"file_path": f"src/a{turn}.py"})}
    call = {"id": f"cc{turn}", "type": "function", "function": function}
    return [
        {"role": "user", "content": f"Open file {turn}."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"cc{turn}", "content": "x = 1\n" * 300},
        {"role": "assistant", "content": "ok"},
    ]


SHAPES = {"openai": openai_responses, "anthropic": anthropic, "chat": chat_completions}


def call_ids(item: Mapping[str, Any]) -> set[str]:
    ids = {item["call_id"]} if item.get("type") == "function_call" else set()
    ids |= {c["id"] for c in item.get("tool_calls") or []}
    content = item.get("content")
    if isinstance(content, list):
        ids |= {p["id"] for p in content if p.get("type") == "tool_use"}
    return ids


def result_ids(item: Mapping[str, Any]) -> set[str]:
    ids = {item["call_id"]} if item.get("type") == "function_call_output" else set()
    if item.get("role") == "tool":
        ids.add(item["tool_call_id"])
    content = item.get("content")
    if isinstance(content, list):
        ids |= {p["tool_use_id"] for p in content if p.get("type") == "tool_result"}
    return ids


def orphans(items: list[Item]) -> set[str]:
    """Tool results among `items` whose call is not among them (providers refuse these)."""
    made = set().union(*(call_ids(i) for i in items))
    return set().union(*(result_ids(i) for i in items)) - made


def test_every_shape_charges_its_tool_calls_and_results() -> None:
    for shape in SHAPES.values():
        call, output = shape(0)[1], shape(0)[2]
        assert item_tokens(call, estimate) > ITEM_OVERHEAD + estimate("src/a0.py")
        assert item_tokens(output, estimate) >= ITEM_OVERHEAD + estimate("x = 1\n" * 300)


def test_every_shape_gets_its_tool_lines_and_keeps_calls_with_their_results() -> None:
    for name, shape in SHAPES.items():
        items = [item for turn in range(12) for item in shape(turn)]
        for recent in range(1, 9):  # the boundary falls on every kind of item
            room = total(items[-recent:]) + 300
            result = compact(items, room, recent=recent)
            assert_consistent(result, room)
            kept = result.items[1:]
            assert not orphans(kept), (name, recent)
            assert kept == items[len(items) - len(kept) :]
            lines = digest_lines(result)
            expected = [f"- tool open: src/a{turn}.py" for turn in range(12)]
            assert [line for line in lines if line.startswith("- tool")] == [
                line for line in expected if line in lines
            ]
        full = compact(items, total(items) // 2, recent=4)
        tools = [line for line in digest_lines(full) if line.startswith("- tool")]
        assert tools == [f"- tool open: src/a{turn}.py" for turn in range(11)], name


def test_tool_targets() -> None:
    def line(arguments: Any) -> str:
        call = {"type": "function_call", "call_id": "c", "name": "t", "arguments": arguments}
        items = [call, {"role": "user", "content": "go on " * 300}]
        return digest_lines(compact(items, MIN_ROOM + 50, recent=1))[0]

    assert line('{"pattern": "TODO", "path": "src"}') == "- tool t: src"
    assert line({"command": ["bash", "-lc", "ls  -la"]}) == "- tool t: bash -lc ls -la"
    assert line({"url": "https://example.org/a"}) == "- tool t: https://example.org/a"
    assert line({"flag": True, "name": "Alice"}) == "- tool t: Alice"
    assert line({"flag": True}) == "- tool t"
    assert line("not json") == "- tool t: not json"


# -- determinism and the property -------------------------------------------------------------


def test_same_input_same_output() -> None:
    items = session(60, seed=12345)  # texts no other test has analysed
    room = total(items) // 5
    first = compact(items, room, query="staging database port")
    again = compact([dict(item) for item in items], room, query="staging database port")
    assert first == again
    assert json.dumps(first.items) == json.dumps(again.items)


WORDS = st.sampled_from(
    [*FILLER, *FACTS, "x = {1; 2}", "```\ncode\n```", "I think so.", "ünïcödé Ünïcödé İstanbul."]
)
TEXT = st.one_of(
    st.lists(WORDS, max_size=30).map(" ".join),
    st.integers(0, 30_000).map(lambda n: ("word " * (n // 5 + 1))[:n]),
    st.text(max_size=300),
)
IDS = st.sampled_from(["a", "b", "c", "d"])
ITEM = st.one_of(
    st.builds(lambda r, t: {"role": r, "content": t}, st.sampled_from(["user", "assistant"]), TEXT),
    st.builds(lambda t: {"role": "system", "content": t}, TEXT),
    st.builds(
        lambda i, t: {"type": "function_call", "call_id": i, "name": "f", "arguments": t},
        IDS,
        TEXT,
    ),
    st.builds(lambda i, t: {"type": "function_call_output", "call_id": i, "output": t}, IDS, TEXT),
    st.builds(
        lambda i, t: {
            "role": "assistant",
            "content": [
                {"type": "text", "text": t},
                {"type": "tool_use", "id": i, "name": "f", "input": {"q": t}},
            ],
        },
        IDS,
        TEXT,
    ),
    st.builds(
        lambda i, t: {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": i, "content": [{"type": "text", "text": t}]}
            ],
        },
        IDS,
        TEXT,
    ),
    st.builds(
        lambda i, t: {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": i, "type": "function", "function": {"name": "f", "arguments": t}}
            ],
        },
        IDS,
        TEXT,
    ),
    st.builds(lambda i, t: {"role": "tool", "tool_call_id": i, "content": t}, IDS, TEXT),
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(ITEM, min_size=1, max_size=40),
    st.integers(MIN_ROOM, 12_000),
    st.integers(0, 50),
    TEXT,
)
def test_any_items_fit_any_room_above_the_minimum(
    items: list[Item], room: int, recent: int, query: str
) -> None:
    result = compact(items, room, recent=recent, query=query)
    assert_consistent(result, room)
    last, original = result.items[-1], items[-1]
    assert last == original or (
        result.cut > 0
        and CUT_TAG in json.dumps(last, ensure_ascii=False)
        and last.get("role") == original.get("role")
        and last.get("type") == original.get("type")
    )
    if not result.compacted:
        assert result.items == items
    elif any(is_digest(item) for item in result.items):
        kept = len(result.items) - 1 - [is_digest(item) for item in result.items].index(True)
        # A call stays with its result, unless even the two cut do not fit: then the last
        # item is kept alone.
        assert kept == 1 or not answered_before(items, len(items) - kept)


def is_digest(item: Mapping[str, Any]) -> bool:
    content = item.get("content")
    return (
        item.get("role") == MEMORY_ROLE
        and isinstance(content, str)
        and content.startswith(DIGEST_TAG)
    )


def answered_before(items: list[Item], start: int) -> list[str]:
    """Results in items[start:] whose call (the latest one before them) is before `start`."""
    latest: dict[str, int] = {}
    found = []
    for j, item in enumerate(items):
        for answered in result_ids(item):
            call = latest.get(answered)
            if j >= start and call is not None and call < start:
                found.append(answered)
        for made in call_ids(item):
            latest[made] = j
    return found
