"""The retention tier of a captured fact, from the time words of the user's sentence.

- L1, a fact about today: "today", "tonight", "this morning/afternoon/evening", "right now",
  "since morning", "last night"; or a clock time with a plan or an appointment ("I have a
  meeting at 3pm", "gonna be at the dentist at 2": no day named is today).
- L2, a fact about the days around now: "this week(end)", "these days", "lately", "for now",
  "at the moment", "tomorrow", "until ...", "for the next few days/weeks", a weekday ("by
  Friday", "till friday"); or a passing state: ill, tired, travelling, visiting, on call,
  on leave, between jobs, recovering, looking for something.
- durable otherwise, and always for a habit ("every Friday afternoon", "usually"), and for
  plural times unless an explicit time word says otherwise ("on weekends", "up at 5 most
  days", "yoga on Tuesday and Thursday evenings"): a routine does not pass with the day it
  names.

A plan further off ("next month I start at Spotify", "next Monday", "my parents are
visiting next month") stays durable: the short tiers expire after a day and a week, before
such a fact even comes true.

A sentence without a time of its own may take one from the message (extract.py): the
clause it follows from by "so" or a dash, the header it stands under, a remark that frames
the message ("Long day.", "This week is chaos"), or, for a passing state, the fact before
it ("Today I'm presenting. I'm pretty nervous."). Dates are UTC at the facade; this module
only reads words.
"""

from __future__ import annotations

import re

from memcore.capture import grammar

_RATE = re.compile(
    r"(?:/|\bper\s+|\ba\s+|\bevery\s+|\beach\s+)(?:day|week|weekend|night|morning)\b"
)
# A remark that sets the time of a message ("Long day.") is at most this many words.
FRAME_WORDS = 6
_FRAME_WORD = re.compile(r"[a-z0-9][a-z0-9'\-]*")
_TIME_SUBJECT = re.compile(
    r"^(today|tonight|this (?:week|weekend|morning|afternoon|evening))\s+"
    r"(?:is|was|has been|'s been|'s|feels|has)\b"
)

# A habit is durable whatever day it names ("every Friday afternoon").
_HABIT = re.compile(r"\b(?:every|each|usually|always|never|often|normally|generally|typically)\b")
# Plural days and times are habits too ("I work nights", "up at 5 most days"), unless a
# time word says otherwise ("this week I'm on nights").
_PLURAL_TIMES = re.compile(
    r"\b(?:weekends|weekdays|mornings|evenings|nights|mondays|tuesdays|wednesdays|thursdays|"
    r"fridays|saturdays|sundays|most days|days off)\b"
)
_L1 = re.compile(
    r"\b(?:today|tonight|tonite|this (?:morning|afternoon|evening)|right now|rn|"
    r"at this moment|today's|tonight's|since (?:this )?morning|last night|right about now|"
    r"overnight)\b"
)
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_L2 = re.compile(
    r"\b(?:this (?:week|weekend|wk|wknd)|(?:all|the whole) week|(?:these|this) days|lately|"
    r"for now|"
    r"for the time being|at the moment|atm|tomorrow|tomorrow's|tmrw|tmr|until|till|til|"
    r"(?:for|in|over) the (?:next|coming) (?:few |couple of |two |three )?(?:days|weeks)|"
    r"for (?:a|the|one|two|three|a few|a couple of|several) (?:few |couple of )?(?:days|weeks)|"
    rf"(?<!next ){_WEEKDAY}\b)"
)
# A plan further off stays durable even when it is a passing state ("my parents are
# visiting next month"): the short tiers would expire before it comes true.
_FURTHER_OFF = re.compile(
    r"\b(?:next (?:week|weekend|month|year|summer|winter|spring|autumn|fall|term|semester)|"
    r"in (?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december))\b"
)
# A clock time with a plan or an appointment ("I have a meeting at 3pm", "gonna be at the
# dentist at 2") is today's; with a habit ("I get up at 6") it is not, and a habit never
# gets here.
_CLOCK = re.compile(
    r"\b(?:at|by|after|before|from|until|till)\s+(?:\d{1,2}(?::\d\d)?\s*(?:am|pm)?|"
    r"half (?:past )?\w+|quarter (?:past|to) \w+|noon|midday)(?![\w:])"
)
_PLAN = re.compile(
    r"\b(?:gonna|going to|i'll|we'll|will|be at|(?:have|got|'ve got) (?:a|an)|"
    r"(?:i'm|im|i am|we're) \w+ing)\b"
)
_PASSING = re.compile(
    r"\b(?:sick|ill|unwell|(?:a|the)(?: \w+)? (?:cold|flu|fever)|flu|covid|hungover|"
    r"jet-?lagged|burn(?:t|ed) out|exhausted|tired|wiped|knackered|shattered|drained|worn out|"
    r"stressed|swamped|nervous|injured|recovering|"
    r"on (?:vacation|holiday|leave|call|a trip|\w+ leave)|off work|"
    r"out sick|out of (?:the )?office|ooo|travel(?:l)?ing|visiting|staying (?:with|at|near|in)|"
    r"between jobs|time off|be back|be away|looking for|feeling|under the weather|"
    r"in the middle of|in (?:the )?hospital)\b"
)


