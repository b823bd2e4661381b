"""Context compaction for `memory_before_turn`, made without an LLM.

When a thin client's items no longer fit the room the model leaves them, the latest items
are kept verbatim and the older ones are replaced by ONE digest item put first: an
extractive digest of the earlier part of the session. It keeps

- one line per tool call, `- tool read_file: src/auth.py` (the tool and its target), so
  the model knows what was already read, run and searched;
- the sentences that carry something: a number, a name, a decision or commitment, a
  first-person statement of fact, and the words of the current input, each prefixed by
  who said it and printed in the session's order. Filler ("Sure, happy to help") scores
  nothing and is left out; code blocks and long non-prose lines are skipped.

Why extractive: memcore calls no model, so the digest is built from the session's own
sentences. That makes it deterministic: the same items give the same bytes, so a
provider's prompt cache keeps hitting on it. And it is cheap: each text is scanned by a
few C-level passes (`_Prose`), and the analysis of a text is kept for the next turn, which
re-sends the same earlier items (a 500-item session: about 35 ms the first time, 10 ms
after). Nothing recorded is lost: the full turns stay in the store and come back through
retrieval; the digest header says so, and so does the marker of an item too large for the
budget, which is cut (its head and tail kept), never dropped.

Every count is :func:`item_tokens`, so what `Compacted.tokens` reports is what was
checked against `room`.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from operator import attrgetter
from typing import Any, NamedTuple

from memcore._facade.lifecycle import MEMORY_ROLE, item_text

Estimate = Callable[[str], int]

#: Tokens charged per item on top of its text: the role and the delimiters around a
#: message (OpenAI documents 3 per chat message; one more covers a tool item's call id).
ITEM_OVERHEAD = 4
#: Below this much room the guarantee `tokens <= room` is not given: the result is the
#: last item alone, cut as far as it goes (its marker alone may not fit). At this size a
#: quarter of the room holds the digest header and the rest a cut item with its marker.
MIN_ROOM = 256
#: The digest's reserve is at most 1/RESERVE_SHARE of the room (see `compact_items`).
RESERVE_SHARE = 4
#: Leading system/developer items are kept in front when they leave at least this share
#: of the room (1/PIN_SHARE) and MIN_ROOM for the rest.
PIN_SHARE = 2
#: The digest header's first characters: how a digest is recognised (and never re-digested).
DIGEST_TAG = "[memcore digest]"
#: What every cut starts with.
CUT_TAG = "…[cut by memcore: "
#: Strings no longer than this are not cut (the marker is about as long), and at most
#: this many of an item's strings are; when that is not enough, the item is replaced by
#: its identity and a marker (`_stub`).
_MIN_CUT_CHARS = 128
_MOST_CUT_LEAVES = 16
MAX_SENTENCE_CHARS = 300
MAX_TARGET_CHARS = 120
MAX_TOOL_NAME_CHARS = 64
MIN_SENTENCE_CHARS = 12
#: Characters of item texts whose analysis is kept between calls (see `_ProseMemo`).
PROSE_MEMO_CHARS = 4_000_000
#: Most distinct words of the current input matched against sentences.
MAX_QUERY_WORDS = 16

_TARGET_KEYS = (
    "path",
    "file_path",
    "file",
    "filename",
    "url",
    "uri",
    "query",
    "command",
    "pattern",
)
_INSTRUCTION_ROLES = frozenset({"system", "developer"})
_SPEAKERS = frozenset({"user", "assistant", "system", "developer"})
_TEXT_TYPES = frozenset({"message", "output_text", "text"})
_FENCES = ("```", "~~~")
_INDENTS = ("    ", "\t")

_BULLET = re.compile(r"(?:[-*+>]|\d{1,3}[.)]|#{1,6})\s+")
_SPACES = re.compile(r"\s+")
# Sentences are scored on their lowercased UTF-8 bytes, punctuation but ' - _ turned into
# spaces (`_Prose`): whole words are then ` word `, found by C code.
_PUNCTUATION = b'!"#$%&()*+,./:;<=>?@[\\]^`{|}~\t\r\x0b\x0c\x00'
_TO_SPACE = bytes.maketrans(_PUNCTUATION, b" " * len(_PUNCTUATION))
_DIGITS_MARKED = bytes.maketrans(b"0123456789", b"\0" * 10)
_BULLET_STARTS = frozenset("-*+>#0123456789")
_CODE_SYMBOLS = b"{};=<>\\$"
_CODE_MARKED = bytes.maketrans(b"\0" + _CODE_SYMBOLS, b" " + b"\0" * len(_CODE_SYMBOLS))
_LONE_I = (" I ", " I'", " I,", " I.")
_SENTENCE_ENDS = ((". ", ".\n"), ("! ", "!\n"), ("? ", "?\n"))


def _spaced_words(text: str) -> list[bytes]:
    """The lowercased words of a text, as `_Prose` sees them."""
    return text.lower().replace("’", "'").encode().translate(_TO_SPACE).split()


def _words_pattern(words: list[bytes], *, to_end: bool = False) -> re.Pattern[bytes]:
    """A pattern finding any of `words` as a whole word in a `_Prose` byte string; with
    `to_end`, a match runs on to the end of its sentence (one match per sentence)."""
    return re.compile(b" (?:" + _trie(words) + b")(?= )" + (b"[^\n]*" if to_end else b""))


def _trie(words: list[bytes]) -> bytes:
    """`words` as a regex trie: sre tries the branches of an alternation one by one, so
    sharing prefixes makes a scan about twice as fast as a flat list of words."""
    branches: dict[bytes, list[bytes]] = {}
    for word in words:
        if word:
            branches.setdefault(word[:1], []).append(word[1:])
    alternatives = [re.escape(head) + _trie(tails) for head, tails in branches.items()]
    optional = b"" in words
    if not alternatives:
        return b""
    if len(alternatives) == 1 and not optional:
        return alternatives[0]
    body = b"(?:" + b"|".join(alternatives) + b")"
    return body + b"?" if optional else body


_DECISION_RE = _words_pattern(
    _spaced_words(
        "decide decided deciding decision agree agreed will won't going let's lets must deadline "
        "due chose chosen choose switch switched plan planned prefer prefers preferred always "
        "never instead confirmed settled committed i'll we'll you'll they'll"
    ),
    to_end=True,
)
_FIRST_PERSON_RE = _words_pattern(
    _spaced_words("i we my our i'm we're i've we've i'd we'd i'll we'll"), to_end=True
)
_STOP = frozenset(
    _spaced_words(
        "a about after again all also am an and any are as at be been before being but by "
        "can could did do does doing done for from had has have having he her here hers him "
        "his how i if in into is it its it's just me more most my no not now of on once only "
        "or other our out over own please same she so some such than that the their them "
        "then there these they this those through to too under until up very was we were "
        "what when where which while who why with would you your yours"
    )
)

# Sentence scores, in half points: a sentence is kept only from ELIGIBLE on, so a first-
# person remark or a single shared word alone does not make a sentence worth a line.
_NUMBER, _NAMED, _DECIDED, _FIRST, _PER_QUERY_WORD, _MOST_SHARED_WORDS = 2, 2, 2, 1, 1, 4
_ELIGIBLE = 2
#: The score of a code-like sentence: never eligible, whatever the query.
_NEVER = -1_000
#: No sentence line is cheaper than this ("user: " and 12 characters).
_MIN_LINE_TOKENS = 4


def item_tokens(item: Mapping[str, Any], estimate: Estimate) -> int:
    """The tokens an item costs: ITEM_OVERHEAD plus the estimate of each piece of it the
    model reads (its text, a tool call's name and arguments, a tool result's output)."""
    return ITEM_OVERHEAD + sum(estimate(p) for p in _pieces(item) if p)


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
        last = _cut_one(work[-1], room, estimate)
        return _result([last], len(work) - 1, int(last != work[-1]), estimate)
    pinned = _instructions(work, costs, room)
    body = _Body(work[pinned:], costs[pinned:], room - sum(costs[:pinned]), query, estimate)
    start, kept, cut = body.split(recent)
    digest = body.digest(start, body.room - sum(item_tokens(i, estimate) for i in kept))
    return _result([*work[:pinned], *digest, *kept], start, cut, estimate)


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


class _Body:
    """The items after the pinned instructions: where to split them, and the digest."""

    def __init__(
        self,
        items: list[dict[str, Any]],
        costs: list[int],
        room: int,
        query: str,
        estimate: Estimate,
    ) -> None:
        self.items = items
        self.room = room
        self.estimate = estimate
        n = len(items)
        self.suffix = [0] * (n + 1)
        for i in range(n - 1, -1, -1):
            self.suffix[i] = self.suffix[i + 1] + costs[i]
        self.pair_start = _pair_starts(items)
        words = _spaced_words(query[: MAX_QUERY_WORDS * 40])
        useful = [w for w in dict.fromkeys(words) if len(w) > 2 and w not in _STOP]
        # The longest words are the most specific (and each one costs a share of a scan).
        useful = sorted(useful, key=len, reverse=True)[:MAX_QUERY_WORDS]
        self.query = _words_pattern(sorted(useful)) if useful else None
        self.lines: list[list[_Line]] = []  # candidate lines of items[:len(self.lines)]
        self.need_prefix = [0]  # their costs summed

    # -- where to split ---------------------------------------------------------------

    def split(self, recent: int) -> tuple[int, list[dict[str, Any]], int]:
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
            group = _cut_group(self.items[start:], target, self.estimate)
            if group is not None:
                changed = sum(a != b for a, b in zip(group, self.items[start:], strict=True))
                return start, group, changed
        return n - 1, [_stub(self.items[-1], self.estimate)], 1

    def _back(self, start: int) -> int:
        """The latest start at or before `start` that orphans no tool result."""
        while self.pair_start[start] < start:
            start = self.pair_start[start]
        return start

    def _fits(self, start: int) -> bool:
        return self.suffix[start] + self._reserve(start) <= self.room

    def _reserve(self, start: int) -> int:
        """min(room / RESERVE_SHARE, what the full digest of items[:start] takes)."""
        cap = self.room // RESERVE_SHARE
        if start == 0:
            return 0
        fixed = ITEM_OVERHEAD + self.estimate(_header(start))
        while len(self.lines) < start and fixed + self.need_prefix[-1] < cap:
            self._extract_next()
        if len(self.lines) < start:
            return cap  # already over the cap with fewer items
        return min(cap, fixed + self.need_prefix[start])

    def _extract_next(self) -> None:
        lines = _item_lines(self.items[len(self.lines)], len(self.lines), self)
        self.lines.append(lines)
        self.need_prefix.append(self.need_prefix[-1] + sum(line.cost for line in lines))

    # -- the digest -------------------------------------------------------------------

    def digest(self, count: int, budget: int) -> list[dict[str, Any]]:
        """The digest item of items[:count] within `budget` tokens ([] if none fits)."""
        if count == 0:
            return []
        while len(self.lines) < count:
            self._extract_next()
        header = _header(count)
        body = budget - ITEM_OVERHEAD - self.estimate(header)
        if body < 0:
            return []
        lines = [line for item_lines in self.lines[:count] for line in item_lines]
        chosen = _choose(lines, body, self.estimate)
        while True:
            text = header + "".join(
                line.text for line in sorted(chosen, key=attrgetter("position"))
            )
            item = {"role": MEMORY_ROLE, "content": text}
            if not chosen or item_tokens(item, self.estimate) <= budget:
                return [item]
            # An estimate that is not subadditive: drop the least useful line, retry.
            chosen.remove(min(chosen))


class _Line(NamedTuple):
    """A candidate line of the digest. Its fields are ordered so that plain tuple order is
    usefulness: tool lines first, then by score, ties to the later (more recent) line."""

    tool: bool
    score: int  # sentences only
    position: tuple[int, int]  # (item, order in the item)
    text: str
    cost: int
    key: bytes  # near-duplicates share it


def _header(count: int) -> str:
    return (
        f"{DIGEST_TAG} The {count} earlier items of this session, compacted by memcore "
        "(extracted, no LLM; the full turns are recorded and retrievable):\n"
    )


def _choose(lines: list[_Line], budget: int, estimate: Estimate) -> list[_Line]:
    """Tool lines (one per distinct call, repeats counted; at most half the budget when
    sentences compete, the latest kept), then the best sentences, near-duplicates (the
    same words, case and punctuation aside) dropped."""
    firsts: dict[str, _Line] = {}
    counts: dict[str, int] = {}
    sentences: list[_Line] = []
    for line in lines:
        if not line.tool:
            sentences.append(line)
        elif line.text in firsts:
            counts[line.text] += 1
        else:
            firsts[line.text] = line
            counts[line.text] = 1
    tools = [_counted(line, counts[line.text], estimate) for line in firsts.values()]
    tool_room = max(budget // 2, budget - sum(s.cost for s in sentences))
    chosen: list[_Line] = []
    used = 0
    for line in reversed(tools):
        if used + line.cost > tool_room:
            break
        chosen.append(line)
        used += line.cost
    if len(chosen) < len(tools):
        note = _note(len(tools), chosen, estimate)
        while chosen and used + note.cost > tool_room:
            used -= chosen.pop().cost  # the earliest listed makes way for the note
            note = _note(len(tools), chosen, estimate)
        if used + note.cost <= budget:
            chosen.append(note)
            used += note.cost
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


def _counted(line: _Line, count: int, estimate: Estimate) -> _Line:
    if count == 1:
        return line
    text = f"{line.text[:-1]} (×{count})\n"
    return line._replace(text=text, cost=estimate(text))


def _note(total: int, listed: list[_Line], estimate: Estimate) -> _Line:
    """The line standing for the tool calls not listed, placed before the listed ones."""
    text = f"- ({total - len(listed)} earlier tool calls not listed)\n"
    item, order = listed[-1].position if listed else (-1, 0)
    return _Line(True, 0, (item, order - 1), text, estimate(text), b"")


# -- candidate lines of one item -------------------------------------------------------


def _item_lines(item: Mapping[str, Any], index: int, body: _Body) -> list[_Line]:
    estimate = body.estimate
    lines: list[_Line] = []
    for name, args in _calls(item):
        text = _tool_line(name, args)
        lines.append(_Line(True, 0, (index, len(lines)), text, estimate(text), b""))
    speaker = _speaker(item)
    if speaker is None:
        return lines
    text = item_text(item)
    if not text or text.startswith(DIGEST_TAG):
        return lines
    prose = _PROSE.get(text)
    scores = prose.scores_for(body.query)
    texts = prose.lines(speaker)
    for k in [k for k, score in enumerate(scores) if score >= _ELIGIBLE]:
        line = texts[k]
        cost = estimate(line)
        lines.append(_Line(False, scores[k], (index, len(lines)), line, cost, prose.keys[k]))
    return lines


class _Prose:
    """An item's prose sentences and what each carries: a number, a name, a decision, a
    first-person statement (`scores`), and the words it shares with a query (`scores_for`).

    The sentences are lowercased, encoded and joined once per item, one sentence a line,
    punctuation turned into spaces; numbers and words are then found in that one byte
    string by C code (a regex pass, `bytes.find`) and credited to the sentence each falls
    in: the work grows with the text and the matches, not with sentences times words.
    """

    def __init__(self, text: str) -> None:
        self.sentences = sentences = _sentences(text)
        joined = "\n".join(sentences).lower().replace("’", "'").encode()
        aligned = b" " + joined.replace(b"\n", b" \n ") + b" "
        self.spaced = spaced = aligned.translate(_TO_SPACE)
        self.ends = ends = list(accumulate(map(len, spaced.splitlines(keepends=True))))
        self.keys = spaced.replace(b" ", b"").split(b"\n") if sentences else []
        scores = [0] * len(sentences)
        for k in _marked(spaced.translate(_DIGITS_MARKED), ends):
            scores[k] += _NUMBER
        for pattern, points in ((_DECISION_RE, _DECIDED), (_FIRST_PERSON_RE, _FIRST)):
            for match in pattern.finditer(spaced):  # a match runs to its sentence's end
                scores[bisect_right(ends, match.start())] += points
        for k, sentence in enumerate(sentences):
            if _named(sentence):
                scores[k] += _NAMED
        symbols = aligned.translate(_CODE_MARKED)
        for k in _marked(symbols, ends):
            start = ends[k - 1] if k else 0
            if symbols.count(b"\0", start, ends[k]) * 12 > ends[k] - start:
                scores[k] = _NEVER  # code
        self.scores = scores
        self._lines: dict[str, list[str]] = {}

    def scores_for(self, query: re.Pattern[bytes] | None) -> list[int]:
        """The scores plus a point for each distinct word of the query a sentence holds
        (at most _MOST_SHARED_WORDS): one regex pass finds which words the item holds,
        then each is found sentence by sentence (`find`, resuming at the next sentence)."""
        present = set(query.findall(self.spaced)) if query is not None else ()
        if not present:
            return self.scores
        spaced, ends = self.spaced, self.ends
        shared = [0] * len(self.sentences)
        for found in present:
            word = found + b" "
            at = spaced.find(word)
            while at >= 0:
                k = bisect_right(ends, at)
                shared[k] += 1
                at = spaced.find(word, ends[k])
        return [
            score + _PER_QUERY_WORD * min(count, _MOST_SHARED_WORDS)
            for score, count in zip(self.scores, shared, strict=True)
        ]

    def lines(self, speaker: str) -> list[str]:
        """The digest line of each sentence, said by `speaker` (kept for the next call)."""
        lines = self._lines.get(speaker)
        if lines is None:
            lines = [
                f"{speaker}: {_shortened(sentence, MAX_SENTENCE_CHARS)}\n"
                for sentence in self.sentences
            ]
            self._lines[speaker] = lines
        return lines


class _ProseMemo:
    """The analyses of recent texts, by text, holding at most `max_chars` characters of
    them (about four bytes of memory each). A session's earlier items come back on every
    turn, so a turn analyses only its new items: an analysis is a pure function of the
    text, and the output is the same with or without the memo."""

    def __init__(self, max_chars: int) -> None:
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, _Prose] = OrderedDict()
        self._chars = 0
        self._max_chars = max_chars

    def get(self, text: str) -> _Prose:
        with self._lock:
            prose = self._entries.get(text)
            if prose is not None:
                self._entries.move_to_end(text)
                return prose
        prose = _Prose(text)
        with self._lock:
            if text not in self._entries and len(text) <= self._max_chars // 16:
                self._entries[text] = prose
                self._chars += len(text)
                while self._chars > self._max_chars:
                    evicted, _ = self._entries.popitem(last=False)
                    self._chars -= len(evicted)
        return prose


#: Shared by every compaction of this process.
_PROSE = _ProseMemo(PROSE_MEMO_CHARS)


def _shortened(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _marked(data: bytes, ends: list[int]) -> Iterator[int]:
    """The sentences of a `_Prose` byte string that hold a NUL (a marked character): each
    search resumes at the next sentence, so a sentence costs one `find` at most."""
    at = data.find(b"\0")
    while at >= 0:
        k = bisect_right(ends, at)
        yield k
        at = data.find(b"\0", ends[k])


def _named(sentence: str) -> bool:
    """A capital letter after the first character but the pronoun I (a person, place,
    product, acronym, CamelCase), or code: `quoted`, a/path, snake_case."""
    if "`" in sentence or "/" in sentence or "_" in sentence:
        return True
    rest = sentence[1:]
    if rest.islower():
        return False
    for lone in _LONE_I:
        if lone in rest:
            rest = rest.replace(lone, lone.lower())
    return rest != rest.lower()


def _speaker(item: Mapping[str, Any]) -> str | None:
    role = item.get("role")
    if role is None and item.get("type") in _TEXT_TYPES:
        return "assistant"
    return role if isinstance(role, str) and role in _SPEAKERS else None


def _sentences(text: str) -> list[str]:
    """The prose sentences of a text: fenced and indented code and long lines with few
    spaces are skipped; list and heading markers are dropped."""
    if "```" in text or "~~~" in text:
        text = _unfenced(text)
    for end, split in _SENTENCE_ENDS:
        text = text.replace(end, split)
    found = [
        piece.strip()
        for piece in text.splitlines()
        if len(piece) >= MIN_SENTENCE_CHARS and not piece.startswith(_INDENTS)
    ]
    return [
        sentence if sentence[0] not in _BULLET_STARTS else _unmarked(sentence)
        for sentence in found
        if sentence.count(" ") >= 2 and (len(sentence) <= 200 or _spaced_out(sentence))
    ]


def _spaced_out(line: str) -> bool:
    """Whether a long line reads like prose, not base64, minified code or a long URL."""
    return line.count(" ") * 12 >= len(line)


def _unmarked(sentence: str) -> str:
    """A sentence without its list or heading marker."""
    marker = _BULLET.match(sentence)
    return sentence[marker.end() :] if marker else sentence


def _unfenced(text: str) -> str:
    """`text` without its fenced code blocks."""
    kept = []
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith(_FENCES):
            fenced = not fenced
        elif not fenced:
            kept.append(line)
    return "\n".join(kept)


def _calls(item: Mapping[str, Any]) -> Iterator[tuple[Any, Any]]:
    """(name, arguments) of the tool calls an item makes, in every client's shape."""
    if _is_call(item.get("type")):
        name = item.get("name")
        yield (
            name if name is not None else item.get("type"),
            item.get("arguments", item.get("input", item.get("action"))),
        )
    content = item.get("content")
    if isinstance(content, list):
        for part in content:
            if isinstance(part, Mapping) and _is_call(part.get("type")):
                yield part.get("name"), part.get("input", part.get("arguments"))
    nested = item.get("tool_calls")
    if isinstance(nested, list):
        for call in nested:
            if isinstance(call, Mapping):
                fn = call.get("function")
                fn = fn if isinstance(fn, Mapping) else call
                yield fn.get("name"), fn.get("arguments")


