"""Who a statement is about: its first-person subject, or the user where chat leaves the
subject out.

- A subject past lead-in words: "I", "we", "my sister", "our CI", after "tonight",
  "since", "so" and the like.
- A verb whose subject chat drops: "switched to helix" (I), "going to a wedding" (I'm),
  "been pulling late nights" (I've), "no longer using vim", "just got engaged", "used to
  live in Paris". An order is a bare verb, so a past or -ing form is no order; an -ing
  form followed by its own verb is a subject instead ("Clicking Save does nothing").
- A negated verb of having or habit: "dont have a car", "never drink coffee". Nobody
  orders an assistant not to own a car, so the missing subject is the speaker.
- A predicate with no verb at all ("sick af this week", "in lisbon til sunday", "lactose
  intolerant fyi"), when something ties it to the speaker: a time word, or an "fyi" /
  "btw" saying the user is telling something. Untied, a verbless phrase is a reaction
  ("same err", "nice one"). It is kept as "User: ...": no verb is invented.
- Failing those, "my", "me", "our" or "us" anywhere in a statement with a verb ("Daniel
  is my manager"), or a bare "Mum" or "Dad" first.
"""

from __future__ import annotations

import re

from memcore.capture import adverbials, grammar
from memcore.capture import lexicon as lx

# Time words and discourse markers that may come before the subject ("tonight I'm ...").
_LEAD_INS = lx.words(
    "today tonight tomorrow yesterday now right this next last these those days day week "
    "weekend month year morning afternoon evening night lately recently currently so also "
    "then for the time being moment since because as and but anyway actually honestly "
    "still oh in at on rn from"
)
_DROPPED_LEAD_INS = lx.words("since because as so and but also anyway")
_DISCOURSE_ADVERBS = lx.words("meanwhile plus besides otherwise anyhow though however")
# Degree words before a state whose "I'm" chat dropped: "bit knackered today".
_DEGREE = lx.words("bit proper absolutely completely utterly rather fairly extremely bloody")
SUBJECTS = lx.words("i i'm im i've ive i'll i'd we we're we've we'll")
_POSSESSIVE_SUBJECTS = lx.words("my our")
_PREPOSITIONS = lx.words("in at on for from with about of to by")
# Elsewhere than first, the user is named by an object or a possessive ("Daniel is my
# manager"); a later "I" is mostly talk ("that's not what I meant", "not sure I follow").
_FIRST_PERSON_ANYWHERE = lx.words("my our me us mine ours myself")
_POINTERS_AT_END = lx.words("it this that")
# At most this many lead-in words before the subject.
MAX_LEAD_INS = 4
# A verbless predicate longer than this is a list or a title, not a state of the speaker.
MAX_PREDICATE_WORDS = 8
_WORD = re.compile(r"[a-z0-9][a-z0-9'\-]*")
# "Clicking Save does nothing": an -ing form with a third-person verb after it is a subject.
_THIRD_PERSON_VERBS = lx.words(
    "is isn't was wasn't does doesn't has hasn't makes seems feels takes helps keeps gets "
    "works looks sounds"
)
_SPLIT_NEGATION = lx.words("no not")
_OBJECT_PRONOUNS = lx.words("me you him her them us it")
# Adverbs of habit and degree that open no order ("always" and "also" do: "Always use
# type hints", "Also add a test"): the verb after one has the speaker as its subject.
_HABIT_ADVERBS = lx.words(
    "still usually mostly sometimes often rarely seldom normally generally typically "
    "occasionally barely hardly"
)
_ADJECTIVE_PREPOSITIONS = lx.words("about as than")
_NEEDS = lx.words("need needed have had want wanted")
# Modals a dropped "I" leaves first ("don't" is left out: "don't use tabs" is an order).
_DROPPED_MODALS = lx.words("can't cant cannot couldn't won't wont")
_NOT_OBJECTS = _OBJECT_PRONOUNS | lx.PRONOUNS | lx.words("this that i")
# A verbless phrase opening with these is a noun phrase or an aside, not a state of the
# speaker ("nothing fancy for dinner this week", "it today").
_NOT_PREDICATES = lx.PRONOUNS | lx.words("nothing no none that this those these there")


