"""Where one sentence holds several statements: splitting it into clauses.

A sentence is split where a clause of its own starts, so that a fact, an order and a
question in one sentence part ways, and each fact is one memory:

- before a subject of its own after "and", "but", "so", "because", "while" or a comma:
  "..., I hate tabs", "... and my husband works nights", "..., the topic is robotics", "...
  and everyone loves it" (not "my wife and I are", "me and my gf": a shared subject; not
  "... because the team knew HCL": a reason stays with what it explains), also past a
  short adverbial ("... and then on my days off I'm exhausted");
- before an order after "so" ("... so keep it short", "... so prices in GBP please"), and
  before "don't" or "pls" right after a time word ("hungover today dont judge");
- before an aside about the chat ("..., if that matters", "..., in case that matters");
- after a comma, before a verb whose subject chat dropped ("no longer using vim, switched
  to helix", "started at shopify, still onboarding", "i'm at work rn, will reply later");
- after a fronted modifier, at its comma ("As a nurse, I ...", "Being left-handed, I
  ..."), or before the subject ("As a Muslim I don't drink");
- before a question tacked on with a comma ("I live in Denver, any good trails nearby?").

A conditional keeps its two halves together ("If I were rich, I'd buy a boat"), unless its
condition is about the listener or the chat ("If you're wondering why ..., I'm typing
one-handed": the second half is a statement).

Each clause comes with the text whose time it takes: the one it follows from by "so" (a
consequence passes with its cause), or the one it goes on from without a subject, when
what goes on is a state ("I'm knackered this week, been pulling late nights").
"""

from __future__ import annotations

import re

from memcore.capture import adverbials, grammar
from memcore.capture import lexicon as lx
from memcore.capture.tiers import names_a_time

# "If I were rich, I would buy a boat": a conditional's second half belongs to it.
_CONDITIONAL = re.compile(
    r"^\s*(?:if|suppose|supposing|assuming|unless|imagine|what if|let's say|lets say)\b"
    r"(?!\s+(?:you|you're|youre|u)\b|\s+(?:it|that|this)\s+(?:helps|matters|changes|makes)\b)",
    re.IGNORECASE,
)
# A fronted modifier: "As a nurse, ...", "Being left-handed, ...", "Given that I'm ...,",
# "With my mum in hospital, ...", "Unlike my colleagues, ...". It ends at its comma.
_INTRO = re.compile(
    r"^\s*(?:as|being|having|speaking as|coming from|me being|given that|seeing as|"
    r"seeing that|now that|what with|with|unlike|for a|for someone|despite)\b",
    re.IGNORECASE,
)
# "As a Muslim I don't drink": without a comma, the modifier ends before the subject.
_AS_A_BEFORE_SUBJECT = re.compile(
    r"^(\s*as an?\s+[^,]{1,40}?)\s+(?=(?:i|i'm|im|i've|we|we're)\b)", re.IGNORECASE
)
_QUESTION_TAIL = re.compile(
    r",\s+(?=(?:what|how|why|where|when|who|which|any|can|could|would|should|do|does|is|"
    r"are|will)\b[^.!?]*\?\s*$)",
    re.IGNORECASE,
)
_TOKEN = re.compile(r"\S+")
_PROSE_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]{2,}")
_JOINERS = lx.words("and but so because cause cuz while whereas")
_ADDING = lx.words("and but so")
_REASONS = lx.words("because cause cuz")
FIRST_PERSON = lx.words("i i'm im i've ive i'll i'd we we're we've we'll")
# After a comma a new subject may be any pronoun ("..., it keeps timing out").
_COMMA_SUBJECTS = lx.words(
    "i i'm im i've ive i'll we we're we've it it's he he's she she's they they're"
)
_CLAUSE_TIME = lx.words("today tonight tomorrow now then yesterday lately")
_ADVERBIAL_OPENERS = lx.words("on in at after before during when once")
# An adverbial between "and" and a new subject is at most this many words.
MAX_ADVERBIAL_WORDS = 5
_ORDER_OPENERS = lx.words("please pls plz let's lets just don't dont no")
_SUBJECTLESS_ADVERBS = lx.words("still now then just finally also already recently")
_FUTURE_WITHOUT_SUBJECT = lx.words("will gonna can't cant won't wont")
_PLEASE = lx.words("please pls plz")
_NOT_NOUNS = lx.BARE_KIN | lx.words("that it he she there here what who where how")
# An order cannot continue a statement: "hungover today dont judge" is two.
_ORDER_AFTER_TIME = lx.words("don't dont pls please plz")
_APOLOGY = (["sorry"], ["so", "sorry"], ["i'm", "sorry"])


