"""Does a newly stored fact update an older one? The rule behind `similar` on store.

Cosine alone cannot tell an update ("User lives in Seattle" -> "User moved to Austin",
cosine 0.57 with MiniLM) from a fact that merely shares its topic ("User lives in Seattle"
-> "User's sister lives in Portland", 0.64). The rule adds what makes a statement an update
of another, read from the text with no model (the word lists are English; text with no
Latin letters falls back to cosine alone):

1. Same subject: all words of one fact's leading noun phrase (the words before its first
   verb, with "I"/"my"/"the user" read as "user") appear in the other, or both phrases start
   with the same word; a relation word in a subject ("User's *sister* ...", "Tom's *wife*
   ...") that the other fact lacks makes them different subjects.
2. Not an addition: the new fact does not say "also", "too", "as well", "another".
3. Either the two are close (cosine >= `CLOSE_COSINE`); or nearly so (cosine >=
   `NUMBER_COSINE`) and the new fact states a number the old one does not, the old one
   stating one too (a changed or corrected quantity: "seats 12" -> "seats 20"); or the new
   fact says that something changed ("now", "moved", "switched", "new", "instead", "no
   longer", "renamed", "upgraded", ...), the two are at least loosely related (cosine >=
   `CHANGE_COSINE`) and the old fact is the closest one about that subject (or within
   `CHANGE_MARGIN` of it).

The four numbers were chosen on the dev half of the labelled pairs in
benches/quality/updates.jsonl; the confusion table of both halves is in
benches/results/quality.md (`python -m benches.quality --updates-only`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

#: Cosine at or above which two facts about the same subject count as one fact restated.
CLOSE_COSINE = 0.8
#: Cosine at or above which a same-subject fact that announces a change counts as an update
#: (also the engine's candidate threshold: nothing below it is considered).
CHANGE_COSINE = 0.3
#: Cosine at or above which a same-subject fact giving another number than the stored one
#: counts as an update: a new value of the same quantity often comes without a change word
#: ("The newsletter passed 5,000 subscribers"). The dev half cannot tell 0.68 from 0.80 (no
#: pair falls between); 0.7 sits low in that range (benches/results/quality-experiments.md).
NUMBER_COSINE = 0.7
#: A change cue names the closest same-subject fact and those within this cosine of it.
CHANGE_MARGIN = 0.05


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Letters and digits of any script; inner apostrophes, dots, @ and hyphens stay in the word
# ("user's", "D.C.", "alex@new.io", "on-call").
_WORD = re.compile(r"[^\W_][\w'’@.\-]*[^\W_]|[^\W_]")
_USER = frozenset({"user", "users", "i", "i'm", "me", "my", "mine"})
# Function words and time words that carry neither subject nor attribute.
_STOP = _word_set(
    "a an the is are was were be been being has have had of in on at to for from by with and "
    "or but as it its this that these those now just also too still their his her our we they "
    "he she them then than there here after before into over up down out off about who which "
    "what when where how all any some no not very really new old current former correction"
)
# Words that end a subject: auxiliaries and common irregular past tenses (regular verbs are
# caught by their -ed/-s ending).
_VERBS = _word_set(
    "is are was were be been has have had can could will would should may might must does do "
    "did got gets get now just still also no not and went made took gave became bought sold "
    "left put set ran met saw began kept found says said"
)
# "X's <relation>" is somebody other than X.
_RELATIONS = _word_set(
    "daughter son wife husband partner brother sister mother father mom dad parent kid child "
    "children cousin colleague neighbour neighbor friend boss manager grandmother grandfather "
    "aunt uncle niece nephew roommate"
)
_LATIN = re.compile(r"[A-Za-z]")
_ADDITION = re.compile(r"\b(?:also|too|as well|another|additional(?:ly)?|in addition)\b", re.I)
# Words that announce a change of state. "re...ed" catches renamed, relocated, rescheduled,
# rewritten, and a few words that announce nothing ("required"): measured, kept.
_CHANGE = re.compile(
    r"\b(?:now|no longer|anymore|instead|new|these days|from now on|going forward|correction|"
    r"actually|changed?|switched|moved|replaced|re[a-z]+(?:ed|en)|raised|lowered|increased|"
    r"decreased|dropped|up to|down to|quit|left|stopped|gave up|sold|became|become|becomes|"
    r"got|went|back|upgraded|downgraded|migrated|promoted|transferred|hired|resigned|retired|"
    r"cancell?ed|postponed|pushed|delayed|slipped|extended|took over|handed|broke up|"
    r"divorced|married|graduated|finished|ended|over)\b",
    re.I,
)
# A quantity as written: "12", "3,000", "1.2", "9:30".
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_SUBJECT_WORDS = 4
# A fact is one statement; the rule reads no further than this into a long one, which also
# bounds what the parse cache holds.
_PARSE_CHARS = 1000


def candidate_floor(new: str) -> float | None:
    """The lowest cosine at which a stored fact can be one that `new` updates, or None when
    `new` reads as an addition and updates nothing (no search needed)."""
    if _ADDITION.search(new):
        return None
    if _CHANGE.search(new):
        return CHANGE_COSINE
    return NUMBER_COSINE if _NUMBER.search(new) else CLOSE_COSINE


def updated_facts(new: str, candidates: Sequence[tuple[str, float]]) -> list[int]:
    """Which of the stored facts (text, cosine to `new`) `new` updates, as indices into
    `candidates`, closest first.

    A change cue says that *something* about the subject changed, not what: it names the
    closest fact about the same subject (and any within `CHANGE_MARGIN` of it), so "User
    moved to Austin" names "User lives in Seattle" and not every other fact about the user.
    """
    floor = candidate_floor(new)
    if floor is None:
        return []
    changed = floor == CHANGE_COSINE
    picked: list[int] = []
    for i in sorted(range(len(candidates)), key=lambda i: -candidates[i][1]):
        old, cosine = candidates[i]
        if cosine < floor:
            break
        if not same_subject(old, new):
            continue
        if not changed and cosine < CLOSE_COSINE and not new_number(old, new):
            continue
        if changed and not picked:  # the closest fact about the subject sets the bar
            floor = min(CLOSE_COSINE, max(floor, cosine - CHANGE_MARGIN))
        picked.append(i)
    return picked


def looks_like_update(old: str, new: str, cosine: float) -> bool:
    """Whether `new` reads as an update of `old` when `old` is its closest fact."""
    return updated_facts(new, [(old, cosine)]) == [0]


def new_number(old: str, new: str) -> bool:
    """Whether `new` states a number that `old` does not, `old` stating one too: the same
    quantity with another value ("seats 12 people" -> "seats 20")."""
    old_numbers = {n.replace(",", "") for n in _NUMBER.findall(old[:_PARSE_CHARS])}
    new_numbers = {n.replace(",", "") for n in _NUMBER.findall(new[:_PARSE_CHARS])}
    return bool(old_numbers) and bool(new_numbers - old_numbers)


def same_subject(old: str, new: str) -> bool:
    """Whether both facts are about the same person or thing (True when the text gives no
    way to tell: the reading below is for English, so other scripts fall back to cosine)."""
    if not (_LATIN.search(old) and _LATIN.search(new)):
        return True
    old_subject, old_words = _parse(old[:_PARSE_CHARS])
    new_subject, new_words = _parse(new[:_PARSE_CHARS])
    for relation in (set(old_subject) | set(new_subject)) & _RELATIONS:
        if relation not in old_words or relation not in new_words:
            return False
    if old_subject and new_subject and old_subject[0] == new_subject[0]:
        return True
    return set(old_subject) <= new_words or set(new_subject) <= old_words


def subject(text: str) -> list[str]:
    """The content words of the leading noun phrase, normalised (at most four)."""
    return list(_parse(text[:_PARSE_CHARS])[0])


# The same stored facts come back as candidates store after store: parse each once.
@functools.lru_cache(maxsize=4096)
def _parse(text: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """A fact's subject words and all its content words."""
    tokens = _WORD.findall(text)
    return _subject(tokens), frozenset(w for w in map(_normal, tokens) if w is not None)


