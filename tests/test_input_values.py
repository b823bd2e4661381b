"""Every input error has a code, whatever the value (DESIGN section 10): a lone surrogate in
any text, an integer beyond 64 bits, NaN or infinity where a number is wanted, lists or
objects nested without end, an over-long key, anywhere in any argument of any public
method, gets INVALID_PARAMETER naming the field (``memcore.arguments``) and writes nothing.
They used to raise UnicodeEncodeError, OverflowError or RecursionError from deep inside.
The edges of the numbers the core converts (-1, the largest 64-bit values) get a code or
an answer, never another exception."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import memcore
from conftest import unit
from memcore import InvalidParameterError, MemcoreError, Memory
from memcore._facade.conversation_handles import Conversation, Turn


def nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def holding_itself() -> list[Any]:
    value: list[Any] = []
    value.append(value)
    return value


#: Values the core cannot take, each in its own class; (value, the field the error names,
#: relative to the argument).
HOSTILE: dict[str, tuple[Callable[[], Any], str]] = {
    "lone surrogate": (lambda: "caf\udce9", ""),
    "surrogate in a list": (lambda: ["fine", "\ud800"], "[1]"),
    "surrogate as a key": (lambda: {"\ud800": 1}, "['\\ud800']"),
    "surrogate deep inside": (lambda: {"a": [{"b": "x\udfffy"}]}, ".a[0].b"),
    "integer beyond 64 bits": (lambda: 10**20, ""),
    "negative beyond 64 bits": (lambda: -(2**64), ""),
    "NaN": (lambda: math.nan, ""),
    "infinity": (lambda: -math.inf, ""),
    "NaN in a list": (lambda: [0.5, math.nan], "[1]"),
    "nested 100 deep": (lambda: nested(100), ""),
    "a list holding itself": (holding_itself, ""),
    "a key of 5000 characters": (lambda: {"k" * 5000: 1}, ""),
}


@pytest.fixture
def world(mem: Memory, tmp_path: Path) -> Iterator[tuple[Memory, Conversation, Turn]]:
    """A store with a memory, two related entities and a conversation turn."""
    mem.store_memory("the build runs on fridays", vector=unit(1))
    mem.create_entity("Alice", "person", ["likes tea"])
    mem.create_entity("Bob", "person")
    mem.create_relation("Alice", "Bob", "knows")
    conversation = mem.conversation("c1")
    conversation.record_turn("hello there", "hi")
    turn = conversation.turn("what next?")
    yield mem, conversation, turn
    turn.discard()


def public_methods(owner: object) -> list[tuple[str, list[str]]]:
    """Each public method of ``owner`` and its parameters (``self`` and ``*args`` left out)."""
    out = []
    for name in dir(type(owner)):
        if name.startswith("_"):
            continue
        attribute = inspect.getattr_static(type(owner), name)
        function = attribute.__func__ if isinstance(attribute, staticmethod) else attribute
        if not inspect.isfunction(function):
            continue
        kinds = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        names = [
            p.name
            for p in inspect.signature(function).parameters.values()
            if p.name != "self" and p.kind not in kinds
        ]
        out.append((name, names))
    return out


def fingerprint(mem: Memory) -> tuple[object, ...]:
    graph = mem.read_graph(limit=50)
    return (
        mem.count_memories(),
        sorted(e.name for e in graph.entities),
        len(graph.relations),
        len(mem.list_turns("c1")),
        [len(e.observations) for e in graph.entities],
    )


def test_every_argument_of_every_public_method_refuses_what_the_core_cannot_take(
    world: tuple[Memory, Conversation, Turn],
) -> None:
    mem = world[0]
    before = fingerprint(mem)
    wrong: list[str] = []
    cases = 0
    for owner in world:
        for method, parameters in public_methods(owner):
            for parameter in parameters:
                for kind, (make, inside) in HOSTILE.items():
                    cases += 1
                    where = f"{type(owner).__name__}.{method}({parameter}=<{kind}>)"
                    try:
                        getattr(owner, method)(**{parameter: make()})
                    except InvalidParameterError as exc:
                        field = exc.details.get("field")
                        if field != parameter + inside:
                            wrong.append(f"{where}: field {field!r}, wanted {parameter + inside}")
                        elif field not in str(exc):
                            wrong.append(f"{where}: the message does not name it: {exc}")
                    except BaseException as exc:
                        wrong.append(f"{where}: {type(exc).__name__}: {exc}")
                    else:
                        wrong.append(f"{where}: accepted")
    assert cases > 2000
    assert not wrong, f"{len(wrong)} of {cases}:\n" + "\n".join(wrong[:40])
    assert fingerprint(mem) == before, "a refused call wrote"


def test_the_message_says_where_and_how_to_fix_it(mem: Memory) -> None:
    with pytest.raises(InvalidParameterError) as text:
        mem.store_memory("caf\udce9 au lait")
    message = str(text.value)
    assert message.startswith("content is not valid Unicode: it holds a lone surrogate")
    assert "(\\udce9 at character 3)" in message and "errors='replace'" in message
    message.encode("utf-8")  # the message itself can be written anywhere
    with pytest.raises(InvalidParameterError, match=r"^limit is out of range: 1{1}0{20}; "):
        mem.search_text("x", limit=10**20)
    with pytest.raises(
        InvalidParameterError, match=r"^confidence must be a finite number, got nan"
    ):
        mem.store_memory("x", confidence=math.nan)
    with pytest.raises(InvalidParameterError, match=r"^metadata nests lists and objects more"):
        mem.store_memory("x", metadata={"a": nested(200)})
    assert mem.count_memories() == 0


def test_a_vector_past_float32_is_refused_by_name(mem: Memory) -> None:
    # float32's largest is about 3.4e38: the cast gives infinity (no numpy warning first).
    with pytest.raises(InvalidParameterError, match="NaN or infinite") as caught:
        mem.store_memory("x", vector=[1e40] * 8)
    assert caught.value.details == {"field": "vector"}


def test_an_over_long_key_is_not_repeated_whole(mem: Memory) -> None:
    # No id or name is this long: the lookup fails by its code, and the reply (and the
    # log line of a tool call) does not carry a megabyte back.
    key = "k" * 1_000_000
    for call in (lambda: mem.get_memory(key), lambda: mem.get_entity(key)):
        with pytest.raises(MemcoreError) as caught:
            call()
        assert caught.value.code in ("MEMORY_NOT_FOUND", "NOT_FOUND")
        assert len(str(caught.value)) < 200 and "(1000000 characters)" in str(caught.value)
        assert len(caught.value.details["id"]) < 200


def test_a_count_below_zero_gets_a_code_from_the_core(mem: Memory) -> None:
    # Within 64 bits, so it reaches the core, which counts with unsigned integers: the
    # conversion's error is translated, naming the argument PyO3 was converting.
    with pytest.raises(InvalidParameterError, match=r"^limit must not be negative, got -1\.$") as e:
        mem.search_text("x", limit=-1)
    assert e.value.details == {"field": "limit"}


def test_a_batch_with_one_bad_text_stores_none(world: tuple[Memory, Conversation, Turn]) -> None:
    mem, conversation, _ = world
    before = fingerprint(mem)
    refused: list[Callable[[], object]] = [
        lambda: mem.store_memories(["one", "two", "thr\ud800ee"]),
        lambda: mem.save_memory(
            [{"name": "Carol", "entityType": "person"}, {"name": "D\ud800", "entityType": "x"}],
            "thread-1",
        ),
        lambda: conversation.record_turn("fine", "the agent's answer \udc80"),
        lambda: mem.memory_after_turn(
            "c1", "t9", "a user message", [{"role": "assistant", "content": "ok \ud83d"}]
        ),
        lambda: mem.add_observations("Alice", ["fine", "\ud800"]),
    ]
    for call in refused:
        with pytest.raises(InvalidParameterError):
            call()
    assert fingerprint(mem) == before


#: One call of each method that takes a number, valid as it stands; each number is then
#: replaced by the edges below.
NOW = datetime(2025, 1, 1, tzinfo=UTC)
NUMBER_CALLS: dict[str, dict[str, Any]] = {
    "add_observations": {"entity": "Alice", "observations": ["plays chess"]},
    "create_entity": {"name": "Eve", "entity_type": "person"},
    "create_relation": {"source": "Alice", "target": "Bob", "relation_type": "trusts"},
    "detect_communities": {},
    "find_relation_path": {"a": "Alice", "b": "Bob"},
    "get_analytics": {},
    "get_related": {"entity": "Alice"},
    "get_valid": {},
    "get_valid_at": {"timestamp": NOW},
    "index_project": {"path": "<sandbox>"},
    "list_memories": {},
    "list_recent_memories": {},
    "list_turns": {"conversation_id": "c1"},
    "memory_after_turn": {
        "session_id": "s",
        "turn_id": "t",
        "input_items": "hi",
        "output_items": "ok",
    },
    "memory_before_turn": {"session_id": "s", "turn_id": "t2", "current_input": "hello"},
    "memory_list_dir_with_abstract": {},
    "memory_run_maintenance": {},
    "personalized_pagerank": {"seeds": "Alice"},
    "query_nodes": {},
    "read_graph": {},
    "recall": {"query": "build", "vector": unit(1)},
    "record_turn": {"conversation_id": "c2", "user_text": "hi"},
    "retrieve_context": {"query": "build", "vector": unit(1)},
    "search": {"query": "build", "vector": unit(1)},
    "search_code": {"query": "build", "vector": unit(1)},
    "search_memories": {"query": "build", "vector": unit(1)},
    "search_nodes": {"query": "Alice", "vector": unit(1)},
    "search_text": {"query": "build"},
    "store_memories": {"contents": ["a fact"], "vectors": unit(2)[None, :]},
    "store_memory": {"content": "another fact", "vector": unit(3)},
    "update_memory": {"memory_id": "<a memory>"},
    "wait_for_seq": {"min_seq": 0},
    "wait_indexed": {},
}
NUMBER_EDGES = [-1, -(2**63), 2**63 - 1, 0, -1.0, 1e308, -1e308, 5e-324]


def number_parameters(method: Callable[..., Any]) -> list[str]:
    return [
        p.name
        for p in inspect.signature(method).parameters.values()
        if any(t in str(p.annotation) for t in ("int", "float", "TimeLike"))
        and p.kind != inspect.Parameter.VAR_KEYWORD
    ]


def test_numbers_at_the_edges_get_an_answer_or_a_code(
    world: tuple[Memory, Conversation, Turn], tmp_path: Path
) -> None:
    mem = world[0]
    sandbox = tmp_path / "project"
    sandbox.mkdir()
    (sandbox / "app.py").write_text("def main():\n    return 1\n")
    memory_id = mem.list_memories(limit=1)[0].id
    taking_numbers = {
        name for name, _ in public_methods(mem) if number_parameters(getattr(mem, name))
    }
    assert taking_numbers == set(NUMBER_CALLS), "every method taking a number has a base call"
    wrong: list[str] = []
    for method, base in NUMBER_CALLS.items():
        stand_ins = {"<sandbox>": str(sandbox), "<a memory>": memory_id}
        base = {k: stand_ins.get(v, v) if isinstance(v, str) else v for k, v in base.items()}
        for parameter in number_parameters(getattr(mem, method)):
            for edge in NUMBER_EDGES:
                args = {**base, parameter: edge}
                if parameter in ("timeout", "embed_wait") and edge > 10:
                    continue  # waits that long when nothing comes: valid, and slow
                try:
                    getattr(mem, method)(**args)
                except MemcoreError:
                    pass
                except BaseException as exc:
                    wrong.append(f"{method}({parameter}={edge!r}): {type(exc).__name__}: {exc}")
    assert not wrong, "\n".join(wrong)


def test_the_constructor_checks_its_arguments_too(tmp_path: Path) -> None:
    for arguments, field in [
        ({"namespace": "n\ud800"}, "namespace"),
        ({"path": tmp_path / "caf\udce9"}, "path"),
        ({"embedding_wait": math.nan}, "embedding_wait"),
        ({"namespaces": ["a", "\ud800"]}, "namespaces[1]"),
    ]:
        with pytest.raises(InvalidParameterError) as caught:
            memcore.Memory(tmp_path / "store", model=None, **arguments)
        assert caught.value.details["field"] == field
    assert not (tmp_path / "store").exists()
