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

The prose left is split on line ends (chat writes one thought a line; bullets and numbers
are dropped), sentence ends (not after "e.g.", "Dr." and the like), colons, semicolons and
spaced dashes; then on clause joins that start a new first-person clause ("..., I hate
tabs", "... and I live in Cairo", "..., so expect slow replies") and before a question
tacked on with a comma ("I live in Denver, any good trails nearby?"), so a fact and a
question in one sentence part ways.

The work is capped: the first MAX_CHARS characters of a message and its first
MAX_STATEMENTS statements are read; the rest comes back as one "truncated" piece. A
statement over MAX_STATEMENT_CHARS characters is skipped as "not_a_fact" unread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memcore.capture import lexicon as lx

MAX_CHARS = 20_000
MAX_STATEMENTS = 50
# Longer than this, a "statement" is a paste without punctuation, not something said (and
# the rules' scans to the end of a statement stay cheap).
MAX_STATEMENT_CHARS = 1_000
# One to three words in quotation marks or backticks are a name or a term, not speech.
NAME_WORDS = 3

_FENCE = re.compile(r"(```|~~~).*?(?:\1|\Z)", re.DOTALL)
_SENTINEL = "\x00{}\x00"
_SENTINEL_LINE = re.compile(r"^\x00(\d+)\x00$")
_QUOTE_LINE = re.compile(r"^\s*>")
_SHELL_LINE = re.compile(r"^\s*(?:\$|>>>|%|#!)\s")
_INDENTED = re.compile(r"^(?: {4}|\t)")
_BULLET = re.compile(r"^\s*(?:[-*•·+]|\d{1,3}[.)]|[a-z][.)](?=\s))\s+")
_URL = re.compile(r"\b(?:https?://|www\.)\S+", re.IGNORECASE)
_INLINE_CODE = re.compile(r"`([^`\n]*)`")
_QUOTED = re.compile(r"\"([^\"\n]*)\"|“([^”\n]*)”|‘([^’\n]*)’")
# A sentence ends at . ! ? … (runs of them) before a space; a colon, a semicolon and a
# spaced dash end a statement too.
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"')\]]*\s+|(?<=:)\s+|;\s*|\s+[-–—]{1,2}\s+")
_ABBREVIATION = re.compile(
    r"(?:\b(?:e\.g|i\.e|etc|vs|dr|mr|mrs|ms|st|jr|sr|approx|a\.m|p\.m|no|fig|inc|ltd|co)\.)$",
    re.IGNORECASE,
)
_FIRST_PERSON_START = r"(?:i|i'm|im|i've|ive|i'll|i'd|we|we're|we've|we'll)\b"
# "... and I ...", "..., but we ...", "... so I'll ..." (not "my husband and I are"); before
# "my" / "our" not after "and", which mostly joins nouns ("my partner, and our kids").
_CLAUSE_JOIN = re.compile(
    rf",?\s+(?:(?:and|but|so|because|cause|cuz)\s+(?={_FIRST_PERSON_START}(?!\s+(?:are|were)\b))"
    r"|(?:but|so|because|cause|cuz)\s+(?=(?:my|our)\b))",
    re.IGNORECASE,
)
# "..., I hate tabs", "..., so keep it short", "..., we ship on Fridays", "..., it keeps
# timing out": a comma before a new subject starts a new clause.
_COMMA_JOIN = re.compile(
    r",\s+(?=(?:so\s+\w|(?:i|i'm|i've|i'll|we|we're|we've|it|it's|he|he's|she|she's|they|"
    r"they're)\s(?!\s*(?:are|were)\b)))",
    re.IGNORECASE,
)
# "If I were rich, I would buy a boat": a conditional's second half belongs to it.
_CONDITIONAL = re.compile(
    r"^\s*(?:if|suppose|supposing|assuming|unless|imagine|what if|let's say|lets say)\b",
    re.IGNORECASE,
)

