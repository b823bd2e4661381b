"""`capture_facts`: a user's message in, the facts to remember and what was skipped out.

The pipeline is split -> judge -> rewrite -> tier: sentences.py cuts the message into
statements (and reads its markdown: headings, lists, tables); rules.py judges each, with
fragments.py (who the statement is about), talk.py (talk about the chat) and grammar.py
(word shapes); lists.py makes a list entry the fact of its header, references.py reads a
"he" or "she" as the person of the statement before; rewrite.py puts the fact in the
third person and tiers.py gives its retention tier. The message is read in order, so a
statement can borrow from the one before it: who "he" is, the day a "Long day." framed.

Pure Python with the standard `re` module: no model and no LLM, a typical message takes a
fraction of a millisecond. English rules only: text without Latin letters is skipped whole
as "not_a_fact" (a known limit, not a judgement of the text).
"""

from __future__ import annotations

from memcore.capture.lists import listed_fact
from memcore.capture.references import Referents
from memcore.capture.rewrite import third_person
from memcore.capture.rules import Verdict, judge
from memcore.capture.sentences import MAX_CHARS, MAX_STATEMENTS, Piece, split_message
from memcore.capture.tiers import (
    borrowed_time,
    names_today_or_this_week,
    tier_of,
    time_frame,
)
from memcore.capture.values import SKIPPED_TEXT_CHARS, Capture, CapturedFact, SkippedText

__all__ = ["MAX_CHARS", "MAX_STATEMENTS", "capture_facts"]


def capture_facts(text: str) -> Capture:
    """The durable statements of a user's message, as third-person facts with a tier.

    Every statement the splitter finds is returned, either as a `CapturedFact` or as a
    `SkippedText` with its reason (`SKIP_REASONS`); a code block or a quoted block is one
    skipped item. Only the first `MAX_CHARS` characters and `MAX_STATEMENTS` statements
    are read; the rest is one skipped item with the reason "truncated". The same fact said
    twice in one message is captured once (the second is skipped as "repeated"). Never
    raises for a `str`.

    Args:
        text: The user's message (one turn's user input; several messages joined with
            newlines work the same).

    Returns:
        The captured facts and the skipped statements, each in message order.
    """
    if not text or not text.strip():
        return Capture()
    facts: list[CapturedFact] = []
    skipped: list[SkippedText] = []
    seen: set[str] = set()
    referents = Referents()  # who "he" / "she" would be, what "it" is (references.py)
    frame = ""  # the day or week a remark like "Long day." set for what follows
    before = ""  # the sentence of the fact before, for a state that follows it
    for piece in split_message(text):
        if piece.skip is not None:
            skipped.append(_skipped(piece.text, piece.skip))
            referents.forget()
            continue
        verdict = _judge(piece, referents)
        referents.after(piece.text, captured=verdict.core is not None)
        listed = _listed(piece, verdict)
        if listed is not None:
            content = listed
        elif verdict.core is not None:
            content = third_person(verdict.core)
        else:
            skipped.append(_skipped(piece.text, verdict.reason or "not_a_fact"))
            if verdict.reason == "not_a_fact":  # "Long day." (not "Morning!")
                frame = time_frame(piece.text) or frame
            continue
        if content.lower() in seen:
            skipped.append(_skipped(piece.text, "repeated"))
            continue
        seen.add(content.lower())
        tier = tier_of(piece.text, f"{piece.context} {frame}".strip(), before)
        facts.append(
            CapturedFact(_dated(content, piece, tier, frame, before), tier, piece.text.strip())
        )
        before = piece.text
    return Capture(tuple(facts), tuple(skipped))


def _judge(piece: Piece, referents: Referents) -> Verdict:
    verdict = judge(piece.text, context=piece.context, listed=piece.listed)
    if verdict.core is None and verdict.unowned:
        statement = referents.resolve(piece.text)
        if statement is not None:
            return judge(statement, context=piece.context, listed=piece.listed)
    return verdict


def _dated(content: str, piece: Piece, tier: str, frame: str, before: str) -> str:
    """`content` with the day or week it borrowed its tier from, when it says none itself
    ("Today's plan:" / "- gym at 6" -> "User, today: gym at 6" needs nothing; "fever
    today, so I'm staying home" -> "User is staying home today"): a memory is read alone."""
    if tier == "durable" or names_today_or_this_week(content.lower()):
        return content
    # The fact before lends its day only to a passing state, as in `tier_of`.
    for source in (piece.context, frame, before if tier == "L1" else ""):
        phrase = borrowed_time(source)
        if phrase and tier_of(phrase) == tier:
            return f"{content} {phrase}"
    return content


def _listed(piece: Piece, verdict: Verdict) -> str | None:
    """An entry of a list that names no one, as its header's fact (lists.py): the header
    says whose it is better than a guessed subject ("Context:" / "- deployed on Fly.io" is
    not "User deployed on Fly.io")."""
    if not piece.listed or not verdict.unowned:
        return None
    if verdict.core is None and verdict.reason not in ("not_a_fact", "instruction"):
        return None
    return listed_fact(piece.text, piece.headers)


def _skipped(text: str, reason: str) -> SkippedText:
    return SkippedText(text.strip()[:SKIPPED_TEXT_CHARS], reason)
