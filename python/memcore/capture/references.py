""" "He" and "she" after a statement about someone of the user's.

"My grandfather passed away in March. He was a ship's engineer." The second sentence names
no one, so on its own it is no fact about the user; read with the one before, "he" is "my
grandfather". A statement that opens with "he" or "she" takes the first "my ..." or "our
..." person of the statement just before it in the message ("my wife Fatima", "my boss"),
or the one the user named there ("I have a dog named Rex": "my dog Rex"), and is judged
again as "my grandfather was a ship's engineer". "My partner and I ..." gives no one ("he"
is then someone else). Nothing else is resolved: "it" and "they" point at the
conversation's things as often as at the user's.
"""

from __future__ import annotations

import re

from memcore.capture import grammar
from memcore.capture import lexicon as lx

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’\-]*")
_PERSON_PRONOUN = re.compile(
    r"^(?P<pronoun>he|she)(?P<verb>'s|’s| is| was| has| had| does| works| lives| \w+s)?\b",
    re.IGNORECASE,
)
_POSSESSIVE = lx.words("my our")
# "a rescue greyhound named Biscuit", "a cat called Miso".
_NAMED = re.compile(
    r"\b(?:a|an)\s+(?P<noun>(?:[a-z\-]+\s+){0,2}[a-z\-]+)\s+(?:named|called)\s+"
    r"(?P<name>[A-Z][\w\-]*)"
)
_FIRST_PERSON_START = re.compile(r"^\s*(?:i|i've|i'm|we|we've|we're)\b", re.IGNORECASE)
# A person named after "my" takes at most this many words ("my older sister Ana").
PERSON_WORDS = 3


def antecedent(statement: str) -> str | None:
    """The first "my ..." / "our ..." noun phrase of `statement` ("my wife Fatima"), or
    the one the user names ("We adopted a greyhound named Biscuit": "our greyhound
    Biscuit"), or None."""
    named = _NAMED.search(statement)
    if named and _FIRST_PERSON_START.match(statement):
        owner = "our" if statement.lstrip().lower().startswith("we") else "my"
        return f"{owner} {named.group('noun')} {named.group('name')}"
    tokens = _WORD.findall(statement)
    for index, token in enumerate(tokens):
        if token.lower() not in _POSSESSIVE:
            continue
        phrase = [token]
        for word in tokens[index + 1 : index + 1 + PERSON_WORDS]:
            low = word.lower().replace("’", "'")
            if low == "and":
                return None  # "my partner and I": "he" is someone else
            if low in lx.AUXILIARIES or low in lx.PRONOUNS or low in lx.NOUN_OPENERS:
                break
            if grammar.is_past(low) or low in ("but", "who", "that"):
                break
            if len(phrase) > 1 and word[:1].islower() and low.endswith("s"):
                break  # "my husband works": the verb, not the name
            if low.endswith("'s"):
                phrase.append(word[:-2])  # "my brother's wedding": the person is "my brother"
                break
            phrase.append(word)
        return " ".join(phrase) if len(phrase) > 1 else None
    return None


def resolved(statement: str, person: str) -> str | None:
    """`statement` with its opening "he" / "she" replaced by `person` ("He's 4" -> "my dog
    Rex is 4"), or None when it opens with neither."""
    match = _PERSON_PRONOUN.match(statement.strip())
    if match is None:
        return None
    verb = match.group("verb") or ""
    rest = statement.strip()[match.end() :]
    if verb in ("'s", "’s"):
        verb = " has" if re.match(r"\s+(?:been|got)\b", rest) else " is"
    return f"{person}{verb}{rest}"
