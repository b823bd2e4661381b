"""Cutting items too large for the room: the largest strings lose their middle to a
marker (head and tail kept), and an item whose strings cannot be cut far enough is
reduced to its identity and a marker. An item is cut, never dropped: the marker says the
whole turn is recorded, so the model knows it can be retrieved.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from memcore._facade.item_parts import ITEM_OVERHEAD, Estimate, item_tokens, leaves

#: What every cut starts with.
CUT_TAG = "…[cut by memcore: "
#: Strings no longer than this are not cut (the marker is about as long), and at most
#: this many of an item's strings are; when that is not enough, the item is replaced by
#: its identity and a marker (`stub`).
_MIN_CUT_CHARS = 128
_MOST_CUT_LEAVES = 16


def cut_group(
    group: list[dict[str, Any]], limit: int, estimate: Estimate
) -> list[dict[str, Any]] | None:
    """Copies of `group` cut to `limit` tokens in all, the largest strings first (each
    to the longest head and tail that fits), or None if even markers alone do not fit."""
    copies = copy.deepcopy(group)

    def fits() -> bool:
        return sum(item_tokens(item, estimate) for item in copies) <= limit

    if fits():
        return copies
    found = [leaf for item in copies for leaf in leaves(item) if len(leaf[2]) > _MIN_CUT_CHARS]
    found.sort(key=lambda leaf: -len(leaf[2]))
    for container, key, text in found[:_MOST_CUT_LEAVES]:
        container[key] = _cut_text(text, 0, estimate)
        if not fits():
            continue
        low, high = 0, len(text)  # low fits, high (the whole text) does not
        while high - low > 1:
            middle = (low + high) // 2
            container[key] = _cut_text(text, middle, estimate)
            if fits():
                low = middle
            else:
                high = middle
        container[key] = _cut_text(text, low, estimate)
        return copies
    return None


def cut_one(item: dict[str, Any], limit: int, estimate: Estimate) -> dict[str, Any]:
    """`item` cut to `limit` tokens, or its stub when it cannot be."""
    cut = cut_group([item], limit, estimate)
    return cut[0] if cut is not None else stub(item, estimate)


def stub(item: Mapping[str, Any], estimate: Estimate) -> dict[str, Any]:
    """The item reduced to its identity and a marker: when even its cut strings do not fit."""
    whole = item_tokens(item, estimate) - ITEM_OVERHEAD
    reduced = {k: item[k] for k in ("type", "role", "call_id", "tool_call_id") if k in item}
    if not reduced:
        reduced["role"] = "user"
    reduced["output" if "output" in item else "content"] = _marker(whole, whole)
    return reduced


def _cut_text(text: str, keep: int, estimate: Estimate) -> str:
    """`text` with all but `keep` characters (60% head, 40% tail) replaced by a marker."""
    head = (keep * 3 + 4) // 5
    tail = len(text) - (keep - head)
    marker = _marker(estimate(text[head:tail]), estimate(text))
    return f"{text[:head]}\n{marker}\n{text[tail:]}"


def _marker(left_out: int, whole: int) -> str:
    return f"{CUT_TAG}{left_out:,} of {whole:,} tokens left out; the whole turn is recorded]"
