"""What each prose sentence of an item carries, as a score: a number, a name, a decision
or commitment, a first-person statement, and the words it shares with the current input;
code scores never enough to be kept, filler nothing.

Each text is scanned by a few C-level passes (`Prose`), and its analysis is kept for the
next turn, which re-sends the same earlier items (`analyse`).
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Iterator
from itertools import accumulate

from memcore._facade.digest_sentences import sentences

#: Characters of item texts whose analysis is kept between calls (see `_ProseMemo`).
PROSE_MEMO_CHARS = 4_000_000
#: Most distinct words of the current input matched against sentences.
MAX_QUERY_WORDS = 16

# Sentence scores, in half points: a sentence is kept only from _ELIGIBLE on, so a first-
# person remark or a single shared word alone does not make a sentence worth a line.
_NUMBER, _NAMED, _DECIDED, _FIRST, _PER_QUERY_WORD, _MOST_SHARED_WORDS = 2, 2, 2, 1, 1, 4
_ELIGIBLE = 2
#: The score of a code-like sentence: never eligible, whatever the query.
_NEVER = -1_000

# Sentences are scored on their lowercased UTF-8 bytes, punctuation but ' - _ turned into
# spaces (`Prose`): whole words are then ` word `, found by C code.
_PUNCTUATION = b'!"#$%&()*+,./:;<=>?@[\\]^`{|}~\t\r\x0b\x0c\x00'
_TO_SPACE = bytes.maketrans(_PUNCTUATION, b" " * len(_PUNCTUATION))
_DIGITS_MARKED = bytes.maketrans(b"0123456789", b"\0" * 10)
_CODE_SYMBOLS = b"{};=<>\\$"
_CODE_MARKED = bytes.maketrans(b"\0" + _CODE_SYMBOLS, b" " + b"\0" * len(_CODE_SYMBOLS))
_LONE_I = (" I ", " I'", " I,", " I.")


def _spaced_words(text: str) -> list[bytes]:
    """The lowercased words of a text, as `Prose` sees them."""
    return text.lower().replace("’", "'").encode().translate(_TO_SPACE).split()


def _words_pattern(words: list[bytes], *, to_end: bool = False) -> re.Pattern[bytes]:
    """A pattern finding any of `words` as a whole word in a `Prose` byte string; with
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


def query_words(query: str) -> re.Pattern[bytes] | None:
    """The pattern of the current input's words worth matching (None when it has none)."""
    words = _spaced_words(query[: MAX_QUERY_WORDS * 40])
    useful = [w for w in dict.fromkeys(words) if len(w) > 2 and w not in _STOP]
    # The longest words are the most specific (and each one costs a share of a scan).
    useful = sorted(useful, key=len, reverse=True)[:MAX_QUERY_WORDS]
    return _words_pattern(sorted(useful)) if useful else None


class Prose:
    """An item's prose sentences and what each carries: a number, a name, a decision, a
    first-person statement, and the words it shares with a query (`eligible`).

    The sentences are lowercased, encoded and joined once per item, one sentence a line,
    punctuation turned into spaces; numbers and words are then found in that one byte
    string by C code (a regex pass, `bytes.find`) and credited to the sentence each falls
    in: the work grows with the text and the matches, not with sentences times words.
    """

    def __init__(self, text: str) -> None:
        self.sentences = found = sentences(text)
        joined = "\n".join(found).lower().replace("’", "'").encode()
        aligned = b" " + joined.replace(b"\n", b" \n ") + b" "
        self._spaced = spaced = aligned.translate(_TO_SPACE)
        self._ends = ends = list(accumulate(map(len, spaced.splitlines(keepends=True))))
        #: Each sentence's words run together: near-duplicates share it.
        self.keys = spaced.replace(b" ", b"").split(b"\n") if found else []
        scores = [0] * len(found)
        for k in _marked(spaced.translate(_DIGITS_MARKED), ends):
            scores[k] += _NUMBER
        for pattern, points in ((_DECISION_RE, _DECIDED), (_FIRST_PERSON_RE, _FIRST)):
            for match in pattern.finditer(spaced):  # a match runs to its sentence's end
                scores[bisect_right(ends, match.start())] += points
        for k, sentence in enumerate(found):
            if _named(sentence):
                scores[k] += _NAMED
        symbols = aligned.translate(_CODE_MARKED)
        for k in _marked(symbols, ends):
            start = ends[k - 1] if k else 0
            if symbols.count(b"\0", start, ends[k]) * 12 > ends[k] - start:
                scores[k] = _NEVER  # code
        self._scores = scores

    def eligible(self, query: re.Pattern[bytes] | None) -> list[tuple[int, int]]:
        """(index, score) of the sentences worth a line of the digest, with a point for
        each distinct word of the query a sentence holds (at most _MOST_SHARED_WORDS)."""
        scores = self._scores_for(query)
        return [(k, score) for k, score in enumerate(scores) if score >= _ELIGIBLE]

    def _scores_for(self, query: re.Pattern[bytes] | None) -> list[int]:
        # One regex pass finds which words of the query the item holds, then each is
        # found sentence by sentence (`find`, resuming at the next sentence).
        present = set(query.findall(self._spaced)) if query is not None else ()
        if not present:
            return self._scores
        spaced, ends = self._spaced, self._ends
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
            for score, count in zip(self._scores, shared, strict=True)
        ]


def _marked(data: bytes, ends: list[int]) -> Iterator[int]:
    """The sentences of a `Prose` byte string that hold a NUL (a marked character): each
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


class _ProseMemo:
    """The analyses of recent texts, by text, holding at most `max_chars` characters of
    them (about four bytes of memory each). A session's earlier items come back on every
    turn, so a turn analyses only its new items: an analysis is a pure function of the
    text, and the output is the same with or without the memo."""

    def __init__(self, max_chars: int) -> None:
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, Prose] = OrderedDict()
        self._chars = 0
        self._max_chars = max_chars

    def get(self, text: str) -> Prose:
        with self._lock:
            prose = self._entries.get(text)
            if prose is not None:
                self._entries.move_to_end(text)
                return prose
        prose = Prose(text)
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


def analyse(text: str) -> Prose:
    """The analysis of `text`, from the memo when a recent call made it."""
    return _PROSE.get(text)
