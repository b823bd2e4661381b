"""Splitting a user's message into the statements the rules judge one by one.

A chat message mixes what the user says with what they paste: code, quoted mail, text to
be edited. Pasted material is not the user speaking, so it is cut out first, whole, and
reported as one skipped piece ("code" or "quote") rather than judged sentence by sentence:

- fenced blocks (```...``` or ~~~...~~~, an unclosed fence runs to the end), indented blocks
  (four spaces or a tab after a blank line) and shell/REPL lines ("$ ...", ">>> ...");
- quoted lines ("> ..."), consecutive ones as one block;
- the paragraph after an order that ends in a colon ("Rewrite this more formally:"): it is
  the text to work on, whoever wrote it;
- text in quotation marks of four words or more is quoted speech; one to three words in
  quotation marks or backticks are a name or a term ("don't call me "buddy"", "we use
  `ruff`") and stay, without the marks; longer inline code goes;
- URLs go (they are no statement, and a fact's words should not hinge on one).

Markdown is structure, not content: a heading ("## Context", a line all in bold) is the
header of what follows it, emphasis marks and checkboxes go, and a table is read row by
row (lists.py). A list item, a table row, and the value after a short "Key:" remember the
headers they stand under (`Piece.headers`): "My setup:" / "- Arch Linux" is a fact only
through its header.

The prose left is split on line ends (chat writes one thought a line; bullets and numbers
are dropped), sentence ends (not after "e.g.", "Dr." and the like), colons (unless a bare
list follows a clause: "I speak two languages: Turkish and English"), semicolons and spaced
dashes; then where a new clause starts (`_clause_start`): after "and", "but", "so" or a
comma, before a subject of its own ("..., I hate tabs", "... and my husband works
nights", "..., the topic is robotics"), before an order after "so" ("... so keep it
short"), and, after a comma, before a verb whose subject chat drops ("no longer using vim,
switched to helix"). A fronted modifier ends at its comma ("As a nurse, I ...", "Being
left-handed, I ..."), and a question tacked on with a comma parts from its statement.

The work is capped: the first MAX_CHARS characters of a message and its first
MAX_STATEMENTS statements are read; the rest comes back as one "truncated" piece. A
statement over MAX_STATEMENT_CHARS characters is skipped as "not_a_fact" unread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memcore.capture import grammar
from memcore.capture import lexicon as lx
from memcore.capture.clauses import remarks, split_clauses
from memcore.capture.lists import is_relative_header, table_statements

MAX_CHARS = 20_000
MAX_STATEMENTS = 50
# Longer than this, a "statement" is a paste without punctuation, not something said (and
# the rules' scans to the end of a statement stay cheap).
MAX_STATEMENT_CHARS = 1_000
# One to three words in quotation marks or backticks are a name or a term, not speech.
NAME_WORDS = 3
# A "Key:" of at most this many words names what the rest of its line is.
KEY_WORDS = 3
# A list after a clause that a colon leaves open ("I'm allergic to:") is at most this long.
LIST_WORDS = 12
_OPEN_ENDS = lx.words("to of with in on at for from about like include includes including")

_FENCE = re.compile(r"(```|~~~).*?(?:\1|\Z)", re.DOTALL)
_SENTINEL = "\x00{}\x00"
_SENTINEL_LINE = re.compile(r"^\x00(\d+)\x00$")
_QUOTE_LINE = re.compile(r"^\s*>")
_SHELL_LINE = re.compile(r"^\s*(?:\$|>>>|%|#!)\s")
_INDENTED = re.compile(r"^(?: {4}|\t)")
_BULLET = re.compile(r"^\s*(?:[-*•·+]|\d{1,3}[.)]|[a-z][.)](?=\s))\s+(?:\[[ xX]\]\s+)?")
_HEADING = re.compile(r"^\s*#{1,6}\s+(\S.*?)[\s#]*$")
_BOLD_LINE = re.compile(r"^\s*(\*\*|__)(?=\S)(.+?)(?<=\S)\1\s*:?\s*$")
_EMPHASIS = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_URL = re.compile(r"\b(?:https?://|www\.)\S+", re.IGNORECASE)
_INLINE_CODE = re.compile(r"`([^`\n]*)`")
_QUOTED = re.compile(r"\"([^\"\n]*)\"|“([^”\n]*)”|‘([^’\n]*)’")
# A sentence ends at . ! ? … (runs of them) before a space; a colon, a semicolon and a
# spaced dash end a statement too.
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"')\]]*\s+|(?<=:)\s+|;\s*|\s+[-–—]{1,2}\s+")
_SENTENCE_END_KEPT = re.compile(f"({_SENTENCE_END.pattern})")
_ABBREVIATION = re.compile(
    r"(?:\b(?:e\.g|i\.e|etc|vs|dr|mr|mrs|ms|st|jr|sr|approx|a\.m|p\.m|no|fig|inc|ltd|co)\.)$",
    re.IGNORECASE,
)
_ORDER_WITH_COLON = re.compile(
    r"^\s*(?:please\s+|can you\s+|could you\s+)?(?:rewrite|summari[sz]e|translate|proofread|"
    r"fix|edit|shorten|improve|paraphrase|reword|correct|check|format|turn|make|explain|"
    r"review|polish|convert|simplify)\b.*:\s*$",
    re.IGNORECASE,
)
# "My teacher always says "practice makes perfect"": said, so quoted, however short.
_SAID_BEFORE = re.compile(
    r"\b(?:said|says|say|wrote|writes|asked|asks|texted|replied|told me|goes)\s*[:,]?\s*$",
    re.IGNORECASE,
)
_EDGE_HASHTAGS = re.compile(r"^(?:\s*#\w+)+\s+|(?:\s+#\w+)+\s*$")
_HESITATION = re.compile(r"\b(?:u+m+|u+h+|e+r+m+|e+h+m+)\b,?\s*", re.IGNORECASE)
_LATIN_OR_DIGIT = re.compile(r"[A-Za-z0-9\u00c0-\u024f]")
# "FYI - the deadline moved": a marker before a dash belongs to what follows it.
_MARKERS = lx.words("fyi btw ps note update psa")


@dataclass(frozen=True)
class Piece:
    """A statement to judge (`skip` None) or pasted material skipped whole, with its reason.

    `context` is text whose time words hold for the statement too: the clause a "so" clause
    follows from ("fever today, so I'm staying home": a consequence passes with its cause),
    or the headers it stands under ("Today's plan:" / "- meeting the accountant").
    `headers` are those headers, outermost first ("Context", then "Product" for
    "- Product: an invoicing app"), and `listed` says the statement is an entry under them
    (a list item, a table row, the value after a key): such an entry may name no one and
    still be the user's ("My setup:" / "- Arch Linux")."""

    text: str
    skip: str | None = None
    context: str = ""
    headers: tuple[str, ...] = ()
    listed: bool = False


