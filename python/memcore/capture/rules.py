"""Judging one statement: a fact about the user to keep, or skipped with a reason.

The rules read the shape of a statement, in this order, and the first that decides wins:

1. No Latin letter: English rules cannot read it (a known limit), "not_a_fact". A line
   that reads as code (mostly symbols, or a keyword like `def` or `SELECT` first): "code".
2. Openers are read past: greetings, thanks, acknowledgements and discourse markers ("hey!
   so", "ok cool", "btw"), and hedges before a first-person clause ("I guess you could
   say I'm ...", "I suppose I should mention ..."). Nothing left: "greeting", "thanks" or
   "not_a_fact". "Please remember that", "just so you know", "fyi" hand the rest over as
   a statement, and mark it as told on purpose (an anchor for a verbless one, below).
3. A question (a "?" at the end, or a question word or auxiliary first), a hypothetical
   ("if", "suppose", "imagine", "what if", "I'd ...", "I wish ...", and proposals: "we
   should ...", "we could ...") or an instruction (an imperative verb first, "please",
   "let's", "I want you to", "I need a ...") is skipped as such; "call me Sam" is the one
   order that is a fact, "I'd rather ..." a preference, "I'd love to ..." a wish, and a
   statement that ends in a verb of saying frames a quote cut out of it ("My friend
   said"). A fronted modifier is read as the clause it implies first (modifiers.py).
4. A fact names the user (fragments.py): a first-person subject, a subject chat dropped,
   a verbless predicate tied to the speaker, or "my", "me", "our" or "us" in a statement
   with a verb.
5. Even then, talk about the conversation is not a fact (talk.py).

Statements that name no one ("the weather is lovely", "water boils at 100 degrees") are
not captured: without a first-person word there is no telling a fact about the user's
world from a remark about the world.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memcore.capture import adverbials, fragments
from memcore.capture import lexicon as lx
from memcore.capture.modifiers import modifier_clause
from memcore.capture.talk import is_talk
from memcore.capture.tiers import names_a_time

_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")
_WORD = re.compile(r"[a-z0-9][a-z0-9'\-]*")
_CODE_START = re.compile(
    r"^\s*(?:def|class|function|fn|import|from\s+\S+\s+import|const|let|var|return|select|"
    r"insert|update\s+\S+\s+set|create\s+table|#include|public|private|async\s+def|"
    r"export|package|func)\b[^a-z]*[^\s]",
)
_CODE_SYMBOLS = frozenset("{}[]()<>;=$#\\/|^*&%~`@+")
# A statement that is mostly symbols is code (or a regex, a path, a formula).
CODE_SYMBOL_SHARE = 0.25
_CALL_ME = re.compile(
    r"^(?:from now on,? |going forward,? )?(?:you can |just |please )?call me\s+\S",
    re.IGNORECASE,
)
# "I guess you could say I'm ...", "I suppose I should mention ...": a hedge before a
# first-person clause (not before "I'll" / "I should" and the like, which are talk).
_HEDGE = re.compile(
    r"^(?:(?:i|we)\s+(?:guess|think|suppose|reckon|believe|'d say|would say|feel like)|"
    r"(?:i'm|im|i am)\s+(?:pretty |fairly |quite |almost )?(?:sure|certain))\s+"
    r"(?:that\s+)?(?:you could say\s+|you might say\s+)?"
    r"(?=(?:i'm|im|i've|ive|i am|my|our|we're|we've|i should mention|"
    r"the (?:problem|thing|issue|truth|reason) is|"
    r"(?:i|we)\s+(?!will\b|would\b|should\b|could\b|might\b|may\b|can\b|need\b|want\b)"
    r"[a-z]))",
)
# Said on purpose: what follows is information about the speaker, even without "I".
_INFORMING = lx.words("btw fyi ps")
_INFORMING_PHRASES = ("by the way", "just so you know", "for the record", "heads up")
# "Sorry, I was away", "sorry I got distracted": what follows an apology excuses the chat
# ("Sorry for my late answer, I was very busy" keeps its second clause: it is cut off).
_APOLOGY = re.compile(r"^(?:i'm |so |really )*sorry\b(?! for| about| to hear)")
# Someone else's opinion or words: "my friend thinks ...", "someone told me that ...".
_REPORTED = re.compile(
    r"^(?:(?:my|our)\s+(?:\w+\s+){0,2}?|someone |somebody |people |they |he |she )"
    r"(?:thinks|think|believes|believe|reckons|reckon|says|say|said|claims|argues|"
    r"told (?:me|us) that)\b"
)
_PREFERENCE = re.compile(r"^(?:i'd|i would|we'd|we would)\s+(?:rather|prefer)\s+(?!not\b)")
_WISH = re.compile(r"^(?:i'd|i would)\s+(?P<want>love|like)\s+to\s+(?P<verb>[a-z]+)")


@dataclass(frozen=True)
class Verdict:
    """`core` is the statement to rewrite (openers read past) when it is kept; `reason`
    is why it was skipped otherwise. `unowned` says the statement names no one (no
    subject, no first-person word; kept for a dropped subject or a verbless predicate, or
    skipped, but not as talk): a list's header may still make it the user's (lists.py)."""

    core: str | None
    reason: str | None = None
    unowned: bool = False


def judge(statement: str, *, context: str = "", listed: bool = False) -> Verdict:
    """Keep `statement` as a fact (with its core) or skip it with a reason. `context` is
    text whose time holds for the statement too (a "so" clause's cause, a list's header):
    its time word ties a verbless statement to the speaker as its own would. `listed`: the
    statement is an entry of a list or a table, where "Errors | Sentry" is no trouble."""
    text = statement.replace("’", "'").replace("‘", "'").strip()
    if not _LATIN.search(text):
        # A number names no one, but it may be a value a list's key owns ("Age: 32").
        return Verdict(None, "not_a_fact", any(ch.isdigit() for ch in text))
    if _looks_like_code(text):
        return Verdict(None, "code")
    rest, opener, told = _peel_openers(text)
    if not _LATIN.search(rest):
        return Verdict(None, opener or "not_a_fact")
    if _APOLOGY.match(text.lower()):
        return Verdict(None, "not_a_fact")  # "Sorry, I was away": excusing the chat
    verdict = _judge_core(rest, told, listed, names_a_time(context.lower()))
    if verdict.reason == "not_a_fact" and opener is not None:
        return Verdict(None, opener, verdict.unowned)
    return verdict


def _judge_core(text: str, told: bool, listed: bool, timed: bool) -> Verdict:
    """`told`: an opener said the statement is told to be known ("btw", "fyi"); `timed`:
    its context names a time."""
    low = text.lower()
    words = _WORD.findall(low)
    if not words:
        return Verdict(None, "not_a_fact")
    if _LEAVING.search(low) or _GREETING_CLAUSES.match(low):
        return Verdict(None, "greeting")
    text, unwrapped = _unwrap(text)
    told = told or unwrapped or _ends_informing(text.lower())
    text = _INFORMING_TAIL.sub("", text) or text
    # "u know im vegan rite?": a statement with a tag question asks nothing new.
    text = _TAG_QUESTION.sub("", text) or text
    low, words = text.lower(), _WORD.findall(text.lower())
    if not words:
        return Verdict(None, "not_a_fact")
    if low.rstrip(" .!)\"'").endswith("?") or _opens_question(words):
        return Verdict(None, "question")
    if _CALL_ME.match(text):
        return Verdict(text)
    clause = modifier_clause(text)
    if clause == "":
        return Verdict(None, "not_a_fact")
    if clause is not None:
        text, low, words = clause, clause.lower(), _WORD.findall(clause.lower())
        if not words:
            return Verdict(None, "not_a_fact")
    if words[-1] in lx.SPEECH_VERBS or words[-2:] == ["told", "me"]:
        return Verdict(None, "quote")  # "My friend said" + the quote cut out of it
    if _REPORTED.match(low):
        return Verdict(None, "not_a_fact")  # "My friend thinks AI will take all jobs"
    if not _is_wanted(low) and _is_hypothetical(low, words):
        return Verdict(None, "hypothetical")
    if not _is_wanted(low) and _is_instruction(low, words):
        return Verdict(None, "instruction", fragments.subject_index(words) is None)
    if low.rstrip().endswith(":"):
        return Verdict(None, "not_a_fact")  # it introduces what follows
    anchored = told or timed or names_a_time(low)
    core = fragments.fact_core(text, words, anchored=anchored, informed=told)
    if core is not None and not is_talk(core.lower(), trouble=not listed):
        return Verdict(core, None, not any(w in lx.FIRST_PERSON_WORDS for w in words))
    return Verdict(None, "not_a_fact", core is None and not is_talk(low, trouble=not listed))


def _looks_like_code(text: str) -> bool:
    if _CODE_START.match(text) and any(ch in _CODE_SYMBOLS for ch in text):
        return True
    visible = [ch for ch in text if not ch.isspace()]
    symbols = sum(ch in _CODE_SYMBOLS for ch in visible)
    return len(visible) >= 4 and symbols / len(visible) > CODE_SYMBOL_SHARE


def _peel_openers(text: str) -> tuple[str, str | None, bool]:
    """The text after its greetings, thanks, acknowledgements and hedges; the strongest
    kind read past ("thanks" over "greeting" over a plain acknowledgement, None); and
    whether one of them said the rest is told on purpose ("btw", "fyi")."""
    rest = text
    kinds: set[str] = set()
    informing = False
    while True:
        low = rest.lower()
        kind, length = _opener_at(low)
        if kind is None:
            hedge = _HEDGE.match(low)
            if hedge is None:
                break
            kind, length = "ack", hedge.end()
        opener = low[:length]
        informing = informing or opener in _INFORMING or opener in _INFORMING_PHRASES
        kinds.add(kind)
        rest = rest[length:].lstrip(" ,.!;:-–—~)(")
    for kind in ("thanks", "greeting"):
        if kind in kinds:
            return rest, kind, informing
    return rest, None, informing


def _opener_at(low: str) -> tuple[str | None, int]:
    for kind, phrases in _OPENER_PHRASES:
        match = phrases.match(low)
        if match:
            return kind, match.end()
    match = re.match(r"[a-z'\-]+", low)
    if match is None:
        return None, 0
    word = match.group(0)
    if word in lx.THANKS:
        return "thanks", len(word)
    if word in lx.GREETINGS or re.fullmatch(r"he+y+|hi+|yo+|hel+o+", word):
        return "greeting", len(word)
    if word == "no" and re.match(r"no (?:longer|more)\b", low):
        return None, 0  # "no longer using vim" is no "no"
    if word in lx.ACKS or re.fullmatch(
        r"(?:ha){2,}h?|lo+l|o+k+|hm+|a+h+|o+h+|u+g+h+|u+[mh]+|e+r+m*", word
    ):
        return "ack", len(word)
    return None, 0


def _opening(phrases: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern for "the text opens with one of `phrases` as whole words", longest
    first (a loop over the phrases was most of the time spent per message)."""
    ordered = sorted(phrases, key=len, reverse=True)
    return re.compile("(?:" + "|".join(map(re.escape, ordered)) + ")(?![a-z0-9])")


