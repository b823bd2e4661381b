"""Talk about the conversation: statements that name the user but are no fact to keep.

A memory is read weeks later, without the conversation. So these are skipped even when
they say "I":

- a verb of talking or thinking right after the subject ("I see", "I think ...", "I
  meant ...", "I don't really know where to start"), a state of the talk ("I'm back",
  "I'm not sure", "I'm so excited"), "I have a question", a promise about the chat ("I'll
  check the diff later", "I'll try to keep up");
- anything addressed to "you" or about replies, fixes and suggestions;
- anything pointing at something in the chat: "I like it", "why this test fails", "I
  love that idea", "the code below", "attached" (a time word after "this" is no pointer:
  "this week"; nor is a thing that outlasts the chat: "this project", "this repo");
- a report of trouble with the work at hand ("my function returns None", "the build keeps
  failing"): it is solved and gone.
"""

from __future__ import annotations

import re

from memcore.capture import lexicon as lx
from memcore.capture import session
from memcore.capture.fragments import subject_index
from memcore.capture.tiers import names_today_or_this_week

_WORD = re.compile(r"[a-z0-9][a-z0-9'\-]*")
_TIME_NOUNS = lx.words(
    "morning afternoon evening night week weekend month year time summer winter spring fall "
    "autumn semester quarter season weekday days weeks months years wk wknd yr"
)
_DEICTIC = lx.words("this these those")
_POINTERS_AT_END = lx.words("it this that")
_SECOND_PERSON = lx.words("you your you're youre you've you'll you'd u ur yours yourself")
_I_AM = lx.words("i'm im")
_WILL = lx.words("i'll")
_TROUBLE = re.compile(lx.TROUBLE)
_HABIT_ADVERBS = lx.words("always usually often never sometimes rarely")
_AFTER_OBJECT = lx.words("already again before earlier yet too either")
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_KNOWING = lx.words("know knew")
_NOT_KNOWN_THINGS = (
    lx.QUESTION_WORDS
    | lx.NOUN_OPENERS
    | _SECOND_PERSON
    | lx.words(
        "that it this what how why where when who which whether if about exactly right nothing "
        "anything everything something much more too already better him her them"
    )
)
# States of a thing in trouble, and an HTTP status ("returns 500").
_MISBEHAVING = lx.words("down again weird slow wrong stuck empty blank missing")
_STATUS = re.compile(r"[1-5]\d\d")


def is_talk(low: str, *, trouble: bool = True) -> bool:
    """Is the statement (lowercase) about the conversation rather than the user's life?
    `trouble`: a report of trouble counts as talk (not in a list: "Errors | Sentry")."""
    words = _WORD.findall(low)
    if not words:
        return True
    if any(w in _SECOND_PERSON or w in lx.CHAT_TOPICS for w in words):
        return True
    if words[-1] in lx.MESSAGE_POINTERS or (trouble and _TROUBLE.search(low)):
        return True
    if trouble and _thing_misbehaves(words):
        return True
    subject = subject_index(words)
    # "I'm demoing this to the client at 4pm today": the user's day, whatever "this" is.
    dated = subject is not None and (names_today_or_this_week(low) or _YEAR.search(low) is not None)
    if not dated and _points_at_chat(words):
        return True
    if session.talk_subject(words):
        return True
    if subject is None:
        return False
    index = subject + 1
    state = words[subject] in _I_AM
    if words[subject] == "i" and index < len(words) and words[index] in ("am", "was"):
        state, index = True, index + 1
    promise = words[subject] in _WILL or (
        words[subject] == "i" and words[index : index + 1] == ["will"]
    )
    habit = False  # "I always forget to drink water": a habit of the user's, not the chat
    while index < len(words) and (
        words[index] in lx.ADVERBS or words[index] in lx.NEGATIONS or words[index] in lx.MODALS
    ):
        habit = habit or words[index] in _HABIT_ADVERBS
        index += 1
    if index >= len(words):
        return False
    verb = words[index]
    if verb in ("going", "gonna") and words[index + 1 : index + 2] in (["to"], ["try"]):
        promise = True  # "I'm going to try it tonight" promises like "I'll try it"
        index += 2 if words[index + 1] == "to" else 1
        verb = words[index] if index < len(words) else verb
    if promise and (
        verb in lx.PROMISE_VERBS or words[index + 1 : index + 3] in (["a", "look"], ["a", "go"])
    ):
        return True  # "I'll check the diff later", "I'll take a look tomorrow"
    if session.is_session_step(words, index) or session.asks_for_help(words, index):
        return True
    if verb in ("trying", "try", "want", "need") and words[index + 1 : index + 2] == ["to"]:
        # "I'm trying to figure out ...": what is tried is the verb to read.
        verb = words[index + 2] if index + 2 < len(words) else verb
        state = False
    elif verb in ("keep", "kept") and index + 1 < len(words):
        verb = words[index + 1]  # "I keep forgetting ..."
    if words[subject] in ("i", "i've", "ive") and verb in ("have", "got", "had"):
        return any(w in lx.TALK_NOUNS for w in words[index + 1 : index + 4])
    if words[subject] in ("i", "we") and verb in ("do", "don't", "dont", "didn't", "didnt"):
        index += 1
        while index < len(words) and words[index] in lx.ADVERBS:
            index += 1
        verb = words[index] if index < len(words) else verb
    if habit:
        return False
    if verb in _KNOWING and _names_a_thing(words[index + 1 : index + 2]):
        return False  # "I know SQL and Python well": a skill, not "I know what you mean"
    return (state and verb in lx.CHAT_STATES) or (not state and verb in lx.CHAT_VERBS)


def _names_a_thing(following: list[str]) -> bool:
    """Is the object after "know" a noun ("SQL", "Spanish", "three languages") rather than
    a clause, a pronoun or "the answer" ("what you mean", "that", "it", "the feeling")?"""
    return bool(following) and following[0] not in _NOT_KNOWN_THINGS


def _thing_misbehaves(words: list[str]) -> bool:
    """ "The frontend doesn't update", "the server is down again", "the backend returns
    500": the project's part as the subject of a negated verb or a state of trouble is
    this session's problem, not how the project is built."""
    if len(words) < 3 or words[0] not in ("the", "this") or words[1] not in lx.PROJECT_NOUNS:
        return False
    if words[1] == "team":
        return False  # people: "the team doesn't do standups" is how they work
    return any(
        w in lx.NEGATIONS or w.endswith("n't") or w in _MISBEHAVING or _STATUS.fullmatch(w)
        for w in words[2:]
    )


def _points_at_chat(words: list[str]) -> bool:
    """ "this test", "these errors", "I like it", "I love that idea": pointing at something
    in the conversation, or a statement about "that" ("that works for me")."""
    if words[0] in ("that", "that's", "thats"):
        return True
    for index, word in enumerate(words):
        if word in _DEICTIC:
            following = words[index + 1] if index + 1 < len(words) else ""
            if following not in _TIME_NOUNS and following not in lx.STANDING_NOUNS:
                return True
    if words[-1] in _POINTERS_AT_END:
        return True
    if len(words) >= 2 and words[-2] == "that":
        return True
    # "Tried that already", "read this again": "this" or "that" as the thing acted on.
    return any(
        w in ("this", "that") and words[i + 1] in lx.ADVERBS | _AFTER_OBJECT
        for i, w in enumerate(words[:-1])
    )