def split_message(text: str) -> list[Piece]:
    """The message's statements and skipped blocks, in order, at most MAX_STATEMENTS
    statements from the first MAX_CHARS characters (the rest as one "truncated" piece)."""
    head, tail = text[:MAX_CHARS], text[MAX_CHARS:]
    pieces: list[Piece] = []
    rest: list[str] = []  # past the cap: not split, reported as one "truncated" piece
    statements = 0
    for block in _blocks(head.replace("\r\n", "\n").replace("\r", "\n")):
        if rest:
            rest.append(block.text)
            continue
        for piece in [block] if block.skip is not None else _statements(block):
            statements += piece.skip is None
            if statements > MAX_STATEMENTS or rest:
                rest.append(piece.text)
            else:
                pieces.append(piece)
    if rest or tail.strip():
        pieces.append(Piece(" ".join([*rest, tail]).strip() or tail, "truncated"))
    return pieces


class _Lines:
    """The state of `_blocks` while it walks the lines: the open block (code, quote, a
    payload handed over to edit, a table), and the headers in force."""

    def __init__(self) -> None:
        self.out: list[Piece] = []
        self.block: list[str] = []
        self.kind: str | None = None  # "code", "quote", "payload" or "table"
        self.section = ""  # the last markdown heading: holds until the next one
        self.header = ""  # the last line ending in a colon: holds for the items after it

    def flush(self) -> None:
        if self.kind == "table":
            self.out.extend(
                Piece(text, skip, headers=(*self.headers(), *extra), listed=skip is None)
                for text, skip, extra in table_statements(self.block)
            )
        elif self.kind is not None and any(line.strip() for line in self.block):
            reason = "quote" if self.kind == "payload" else self.kind
            self.out.append(Piece("\n".join(self.block).strip("\n"), reason))
        self.block, self.kind = [], None

    def headers(self) -> tuple[str, ...]:
        return tuple(h for h in (self.section, self.header) if h)


