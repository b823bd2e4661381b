"""The retention tier of a captured fact, from the time words of the user's sentence.

- L1, a fact about today: "today", "tonight", "this morning/afternoon/evening", "right now".
- L2, a fact about the days around now: "this week(end)", "these days", "lately", "for now",
  "at the moment", "tomorrow", a weekday ("by Friday", "till friday"), "until ...", "for the
  next few days/weeks"; or a passing state: ill, tired, travelling, visiting, on call, on
  leave, between jobs, recovering, looking for something.
- durable otherwise, and always for a habit ("every Friday afternoon", "on weekends",
  "usually"): a routine does not pass with the day it names.

A plan further off ("next month I start at Spotify", "next Monday") stays durable: the
short tiers expire after a day and a week, before such a fact even comes true. Dates are
UTC at the facade; this module only reads words.
"""

from __future__ import annotations

import re

# A habit is durable whatever day it names ("every Friday afternoon").
_HABIT = re.compile(r"\b(?:every|each|usually|always|never|often|normally|generally|typically)\b")
# Plural days and times are habits too ("I work nights"), unless a time word says otherwise
# ("this week I'm on nights").
_PLURAL_TIMES = re.compile(
    r"\b(?:weekends|weekdays|mornings|evenings|nights|mondays|tuesdays|wednesdays|thursdays|"
    r"fridays|saturdays|sundays)\b"
)
_L1 = re.compile(
    r"\b(?:today|tonight|tonite|this (?:morning|afternoon|evening)|right now|rn|"
    r"at this moment|today's|tonight's)\b"
)
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_L2 = re.compile(
    r"\b(?:this (?:week|weekend)|(?:all|the whole) week|these days|lately|for now|"
    r"for the time being|at the moment|atm|tomorrow|tomorrow's|tmrw|tmr|until|till|til|"
    r"(?:for|in|over) the (?:next|coming) (?:few |couple of |two |three )?(?:days|weeks)|"
    r"for (?:a|the|one|two|three|a few|a couple of|several) (?:few |couple of )?(?:days|weeks)|"
    rf"(?<!next ){_WEEKDAY}\b)"
)
_PASSING = re.compile(
    r"\b(?:sick|ill|unwell|(?:a|the)(?: \w+)? (?:cold|flu|fever)|flu|covid|hungover|"
    r"jet-?lagged|burn(?:t|ed) out|exhausted|tired|stressed|swamped|nervous|injured|recovering|"
    r"on (?:vacation|holiday|leave|call|sick leave|parental leave|a trip)|off work|"
    r"out sick|out of (?:the )?office|ooo|travel(?:l)?ing|visiting|staying (?:with|at|near|in)|"
    r"between jobs|time off|be back|be away|looking for|feeling|under the weather|"
    r"in the middle of|in (?:the )?hospital)\b"
)


def tier_of(sentence: str, context: str = "") -> str:
    """ "L1", "L2" or "durable" for the user's sentence (any case). `context` is text whose
    time words also hold for the sentence (see `Piece.context`), read when the sentence
    names no time itself."""
    low = sentence.lower().replace("’", "'")
    if _HABIT.search(low):
        return "durable"
    if _L1.search(low):
        return "L1"
    if _L2.search(low):
        return "L2"
    if _PLURAL_TIMES.search(low):
        return "durable"
    if context:
        inherited = tier_of(context)
        if inherited != "durable":
            return inherited
    return "L2" if _PASSING.search(low) else "durable"
