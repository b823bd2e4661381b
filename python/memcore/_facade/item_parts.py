"""The parts of a client's item, in the three formats clients send (OpenAI Responses,
Chat Completions, Anthropic messages): its text, who speaks, the tool calls it makes, the
ids tying a tool result to its call, the texts the model reads (and so what the item
costs), and where those texts sit, to cut them. memory_after_turn reads turns with it
(memcore/_facade/lifecycle.py) and compaction reads sessions with it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

Estimate = Callable[[str], int]

#: Tokens charged per item on top of its text: the role and the delimiters around a
#: message (OpenAI documents 3 per chat message; one more covers a tool item's call id).
ITEM_OVERHEAD = 4

_SPEAKERS = frozenset({"user", "assistant", "system", "developer"})
_TEXT_TYPES = frozenset({"message", "output_text", "text"})


def item_text(item: Mapping[str, Any]) -> str:
    """The text of an item: a string content, or its text parts joined."""
    content = item.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            p if isinstance(p, str) else p.get("text")
            for p in content
            if isinstance(p, str | Mapping)
        ]
        return "\n".join(p for p in parts if isinstance(p, str) and p)
    text = item.get("text")
    return text if isinstance(text, str) else ""


def item_tokens(item: Mapping[str, Any], estimate: Estimate) -> int:
    """The tokens an item costs: ITEM_OVERHEAD plus the estimate of each piece of it the
    model reads (its text, a tool call's name and arguments, a tool result's output)."""
    return ITEM_OVERHEAD + sum(estimate(p) for p in _pieces(item) if p)


def speaker(item: Mapping[str, Any]) -> str | None:
    """Who says an item's text (None for a tool result or an unknown role)."""
    role = item.get("role")
    if role is None and item.get("type") in _TEXT_TYPES:
        return "assistant"
    return role if isinstance(role, str) and role in _SPEAKERS else None


def is_call(kind: Any) -> bool:
    """Whether an item or content part of this `type` is a tool call."""
    return isinstance(kind, str) and (kind.endswith("_call") or kind in ("tool_use", "tool_call"))


def calls(item: Mapping[str, Any]) -> Iterator[tuple[Any, Any]]:
    """(name, arguments) of the tool calls an item makes, in every client's shape; a call
    item without a name (a built-in tool such as `web_search_call`) goes by its type, and
    one without arguments by its `action`."""
    if is_call(item.get("type")):
        name = item.get("name")
        yield (
            name if name is not None else item.get("type"),
            item.get("arguments", item.get("input", item.get("action"))),
        )
    yield from _inner_calls(item)


def _inner_calls(item: Mapping[str, Any]) -> Iterator[tuple[Any, Any]]:
    """(name, arguments) of the calls inside an item: Anthropic `tool_use` content parts
    and the `tool_calls` of a Chat Completions message."""
    for part in _parts(item):
        if is_call(part.get("type")):
            yield part.get("name"), part.get("input", part.get("arguments"))
    nested = item.get("tool_calls")
    if isinstance(nested, list):
        for call in nested:
            if isinstance(call, Mapping):
                fn = call.get("function")
                fn = fn if isinstance(fn, Mapping) else call
                yield fn.get("name"), fn.get("arguments")


def call_ids(item: Mapping[str, Any]) -> Iterator[str]:
    """The ids of the tool calls an item makes."""
    if is_call(item.get("type")) and isinstance(item.get("call_id"), str):
        yield item["call_id"]
    for part in _parts(item):
        if part.get("type") == "tool_use" and isinstance(part.get("id"), str):
            yield part["id"]
    nested = item.get("tool_calls")
    if isinstance(nested, list):
        for call in nested:
            if isinstance(call, Mapping) and isinstance(call.get("id"), str):
                yield call["id"]


def result_ids(item: Mapping[str, Any]) -> Iterator[str]:
    """The ids of the tool calls whose results an item carries."""
    kind = item.get("type")
    if isinstance(kind, str) and kind.endswith("_output") and isinstance(item.get("call_id"), str):
        yield item["call_id"]
    if item.get("role") == "tool" and isinstance(item.get("tool_call_id"), str):
        yield item["tool_call_id"]
    for part in _parts(item):
        if part.get("type") == "tool_result" and isinstance(part.get("tool_use_id"), str):
            yield part["tool_use_id"]


def _parts(item: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    content = item.get("content")
    if isinstance(content, list):
        for part in content:
            if isinstance(part, Mapping):
                yield part


# -- the texts the model reads -----------------------------------------------------------


def _pieces(item: Mapping[str, Any]) -> Iterator[str]:
    """The texts of an item the model reads; `leaves` yields the same texts, mutable."""
    yield item_text(item)
    if is_call(item.get("type")):
        # Unlike `calls`: no stand-ins for a missing name or arguments, as none is sent.
        yield _as_text(item.get("name"))
        yield _as_text(item.get("arguments", item.get("input")))
    for name, arguments in _inner_calls(item):
        yield _as_text(name)
        yield _as_text(arguments)
    if "output" in item:
        yield _output_text(item["output"])
    for part in _parts(item):
        if part.get("type") == "tool_result":
            yield _output_text(part.get("content"))


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):  # a circular structure
        return str(value)


def _output_text(value: Any) -> str:
    # A list of parts reads as a message's content does.
    return item_text({"content": value}) if isinstance(value, list) else _as_text(value)


#: A place holding a string the model reads: (container, key, the string).
_Leaf = tuple[Any, Any, str]


def leaves(item: dict[str, Any]) -> Iterator[_Leaf]:
    """The mutable strings of `_pieces` (tool names and dictionary keys excluded)."""
    content = item.get("content")
    if isinstance(content, str):
        yield item, "content", content
    elif isinstance(content, list):
        for i, part in enumerate(content):
            if isinstance(part, str):
                yield content, i, part
            elif isinstance(part, dict):
                if isinstance(part.get("text"), str):
                    yield part, "text", part["text"]
                if is_call(part.get("type")):
                    yield from _value_leaves(part, "input" if "input" in part else "arguments")
                elif part.get("type") == "tool_result":
                    yield from _output_leaves(part, "content")
    elif isinstance(item.get("text"), str):
        yield item, "text", item["text"]
    if is_call(item.get("type")):
        yield from _value_leaves(item, "arguments" if "arguments" in item else "input")
    if "output" in item:
        yield from _output_leaves(item, "output")
    nested = item.get("tool_calls")
    if isinstance(nested, list):
        for call in nested:
            if isinstance(call, dict):
                fn = call.get("function")
                yield from _value_leaves(fn if isinstance(fn, dict) else call, "arguments")


def _value_leaves(container: Any, key: Any) -> Iterator[_Leaf]:
    value = container.get(key) if isinstance(container, dict) else container[key]
    if isinstance(value, str):
        yield container, key, value
    elif isinstance(value, dict):
        for k in value:
            yield from _value_leaves(value, k)
    elif isinstance(value, list):
        for i in range(len(value)):
            yield from _value_leaves(value, i)


def _output_leaves(container: dict[str, Any], key: str) -> Iterator[_Leaf]:
    """The strings of an output: itself, or its parts' texts (as `_output_text` reads it)."""
    value = container.get(key)
    if isinstance(value, list):
        for i, part in enumerate(value):
            if isinstance(part, str):
                yield value, i, part
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                yield part, "text", part["text"]
    else:
        yield from _value_leaves(container, key)
