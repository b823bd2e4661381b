"""Turning a kept statement into the memory stored: third person, "User ...".

A memory is read later, by another session, maybe by another agent: "I" would then mean
whoever reads it. So the user becomes "User":

- "I" becomes "User", and the verb right after it (past any adverbs: "I really don't")
  agrees: "I live" -> "User lives", "I don't eat" -> "User doesn't eat", "I'm" -> "User
  is", "I've" -> "User has", "I was" -> "User was"; a past tense, a modal ("I can't") and
  "X and I are" stay as they are.
- "my" / "mine" become "User's", "me" / "myself" "User"; a bare "Mum" or "Dad" opening the
  statement is "User's Mum".
- "we" is the user's team when the statement is about work (a word of `WORK_WORDS`: "we
  deploy with Argo" -> "User's team deploys with Argo"), and "User and others" otherwise
  ("we're getting married"): there is no telling a partner from a family, so nothing is
  invented. "us" follows the same choice ("User's team" / "User"); "our" is "User's" ("our
  CI" -> "User's CI": the thing is the user's whether team or family shares it).
- "the" or "this" before someone or something that is the user's when said that way ("the
  kids", "the wife"; "the repo", "this codebase" to an assistant at work on it) is
  "User's"; "the US" stays the US.
- "call me Sam" becomes "User wants to be called Sam"; chat shorthand is spelt out ("wfh"
  -> "working from home"): a memory is read and searched in full words.
- Chat fillers at the end ("lol", "tbh", emoji, ":)") and the final punctuation go; the
  words in between are the user's own, kept as typed.
"""

from __future__ import annotations

import re

from memcore.capture import grammar
from memcore.capture import lexicon as lx

_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’\-]*|\s+|[^\sA-Za-z0-9]")
_CALL_ME = re.compile(
    r"^(?:from now on,? |going forward,? )?(?:you can |just |please )?call me\s+(.+)$",
    re.IGNORECASE | re.DOTALL,
)
_TRAILING_FILLER = re.compile(
    r"(?:[\s,]+(?:lol|lmao|haha+|hehe+|tbh|btw|imo|imho|jk|xd|ngl|though|tho|lel|fwiw))+\W*$"
    r"|[\s\W_]+$",
    re.IGNORECASE,
)
_KEEP_AT_END = frozenset(")]\"'%$")
_WORD_CHARS = re.compile(r"[A-Za-z0-9]")
_I_FORMS = {
    "i": "User",
    "i'm": "User is",
    "im": "User is",
    "i've": "User has",
    "ive": "User has",
    "i'll": "User will",
    "i'd": "User would",
}
_WE_FORMS_TEAM = {
    "we": "User's team",
    "we're": "User's team is",
    "we've": "User's team has",
    "we'll": "User's team will",
    "we'd": "User's team would",
}
_WE_FORMS_OTHERS = {
    "we": "User and others",
    "we're": "User and others are",
    "we've": "User and others have",
    "we'll": "User and others will",
    "we'd": "User and others would",
}
_OBJECTS = {"my": "User's", "mine": "User's", "me": "User", "myself": "User"}
_OUR = {"our": "User's", "ours": "User's"}
_US = {True: "User's team", False: "User"}


def third_person(core: str) -> str:
    """`core` (a kept statement) as a memory about "User"."""
    text = _trim(core)
    call = _CALL_ME.match(text)
    if call:
        return f"User wants to be called {_trim(call.group(1))}"
    tokens = _TOKEN.findall(text)
    lowered = [t.lower().replace("’", "'") for t in tokens]
    team = any(w in lx.WORK_WORDS for w in lowered)
    past = any(w in lx.PAST_MARKERS for w in lowered) or bool(re.search(r"\b(?:19|20)\d\d\b", text))
    out: list[str] = []
    index = 0
    while index < len(tokens):
        word = lowered[index]
        after_and = _previous_word(lowered, index) == "and" and _noun_phrase_before(lowered, index)
        if word in _I_FORMS:
            out.append(_I_FORMS[word])
            # "my wife and I are": the verb agrees with both already.
            if word == "i" and not after_and:
                index = _agree(tokens, lowered, index + 1, out, past)
                continue
        elif word in _WE_FORMS_TEAM:
            out.append((_WE_FORMS_TEAM if team else _WE_FORMS_OTHERS)[word])
            if team and word == "we":
                index = _agree(tokens, lowered, index + 1, out, past)
                continue
        elif not out and re.sub(r"'s$", "", word) in lx.BARE_KIN:
            out.append(f"User's {tokens[index]}")
        elif not out and word in ("the", "this") and _owned_after(lowered, index):
            out.append("User's")  # "The kids are ..." / "This codebase is" -> "User's ..."
        elif word in _OBJECTS:
            out.append(_OBJECTS[word])
        elif word in lx.SHORTHAND:
            out.append(lx.SHORTHAND[word])
        elif word in _OUR:
            out.append(_OUR[word])
        elif word == "us" and not (tokens[index] == "US" and not text.isupper()):
            out.append(_US[team])  # not "the US"
        else:
            out.append(tokens[index])
        index += 1
    result = "".join(out).strip()
    return result[:1].upper() + result[1:]