def subject_index(words: list[str]) -> int | None:
    """Where a first-person subject stands after at most MAX_LEAD_INS lead-in words, or
    after a fronted adverbial ("After work I ...", "When I was a kid I ...")."""
    lead = adverbials.lead_end(words)
    if lead is not None and _subject_at(words, lead):
        return lead
    for index, word in enumerate(words[: MAX_LEAD_INS + 1]):
        if word in SUBJECTS:
            return index
        # "my sister is ...", but not after a preposition: "for my late answer", "in our
        # company we ..." (the subject, if any, comes later).
        if word in _POSSESSIVE_SUBJECTS and not (index and words[index - 1] in _PREPOSITIONS):
            return index
        # "kid has a fever", "the kids are at their grandparents'": a relative named
        # without "my", with a verb.
        if index == 0 and word in lx.BARE_KIN and grammar.finite_verb_after(words, 0):
            return index
        if index == 0 and word.endswith("'s") and word[:-2] in lx.BARE_KIN:
            return index  # "Mum's poorly" ("Mum's birthday is ..." has its verb later)
        # "The kids are ...", and "The repo is at ~/code/atlas", "This codebase has zero
        # tests": said to an assistant working on it, the project is the user's.
        if (
            index == 0
            and _owned_noun(words)
            and (grammar.finite_verb_after(words, 1) or words[1].endswith("'s"))
        ):
            return index
        following = words[index + 1] if index + 1 < len(words) else ""
        if word == "me" and following == "and":
            return index
        # Chat without apostrophes: "tonight were having friends over".
        if word == "were" and following.endswith("ing"):
            return index
        if word not in _LEAD_INS and not _sentence_adverb(word):
            return None
    return None


def _sentence_adverb(word: str) -> bool:
    """ "Unfortunately", "luckily", "meanwhile": an adverb about the whole statement, read
    past like "honestly" before the subject ("Sadly my cat died last week")."""
    return (len(word) > 5 and word.endswith("ly")) or word in _DISCOURSE_ADVERBS


def _subject_at(words: list[str], index: int) -> bool:
    """Is words[index] a first-person subject: a pronoun, or "my"/"our" before a verb?"""
    if words[index] in SUBJECTS:
        return True
    return (
        words[index] in _POSSESSIVE_SUBJECTS and grammar.finite_verb_after(words, index) is not None
    )


def _owned_noun(words: list[str]) -> bool:
    """ "the kids", "the wife", "the repo", "this codebase": the user's, said with "the"."""
    if len(words) < 2:
        return False
    if words[0] == "the" and re.sub(r"'s$", "", words[1]) in lx.BARE_KIN | lx.PETS:
        return True
    return words[0] in ("the", "this") and words[1] in lx.PROJECT_NOUNS


def fact_core(text: str, words: list[str], *, anchored: bool, informed: bool) -> str | None:
    """The statement from its subject on (lead-ins like "since" or "so" dropped, time words
    kept), with a subject put before a verb whose subject was dropped, or "User: " before
    an anchored verbless predicate, or the statement itself when a first-person word stands
    elsewhere or the user said they are telling it; None when nothing names the user.
    `anchored`: a time word or an "fyi" ties the statement to the speaker; `informed`: an
    "fyi", "btw" or "note that" says the statement is told to be known ("fyi the staging
    db gets wiped every night")."""
    subject = subject_index(words)
    if subject is not None:
        drop = 0
        # "Since I started running I've ...": a subordinate clause is kept whole.
        subordinate = adverbials.lead_end(words) == subject
        while not subordinate and drop < subject and words[drop] in _DROPPED_LEAD_INS:
            if words[drop] == "since" and words[drop + 1] in lx.TIME_WORDS | {"last"}:
                break  # "Since last year I've been ...": a time, not a reason
            drop += 1
        core = _from_word(text, drop) if drop else text
        if words[subject] == "were":
            core = re.sub(r"\bwere\b", "we're", core, count=1, flags=re.IGNORECASE)
        return core
    dropped = dropped_subject(words)
    if dropped is not None:
        return f"{dropped} {text[0].lower()}{text[1:]}"
    if not grammar.has_finite_verb(words):
        if (anchored and _is_predicate(words)) or _person_predicate(words):
            return f"User: {text}"
        return None
    if len(words) >= 3 and any(w in _FIRST_PERSON_ANYWHERE for w in words):
        return text
    if len(words) >= 3 and re.sub(r"'s$", "", words[0]) in lx.BARE_KIN:
        return text
    if informed and len(words) >= 3:
        return text
    return None