def split_clauses(sentence: str) -> list[tuple[str, str]]:
    """The clauses of `sentence`, each with the text whose time it takes (or "")."""
    if _CONDITIONAL.match(sentence):
        return [(sentence, "")]
    intro, sentence = _fronted_modifier(sentence)
    clauses: list[tuple[str, str]] = [(intro, "")] if intro else []
    for part in _QUESTION_TAIL.split(sentence):
        clauses.extend(_split_joined(part))
    return clauses


def remarks(clause: str) -> list[str]:
    """Terse chat strings remarks together with commas: a verbless clause that names a
    time is cut at its commas ("sick af this week, slow replies"), and a verbless remark
    with a time after a clause without a subject is cut off it ("cant talk long, at my
    kids recital tonight"). A verbless clause without a time is a list ("me, my partner,
    and our kid"), and stays whole."""
    if "," not in clause or not names_a_time(clause.lower()):
        return [clause]
    parts = clause.split(",")
    if not all(_PROSE_WORD.search(part) for part in parts):
        return [clause]  # "{8,}": a number, a regex, not a list of remarks
    if not grammar.has_finite_verb(grammar.words_of(clause)):
        return parts
    last, head = parts[-1], ",".join(parts[:-1])
    if grammar.has_finite_verb(grammar.words_of(last)) or not names_a_time(last.lower()):
        return [clause]
    if grammar.words_of(head)[:1] and grammar.words_of(head)[0] in FIRST_PERSON:
        return [clause]  # "I'll be offline this afternoon, back tomorrow": one subject
    return [head, last]


def _fronted_modifier(sentence: str) -> tuple[str, str]:
    """A fronted modifier and the rest ("Being left-handed" / "I always smudge ink"), or
    ("", sentence) when the sentence opens with none."""
    if not _INTRO.match(sentence):
        return "", sentence
    match = _AS_A_BEFORE_SUBJECT.match(sentence)
    if match:
        return match.group(1), sentence[match.end() :]
    comma = sentence.find(",")
    if comma > 0:
        return sentence[:comma], sentence[comma + 1 :]
    return "", sentence


def _split_joined(text: str) -> list[tuple[str, str]]:
    """Split `text` where a new clause starts (module docstring)."""
    tokens = list(_TOKEN.finditer(text))
    words = [grammar.bare(t.group(0)) for t in tokens]
    out: list[tuple[str, str]] = []
    start = 0  # character offset where the current clause starts
    first = 0  # its first token
    cause = ""
    for index in range(1, len(tokens)):
        comma = tokens[index - 1].group(0).endswith(",")
        joiner = words[index] if words[index] in _JOINERS else None
        aside = words[index] in _ORDER_AFTER_TIME and words[index - 1] in lx.TIME_WORDS
        # "i'm 6'2 and 85kg if that matters": an aside about the chat, cut off.
        aside = aside or (words[index] == "if" and words[index + 1 : index + 2] == ["that"])
        if not comma and joiner is None and not aside:
            continue
        begin = index + 1 if joiner else index
        if begin >= len(words):
            continue
        left = words[first:index]
        if comma and joiner is None and adverbials.is_lead(left):
            continue  # "This morning, I ran 5k": the adverbial is the clause's own time
        if not aside and not _clause_start(words, begin, joiner, comma=comma, left=left):
            continue
        clause = text[start : tokens[index].start()]
        out.append((clause, cause))
        continues = joiner is None and _subjectless(words, begin, ongoing=True)
        cause = clause if joiner == "so" or continues else ""
        start = tokens[begin].start()
        first = begin
    out.append((text[start:], cause))
    return out