def names_a_time(low: str) -> bool:
    """Does the (lowercase) statement name a time of the user's life: today, this week,
    until Sunday, a habit? Such a word ties a verbless phrase to the speaker ("gym
    tonight"). A weekday alone does not: "Happy Friday", "classic Monday"."""
    if any(p.search(low) for p in (_L1, _HABIT, _PLURAL_TIMES)):
        return True
    return any(not re.fullmatch(_WEEKDAY, m.group(0)) for m in _L2.finditer(low))


# The time words a fact can borrow from the statement it depends on.
_BORROWED = re.compile(
    r"\b(?:today|tonight|this (?:morning|afternoon|evening|week|weekend|wk)|right now|"
    r"tomorrow|these days)(?:'s)?\b"
)


def borrowed_time(source: str) -> str:
    """The day or week named in `source` ("today" in "Today's plan", "this week" in "Bit of
    a weird week" -> its frame), for a fact that takes its time from it and says none
    itself: "User is staying home" after "fever today, so" is stored "... today"."""
    match = _BORROWED.search(source.lower().replace("’", "'"))
    return match.group(0).removesuffix("'s") if match else ""


def names_today_or_this_week(low: str) -> bool:
    """Does the (lowercase) statement say it holds today or this week (an L1 or L2 time
    word, not a habit)?"""
    return _L1.search(low) is not None or _L2.search(low) is not None


def time_frame(remark: str) -> str:
    """The time a remark about the day or the week sets for the statements after it: a
    verbless one ("Long day." -> "today", "Bit of a weird week." -> "this week") or one
    whose subject is the time itself ("This week is chaos"); or ""."""
    subject = _TIME_SUBJECT.match(remark.lower().strip())
    if subject:
        return subject.group(1)
    words = _FRAME_WORD.findall(remark.lower())
    if not words or len(words) > FRAME_WORDS or grammar.has_finite_verb(words):
        return ""
    if _RATE.search(remark.lower()):
        return ""  # "Budget: £50/week", "twice a day": a rate, not this day or week
    if any(w in ("day", "morning", "afternoon", "evening", "night") for w in words):
        return "today"
    return "this week" if any(w in ("week", "weekend") for w in words) else ""


def tier_of(sentence: str, context: str = "", before: str = "") -> str:
    """ "L1", "L2" or "durable" for the user's sentence (any case). `context` is text whose
    time words also hold for the sentence (see `Piece.context`), read when the sentence
    names no time itself. `before` is the statement before it: a passing state with no
    time of its own after one about today is today's ("Today I'm presenting. I'm pretty
    nervous.")."""
    low = sentence.lower().replace("’", "'")
    if _HABIT.search(low):
        return "durable"
    if _L1.search(low):
        return "L1"
    weekday_only = all(re.fullmatch(_WEEKDAY, m.group(0)) for m in _L2.finditer(low))
    if _L2.search(low) and not weekday_only:
        return "L2"
    if _PLURAL_TIMES.search(low) or _FURTHER_OFF.search(low):
        return "durable"  # "I teach yoga on Tuesday and Thursday evenings": a habit
    if _L2.search(low):
        return "L2"
    if _CLOCK.search(low) and _PLAN.search(low):
        return "L1"
    if context:
        inherited = tier_of(context)
        if inherited != "durable":
            return inherited
    if not _PASSING.search(low):
        return "durable"
    return "L1" if before and tier_of(before) == "L1" else "L2"