def _blocks(text: str) -> list[Piece]:
    """Prose lines (skip None) and the code and quoted blocks between them, in order."""
    fences: list[str] = []

    def stash(match: re.Match[str]) -> str:
        fences.append(match.group(0))
        return "\n" + _SENTINEL.format(len(fences) - 1) + "\n"

    state = _Lines()
    previous_blank = True
    payload_pending = False  # the last prose line was an order ending in a colon
    for line in _FENCE.sub(stash, text).split("\n"):
        fence = _SENTINEL_LINE.match(line)
        if fence:
            state.flush()
            state.out.append(Piece(fences[int(fence.group(1))], "code"))
            previous_blank = True
            continue
        if not line.strip():
            # Indented code may hold blank lines; every other block ends at one.
            if state.kind == "code":
                state.block.append(line)
            else:
                state.flush()
            previous_blank = True
            continue
        kind = _line_kind(line, state.kind, previous_blank)
        if kind is None and (payload_pending or state.kind == "payload"):
            kind = "payload"
        payload_pending = False
        previous_blank = False
        if kind != state.kind:
            state.flush()
            state.kind = kind
        if kind is not None:
            state.block.append(line)
            continue
        heading = _HEADING.match(line) or _BOLD_LINE.match(line)
        if heading:
            title = heading.group(heading.lastindex or 1).strip().rstrip(":").strip()
            state.out.append(Piece(line.strip(), "not_a_fact"))
            state.section, state.header = title, ""
            continue
        line = _EMPHASIS.sub(r"\2", line)
        bullet = bool(_BULLET.match(line))
        headers = state.headers() if bullet else tuple(h for h in (state.section,) if h)
        state.out.append(Piece(line, context=" ".join(headers), headers=headers, listed=bullet))
        payload_pending = bool(_ORDER_WITH_COLON.match(line))
        if line.rstrip().endswith((":", "—", "–", " -")):
            state.header = _BULLET.sub("", line).strip().rstrip(":—–- ").strip()
        elif not bullet:
            state.header = ""
    state.flush()
    return state.out


def _line_kind(line: str, current: str | None, previous_blank: bool) -> str | None:
    if _QUOTE_LINE.match(line):
        return "quote"
    if _SHELL_LINE.match(line):
        return "code"
    if _INDENTED.match(line) and (previous_blank or current == "code"):
        return "code"
    if _TABLE_ROW.match(line):
        return "table"
    return None