_OPENER_PHRASES = (
    ("thanks", _opening(lx.THANKS_PHRASES)),
    ("greeting", _opening(lx.GREETING_PHRASES)),
    ("ack", _opening(lx.ACK_PHRASES)),
)
_WRAPPERS = _opening(lx.FACT_WRAPPERS)
_HYPOTHETICAL_OPENERS = _opening(lx.HYPOTHETICAL_OPENERS)
_REQUESTS = _opening(lx.REQUEST_PHRASES)
_GREETING_CLAUSES = _opening(lx.GREETING_CLAUSES)
_LEAVING = re.compile(r"\b(?:" + "|".join(map(re.escape, lx.LEAVING_PHRASES)) + r")\b")


def _unwrap(text: str) -> tuple[str, bool]:
    """Read past "please remember that", "just so you know," and the like; whether one
    was read past."""
    wrapper = _WRAPPERS.match(text.lower())
    if wrapper:
        rest = text[wrapper.end() :].lstrip(" ,:-–—")
        if _LATIN.search(rest):
            return rest, True
    return text, False


# "lactose intolerant fyi", "my gf's name is ana btw", "I'm Tomasz, by the way".
_INFORMING_TAIL = re.compile(r"[\s,]+(?:fyi|btw|by the way|just so you know)\W*$", re.IGNORECASE)


