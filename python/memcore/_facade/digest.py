"""The digest item: one item, put first, standing for the earlier part of a session. It
holds a header saying what it is, a line per distinct tool call (repeats counted) and the
sentences that carry the most, printed in the session's order (`digest_lines`), as many
as fit its budget; near-duplicates are listed once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import Any

from memcore._facade.digest_lines import DIGEST_TAG, Line, item_lines
from memcore._facade.digest_scores import query_words
from memcore._facade.item_parts import ITEM_OVERHEAD, Estimate, item_tokens
from memcore._facade.lifecycle import MEMORY_ROLE

#: No sentence line is cheaper than this ("user: " and 12 characters).
_MIN_LINE_TOKENS = 4


class Digest:
    """The digest of the first items of a session. Their candidate lines are made item by
    item, as far as asked: the items kept verbatim never need theirs."""

    def __init__(self, items: Sequence[Mapping[str, Any]], query: str, estimate: Estimate) -> None:
        self._items = items
        self._query = query_words(query)
        self._estimate = estimate
        self._lines: list[list[Line]] = []  # candidate lines of items[:len(self._lines)]
        self._costs = [0]  # their costs summed: _costs[i] for items[:i]

    def full_tokens(self, count: int) -> int:
        """The tokens of the digest of the first `count` items with every candidate line
        in it (0 for none)."""
        if count == 0:
            return 0
        self._make_lines(count)
        return ITEM_OVERHEAD + self._estimate(_header(count)) + self._costs[count]

    def items(self, count: int, budget: int) -> list[dict[str, Any]]:
        """The digest item of the first `count` items within `budget` tokens, alone in a
        list ([] if none fits)."""
        if count == 0:
            return []
        self._make_lines(count)
        header = _header(count)
        room = budget - ITEM_OVERHEAD - self._estimate(header)
        if room < 0:
            return []
        lines = [line for per_item in self._lines[:count] for line in per_item]
        chosen = _choose(lines, room, self._estimate)
        while True:
            in_order = sorted(chosen, key=attrgetter("position"))
            text = header + "".join(line.text for line in in_order)
            item = {"role": MEMORY_ROLE, "content": text}
            if not chosen or item_tokens(item, self._estimate) <= budget:
                return [item]
            # An estimate that is not subadditive: drop the least useful line, retry.
            chosen.remove(min(chosen))

    def _make_lines(self, count: int) -> None:
        """The candidate lines of the first `count` items, made once."""
        for index in range(len(self._lines), count):
            lines = item_lines(self._items[index], index, self._query, self._estimate)
            self._lines.append(lines)
            self._costs.append(self._costs[-1] + sum(line.cost for line in lines))


def _header(count: int) -> str:
    return (
        f"{DIGEST_TAG} The {count} earlier items of this session, compacted by memcore "
        "(extracted, no LLM; the full turns are recorded and retrievable):\n"
    )


def _choose(lines: list[Line], budget: int, estimate: Estimate) -> list[Line]:
    """Tool lines (one per distinct call, repeats counted; at most half the budget when
    sentences compete, the latest kept), then the best sentences, near-duplicates (the
    same words, case and punctuation aside) dropped."""
    calls: dict[str, list[Line]] = {}
    sentences: list[Line] = []
    for line in lines:
        if line.tool:
            calls.setdefault(line.text, []).append(line)
        else:
            sentences.append(line)
    tools = [_counted(same[0], len(same), estimate) for same in calls.values()]
    tool_room = max(budget // 2, budget - sum(s.cost for s in sentences))
    chosen = _choose_tools(tools, tool_room, budget, estimate)
    used = sum(line.cost for line in chosen)
    seen: set[bytes] = set()
    sentences.sort(reverse=True)
    for line in sentences:
        left = budget - used
        if left < _MIN_LINE_TOKENS:
            break
        if line.cost > left or line.key in seen:
            continue
        seen.add(line.key)
        chosen.append(line)
        used += line.cost
    return chosen


def _choose_tools(tools: list[Line], room: int, budget: int, estimate: Estimate) -> list[Line]:
    """The latest of `tools` that fit `room`, and, when some are left out, a note saying
    how many (within `budget`)."""
    chosen: list[Line] = []
    used = 0
    for line in reversed(tools):
        if used + line.cost > room:
            break
        chosen.append(line)
        used += line.cost
    if len(chosen) < len(tools):
        note = _note(len(tools), chosen, estimate)
        while chosen and used + note.cost > room:
            used -= chosen.pop().cost  # the earliest listed makes way for the note
            note = _note(len(tools), chosen, estimate)
        if used + note.cost <= budget:
            chosen.append(note)
    return chosen


def _counted(line: Line, count: int, estimate: Estimate) -> Line:
    if count == 1:
        return line
    text = f"{line.text[:-1]} (×{count})\n"
    return line._replace(text=text, cost=estimate(text))


def _note(total: int, listed: list[Line], estimate: Estimate) -> Line:
    """The line standing for the tool calls not listed, placed before the listed ones."""
    text = f"- ({total - len(listed)} earlier tool calls not listed)\n"
    item, order = listed[-1].position if listed else (-1, 0)
    return Line(True, 0, (item, order - 1), text, estimate(text), b"")
