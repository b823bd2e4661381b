"""Word shapes the splitter and the rules share: is this word a finite verb, a past tense,
an -ing form; does a clause start here ("my husband works ...", "the boy is ...")?

No tagger: English marks a finite verb well enough for chat by a closed class (the
auxiliaries and copulas), the past "-ed" and the irregular pasts, and an "-s" verb right
after a short noun phrase. The words are lowercase with straight apostrophes.
"""

from __future__ import annotations

import re

from memcore.capture import lexicon as lx

# A subject's noun phrase is at most this many words before its verb ("my older brother's
# wife is ..."); longer, and the "verb" found is more likely a noun of a list.
NOUN_PHRASE_WORDS = 4
# A subject pronoun comes with its verb ("I love Thai food": "love" has no mark of its own).
_SUBJECT_PRONOUNS = lx.words("i im ive we you he she they")
# "it's", "that's", "I'm", "we're", "they've", "she'll": a verb in a contraction.
_CONTRACTED = re.compile(
    r"^(?:it|that|there|here|what|who|he|she|i|we|you|they)'(?:s|m|re|ve|ll|d)$"
)


def is_past(word: str) -> bool:
    """A past tense or participle by its shape ("moved", "grew"; not "need", "bed")."""
    if word in lx.IRREGULAR_PAST or word in lx.PARTICIPLES:
        return True
    if len(word) < 4 or not word.endswith("ed"):
        return False
    return not word.endswith("eed") or word in lx.PAST_EED


def is_ing(word: str) -> bool:
    """An -ing form of a verb ("moving"; not "morning", "thing", "bring")."""
    return word.endswith("ing") and len(word) > 4 and word not in lx.NOT_ING_FORMS


def finite_verb_after(words: list[str], start: int) -> int | None:
    """Where the verb of a noun-phrase subject starting at `start` stands ("my husband
    works nights", "the boy is going"), or None when no verb follows within
    NOUN_PHRASE_WORDS words. An "-s" or "-ed" word counts only after a word that is no
    determiner and before another word ("my parents' house" has none; "of my colleagues"
    ends there)."""
    end = min(len(words), start + NOUN_PHRASE_WORDS + 1)
    for index in range(start + 1, end):
        word, before = words[index], words[index - 1]
        if word in lx.AUXILIARIES:
            return index
        if before in lx.NOUN_OPENERS or before.endswith("'s") or index + 1 >= len(words):
            continue
        if is_past(word) or (word.endswith("s") and not word.endswith(("ss", "'s", "us"))):
            return index
    return None


def has_finite_verb(words: list[str]) -> bool:
    """Does the statement hold a finite verb anywhere (a copula, an auxiliary, a subject
    pronoun, a past, or an "-s" verb between a noun and what follows it)? A verbless
    statement is a phrase: "unlike my colleagues", "gym tonight", "slow replies"."""
    return any(
        w in lx.AUXILIARIES
        or w in _SUBJECT_PRONOUNS
        or _CONTRACTED.search(w) is not None
        or is_past(w)
        or (0 < i < len(words) - 1 and _s_verb(words, i))
        for i, w in enumerate(words)
    )


def _s_verb(words: list[str], index: int) -> bool:
    word, before = words[index], words[index - 1]
    if not word.endswith("s") or word.endswith(("ss", "'s", "us", "is")):
        return False
    if index + 1 < len(words) and words[index + 1] in lx.CHAT_FILLERS:
        return False  # "horror movies tbh": nothing follows but a filler
    return before not in lx.NOUN_OPENERS and not before.endswith("'s") and before.isalpha()


def bare(token: str) -> str:
    """A token as a word: lowercase, straight apostrophes, no punctuation around it."""
    return token.lower().replace("’", "'").strip(",.!?;:\"'()[]*")


def words_of(text: str) -> list[str]:
    """The words of `text`, bare."""
    return [w for w in (bare(t) for t in text.split()) if w]
