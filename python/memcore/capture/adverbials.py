"""Fronted adverbials: where the subject stands after "After work", "Last summer", "When I
was a kid".

People put the when and where of a fact first: "After work I usually go climbing", "Last
summer we drove across Portugal", "In 2019 I moved to Bristol", "Two years ago I quit
smoking", "Since I started running I've lost 8 kilos". The subject is then not among the
first words, yet the statement is as much the user's as "I moved to Bristol". Two shapes
are read, both closed:

- a phrase without a verb opened by a preposition or a time determiner ("after work",
  "every morning", "in this project", "twice a week"), or ending in "ago";
- a subordinate clause opened by a conjunction of time or reason, with its own subject,
  then the main subject ("when I was a kid I ...", "since I started running I've ...").

The adverbial stays in the fact: it is its time or place ("This morning, I ran 5k" is
today's), and the clause before a comma is no statement of its own (clauses.py).
"""

from __future__ import annotations

from memcore.capture import grammar
from memcore.capture import lexicon as lx

# Prepositions and time determiners that open an adverbial phrase ("at work", "every
# morning", "last summer", "twice a week", "ever since the accident").
_PHRASE_OPENERS = lx.words(
    "after before during in on at since for over by from until till throughout around "
    "within across between every each last next this these back ever once twice most "
    "some all outside inside"
)
# Conjunctions that open a clause of time or reason before the main one.
_SUBORDINATORS = lx.words("when whenever while since after before once until till because")
# Of those, the ones of time: a clause of reason is a fact of its own ("Since my wife is
# Japanese, we ..."), one of time is not ("When I was a kid, I ...").
_OF_TIME = lx.words("when whenever while after before once until till")
# A relative or conditional word inside the phrase makes the subject after it its own
# ("In a world where I didn't need sleep, I'd ...").
_CLAUSE_WORDS = lx.words("where when which who that if whether")
_SUBJECTS = lx.words("i i'm im i've ive i'd i'll we we're we've we'll my our")
# An adverbial phrase is at most this many words; a subordinate clause at most CLAUSE_WORDS.
PHRASE_WORDS = 6
CLAUSE_WORDS = 10


def lead_end(words: list[str]) -> int | None:
    """Where the main clause's first-person subject stands after a fronted adverbial
    (module docstring), or None when the statement opens with none."""
    if len(words) < 3:
        return None
    if words[0] in _SUBORDINATORS and words[1] in _SUBJECTS:
        for index in range(3, min(len(words), CLAUSE_WORDS + 1)):
            if words[index] in _SUBJECTS and words[index] not in ("my", "our"):
                return index
        return None
    opens = words[0] in _PHRASE_OPENERS
    for index in range(1, min(len(words), PHRASE_WORDS + 1)):
        if words[index] not in _SUBJECTS:
            continue
        between = words[:index]
        if not (opens or between[-1] == "ago") or grammar.has_finite_verb(between):
            return None
        if any(w in _CLAUSE_WORDS for w in between[1:]):
            return None
        return index
    return None


def is_lead(words: list[str]) -> bool:
    """Is `words` (a clause before a comma) a fronted adverbial alone: "After my divorce",
    "This morning", "When I was a kid" (no main clause yet)?"""
    if not words:
        return False
    if words[0] in _SUBORDINATORS:
        if words[0] not in _OF_TIME:
            return False
        return len(words) <= CLAUSE_WORDS and len(words) >= 3 and words[1] in _SUBJECTS
    opens = words[0] in _PHRASE_OPENERS or words[-1] == "ago"
    if any(w in _CLAUSE_WORDS for w in words[1:]):
        return False
    return opens and len(words) <= PHRASE_WORDS and not grammar.has_finite_verb(words)