def _is_call(kind: Any) -> bool:
    return isinstance(kind, str) and (kind.endswith("_call") or kind in ("tool_use", "tool_call"))


def _tool_line(name: Any, args: Any) -> str:
    tool = _flat(name if isinstance(name, str) else "", MAX_TOOL_NAME_CHARS) or "tool"
    target = _target(args)
    return f"- tool {tool}: {target}\n" if target else f"- tool {tool}\n"


def _target(args: Any) -> str:
    """What a call worked on: the first of _TARGET_KEYS, else its first short string."""
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except (ValueError, RecursionError):
            return _flat(args, MAX_TARGET_CHARS)
    if isinstance(args, str):
        return _flat(args, MAX_TARGET_CHARS)
    if not isinstance(args, Mapping):
        return ""
    for key in _TARGET_KEYS:
        value = args.get(key)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            value = " ".join(value)
        if isinstance(value, str) and value.strip():
            return _flat(value, MAX_TARGET_CHARS)
    for value in args.values():
        if isinstance(value, str) and value.strip() and len(value) <= MAX_TARGET_CHARS:
            return _flat(value, MAX_TARGET_CHARS)
    return ""


def _flat(text: str, limit: int) -> str:
    flat = _SPACES.sub(" ", text[: limit * 4]).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _pair_starts(items: Sequence[Mapping[str, Any]]) -> list[int]:
    """For each start t: the earliest item holding a call that a tool result at or after
    t answers (t itself when none does). Keeping items[t:] orphans a result unless
    this is >= t."""
    calls: dict[str, int] = {}
    n = len(items)
    earliest = list(range(n + 1))
    for j, item in enumerate(items):
        for answered in _result_ids(item):
            call = calls.get(answered)
            if call is not None and call < earliest[j]:
                earliest[j] = call
        for made in _call_ids(item):
            calls[made] = j
    for j in range(n - 1, -1, -1):
        earliest[j] = min(earliest[j], earliest[j + 1])
    return earliest