def _statements(line_piece: Piece) -> list[Piece]:
    """One prose line: its statements, and its quoted speech as skipped "quote" pieces."""
    original = line_piece.text
    line = _BULLET.sub("", original, count=1)
    line = _URL.sub("", line)
    line = _HESITATION.sub("", line)  # "and um I think": the "um" hides the clause
    line = _EDGE_HASHTAGS.sub("", line)  # "#fitness #vegan Just hit 100 days": tags
    quotes: list[str] = []

    def unquote(match: re.Match[str]) -> str:
        inner = next(g for g in match.groups() if g is not None)
        said = _SAID_BEFORE.search(match.string[: match.start()]) is not None
        if len(inner.split()) <= NAME_WORDS and not said:
            return inner
        quotes.append(match.group(0))
        return ""

    line = _INLINE_CODE.sub(lambda m: m.group(1) if len(m.group(1).split()) == 1 else "", line)
    line = _QUOTED.sub(unquote, line)
    out = []
    handed_over = False  # "Fix this: I has a apple." - the rest of the line is the text
    for text, cause, key in _sentences(line, line_piece.listed):
        if handed_over:
            out.append(Piece(text, "quote"))
            continue
        handed_over = bool(_ORDER_WITH_COLON.match(text))
        headers = (*line_piece.headers, key) if key else line_piece.headers
        out.append(
            Piece(
                text,
                "not_a_fact" if len(text) > MAX_STATEMENT_CHARS else None,
                cause or line_piece.context,
                headers,
                line_piece.listed or bool(key),
            )
        )
    out.extend(Piece(q, "quote") for q in quotes)
    if not out:  # only a URL, inline code or punctuation: reported, not dropped
        out.append(Piece(original, "not_a_fact"))
    return out


def _sentences(line: str, listed: bool) -> list[tuple[str, str, str]]:
    """Each statement of the line, with the text whose time it takes (the clause it follows
    from by "so" or a dash, or "") and the key it is the value of ("Budget: ~$8k":
    "Budget"; or "")."""
    if len(line) > MAX_STATEMENT_CHARS and not _SENTENCE_END.search(line):
        return [(line, "", "")]  # judged as too long, unsplit
    parts: list[tuple[str, bool]] = []  # (sentence, comes after a spaced dash)
    raws = _SENTENCE_END_KEPT.split(line)
    for index in range(0, len(raws), 2):
        raw = raws[index]
        dash = index > 0 and raws[index - 1].strip() in ("-", "--", "–", "—")
        # "FYI - the deadline moved": a marker before a dash belongs to what follows.
        marker = dash and parts and grammar.bare(parts[-1][0].strip()) in _MARKERS
        if parts and (
            marker or _ABBREVIATION.search(parts[-1][0]) or _list_after_clause(parts[-1][0], raw)
        ):
            parts[-1] = (f"{parts[-1][0]} {raw}", parts[-1][1])
        else:
            parts.append((raw, dash))
    out = []
    key = ""
    previous = ""
    for sentence, dash in parts:
        clauses = [(sentence, "")] if len(sentence) > MAX_STATEMENT_CHARS else None
        for number, (clause, cause) in enumerate(clauses or split_clauses(sentence)):
            if number == 0 and dash:
                cause = previous  # "This week is chaos — my sister is staying with us"
            for piece in remarks(clause) if not listed else [clause]:
                piece = piece.strip(" ,;\t")
                if _LATIN_OR_DIGIT.search(piece) or _has_symbol(piece):
                    out.append((piece, cause, key))
        stripped = sentence.strip()
        key = stripped[:-1].strip() if stripped.endswith(":") else ""
        previous = sentence
    return out


def _list_after_clause(before: str, after: str) -> bool:
    """ "I only speak two languages well: Turkish and English": a bare list after a clause
    with a colon finishes it; a header ("Stack:") or a new clause after it does not."""
    if not before.rstrip().endswith(":"):
        return False
    left = grammar.words_of(before)
    right = grammar.words_of(after)
    if not right or grammar.has_finite_verb(right) or is_relative_header(before):
        return False  # "Tools we use at work: Slack, Linear": a key, its entries (lists.py)
    if left and left[-1] in _OPEN_ENDS and "," in after:
        return len(right) <= LIST_WORDS  # "I'm allergic to: peanuts, shellfish and penicillin"
    if len(left) <= KEY_WORDS or len(right) > NAME_WORDS + 1:
        return False
    return grammar.has_finite_verb(left)


def _has_symbol(text: str) -> bool:
    """Emoji and other symbols are kept as a statement (skipped later, not dropped)."""
    return any(not ch.isspace() and not _is_punctuation(ch) for ch in text)


def _is_punctuation(ch: str) -> bool:
    return ch in ".,;:!?…-–—'\"()[]{}*_~`"
