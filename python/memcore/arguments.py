"""The rules every argument meets where it enters memcore, whatever its type: the public
methods of the facade (:func:`checked_api`) and the tool runner (memcore/tools/runner.py)
check them before anything else runs, so a value the core cannot take is refused with
``INVALID_PARAMETER`` naming the field, with a hint, and nothing is half-written (DESIGN
section 10: every input error carries a code).

- Text is valid Unicode: no lone surrogate (``"\\ud800"``: an unpaired ``\\u`` escape in
  JSON, or text decoded with ``errors="surrogateescape"``). The core stores UTF-8, which
  cannot hold one.
- An integer fits in 64 bits (the core's counts, times and sequence numbers).
- A float is a finite number: NaN and infinity mean no number at all.
- Lists and mappings nest at most :data:`MAX_DEPTH` levels (a list that holds itself never
  ends), and a mapping's keys are at most :data:`MAX_KEY_CHARS` characters.

Values of other types (numpy arrays, callables, datetimes) are the method's own business.
A conversion error that still comes out of the native core (a negative ``limit`` for a
count, a float for it) is translated by :func:`checked_api` too: PyO3 notes which argument
it was converting.
"""

from __future__ import annotations

import functools
import inspect
import math
import os
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from memcore.errors import InvalidParameterError, invalid

#: Deepest nesting of lists and mappings in one argument.
MAX_DEPTH = 64
#: Longest key of a mapping, in characters: keys are names (of metadata, of fields).
MAX_KEY_CHARS = 1000
INT_MIN, INT_MAX = -(2**63), 2**63 - 1

_SURROGATES = re.compile("[\ud800-\udfff]")
# PyO3 adds this note to the error of an argument it could not convert.
_CONVERTING = re.compile(r"^while processing '(\w+)'$")

Function = TypeVar("Function", bound=Callable[..., Any])
Class = TypeVar("Class", bound=type)


def check_argument(field: str, value: Any) -> None:
    """Refuse ``value`` if it, or anything inside it, breaks one of the rules above.

    Raises:
        InvalidParameterError: Naming the offending field (``metadata.source``,
            ``entities[2].name``) in the message and in ``details["field"]``.
    """
    problem = _problem(value, field, field, 0)
    if problem is not None:
        raise problem


def check_arguments(arguments: Mapping[str, Any]) -> None:
    """:func:`check_argument` for each of a call's named arguments (an MCP tool call's),
    their names included.

    Raises:
        InvalidParameterError: As :func:`check_argument`.
    """
    for name, value in arguments.items():
        if isinstance(name, str) and len(name) > MAX_KEY_CHARS:
            raise invalid(
                "arguments",
                f"arguments has a name of {len(name)} characters; argument names are at most "
                f"{MAX_KEY_CHARS} characters.",
            )
        field = _key_path("", name)
        check_argument(field, name)
        check_argument(field, value)


def replace_lone_surrogates(value: Any, field: str = "") -> tuple[Any, list[str]]:
    """``value`` (JSON: mappings, lists, scalars) with every lone surrogate replaced by
    U+FFFD, and the fields that held one (a key's field when the key did), for a message
    to be read by a parser that cannot hold them and still be refused by name (the MCP
    server's screen, ``memcore.mcp.malformed``). Nesting past twice :data:`MAX_DEPTH` is
    left as it is."""
    fields: list[str] = []
    return _replaced(value, field, fields, 0), fields


def _replaced(value: Any, field: str, fields: list[str], depth: int) -> Any:
    if isinstance(value, str):
        if value.isascii() or not _SURROGATES.search(value):
            return value
        fields.append(field)
        return _SURROGATES.sub("\ufffd", value)
    if depth > 2 * MAX_DEPTH:
        return value
    if isinstance(value, list):
        return [_replaced(item, f"{field}[{i}]", fields, depth + 1) for i, item in enumerate(value)]
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            inside = _key_path(field, key)
            out[_replaced(key, inside, fields, depth + 1)] = _replaced(
                item, inside, fields, depth + 1
            )
        return out
    return value


def unencodable(field: str) -> InvalidParameterError:
    """The error for a text at ``field`` that held a lone surrogate (found and replaced
    before the text could be read: :func:`replace_lone_surrogates`)."""
    return invalid(field, _text_message(field, ""))


def checked_api(cls: Class) -> Class:
    """Class decorator: every public method of ``cls`` (inherited ones included, and
    ``__init__``) checks its arguments with :func:`check_argument` before it runs, and a
    conversion error from the native core becomes ``INVALID_PARAMETER`` naming its
    argument. Returns ``cls``, its methods replaced by checking ones."""
    for name in dir(cls):
        if name.startswith("_") and name != "__init__":
            continue
        attribute = inspect.getattr_static(cls, name)
        if isinstance(attribute, staticmethod):
            setattr(cls, name, staticmethod(_checked(attribute.__func__, skip_first=False)))
        elif inspect.isfunction(attribute) and not getattr(attribute, "_checks_arguments", False):
            setattr(cls, name, _checked(attribute, skip_first=True))
    return cls