def _clause_start(
    words: list[str], begin: int, joiner: str | None, *, comma: bool, left: list[str]
) -> bool:
    """Does a clause of its own start at words[begin], after a comma and/or `joiner`?
    `left` is the clause so far."""
    if left in _APOLOGY:
        return False  # "Sorry, I was away": the apology and its excuse stay together
    if joiner is None:
        return _after_comma(words, begin)
    if comma and joiner == "so":
        return True  # "..., so keep it short", "..., so I'm staying home"
    if joiner == "so" and left and left[-1] in lx.TIME_WORDS:
        return True  # "gym tonight so offline after 7": a time word ends its clause
    subject = begin
    if joiner in _ADDING and words[begin] not in FIRST_PERSON:
        subject = _subject_after_adverbial(words, begin)  # "... so today I finish early"
    head = words[subject] if subject < len(words) else ""
    after = words[subject + 1] if subject + 1 < len(words) else ""
    if head in FIRST_PERSON:
        # "my husband and I are" / "me and my gf": a shared subject, not a new clause.
        return after not in ("are", "were") and not _noun_phrase(left)
    if head in ("my", "our") and joiner not in ("and",):
        return True  # "... but my knee has been acting up", "... while my colleague is"
    if head in lx.SUBJECT_DETERMINERS and joiner not in _REASONS:
        if joiner == "and" and _noun_phrase(left):
            return False  # "me and my girlfriend are moving": one subject
        return grammar.finite_verb_after(words, subject) is not None
    if joiner in _ADDING and head in lx.INDEFINITE_SUBJECTS:
        return True  # "... and everyone loves it"
    if joiner in _ADDING and head not in lx.NOUN_OPENERS and after in lx.AUXILIARIES:
        # "... and Sara is a nurse": a bare noun with its verb right after it (an "-s"
        # word there is as often a noun: "small functions and early returns over ...").
        return True
    if joiner == "so":
        # "... so keep it short", "... so prices in GBP please": an order follows.
        return head in lx.IMPERATIVES or head in _ORDER_OPENERS or words[-1] in _PLEASE
    return False


def _after_comma(words: list[str], begin: int) -> bool:
    """After a comma alone: a pronoun subject, an aside, a noun and its "'s", or a verb
    whose subject was dropped."""
    word = words[begin]
    after = words[begin + 1] if begin + 1 < len(words) else ""
    if word in _COMMA_SUBJECTS:
        return after not in ("are", "were")
    if word in ("if", "unless") or words[begin : begin + 2] == ["in", "case"]:
        return True  # "..., in case that matters", "..., if that changes anything"
    if word in lx.SUBJECT_DETERMINERS:
        return grammar.finite_verb_after(words, begin) is not None  # "..., my machine is"
    if word.endswith("'s") and word[:-2] not in _NOT_NOUNS:
        # "..., flight's delayed two hours": a noun and its "is".
        return grammar.is_past(after) or grammar.is_ing(after) or after in lx.ADVERBS
    return _subjectless(words, begin)


def _subject_after_adverbial(words: list[str], begin: int) -> int:
    """Where a first-person subject stands after a short adverbial that opens a clause
    ("and then on my days off I'm exhausted", "so today I finish early"), or `begin`."""
    for index in range(begin, min(begin + MAX_ADVERBIAL_WORDS + 1, len(words))):
        if words[index] in FIRST_PERSON:
            between = words[begin:index]
            opens = between[0] in _CLAUSE_TIME or between[0] in _ADVERBIAL_OPENERS
            # "... and honestly I'm burnt out": discourse adverbs alone before the subject.
            opens = opens or all(w in lx.ADVERBS or w in lx.CHAT_FILLERS for w in between)
            return index if opens and not grammar.has_finite_verb(between) else begin
    return begin


def _subjectless(words: list[str], begin: int, *, ongoing: bool = False) -> bool:
    """ "..., switched to helix", "..., still onboarding": after a comma, a past verb (or
    an adverb and an -ing form, or "will") starts a clause whose subject chat dropped.
    With `ongoing`, only a state that goes on ("been pulling late nights", "still
    onboarding"): a past event ("finished my thesis") is not of the time before."""
    index = begin
    adverb = words[index] in _SUBJECTLESS_ADVERBS
    if adverb:
        index += 1
    if index >= len(words):
        return False
    verb = words[index]
    if ongoing:
        return verb == "been" or (adverb and grammar.is_ing(verb))
    if verb in _FUTURE_WITHOUT_SUBJECT:
        return index + 1 < len(words)  # "i'm at work rn, will reply later"
    if grammar.is_past(verb):
        return len(words) - index >= 3
    return adverb and grammar.is_ing(verb)


def _noun_phrase(left: list[str]) -> bool:
    """A lone word, or a few words without a pronoun: "me and my gf", "my wife and I"."""
    if len(left) < 2:
        return True
    return len(left) <= lx.COMPOUND_SUBJECT_WORDS and not any(w in lx.PRONOUNS for w in left)
