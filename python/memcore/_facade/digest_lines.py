"""The candidate lines of the digest, item by item: one per tool call, `- tool read_file:
src/auth.py` (the tool and its target), so the model knows what was already read, run
and searched; and one per sentence worth keeping (`digest_scores`), prefixed by who said
it, `user: The deadline is June 14.`
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from memcore._facade.digest_scores import analyse
from memcore._facade.item_parts import Estimate, calls, speaker
from memcore._facade.lifecycle import item_text

#: The digest header's first characters: how a digest is recognised (and never re-digested).
DIGEST_TAG = "[memcore digest]"
MAX_SENTENCE_CHARS = 300
MAX_TARGET_CHARS = 120
MAX_TOOL_NAME_CHARS = 64

_TARGET_KEYS = (
    "path",
    "file_path",
    "file",
    "filename",
    "url",
    "uri",
    "query",
    "command",
    "pattern",
)
_SPACES = re.compile(r"\s+")


class Line(NamedTuple):
    """A candidate line of the digest. Its fields are ordered so that plain tuple order is
    usefulness: tool lines first, then by score, ties to the later (more recent) line."""

    tool: bool
    score: int  # sentences only
    position: tuple[int, int]  # (item, order in the item)
    text: str
    cost: int
    key: bytes  # near-duplicates share it


def item_lines(
    item: Mapping[str, Any], index: int, query: re.Pattern[bytes] | None, estimate: Estimate
) -> list[Line]:
    """The candidate lines of `item`, the `index`-th of the session: its tool calls, then
    its sentences that score enough (with the words of `query`, `digest_scores.query_words`)."""
    lines: list[Line] = []
    for name, args in calls(item):
        text = _tool_line(name, args)
        lines.append(Line(True, 0, (index, len(lines)), text, estimate(text), b""))
    said_by = speaker(item)
    if said_by is None:
        return lines
    text = item_text(item)
    if not text or text.startswith(DIGEST_TAG):
        return lines
    prose = analyse(text)
    for k, score in prose.eligible(query):
        line = f"{said_by}: {_shortened(prose.sentences[k], MAX_SENTENCE_CHARS)}\n"
        lines.append(Line(False, score, (index, len(lines)), line, estimate(line), prose.keys[k]))
    return lines


def _shortened(text: str, limit: int) -> str:
    """`text`, or its first `limit` - 1 characters and an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _tool_line(name: Any, args: Any) -> str:
    tool = _flat(name if isinstance(name, str) else "", MAX_TOOL_NAME_CHARS) or "tool"
    target = _target(args)
    return f"- tool {tool}: {target}\n" if target else f"- tool {tool}\n"


def _target(args: Any) -> str:
    """What a call worked on: the first of _TARGET_KEYS, else its first short string."""
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except (ValueError, RecursionError):
            return _flat(args, MAX_TARGET_CHARS)
    if isinstance(args, str):
        return _flat(args, MAX_TARGET_CHARS)
    if not isinstance(args, Mapping):
        return ""
    for key in _TARGET_KEYS:
        value = args.get(key)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            value = " ".join(value)
        if isinstance(value, str) and value.strip():
            return _flat(value, MAX_TARGET_CHARS)
    for value in args.values():
        if isinstance(value, str) and value.strip() and len(value) <= MAX_TARGET_CHARS:
            return _flat(value, MAX_TARGET_CHARS)
    return ""


def _flat(text: str, limit: int) -> str:
    """`text` on one line, white space runs as one space, shortened to `limit`."""
    return _shortened(_SPACES.sub(" ", text[: limit * 4]).strip(), limit)