def _call_ids(item: Mapping[str, Any]) -> Iterator[str]:
    if _is_call(item.get("type")) and isinstance(item.get("call_id"), str):
        yield item["call_id"]
    for part in _parts(item):
        if part.get("type") == "tool_use" and isinstance(part.get("id"), str):
            yield part["id"]
    nested = item.get("tool_calls")
    if isinstance(nested, list):
        for call in nested:
            if isinstance(call, Mapping) and isinstance(call.get("id"), str):
                yield call["id"]


def _result_ids(item: Mapping[str, Any]) -> Iterator[str]:
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


# -- what an item costs, and cutting it --------------------------------------------------


def _pieces(item: Mapping[str, Any]) -> Iterator[str]:
    """The texts of an item the model reads; `_leaves` yields the same texts, mutable."""
    yield item_text(item)
    if _is_call(item.get("type")):
        yield _as_text(item.get("name"))
        yield _as_text(item.get("arguments", item.get("input")))
    if "output" in item:
        yield _output_text(item["output"])
    for part in _parts(item):
        kind = part.get("type")
        if _is_call(kind):
            yield _as_text(part.get("name"))
            yield _as_text(part.get("input", part.get("arguments")))
        elif kind == "tool_result":
            yield _output_text(part.get("content"))
    nested = item.get("tool_calls")
    if isinstance(nested, list):
        for call in nested:
            if isinstance(call, Mapping):
                fn = call.get("function")
                fn = fn if isinstance(fn, Mapping) else call
                yield _as_text(fn.get("name"))
                yield _as_text(fn.get("arguments"))


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
    if isinstance(value, list):
        texts = [
            p if isinstance(p, str) else p.get("text")
            for p in value
            if isinstance(p, str | Mapping)
        ]
        return "\n".join(t for t in texts if isinstance(t, str) and t)
    return _as_text(value)


