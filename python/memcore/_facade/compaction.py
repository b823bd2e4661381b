"""Context compaction for `memory_before_turn`, made without an LLM.

When a thin client's items no longer fit the room the model leaves them, the latest items
are kept verbatim and the older ones are replaced by ONE digest item put first: an
extractive digest of the earlier part of the session (`digest`). It keeps one line per
tool call (the tool and its target) and the sentences that carry something: a number, a
name, a decision or commitment, a first-person statement of fact, and the words of the
current input, each prefixed by who said it and printed in the session's order. Filler
("Sure, happy to help") scores nothing and is left out; code is skipped.

Why extractive: memcore calls no model, so the digest is built from the session's own
sentences. That makes it deterministic: the same items give the same bytes, so a
provider's prompt cache keeps hitting on it. And it is cheap: each text is scanned by a
few C-level passes, and the analysis of a text is kept for the next turn, which re-sends
the same earlier items (`digest_scores`; a 500-item session: about 35 ms the first time,
10 ms after). Nothing recorded is lost: the full turns stay in the store and come back
through retrieval; the digest header says so, and so does the marker of an item too large
for the budget, which is cut (its head and tail kept), never dropped (`item_cut`).

This module fits the items: what stays in front, where the verbatim part starts, and
how much room the digest gets. Every count is :func:`item_tokens`, so what
`Compacted.tokens` reports is what was checked against `room`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from memcore._facade.digest import Digest
from memcore._facade.digest_lines import DIGEST_TAG as DIGEST_TAG
from memcore._facade.item_cut import CUT_TAG as CUT_TAG
from memcore._facade.item_cut import cut_group, cut_one, stub
from memcore._facade.item_parts import ITEM_OVERHEAD as ITEM_OVERHEAD
from memcore._facade.item_parts import Estimate, call_ids, result_ids
from memcore._facade.item_parts import item_tokens as item_tokens

#: Below this much room the guarantee `tokens <= room` is not given: the result is the
#: last item alone, cut as far as it goes (its marker alone may not fit). At this size a
#: quarter of the room holds the digest header and the rest a cut item with its marker.
MIN_ROOM = 256
#: The digest's reserve is at most 1/RESERVE_SHARE of the room (see `compact_items`).
RESERVE_SHARE = 4
#: Leading system/developer items are kept in front when they leave at least this share
#: of the room (1/PIN_SHARE) and MIN_ROOM for the rest.
PIN_SHARE = 2

_INSTRUCTION_ROLES = frozenset({"system", "developer"})


@dataclass(frozen=True)
class Compacted:
    """The items to send, and what compaction did to them."""

    #: `[*leading instructions, digest item, *kept items]`, or the items unchanged.
    items: list[dict[str, Any]]
    compacted: bool
    #: How many older items the digest stands for.
    replaced: int
    #: How many kept items were cut with a marker because they were too large.
    cut: int
    #: `item_tokens` summed over `items`.
    tokens: int


def compact_items(
    items: Sequence[Mapping[str, Any]],
    *,
    room: int,
    recent: int,
    query: str,
    estimate: Estimate,
) -> Compacted:
    """Fit `items` into `room` tokens: the latest verbatim, the older ones as one digest.

    Items that fit are returned unchanged. Otherwise the `recent` latest items are kept
    verbatim when they fit in `room` minus the digest's reserve, min(room / 4, the size
    of the full digest of the older items); when they do not, as many of the latest as fit
    that way are kept, and always the last item (the current input): if it alone is too
    large, it is cut with a marker. Leading system/developer items (a Chat Completions
    system prompt) stay in front when they take at most half the room. A kept part never
    starts with a tool result whose call is left to the digest (providers refuse that):
    the call is kept too when it fits, else the result goes to the digest as well.

    The digest item (`{"role": MEMORY_ROLE}`, first) then gets all the room left. With
    `room >= MIN_ROOM` the result satisfies `tokens <= room`; below it, the result is the
    last item cut as far as it goes.

    Args:
        items: The input items, oldest first.
        room: The tokens the items may take (instructions and memory block subtracted).
        recent: How many of the latest items to keep verbatim (at least the last one).
        query: The current input: sentences that share its words are preferred.
        estimate: The token estimate of a text (the core's ceil(characters / 4)).

    Returns:
        The items to send and what was done, deterministic for the same arguments.
    """
    work = [dict(item) for item in items]
    costs = [item_tokens(item, estimate) for item in work]
    total = sum(costs)
    if total <= room or not work:
        return Compacted(work, False, 0, 0, total)
    if room < MIN_ROOM:
        last = cut_one(work[-1], room, estimate)
        return _result([last], len(work) - 1, int(last != work[-1]), estimate)
    pinned = _instructions(work, costs, room)
    body, body_room = work[pinned:], room - sum(costs[:pinned])
    digest = Digest(body, query, estimate)
    start, kept, cut = _Split(body, costs[pinned:], body_room, digest, estimate).at(recent)
    made = digest.items(start, body_room - sum(item_tokens(i, estimate) for i in kept))
    return _result([*work[:pinned], *made, *kept], start, cut, estimate)


def _result(items: list[dict[str, Any]], replaced: int, cut: int, estimate: Estimate) -> Compacted:
    tokens = sum(item_tokens(item, estimate) for item in items)
    return Compacted(items, True, replaced, cut, tokens)


def _instructions(items: list[dict[str, Any]], costs: list[int], room: int) -> int:
    """How many leading system/developer items stay in front (0 when they take too much)."""
    count = 0
    while count < len(items) - 1 and items[count].get("role") in _INSTRUCTION_ROLES:
        count += 1
    left = room - sum(costs[:count])
    return count if left >= max(MIN_ROOM, room // PIN_SHARE) else 0


class _Split:
    """Where the items after the pinned instructions split into the digested and the kept."""

    def __init__(
        self,
        items: list[dict[str, Any]],
        costs: list[int],
        room: int,
        digest: Digest,
        estimate: Estimate,
    ) -> None:
        self.items = items
        self.room = room
        self.digest = digest
        self.estimate = estimate
        #: suffix[i]: what items[i:] cost.
        self.suffix = list(accumulate(reversed(costs), initial=0))[::-1]
        self.pair_start = _pair_starts(items)

    def at(self, recent: int) -> tuple[int, list[dict[str, Any]], int]:
        """The first kept item, the kept items (cut if needed) and how many were cut."""
        n = len(self.items)
        first_recent = n - max(recent, 1)
        if first_recent > 0:
            start = self._back(first_recent)
            if start > 0 and self._fits(start):
                return start, self.items[start:], 0
        tail = self._back(n - 1)
        for start in range(max(first_recent + 1, 1), tail + 1):
            if self.pair_start[start] >= start and self._fits(start):
                return start, self.items[start:], 0
        for start in dict.fromkeys((tail, n - 1)):
            target = self.room - self._reserve(start)
            group = cut_group(self.items[start:], target, self.estimate)
            if group is not None:
                changed = sum(a != b for a, b in zip(group, self.items[start:], strict=True))
                return start, group, changed
        return n - 1, [stub(self.items[-1], self.estimate)], 1

    def _back(self, start: int) -> int:
        """The latest start at or before `start` that orphans no tool result."""
        while self.pair_start[start] < start:
            start = self.pair_start[start]
        return start

    def _fits(self, start: int) -> bool:
        return self.suffix[start] + self._reserve(start) <= self.room

    def _reserve(self, start: int) -> int:
        """min(room / RESERVE_SHARE, what the full digest of items[:start] takes)."""
        return min(self.room // RESERVE_SHARE, self.digest.full_tokens(start))


def _pair_starts(items: Sequence[Mapping[str, Any]]) -> list[int]:
    """For each start t: the earliest item holding a call that a tool result at or after
    t answers (t itself when none does). Keeping items[t:] orphans a result unless
    this is >= t."""
    calls: dict[str, int] = {}
    n = len(items)
    earliest = list(range(n + 1))
    for j, item in enumerate(items):
        for answered in result_ids(item):
            call = calls.get(answered)
            if call is not None and call < earliest[j]:
                earliest[j] = call
        for made in call_ids(item):
            calls[made] = j
    for j in range(n - 1, -1, -1):
        earliest[j] = min(earliest[j], earliest[j + 1])
    return earliest