def _checked(function: Function, *, skip_first: bool) -> Function:
    parameters = list(inspect.signature(function).parameters.values())
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    positional = [p.name for p in parameters if p.kind in kinds]
    rest = next((p.name for p in parameters if p.kind == inspect.Parameter.VAR_POSITIONAL), "args")
    first = 1 if skip_first else 0

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        for i in range(first, len(args)):
            name = positional[i] if i < len(positional) else f"{rest}[{i - len(positional)}]"
            check_argument(name, args[i])
        for name, value in kwargs.items():
            check_argument(name, value)
        try:
            return function(*args, **kwargs)
        except (UnicodeEncodeError, OverflowError, TypeError) as exc:
            given = dict(zip(positional[first:], args[first:], strict=False)) | kwargs
            error = _conversion_error(exc, given)
            if error is None:
                raise
            raise error from exc

    call._checks_arguments = True  # type: ignore[attr-defined]
    return call  # type: ignore[return-value]


def _conversion_error(
    exc: UnicodeEncodeError | OverflowError | TypeError, given: Mapping[str, Any]
) -> InvalidParameterError | None:
    """The core could not convert an argument the checks above let through (a count below
    zero, a float for a count): INVALID_PARAMETER naming it, or None if no PyO3 note says
    which argument it was (then the error is not a conversion's, and goes on as it is)."""
    notes = getattr(exc, "__notes__", ())
    field = next((m.group(1) for n in notes if (m := _CONVERTING.match(str(n)))), None)
    if field is None:
        return None
    if isinstance(exc, UnicodeEncodeError):
        return invalid(field, _text_message(field, exc.object))
    if isinstance(exc, TypeError):
        return invalid(field, f"{field} has the wrong type: {exc}.")
    value = given.get(field)
    got = f", got {value}" if isinstance(value, int) and INT_MIN <= value <= INT_MAX else ""
    if "negative" in str(exc):
        return invalid(field, f"{field} must not be negative{got}.")
    return invalid(field, f"{field} is too large{got}.")


def _problem(value: Any, field: str, argument: str, depth: int) -> InvalidParameterError | None:
    """The first problem in ``value`` (at ``field``, inside ``argument``), if any."""
    if isinstance(value, str):
        return None if value.isascii() or not _SURROGATES.search(value) else _text(field, value)
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        if INT_MIN <= value <= INT_MAX:
            return None
        return invalid(field, f"{field} is out of range: {_int_text(value)}; {_INT_HINT}")
    if isinstance(value, float):
        if math.isfinite(value):
            return None
        return invalid(field, f"{field} must be a finite number, got {value}. {_NUMBER_HINT}")
    if isinstance(value, list | tuple | set | frozenset):
        if depth >= MAX_DEPTH:
            return _too_deep(argument)
        # A vector as a list: one pass in C instead of one call per number.
        floats = type(value) is list and value and all(type(item) is float for item in value)
        if floats and all(map(math.isfinite, value)):
            return None
        for i, item in enumerate(value):
            problem = _problem(item, f"{field}[{i}]", argument, depth + 1)
            if problem is not None:
                return problem
        return None
    if isinstance(value, Mapping):
        if depth >= MAX_DEPTH:
            return _too_deep(argument)
        for key, item in value.items():
            if isinstance(key, str) and len(key) > MAX_KEY_CHARS:
                return invalid(
                    field,
                    f"{field} has a key of {len(key)} characters; keys are names, of at most "
                    f"{MAX_KEY_CHARS} characters.",
                )
            inside = _key_path(field, key)
            problem = _problem(key, inside, argument, depth + 1)
            if problem is None:
                problem = _problem(item, inside, argument, depth + 1)
            if problem is not None:
                return problem
        return None
    if isinstance(value, os.PathLike):
        path = os.fspath(value)
        return _problem(path, field, argument, depth) if isinstance(path, str) else None
    return None


_INT_HINT = "integers must fit in 64 bits (-2**63 to 2**63 - 1)."
_NUMBER_HINT = "NaN and infinity are not numbers memcore can store or compare."
_TEXT_HINT = (
    "Such text comes from an unpaired \\ud800-style escape in JSON or from decoding with "
    "errors='surrogateescape': decode it with errors='replace', or fix the escape."
)


def _text(field: str, text: str) -> InvalidParameterError:
    return invalid(field, _text_message(field, text))


def _text_message(field: str, text: str) -> str:
    found = _SURROGATES.search(text)
    where = "" if found is None else f" ({ascii(found.group())[1:-1]} at character {found.start()})"
    return (
        f"{field} is not valid Unicode: it holds a lone surrogate{where}, which UTF-8 "
        f"cannot store. {_TEXT_HINT}"
    )


def _too_deep(field: str) -> InvalidParameterError:
    return invalid(
        field,
        f"{field} nests lists and objects more than {MAX_DEPTH} levels deep; flatten it "
        "(a list or object that contains itself never ends).",
    )


def _int_text(value: int) -> str:
    return str(value) if abs(value) < 10**30 else f"an integer of {value.bit_length()} bits"


def _key_path(field: str, key: Any) -> str:
    """``field.key`` for a plain name, else ``field[<key as ASCII>]``: never the raw key,
    whose lone surrogate could not be written back. (With no ``field``: the name, or the
    key as ASCII.)"""
    plain = isinstance(key, str) and key.isidentifier() and key.isascii()
    if not field:
        return str(key) if plain else ascii(key)
    return f"{field}.{key}" if plain else f"{field}[{key!a}]"