_TAG_QUESTION = re.compile(
    r"(?<=\w)[\s,]+(?:right|rite|yeah|innit|correct|remember)\s*\?+\s*$", re.IGNORECASE
)


def _ends_informing(low: str) -> bool:
    return _INFORMING_TAIL.search(low) is not None


def _opens_question(words: list[str]) -> bool:
    first = words[0]
    if first not in lx.QUESTION_WORDS:
        return False
    if first in ("when", "whenever") and adverbials.lead_end(words) is not None:
        return False  # "When I was a kid I lived in Singapore": a time, then the statement
    if first in lx.AUX_OPENERS:
        return len(words) > 1 and words[1] in lx.QUESTION_AFTER_AUX
    return True


def _is_wanted(low: str) -> bool:
    """ "I'd rather work late", "I'd love to visit Japan", "I'd like to start investing": a
    preference or a wish of the user's, not a conditional or a request (unless what is
    wished is talk: "I'd love to know ...")."""
    if _PREFERENCE.match(low):
        return True
    wish = _WISH.match(low)
    if wish is None:
        return False
    if wish.group("want") == "like":
        # "I'd like to start investing" (a change in the user's life), not "I'd like to
        # book a table" (a task for the assistant).
        return wish.group("verb") in lx.LIFE_CHANGE_VERBS
    return wish.group("verb") not in lx.CHAT_VERBS | lx.REQUEST_VERBS


