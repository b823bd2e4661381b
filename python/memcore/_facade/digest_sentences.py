"""The prose sentences of a text, the units the digest keeps or leaves out: fenced and
indented code and long lines with few spaces are skipped, list and heading markers are
dropped. A few `str` passes over the whole text, not a loop over its characters.
"""

from __future__ import annotations

import re

MIN_SENTENCE_CHARS = 12

_FENCES = ("```", "~~~")
_INDENTS = ("    ", "\t")
_SENTENCE_ENDS = ((". ", ".\n"), ("! ", "!\n"), ("? ", "?\n"))
_BULLET_STARTS = frozenset("-*+>#0123456789")
_BULLET = re.compile(r"(?:[-*+>]|\d{1,3}[.)]|#{1,6})\s+")


def sentences(text: str) -> list[str]:
    """The prose sentences of a text, one a line after each sentence end."""
    if "```" in text or "~~~" in text:
        text = _unfenced(text)
    for end, split in _SENTENCE_ENDS:
        text = text.replace(end, split)
    found = [
        piece.strip()
        for piece in text.splitlines()
        if len(piece) >= MIN_SENTENCE_CHARS and not piece.startswith(_INDENTS)
    ]
    return [
        sentence if sentence[0] not in _BULLET_STARTS else _unmarked(sentence)
        for sentence in found
        if sentence.count(" ") >= 2 and (len(sentence) <= 200 or _spaced_out(sentence))
    ]


def _spaced_out(line: str) -> bool:
    """Whether a long line reads like prose, not base64, minified code or a long URL."""
    return line.count(" ") * 12 >= len(line)


def _unmarked(sentence: str) -> str:
    """A sentence without its list or heading marker."""
    marker = _BULLET.match(sentence)
    return sentence[marker.end() :] if marker else sentence


def _unfenced(text: str) -> str:
    """`text` without its fenced code blocks."""
    kept = []
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith(_FENCES):
            fenced = not fenced
        elif not fenced:
            kept.append(line)
    return "\n".join(kept)