def dropped_subject(words: list[str]) -> str | None:
    """ "I'm" for "going to my sister's wedding", "I" for "switched in January", "I've" for
    "been living on takeout", "I" for "dont have a car"; None when the statement does not
    open with a verb whose subject was dropped."""
    if len(words) < 2 or words[-1] in _POINTERS_AT_END:
        return None
    if len(words) >= 3 and words[0] in ("don't", "dont", "never") and words[1] in lx.LIFE_VERBS:
        return "I"
    index = 0
    if words[:2] in (["a", "bit"], ["a", "little"]):
        index = 2  # "a bit knackered today"
    while index < len(words) - 1 and (
        words[index] in lx.ADVERBS
        or words[index] in _DEGREE
        or words[index] in _SPLIT_NEGATION
        or (words[index] == "longer" and index and words[index - 1] == "no")
    ):
        index += 1
    verb = words[index]
    following = words[index + 1] if index + 1 < len(words) else ""
    if len(words) >= 3 and words[0] in _NEEDS and words[1] == "to":
        return "I"  # "need to finish my tax return by Friday": nobody orders a need
    if (
        index
        and words[0] in _HABIT_ADVERBS
        and following
        and following not in _PREPOSITIONS | _ADJECTIVE_PREPOSITIONS | lx.TIME_WORDS
        and verb.isalpha()
        and not grammar.is_ing(verb)
    ):
        return "I"  # "still crave chocolate", "usually wake up at 6" (not "still sick with")
    if not following and not (index and grammar.is_ing(verb)):
        return None  # "still onboarding" has its adverb; "worked" alone is a reply
    if verb in lx.GOING_TO:
        return "I'm"  # "gonna be at the dentist at 2"
    if verb in lx.LIKING_VERBS and index == 0 and following not in _NOT_OBJECTS:
        return "I"  # "Love hiking", "hate running"
    if verb == "been":
        return "I've"
    if verb == "born":
        return "I was"  # "Born and raised in Manchester"
    if verb in lx.STATE_PARTICIPLES:
        return "I'm"  # "based in Basel", "stuck in traffic"
    if verb in _DROPPED_MODALS and len(words) >= 3:
        return "I"  # "can't make it to the gym today", "won't be around next week"
    if len(words) >= 3 and (
        verb in lx.SELF_VERBS or (verb == "work" and following in lx.WORK_PLACES)
    ):
        return "I"  # "Mostly work in Python", "live in Rotterdam": no order to an assistant
    if grammar.is_ing(verb):
        if len(words) == 2 and following in _OBJECT_PRONOUNS:
            return None  # "Knowing me", "Trusting you": an aside
        if any(w in _THIRD_PERSON_VERBS for w in words[index + 1 : index + 5]):
            return None  # a gerund subject: "Clicking Save does nothing"
        return "I'm"
    if index and verb in lx.SAME_IN_PAST and words[index - 1] in ("just", "finally", "already"):
        return "I"  # "Just hit 100 days of running": "hit" is past after "just"
    if grammar.is_past(verb) and verb not in lx.PARTICIPLES:
        # "stressed this week", "exhausted today": a participle as a state, no object.
        if following in lx.TIME_WORDS or following in ("af", "lol", "rn"):
            return "User:"
        return "I" if len(words) >= 3 else None
    return None


def _is_predicate(words: list[str]) -> bool:
    """A short verbless phrase (two to MAX_PREDICATE_WORDS words) with a word of content
    beside its time words ("sick this week"; not "tomorrow then", "for now", "whatever")."""
    if len(words) < 2 or len(words) > MAX_PREDICATE_WORDS or words[0] in _NOT_PREDICATES:
        return False
    if words[0].endswith("'s"):
        return False  # "Weather's nice today": a subject and its "is", about the world
    return any(w not in lx.FILLER_WORDS and w not in lx.TIME_WORDS for w in words)


def _person_predicate(words: list[str]) -> bool:
    """ "allergic to nuts", "not a fan of horror movies", "fluent in Spanish": an adjective
    that only a person takes, with its preposition and an object."""
    index = 0
    while index < len(words) and words[index] in (
        "not",
        "very",
        "so",
        "a",
        "big",
        "huge",
        "severely",
    ):
        index += 1
    return (
        index + 2 < len(words)
        and words[index] in lx.PERSON_PREDICATES
        and words[index + 1] in ("of", "to", "in", "with", "at", "on")
    )


def _from_word(text: str, index: int) -> str:
    """`text` from its index-th word on."""
    matches = list(_WORD.finditer(text.lower()))
    return text[matches[index].start() :] if index < len(matches) else text
