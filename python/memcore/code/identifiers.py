"""Split code identifiers into words so BM25 can match ``getUserName`` to "user name".

A word tokenizer sees ``getUserName`` as one term and ``HTTPServerError`` as another;
a person searching types "user name" or "server error". Indexing the words of every
compound identifier next to the code closes that gap without touching the analyser.
ASCII identifiers only: the case rules below are ASCII, and other scripts are left to
the tokenizer as they are.
"""

from __future__ import annotations

import re

# A run of identifier characters, with `-` inside for kebab-case names (CSS classes,
# CLI flags); in expressions such as `a-b` this only adds words already present.
_IDENTIFIER = re.compile(r"[A-Za-z0-9_$]+(?:-[A-Za-z0-9_$]+)*")
# The words of one identifier: an acronym before a capitalised word (HTTP|Server), a
# capitalised or lower-case word, a trailing acronym, or a number.
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def split_identifiers(text: str) -> str:
    """Return the words of the compound identifiers in ``text``, for BM25 indexing.

    Splits at snake_case, kebab-case, camelCase, PascalCase, SCREAMING_CASE and digit
    boundaries: ``getUserName`` → ``get user name``, ``HTTPServerError`` →
    ``http server error``, ``parse_json2xml`` → ``parse json 2 xml``. Identifiers that
    are a single word (``return``, ``user``) add nothing, since the text itself already
    holds them.

    Args:
        text: Source code or any text.

    Returns:
        Lower-case words separated by single spaces, each once, in order of first
        appearance; empty when there is nothing to split.
    """
    words: dict[str, None] = {}
    # Code repeats its identifiers; splitting each distinct one once keeps this linear
    # in the text with a small constant (the per-word work runs on far fewer strings).
    for identifier in dict.fromkeys(_IDENTIFIER.findall(text)):
        parts = _WORD.findall(identifier)
        if len(parts) > 1:
            words.update(dict.fromkeys(part.lower() for part in parts))
    return " ".join(words)
