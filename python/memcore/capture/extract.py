"""`capture_facts`: a user's message in, the facts to remember and what was skipped out.

The pipeline is split -> judge -> rewrite -> tier (sentences.py, rules.py, rewrite.py,
tiers.py), pure Python with the standard `re` module: no model and no LLM, a typical
message takes a fraction of a millisecond. English rules only: text without Latin letters
is skipped whole as "not_a_fact" (a known limit, not a judgement of the text).
"""

from __future__ import annotations

from memcore.capture.rewrite import third_person
from memcore.capture.rules import judge
from memcore.capture.sentences import MAX_CHARS, MAX_STATEMENTS, split_message
from memcore.capture.tiers import tier_of
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
    for piece in split_message(text):
        if piece.skip is not None:
            skipped.append(_skipped(piece.text, piece.skip))
            continue
        verdict = judge(piece.text)
        if verdict.core is None:
            skipped.append(_skipped(piece.text, verdict.reason or "not_a_fact"))
            continue
        content = third_person(verdict.core)
        if content.lower() in seen:
            skipped.append(_skipped(piece.text, "repeated"))
            continue
        seen.add(content.lower())
        tier = tier_of(piece.text, piece.context)
        facts.append(CapturedFact(content, tier, piece.text.strip()))
    return Capture(tuple(facts), tuple(skipped))


def _skipped(text: str, reason: str) -> SkippedText:
    return SkippedText(text.strip()[:SKIPPED_TEXT_CHARS], reason)
