"""Judging one statement: a fact about the user to keep, or skipped with a reason.

The rules read the shape of a statement, in this order, and the first that decides wins:

1. No Latin letter: English rules cannot read it (a known limit), "not_a_fact". A line
   that reads as code (mostly symbols, or a keyword like `def` or `SELECT` first): "code".
2. Openers are read past: greetings, thanks, acknowledgements and discourse markers ("hey!
   so", "ok cool", "btw", "oh and"). Nothing left: "greeting", "thanks" or "not_a_fact".
   "Please remember that", "just so you know", "fyi" hand the rest over as a statement.
3. A question (a "?" at the end, or a question word or auxiliary first), a hypothetical
   ("if", "suppose", "imagine", "what if", "I'd ...", "I wish ...", and proposals: "we
   should ...", "we could ...") or an instruction (an imperative verb first, "please",
   "let's", "I want you to", "I need a ...") is skipped as such; "call me Sam" is the one
   order that is a fact.
4. A fact names the user: a first-person subject first ("I", "I'm", "we", "my sister",
   "our CI", after time words like "tonight" or "this week"), or, failing that, a verb
   first with the subject dropped ("switched to vim in May", "going to a wedding this
   weekend"), or "my", "me", "our" or "us" anywhere ("Daniel is my manager"), or a bare
   "Mum" or "Dad" first.
5. Even then, talk about the conversation is not a fact: a verb of talking or thinking
   right after the subject ("I see", "I think ...", "I meant ..."), a state of the talk
   ("I'm back", "I'm not sure", "I'm so excited"), "I have a question", a leave-taking
   ("I'm off to bed"), anything addressed to "you" or about replies, anything pointing at
   something in the chat ("I like it", "why this test fails", "I love that idea", "the
   code below", "attached"), and a report of trouble with the work at hand ("my function
   returns None", "the build keeps failing"). Those need the conversation to mean anything
   or are over when it is, and a memory read weeks later has no conversation.

Statements that name no one ("the weather is lovely", "water boils at 100 degrees") are
not captured: without a first-person word there is no telling a fact about the user's
world from a remark about the world.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memcore.capture import lexicon as lx

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
# Time words and discourse markers that may come before the subject ("tonight I'm ...").
_LEAD_INS = lx.words(
    "today tonight tomorrow yesterday now right this next last these those days day week "
    "weekend month year morning afternoon evening night lately recently currently so also "
    "then for the time being moment since because as and but anyway actually honestly "
    "still oh in at on rn"
)
_DROPPED_LEAD_INS = lx.words("since because as so and but also anyway")
_TIME_NOUNS = lx.words(
    "morning afternoon evening night week weekend month year time summer winter spring fall "
    "autumn semester quarter season weekday days weeks months years"
)
_DEICTIC = lx.words("this these those")
_POINTERS_AT_END = lx.words("it this that")
_SUBJECTS = lx.words("i i'm im i've ive i'll i'd we we're we've we'll")
_POSSESSIVE_SUBJECTS = lx.words("my our")
# Elsewhere than first, the user is named by an object or a possessive ("Daniel is my
# manager"); a later "I" is mostly talk ("that's not what I meant", "not sure I follow").
_FIRST_PERSON_ANYWHERE = lx.words("my our me us mine ours myself")
_SECOND_PERSON = lx.words("you your you're youre you've you'll you'd u ur yours yourself")
_I_AM = lx.words("i'm im")
# At most this many lead-in words before the subject.
MAX_LEAD_INS = 4
_TROUBLE = re.compile(lx.TROUBLE)
_CALL_ME = re.compile(r"^(?:you can |just |please )?call me\s+\S", re.IGNORECASE)


@dataclass(frozen=True)
class Verdict:
    """`core` is the statement to rewrite (openers read past) when it is kept; `reason`
    is why it was skipped otherwise."""

    core: str | None
    reason: str | None = None


def judge(statement: str) -> Verdict:
    """Keep `statement` as a fact (with its core) or skip it with a reason."""
    text = statement.replace("’", "'").replace("‘", "'").strip()
    if not _LATIN.search(text):
        return Verdict(None, "not_a_fact")
    if _looks_like_code(text):
        return Verdict(None, "code")
    rest, opener = _peel_openers(text)
    if not _LATIN.search(rest):
        return Verdict(None, opener or "not_a_fact")
    verdict = _judge_core(rest)
    if verdict.reason == "not_a_fact" and opener is not None:
        return Verdict(None, opener)
    return verdict


def _judge_core(text: str) -> Verdict:
    low = text.lower()
    words = _WORD.findall(low)
    if not words:
        return Verdict(None, "not_a_fact")
    if _has_phrase(low, lx.LEAVING_PHRASES):
        return Verdict(None, "greeting")
    text, low, words = _unwrap(text, low, words)
    if low.rstrip(" .!)\"'").endswith("?") or _opens_question(words):
        return Verdict(None, "question")
    if _CALL_ME.match(text):
        return Verdict(text)
    if _is_hypothetical(low, words):
        return Verdict(None, "hypothetical")
    if _is_instruction(low, words):
        return Verdict(None, "instruction")
    if low.rstrip().endswith(":"):
        return Verdict(None, "not_a_fact")  # it introduces what follows
    core = _fact_core(text, words)
    if core is None or _is_talk(core.lower()):
        return Verdict(None, "not_a_fact")
    return Verdict(core)


def _looks_like_code(text: str) -> bool:
    if _CODE_START.match(text) and any(ch in _CODE_SYMBOLS for ch in text):
        return True
    visible = [ch for ch in text if not ch.isspace()]
    symbols = sum(ch in _CODE_SYMBOLS for ch in visible)
    return len(visible) >= 4 and symbols / len(visible) > CODE_SYMBOL_SHARE


def _peel_openers(text: str) -> tuple[str, str | None]:
    """The text after its greetings, thanks and acknowledgements, and the strongest kind
    read past ("thanks" over "greeting" over a plain acknowledgement, None)."""
    rest = text
    kinds: set[str] = set()
    while True:
        low = rest.lower()
        kind, length = _opener_at(low)
        if kind is None:
            break
        kinds.add(kind)
        rest = rest[length:].lstrip(" ,.!;:-–—~)(")
    for kind in ("thanks", "greeting"):
        if kind in kinds:
            return rest, kind
    return rest, None


def _opener_at(low: str) -> tuple[str | None, int]:
    for kind, phrases in (
        ("thanks", lx.THANKS_PHRASES),
        ("greeting", lx.GREETING_PHRASES),
        ("ack", lx.ACK_PHRASES),
    ):
        for phrase in phrases:
            if _starts_with_word(low, phrase):
                return kind, len(phrase)
    match = re.match(r"[a-z'\-]+", low)
    if match is None:
        return None, 0
    word = match.group(0)
    if word in lx.THANKS:
        return "thanks", len(word)
    if word in lx.GREETINGS or re.fullmatch(r"he+y+|hi+|yo+|hel+o+", word):
        return "greeting", len(word)
    if word in lx.ACKS or re.fullmatch(r"(?:ha){2,}h?|lo+l|o+k+|hm+|a+h+|o+h+|u+g+h+", word):
        return "ack", len(word)
    return None, 0


def _starts_with_word(low: str, phrase: str) -> bool:
    return low.startswith(phrase) and (len(low) == len(phrase) or not low[len(phrase)].isalnum())


def _has_phrase(low: str, phrases: tuple[str, ...]) -> bool:
    return any(re.search(rf"\b{re.escape(p)}\b", low) for p in phrases)


def _unwrap(text: str, low: str, words: list[str]) -> tuple[str, str, list[str]]:
    """Read past "please remember that", "just so you know," and the like."""
    for wrapper in lx.FACT_WRAPPERS:
        if _starts_with_word(low, wrapper):
            rest = text[len(wrapper) :].lstrip(" ,:-–—")
            if _LATIN.search(rest):
                return rest, rest.lower(), _WORD.findall(rest.lower())
    return text, low, words


def _opens_question(words: list[str]) -> bool:
    first = words[0]
    if first not in lx.QUESTION_WORDS:
        return False
    if first in lx.AUX_OPENERS:
        return len(words) > 1 and words[1] in lx.QUESTION_AFTER_AUX
    return True


def _is_hypothetical(low: str, words: list[str]) -> bool:
    if any(_starts_with_word(low, opener) for opener in lx.HYPOTHETICAL_OPENERS):
        return True
    if re.search(r"\b(?:i wish|if i were|if we were|if i had)\b", low):
        return True
    # "I'd buy a boat", "we would": the conditional mood, unless it asks ("I'd like ...").
    subject = _subject_index(words)
    if subject is None:
        return False
    after = words[subject:]
    # "we should add caching", "we could try Redis": a proposal, not yet a fact.
    if len(after) > 1 and after[1] in ("should", "shouldn't", "shouldnt"):
        return True
    if after[0] == "we" and len(after) > 1 and after[1] in ("could", "might"):
        return True
    conditional = after[0] in ("i'd", "we'd") or (len(after) > 1 and after[1] == "would")
    return conditional and not _has_phrase(low, ("like", "love"))


def _is_instruction(low: str, words: list[str]) -> bool:
    if any(_starts_with_word(low, p) for p in lx.REQUEST_PHRASES):
        return True
    first = 0
    while first < len(words) - 1 and words[first] in ("please", "pls", "plz", "just", "now"):
        first += 1
    if words[0] in ("please", "pls", "plz", "kindly"):
        return True
    if words[first] in lx.IMPERATIVES:
        return True
    # "I want a story ...", "i need help with ...": asking for something now.
    subject = _subject_index(words)
    if subject is not None and subject + 2 < len(words) and words[subject] == "i":
        verb, obj = words[subject + 1], words[subject + 2]
        return verb in ("want", "need", "wanted", "needed") and obj in lx.REQUEST_OBJECTS
    return False


def _subject_index(words: list[str]) -> int | None:
    """Where a first-person subject stands after at most MAX_LEAD_INS lead-in words."""
    for index, word in enumerate(words[: MAX_LEAD_INS + 1]):
        if word in _SUBJECTS or word in _POSSESSIVE_SUBJECTS:
            return index
        following = words[index + 1] if index + 1 < len(words) else ""
        if word == "me" and following == "and":
            return index
        # Chat without apostrophes: "tonight were having friends over".
        if word == "were" and following.endswith("ing"):
            return index
        if word not in _LEAD_INS:
            return None
    return None


def _fact_core(text: str, words: list[str]) -> str | None:
    """The statement from its subject on (lead-ins like "since" or "so" dropped, time words
    kept), "I ..." put before a verb whose subject was dropped, or the statement itself when
    a first-person word stands elsewhere; None when nothing names the user."""
    subject = _subject_index(words)
    if subject is not None:
        drop = 0
        while drop < subject and words[drop] in _DROPPED_LEAD_INS:
            drop += 1
        core = _from_word(text, drop) if drop else text
        if words[subject] == "were":
            core = re.sub(r"\bwere\b", "we're", core, count=1, flags=re.IGNORECASE)
        return core
    dropped = _dropped_subject(words)
    if dropped is not None:
        return f"{dropped} {text[0].lower()}{text[1:]}"
    if len(words) >= 3 and any(w in _FIRST_PERSON_ANYWHERE for w in words):
        return text
    if len(words) >= 3 and re.sub(r"'s$", "", words[0]) in lx.BARE_KIN:
        return text
    return None


def _dropped_subject(words: list[str]) -> str | None:
    """ "I'm" for "going to my sister's wedding", "I" for "switched in January": chat drops
    the subject, and a verb in -ing or the past is not an order (an order is a bare verb)."""
    index = 0
    while index < len(words) - 1 and words[index] in lx.ADVERBS:
        index += 1
    verb = words[index]
    if len(words) - index < 3 or words[-1] in _POINTERS_AT_END:
        return None
    if verb.endswith("ing") and len(verb) > 4 and verb not in lx.NOT_ING_FORMS:
        return "I'm"
    if (verb.endswith("ed") and len(verb) > 4) or verb in lx.IRREGULAR_PAST:
        return "I"
    return None


def _from_word(text: str, index: int) -> str:
    """`text` from its index-th word on."""
    matches = list(_WORD.finditer(text.lower()))
    return text[matches[index].start() :] if index < len(matches) else text


def _is_talk(low: str) -> bool:
    """About the conversation rather than the user's life (rule 5 of the module)."""
    words = _WORD.findall(low)
    if any(w in _SECOND_PERSON or w in lx.CHAT_TOPICS for w in words):
        return True
    if words[-1] in lx.MESSAGE_POINTERS or _TROUBLE.search(low):
        return True
    if _points_at_chat(words):
        return True
    subject = _subject_index(words)
    if subject is None:
        return False
    index = subject + 1
    state = words[subject] in _I_AM
    if words[subject] == "i" and index < len(words) and words[index] in ("am", "was"):
        state, index = True, index + 1
    while index < len(words) and (
        words[index] in lx.ADVERBS or words[index] in lx.NEGATIONS or words[index] in lx.MODALS
    ):
        index += 1
    if index >= len(words):
        return False
    verb = words[index]
    if words[subject] in ("i", "i've", "ive") and verb in ("have", "got", "had"):
        return any(w in lx.TALK_NOUNS for w in words[index + 1 : index + 4])
    if words[subject] in ("i", "we") and verb in ("do", "don't", "dont", "didn't", "didnt"):
        verb = words[index + 1] if index + 1 < len(words) else verb
    return (state and verb in lx.CHAT_STATES) or (not state and verb in lx.CHAT_VERBS)


def _points_at_chat(words: list[str]) -> bool:
    """ "this test", "these errors", "I like it", "I love that idea": pointing at something
    in the conversation (a time word after "this" is no pointer: "this week"), or a
    statement about "that" ("that works for me", "that's not what I meant")."""
    if words[0] in ("that", "that's", "thats"):
        return True
    for index, word in enumerate(words):
        if word in _DEICTIC:
            following = words[index + 1] if index + 1 < len(words) else ""
            if following not in _TIME_NOUNS:
                return True
    if words[-1] in _POINTERS_AT_END:
        return True
    return len(words) >= 2 and words[-2] == "that"
