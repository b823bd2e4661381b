"""Fronted modifiers: a phrase before the main clause describes its subject, the user.

"As a nurse, I find these apps useless", "Being left-handed, I smudge ink", "Having grown
up in Lagos, I find these winters brutal", "Funny enough, for a guy who works at a
brewery, I barely drink". The splitter (clauses.py) cuts the modifier off at its comma;
read alone, it names no one, yet it says something of whoever the main clause is about,
and the user speaks in the first person. So each is read as the clause it implies:
"I'm a nurse", "I'm left-handed", "I've grown up in Lagos", "I work at a brewery".

"Given that", "seeing as" and "now that" introduce a clause that is judged as it is
("Given that I'm type 1 diabetic"). "Unlike ...", "despite ..." without a verb of their own
state nothing ("Unlike most of my colleagues"). "As a result", "as a rule" and the like
are idioms, not roles (`AS_A_IDIOMS`).
"""

from __future__ import annotations

import re

from memcore.capture import grammar
from memcore.capture import lexicon as lx

_WORD = re.compile(r"[a-z0-9][a-z0-9'\-]*")
_SUBORDINATORS = re.compile(
    r"^(?:given that|given|seeing as|seeing that|now that|considering that|considering|"
    r"what with)\s+",
    re.IGNORECASE,
)
_WHO = re.compile(
    r"^(?:speaking\s+)?(?:as|for)\s+(?:someone|somebody|one|a|an)(?:\s+\w+){0,2}?\s+who"
    r"(?P<verb>'s been|'s|\s+\w+)(?P<rest>.*)$",
    re.IGNORECASE,
)
_AS_A = re.compile(r"^(?:speaking\s+)?as\s+(?P<np>(?:an?|the)\s+.+)$", re.IGNORECASE)
_BEING = re.compile(r"^(?:me\s+)?being\s+(?P<rest>\S.*)$", re.IGNORECASE)
_HAVING = re.compile(r"^having\s+(?P<verb>\w+)(?P<rest>.*)$", re.IGNORECASE)
_CONTRAST = re.compile(
    r"^(?:unlike|despite|besides|apart from|compared to|compared with|other than|"
    r"in spite of)\b",
    re.IGNORECASE,
)


def modifier_clause(text: str) -> str | None:
    """A fronted modifier as the first-person clause it implies ("As a nurse" -> "I'm a
    nurse", "for a guy who works at a brewery" -> "I work at a brewery"), the clause a
    subordinator introduces ("Given that I'm diabetic" -> "I'm diabetic"), "" for a
    modifier that states nothing ("Unlike most of my colleagues"), or None when `text`
    opens with no modifier."""
    stripped = text.strip()
    low = stripped.lower()
    sub = _SUBORDINATORS.match(stripped)
    if sub:
        return stripped[sub.end() :]
    who = _WHO.match(stripped)
    if who:
        verb = who.group("verb").strip().lower()
        rest = who.group("rest")
        if verb == "'s been":
            return f"I've been{rest}"
        if verb in ("'s", "is"):
            return f"I'm{rest}"
        return f"I {_base_form(verb)}{rest}"
    as_a = _AS_A.match(stripped)
    if as_a:
        np = as_a.group("np")
        noun = _WORD.findall(np.lower())[1:2]  # "as a result": the word after the article
        return "" if noun and noun[0] in lx.AS_A_IDIOMS else f"I'm {np}"
    being = _BEING.match(stripped)
    if being and not any(low.startswith(p) for p in ("being honest", "being fair")):
        return f"I'm {being.group('rest')}"
    having = _HAVING.match(stripped)
    if having and grammar.is_past(having.group("verb").lower()):
        return f"I've {having.group('verb')}{having.group('rest')}"
    if _CONTRAST.match(stripped) and not grammar.has_finite_verb(_WORD.findall(low)):
        return ""
    return None


def _base_form(verb: str) -> str:
    """ "works" -> "work", "teaches" -> "teach", "flies" -> "fly", "has" -> "have"."""
    irregular = {"has": "have", "does": "do", "goes": "go", "was": "was"}
    if verb in irregular:
        return irregular[verb]
    if verb.endswith("ies") and len(verb) > 4:
        return verb[:-3] + "y"
    if verb.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
        return verb[:-2]
    if verb.endswith("s") and not verb.endswith("ss"):
        return verb[:-1]
    return verb