def _subject(tokens: list[str]) -> tuple[str, ...]:
    words: list[str] = []
    previous = ""
    for i, token in enumerate(tokens):
        if i > 0 and _ends_subject(token, previous):
            break
        word = _normal(token)
        if word is not None:
            words.append(word)
            if len(words) == _SUBJECT_WORDS:
                break
        previous = token
    return tuple(words)


def _ends_subject(token: str, previous: str) -> bool:
    low = token.lower()
    if low in _VERBS:
        return True
    # A lower-case -ed/-s word after a noun is a verb ("User lives", "Staging was migrated");
    # after a possessive or a function word it is still the noun phrase ("user's parents").
    if not token.islower() or _possessive(previous) or previous.lower() in _STOP:
        return False
    return low.endswith("ed") or (low.endswith("s") and not low.endswith("ss"))


def _normal(token: str) -> str | None:
    """The token as a comparable word, or None for a function word."""
    word = token.lower().replace("’", "'").rstrip(".")
    if _possessive(word):
        word = word[:-2]
    if word in _USER:
        return "user"
    if word in _STOP:
        return None
    # A crude singular, so "uploads" meets "upload" and "managers" meets "manager".
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word


def _possessive(token: str) -> bool:
    return token.lower().replace("’", "'").endswith("'s")
