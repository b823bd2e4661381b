"""Lists and tables: entries that name no one, made the user's by their header.

People describe themselves in lists: "My setup:" / "- Arch Linux, Hyprland", "**About
me:**" / "- allergic to nuts", "### Today" / "- dentist at 11:00", "Stack: Next.js". The
entry has no subject; its header says whose it is. A header owns its entries when it

- is a noun phrase with "my" or "our": "My setup", "Pros of my current job";
- is about the user themself: "About me", "A few things about me";
- is a noun with a first-person clause ("Things I like", "Languages I speak", "Tools we
  use"): the entry is the clause's object ("User likes hiking"), unless the clause weighs
  options for a question ("Options I'm considering");
- names a time ("Today", "This week", "Availability today"): a schedule is the user's;
- is a word people head a description of themselves or their project with
  (`SELF_HEADERS`: "Background", "Setup", "Constraints", "Status", ...), or a field of a
  profile ("Age: 32", "Location: Oslo"; `PROFILE_KEYS`).

The fact is the entry under its nearest header: "User's setup: Arch Linux, Hyprland",
"User, today: dentist at 11:00", "User: allergic to nuts". An entry that is a statement
of its own ("- I'm a solo founder") is judged as one, before any of this.

A markdown table is read the same way: a header row with a first-person word ("| Area |
What we use |") makes each row a statement ("we use Buildkite for CI"); another table is
skipped row by row.
"""

from __future__ import annotations

import re

from memcore.capture import lexicon as lx
from memcore.capture.rewrite import third_person

_WORD = re.compile(r"[a-z0-9][a-z0-9'\-]*")
_POSSESSIVE = lx.words("my our")
_SUBJECT_WORDS = lx.words("i i'm im i've ive we we're we've")
_ABOUT_ME = re.compile(r"\b(?:about|on) (?:me|myself|us)\b|^(?:me|myself)$")
_TIME_HEADER = re.compile(
    r"\b(?:today|today's|tonight|tomorrow|tomorrow's|this (?:week|weekend|morning|afternoon|"
    r"evening|month)|next week|weekend)\b"
)
_WH_CLAUSE = re.compile(r"^(?:what|which)\s+(.+)$", re.IGNORECASE)
_SEPARATOR_CELL = re.compile(r"^:?-{2,}:?$")
# "Options I'm considering:" lists what a question weighs, not what the user has or does.
_WEIGHING = re.compile(
    r"\b(?:consider|considering|thinking|looking|choosing|deciding|weighing|comparing)\b"
)
# "Things I like", "Languages I speak", "Tools we use at work", "Options I'm considering":
# a noun and a first-person clause whose object is each entry ("I like hiking").
_RELATIVE_HEADER = re.compile(
    r"^(?:the\s+|some\s+|a few\s+)?[A-Za-z\-]+(?:\s+[A-Za-z\-]+)?\s+(?:that\s+)?"
    r"(?P<clause>(?:I|we|We)(?:'ve|'m|'re|’ve|’m|’re)?\s+(?:\w+\s+){0,3}?\w+)$"
)


def listed_fact(entry: str, headers: tuple[str, ...]) -> str | None:
    """The fact an entry without a subject states under `headers` (outermost first), or
    None when no header owns it."""
    entry = entry.strip().rstrip(".!;,")
    if not entry:
        return None
    clause = _RELATIVE_HEADER.match(_clean(headers[-1])) if headers else None
    if clause is not None and not _WEIGHING.search(clause.group("clause").lower()):
        # "Things I like:" / "- hiking": the header's clause takes the entry as its object.
        return third_person(f"{clause.group('clause')} {entry}")
    if not any(_owns(h) for h in headers):
        return None
    header = _clean(headers[-1])
    low = header.lower()
    entry = _as_typed(entry, third_person(entry))
    if _ABOUT_ME.search(low):
        return f"User: {entry}"
    if any(w in _POSSESSIVE for w in _WORD.findall(low)):
        return f"{third_person(header)}: {entry}"
    if _TIME_HEADER.match(low) and _TIME_HEADER.sub("", low).strip() == "":
        return f"User, {low}: {entry}"
    return f"User's {_lower_first(header)}: {entry}"


def is_relative_header(header: str) -> bool:
    """ "Things I like:", "Tools we use at work:": a noun and a first-person clause, a key
    whose entries are the clause's objects."""
    return _RELATIVE_HEADER.match(_clean(header)) is not None


def _owns(header: str) -> bool:
    low = _clean(header).lower()
    words = _WORD.findall(low)
    if not words:
        return False
    if _ABOUT_ME.search(low):
        return True
    # "My setup", "Pros of my current job"; not "Options I'm considering", a clause.
    if any(w in _POSSESSIVE for w in words) and not any(w in _SUBJECT_WORDS for w in words):
        return True
    if _TIME_HEADER.search(low):
        return True
    if len(words) == 1 and words[0] in lx.PROFILE_KEYS:
        return True  # "Age: 32"
    return any(w in lx.SELF_HEADERS for w in words)


def table_statements(rows: list[str]) -> list[tuple[str, str | None, tuple[str, ...]]]:
    """A markdown table's statements: (text, skip reason or None, extra headers). A table
    whose header row names the user gives one statement per row and column; any other,
    each row skipped as "not_a_fact"."""
    cells = [[c.strip() for c in row.strip().strip("|").split("|")] for row in rows]
    body = [r for r in cells[1:] if not all(_SEPARATOR_CELL.match(c) or not c for c in r)]
    head = cells[0]
    first_person = any(w in lx.FIRST_PERSON_WORDS for c in head for w in _WORD.findall(c.lower()))
    skipped: list[tuple[str, str | None, tuple[str, ...]]] = [(rows[0].strip(), "not_a_fact", ())]
    if not first_person or len(head) < 2:
        return skipped + [(row.strip(), "not_a_fact", ()) for row in rows[1:]]
    out = skipped
    for row in body:
        for column in range(1, min(len(head), len(row))):
            if row[column]:
                out.append((_row_statement(head[column], row[0], row[column]), None, ()))
    return out


def _row_statement(column: str, key: str, value: str) -> str:
    """ "What we use" / "CI" / "Buildkite" -> "we use Buildkite for CI"; "My rating" /
    "Dune" / "5" -> "My rating for Dune is 5"."""
    clause = _WH_CLAUSE.match(column)
    if clause:
        return f"{clause.group(1)} {value} for {key}"
    return f"{column} for {key} is {value}"


def _as_typed(entry: str, rewritten: str) -> str:
    """The rewrite with the entry's first letter as the user typed it ("deployed on
    Fly.io" stays lowercase after a colon)."""
    return entry[:1] + rewritten[1:] if rewritten[:1].lower() == entry[:1].lower() else rewritten


def _clean(header: str) -> str:
    return header.strip().strip("*_#").strip().rstrip(":").strip()


def _lower_first(text: str) -> str:
    """ "Household info" -> "household info"; "CI" and "AWS setup" stay as typed."""
    first = text.split(" ", 1)[0]
    if first[:1].isupper() and first[1:].islower():
        return text[:1].lower() + text[1:]
    return text