_QUESTION_TAIL = re.compile(
    r",\s+(?=(?:what|how|why|where|when|who|which|any|can|could|would|should|do|does|is|"
    r"are|will)\b[^.!?]*\?\s*$)",
    re.IGNORECASE,
)
_ORDER_WITH_COLON = re.compile(
    r"^\s*(?:please\s+|can you\s+|could you\s+)?(?:rewrite|summari[sz]e|translate|proofread|"
    r"fix|edit|shorten|improve|paraphrase|reword|correct|check|format|turn|make|explain|"
    r"review|polish|convert|simplify)\b.*:\s*$",
    re.IGNORECASE,
)
_LATIN_OR_DIGIT = re.compile(r"[A-Za-z0-9\u00c0-\u024f]")


@dataclass(frozen=True)
class Piece:
    """A statement to judge (`skip` None) or pasted material skipped whole, with its reason.

    `context` is text whose time words hold for the statement too: the clause a "so" clause
    follows from ("fever today, so I'm staying home": a consequence passes with its cause),
    or the header a bullet stands under ("Today's plan:" / "- meeting the accountant")."""

    text: str
    skip: str | None = None
    context: str = ""


def split_message(text: str) -> list[Piece]:
    """The message's statements and skipped blocks, in order, at most MAX_STATEMENTS
    statements from the first MAX_CHARS characters (the rest as one "truncated" piece)."""
    head, tail = text[:MAX_CHARS], text[MAX_CHARS:]
    pieces: list[Piece] = []
    for piece in _blocks(head.replace("\r\n", "\n").replace("\r", "\n")):
        if piece.skip is not None:
            pieces.append(piece)
        else:
            pieces.extend(_statements(piece.text, piece.context))
    statements = 0
    for index, piece in enumerate(pieces):
        statements += piece.skip is None
        if statements > MAX_STATEMENTS:
            rest = " ".join(p.text for p in pieces[index:])
            return [*pieces[:index], Piece(rest + tail, "truncated")]
    if tail.strip():
        pieces.append(Piece(tail, "truncated"))
    return pieces


def _blocks(text: str) -> list[Piece]:
    """Prose lines (skip None) and the code and quoted blocks between them, in order."""
    fences: list[str] = []

    def stash(match: re.Match[str]) -> str:
        fences.append(match.group(0))
        return "\n" + _SENTINEL.format(len(fences) - 1) + "\n"

    out: list[Piece] = []
    block: list[str] = []
    block_kind: str | None = None  # "code", "quote" or "payload" (text handed over to edit)
    previous_blank = True
    payload_pending = False  # the last prose line was an order ending in a colon
    header = ""  # the last prose line ending in a colon, for the bullets under it

    def flush() -> None:
        nonlocal block, block_kind
        if block_kind is not None and any(line.strip() for line in block):
            reason = "quote" if block_kind == "payload" else block_kind
            out.append(Piece("\n".join(block).strip("\n"), reason))
        block, block_kind = [], None

    for line in _FENCE.sub(stash, text).split("\n"):
        fence = _SENTINEL_LINE.match(line)
        if fence:
            flush()
            out.append(Piece(fences[int(fence.group(1))], "code"))
            previous_blank = True
        elif not line.strip():
            # Indented code may hold blank lines; every other block ends at one.
            if block_kind == "code":
                block.append(line)
            else:
                flush()
            previous_blank = True
        else:
            kind = _line_kind(line, block_kind, previous_blank)
            if kind is None and (payload_pending or block_kind == "payload"):
                kind = "payload"
            payload_pending = False
            if kind != block_kind:
                flush()
                block_kind = kind
            if kind is None:
                bullet = bool(_BULLET.match(line))
                out.append(Piece(line, context=header if bullet else ""))
                payload_pending = bool(_ORDER_WITH_COLON.match(line))
                if line.rstrip().endswith(":"):
                    header = line
                elif not bullet:
                    header = ""
            else:
                block.append(line)
            previous_blank = False
    flush()
    return out


