""" "He" and "she" after a statement about someone of the user's.

"My grandfather passed away in March. He was a ship's engineer." The second sentence names
no one, so on its own it is no fact about the user; read with the one before, "he" is "my
grandfather". A statement that opens with "he" or "she" takes the first "my ..." or "our
..." person of the statement just before it in the message ("my wife Fatima", "my boss"),
or the one the user named there ("I have a dog named Rex": "my dog Rex"), and is judged
again as "my grandfather was a ship's engineer". "My partner and I ..." gives no one ("he"
is then someone else).

Two more, both tied to what the user just said of themself:

- "it" after a captured first-person statement that names a thing of the user's as its
  object ("I'm writing a fantasy novel. It's about a lighthouse keeper": "my fantasy novel
  is about ..."; "We bought a house last year. It's an old Victorian": "our house"). Only
  after a captured fact: after talk ("I have a question. It's about taxes.") "it" is the
  conversation's, and a resolved statement is judged again like any other (so "It keeps
  crashing" stays a trouble report);
- a name the user introduced as someone of theirs ("my sister Priya"), opening a later
  statement of the message ("Priya just had her second baby": "my sister Priya just had
  ...").

"They" is not resolved: it points at the conversation's things as often as at people.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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


_IT = re.compile(
    r"^it(?P<verb>'s|’s| is| was| has| had| does| didn't| doesn't| \w+s)\b", re.IGNORECASE
)
# The object of a first-person statement: "I'm writing a fantasy novel", "We bought a
# house last year", "I've got my own place now" (a verb, then a determiner and its noun).
_OBJECT = re.compile(
    r"^(?P<subject>i|i'm|im|i've|ive|we|we're|we've)\s+(?:\w+\s+){0,2}?"
    r"(?P<det>a|an|my|our)\s+(?P<noun>(?:[a-z0-9\-]+\s+){0,2}?[a-z\-]+)"
    r"(?=\s*(?:$|[,.;!]|\s(?:in|on|at|for|from|with|last|this|that|which|who|and|but|so|"
    r"yesterday|today|recently|now)\b))",
    re.IGNORECASE,
)
_NAME = re.compile(r"^(?P<name>[A-Z][a-z]+)(?=['’]s\b|\s)")


def thing(statement: str) -> str | None:
    """The thing a first-person statement names as its object, as the user's ("I'm
    writing a fantasy novel" -> "my fantasy novel"), or None."""
    match = _OBJECT.match(statement.strip())
    if match is None:
        return None
    noun = match.group("noun")
    words = noun.lower().split()
    if any(w in lx.TALK_NOUNS or w in lx.HELP_NOUNS or w in lx.AUXILIARIES for w in words):
        return None  # "I have a question", "I need a few ideas": the conversation's
    if grammar.is_ing(words[-1]) or grammar.is_past(words[-1]):
        return None  # the head is a verb: "I have a cat called ..." stops before it
    owner = "our" if match.group("subject").lower().startswith("we") else "my"
    return f"{owner} {noun}"


@dataclass
class Referents:
    """Who "he"/"she" is, what "it" is, and the names of the user's people, as the message
    is read in order (module docstring)."""

    person: str | None = None
    it: str | None = None
    names: dict[str, str] = field(default_factory=dict)

    def after(self, statement: str, *, captured: bool) -> None:
        """Take what `statement` introduces; `captured`: it was kept as a fact."""
        self.person = antecedent(statement)
        self.it = thing(statement) if captured else None
        if self.person is not None:
            last = self.person.split()[-1]
            if last[:1].isupper() and len(self.person.split()) > 2:
                self.names.setdefault(last, self.person)  # "my sister Priya"

    def forget(self) -> None:
        """A skipped block (code, a quote) breaks the thread: "he" is no one now."""
        self.person = self.it = None

    def resolve(self, statement: str) -> str | None:
        """`statement` with its opening pronoun or name made the user's person or thing,
        or None when nothing can be resolved."""
        text = statement.strip()
        if self.person is not None:
            found = resolved(text, self.person)
            if found is not None:
                return found
        match = _IT.match(text)
        if match is not None and self.it is not None:
            verb = match.group("verb")
            if verb in ("'s", "’s"):
                verb = " has" if re.match(r"\s+(?:been|got)\b", text[match.end() :]) else " is"
            return f"{self.it}{verb}{text[match.end() :]}"
        name = _NAME.match(text)
        if name is not None and name.group("name") in self.names:
            person = self.names[name.group("name")]
            return person + text[name.end() :]
        return None