def _is_hypothetical(low: str, words: list[str]) -> bool:
    if _HYPOTHETICAL_OPENERS.match(low):
        return True
    if re.search(r"\b(?:i wish|if i were|if we were|if i had|it'd|it would|that'd)\b", low):
        return True
    # "I'd buy a boat", "we would": the conditional mood, unless it asks ("I'd like ...").
    subject = fragments.subject_index(words)
    if subject is None:
        return False
    after = words[subject:]
    # "we should add caching", "we could try Redis": a proposal, not yet a fact.
    if len(after) > 1 and after[1] in ("should", "shouldn't", "shouldnt"):
        return True
    if after[0] == "we" and len(after) > 1 and after[1] in ("could", "might"):
        return True
    # "I might move", "I may as well learn French": maybe, not yet a fact.
    if len(after) > 1 and after[1] in ("might", "may"):
        return True
    conditional = after[0] in ("i'd", "we'd") or (len(after) > 1 and after[1] == "would")
    return conditional and re.search(r"\b(?:like|love)\b", low) is None


def _is_instruction(low: str, words: list[str]) -> bool:
    if fragments.dropped_subject(words) == "I" and words[0] in ("don't", "dont", "never"):
        return False  # "dont have a car": a negated habit, not an order
    if _REQUESTS.match(low):
        return True
    first = 0
    while first < len(words) - 1 and words[first] in ("please", "pls", "plz", "just", "now"):
        first += 1
    if words[0] in ("please", "pls", "plz", "kindly"):
        return True
    if words[first] in lx.IMPERATIVES:
        return True
    # "I want a story ...", "i need help with ...": asking for something now.
    subject = fragments.subject_index(words)
    if subject is not None and subject + 2 < len(words) and words[subject] == "i":
        verb, obj = words[subject + 1], words[subject + 2]
        return verb in ("want", "need", "wanted", "needed") and obj in lx.REQUEST_OBJECTS
    return False
