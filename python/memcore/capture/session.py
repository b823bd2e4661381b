"""Work done in this session: the user reporting a step on the task at hand.

"I ran the migration", "I changed the port to 8080", "I added the import", "I got it
working", "I copied it exactly": said to an assistant mid-task, these tell where the work
stands, and the work is done and gone by the next session. Two shapes, both closed:

- a verb of working on something (`SESSION_VERBS`) in the past, acting on "it" or "that"
  ("I got it working", "I tried that", "I copied it exactly"): the thing is in the
  conversation, and a memory read alone cannot say what it was ("we watched it on our
  first date" is no step of a task);
- a past verb acting on an artefact of the work ("the function", "my script", "this
  config"; `SESSION_ARTEFACTS`): a file, a command or a setting of the task, not of the
  user's life ("I updated my resume" and "I changed jobs" stay facts).

Asking for ideas ("I need ideas for ...", "I want some tips") and a talk noun as subject
("My guess is ...", "My point is ...") are talk of the same kind.
"""

from __future__ import annotations

from memcore.capture import grammar
from memcore.capture import lexicon as lx

_POINTED = lx.words("it that them")
_DETERMINERS = lx.words("the my this that our")


def is_session_step(words: list[str], verb: int) -> bool:
    """Is the clause whose first-person subject's verb stands at words[verb] a step of the
    task at hand (module docstring)?"""
    if verb + 1 >= len(words) or not grammar.is_past(words[verb]):
        return False
    following = words[verb + 1]
    if following in _POINTED:
        return words[verb] in lx.SESSION_VERBS
    if following in _DETERMINERS and verb + 2 < len(words):
        return words[verb + 2] in lx.SESSION_ARTEFACTS
    return False


def asks_for_help(words: list[str], verb: int) -> bool:
    """ "I need ideas for a team offsite", "I want some tips on ...": asking now."""
    if words[verb] not in ("need", "want", "needed", "wanted"):
        return False
    rest = [w for w in words[verb + 1 : verb + 3] if w not in ("some", "a", "few", "good")]
    return bool(rest) and rest[0] in lx.HELP_NOUNS


def talk_subject(words: list[str]) -> bool:
    """ "My guess is the cache is stale", "My point is that ...": a thought about the talk."""
    return (
        len(words) >= 3
        and words[0] in ("my", "our")
        and words[1] in lx.TALK_SUBJECTS
        and words[2] in ("is", "was", "'s")
    )
