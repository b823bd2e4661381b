"""The values fact capture returns: frozen, so a caller can keep and share them."""

from __future__ import annotations

from dataclasses import dataclass

#: Retention tiers, shortest first: L1 is about today, L2 about this week or a passing state,
#: "durable" never expires (the facade maps each to its retention setting).
TIERS = ("L1", "L2", "durable")

#: Why a statement was not captured. Each statement of a message ends up in `Capture.facts`
#: or in `Capture.skipped` with one of these:
#:   question      asks something ("what's a good ...", "can you ...?")
#:   greeting      hello, goodbye, "brb", "talk tomorrow"
#:   thanks        thanks, "appreciate it"
#:   hypothetical  if / suppose / imagine / "what if" / "I'd ..." / "I wish ..."
#:   quote         a "> " quoted block, quoted speech (and "my friend said" before it),
#:                 or text handed over for editing ("Fix this: ...")
#:   code          a fenced or indented code block, or a line that reads as code
#:   instruction   tells the assistant what to do ("write ...", "please ...", "I want you to")
#:   not_a_fact    the rest: acknowledgements, talk about the conversation itself ("I see",
#:                 "I like it"), statements not about the user, text with no Latin letters,
#:                 a "statement" over MAX_STATEMENT_CHARS characters (a paste, not a sentence)
#:   repeated      the same fact again in one message (the first is captured)
#:   truncated     past the work cap (MAX_CHARS characters or MAX_STATEMENTS statements)
SKIP_REASONS = (
    "question",
    "greeting",
    "thanks",
    "hypothetical",
    "quote",
    "code",
    "instruction",
    "not_a_fact",
    "repeated",
    "truncated",
)

#: A skipped text is cut to this many characters (it is for explaining, not for storing).
SKIPPED_TEXT_CHARS = 200


@dataclass(frozen=True)
class CapturedFact:
    """One fact to store: `content` in the third person ("User moved to Austin"), its
    retention `tier`, and the user's own `sentence` it came from."""

    content: str
    tier: str
    sentence: str


@dataclass(frozen=True)
class SkippedText:
    """A statement that was not captured, and why (one of SKIP_REASONS)."""

    text: str
    reason: str


@dataclass(frozen=True)
class Capture:
    """What one message yielded: the facts, and every other statement with its reason."""

    facts: tuple[CapturedFact, ...] = ()
    skipped: tuple[SkippedText, ...] = ()