def _line_kind(line: str, current: str | None, previous_blank: bool) -> str | None:
    if _QUOTE_LINE.match(line):
        return "quote"
    if _SHELL_LINE.match(line):
        return "code"
    if _INDENTED.match(line) and (previous_blank or current == "code"):
        return "code"
    return None


def _statements(line: str, context: str) -> list[Piece]:
    """One prose line: its statements, and its quoted speech as skipped "quote" pieces."""
    original = line
    line = _BULLET.sub("", line, count=1)
    line = _URL.sub("", line)
    quotes: list[str] = []

    def unquote(match: re.Match[str]) -> str:
        inner = next(g for g in match.groups() if g is not None)
        if len(inner.split()) <= NAME_WORDS:
            return inner
        quotes.append(match.group(0))
        return ""

    line = _INLINE_CODE.sub(lambda m: m.group(1) if len(m.group(1).split()) == 1 else "", line)
    line = _QUOTED.sub(unquote, line)
    out = [
        Piece(s, "not_a_fact" if len(s) > MAX_STATEMENT_CHARS else None, c or context)
        for s, c in _sentences(line)
    ]
    out.extend(Piece(q, "quote") for q in quotes)
    if not out:  # only a URL, inline code or punctuation: reported, not dropped
        out.append(Piece(original, "not_a_fact"))
    return out


def _sentences(line: str) -> list[tuple[str, str]]:
    """Each statement of the line, with the clause it follows from by "so" (or "")."""
    if len(line) > MAX_STATEMENT_CHARS and not _SENTENCE_END.search(line):
        return [(line, "")]  # judged as too long, unsplit
    parts: list[str] = []
    for raw in _SENTENCE_END.split(line):
        if parts and _ABBREVIATION.search(parts[-1]):
            parts[-1] = f"{parts[-1]} {raw}"
        else:
            parts.append(raw)
    out = []
    for sentence in parts:
        clauses = [(sentence, "")] if len(sentence) > MAX_STATEMENT_CHARS else None
        for clause, cause in clauses or _split_clauses(sentence):
            clause = clause.strip(" ,;\t")
            if _LATIN_OR_DIGIT.search(clause) or _has_symbol(clause):
                out.append((clause, cause))
    return out


def _split_clauses(sentence: str) -> list[tuple[str, str]]:
    if _CONDITIONAL.match(sentence):
        return [(sentence, "")]
    clauses: list[tuple[str, str]] = []
    for part in _QUESTION_TAIL.split(sentence):
        previous = ""
        for piece in _COMMA_JOIN.split(part):
            cause = previous if re.match(r"so\s", piece, re.IGNORECASE) else ""
            clauses.extend(_split_joined(piece, cause))
            previous = piece
    return clauses


def _split_joined(text: str, cause: str) -> list[tuple[str, str]]:
    """Split at "and/but/so I ...", but not after a subject of its own ("me and my gf just
    moved", "my wife and I both work": a short left part with no pronoun)."""
    out: list[tuple[str, str]] = []
    start = 0
    for match in _CLAUSE_JOIN.finditer(text):
        left = text[start : match.start()]
        if not _noun_phrase(left):
            out.append((left, cause))
            joiner = match.group(0).strip(" ,").lower()
            cause = left if joiner == "so" else ""
            start = match.end()
    out.append((text[start:], cause))
    return out


def _noun_phrase(left: str) -> bool:
    """A lone word, or a few words without a pronoun: "me and my gf", "my wife and I"."""
    words = [w.strip(",.!?;:") for w in left.lower().split()]
    if len(words) < 2:
        return True
    return len(words) <= lx.COMPOUND_SUBJECT_WORDS and not any(w in lx.PRONOUNS for w in words)


def _has_symbol(text: str) -> bool:
    """Emoji and other symbols are kept as a statement (skipped later, not dropped)."""
    return any(not ch.isspace() and not _is_punctuation(ch) for ch in text)


def _is_punctuation(ch: str) -> bool:
    return ch in ".,;:!?…-–—'\"()[]{}*_~`"