def _trim(text: str) -> str:
    """Without chat fillers, emoji and punctuation at the end (a closing bracket stays)."""
    text = text.strip()
    while True:
        match = _TRAILING_FILLER.search(text)
        if match is None or match.start() == len(text):
            return text
        tail = match.group(0)
        kept = ""
        # "(German to English)" keeps its bracket; "$1000" its digits.
        while tail and tail[0] in _KEEP_AT_END and _WORD_CHARS.search(text[: match.start()]):
            kept += tail[0]
            tail = tail[1:]
        trimmed = text[: match.start()] + kept
        if trimmed == text or not trimmed.strip():
            return text
        text = trimmed.rstrip()


def _noun_phrase_before(lowered: list[str], index: int) -> bool:
    """Is what stands before "and I" a short subject of its own ("my wife and I both work")
    rather than a clause ("I go by Alex and I watch films")? A few words and no pronoun."""
    before = [w for w in lowered[:index] if w.strip() and w[0].isalnum()][:-1]
    return len(before) <= lx.COMPOUND_SUBJECT_WORDS and not any(w in lx.PRONOUNS for w in before)


def _owned_after(lowered: list[str], index: int) -> bool:
    """Is the word after "the" / "this" one that is the user's when said so ("the kids",
    "the wife"; "the repo", "this codebase" with an assistant at work on it)?"""
    following = re.sub(r"'s$", "", _next_word(lowered, index))
    if lowered[index] == "the" and following in lx.BARE_KIN | lx.PETS:
        return True
    return following in lx.PROJECT_NOUNS


def _next_word(lowered: list[str], index: int) -> str:
    for ahead in range(index + 1, len(lowered)):
        if lowered[ahead].strip():
            return lowered[ahead]
    return ""


def _previous_word(lowered: list[str], index: int) -> str:
    for back in range(index - 1, -1, -1):
        if lowered[back].strip():
            return lowered[back]
    return ""


def _agree(tokens: list[str], lowered: list[str], index: int, out: list[str], past: bool) -> int:
    """Copy tokens from `index` up to and including the verb of a third-person-singular
    subject just written, made to agree; returns the index after the verb."""
    while index < len(tokens):
        word = lowered[index]
        if not word.strip() or word in lx.ADVERBS or word in ("no", "longer"):
            out.append(tokens[index])  # "User no longer works ..."
        elif word in ("am", "are", "'m"):
            out.append("is")
            return index + 1
        elif word in ("were",):
            out.append("was")
            return index + 1
        elif word.isalpha() or "'" in word:
            out.append(_third_person_verb(tokens[index], word, past))
            return index + 1
        else:
            return index
        index += 1
    return index


def _third_person_verb(token: str, word: str, past: bool) -> str:
    if word in lx.THIRD_PERSON:
        return lx.THIRD_PERSON[word]
    if (
        word in lx.MODALS
        or word in lx.IRREGULAR_PAST
        or word in lx.PARTICIPLES
        or "'" in word
        or (word.endswith("ed") and (not word.endswith("eed") or word in lx.PAST_EED))
        or grammar.is_ing(word)
        or word in ("is", "was", "has", "does", "not", "never")
        or (word in lx.SAME_IN_PAST and past)
        or not word.isalpha()
    ):
        return token
    if word.endswith(("s", "x", "z", "ch", "sh", "o")):
        suffix, stem = "es", token
    elif len(word) > 2 and word.endswith("y") and word[-2] not in "aeiou":
        suffix, stem = "ies", token[:-1]
    else:
        suffix, stem = "s", token
    return stem + (suffix.upper() if token.isupper() else suffix)  # "I LIVE" -> "LIVES"