# A leaf is a place holding a string the model reads: (container, key, the string).
_Leaf = tuple[Any, Any, str]


def _leaves(item: dict[str, Any]) -> Iterator[_Leaf]:
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
                if _is_call(part.get("type")):
                    yield from _value_leaves(part, "input" if "input" in part else "arguments")
                elif part.get("type") == "tool_result":
                    yield from _text_leaves(part, "content")
    elif isinstance(item.get("text"), str):
        yield item, "text", item["text"]
    if _is_call(item.get("type")):
        yield from _value_leaves(item, "arguments" if "arguments" in item else "input")
    if "output" in item:
        yield from _text_leaves(item, "output")
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


def _text_leaves(container: dict[str, Any], key: str) -> Iterator[_Leaf]:
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


def _cut_text(text: str, keep: int, estimate: Estimate) -> str:
    """`text` with all but `keep` characters (60% head, 40% tail) replaced by a marker."""
    head = (keep * 3 + 4) // 5
    tail = len(text) - (keep - head)
    marker = (
        f"{CUT_TAG}{estimate(text[head:tail]):,} of {estimate(text):,} tokens left out; "
        "the whole turn is recorded]"
    )
    return f"{text[:head]}\n{marker}\n{text[tail:]}"


def _cut_group(
    group: list[dict[str, Any]], limit: int, estimate: Estimate
) -> list[dict[str, Any]] | None:
    """Copies of `group` cut to `limit` tokens in all, the largest strings first (each
    to the longest head and tail that fits), or None if even markers alone do not fit."""
    copies = copy.deepcopy(group)

    def fits() -> bool:
        return sum(item_tokens(item, estimate) for item in copies) <= limit

    if fits():
        return copies
    leaves = [leaf for item in copies for leaf in _leaves(item) if len(leaf[2]) > _MIN_CUT_CHARS]
    leaves.sort(key=lambda leaf: -len(leaf[2]))
    for container, key, text in leaves[:_MOST_CUT_LEAVES]:
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


def _cut_one(item: dict[str, Any], limit: int, estimate: Estimate) -> dict[str, Any]:
    cut = _cut_group([item], limit, estimate)
    return cut[0] if cut is not None else _stub(item, estimate)


def _stub(item: Mapping[str, Any], estimate: Estimate) -> dict[str, Any]:
    """The item reduced to its identity and a marker: when even its cut strings do not fit."""
    whole = item_tokens(item, estimate) - ITEM_OVERHEAD
    stub = {k: item[k] for k in ("type", "role", "call_id", "tool_call_id") if k in item}
    if not stub:
        stub["role"] = "user"
    marker = f"{CUT_TAG}{whole:,} of {whole:,} tokens left out; the whole turn is recorded]"
    stub["output" if "output" in item else "content"] = marker
    return stub
