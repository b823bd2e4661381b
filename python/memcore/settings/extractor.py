"""``--fact-extractor module:function``: a user's fact extractor, loaded when the settings
resolve, so a wrong name stops the start with a message instead of failing every turn.

The function gets a turn's items and returns its facts (``Memory(fact_extractor=...)``
documents the contract); memcore only checks here that the name leads to something callable.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: What a spec looks like, for messages.
FORM = "module:function, e.g. my_package.facts:extract"


@dataclass(frozen=True, slots=True)
class ExtractorSpec:
    """A loaded extractor: the spec as written and the callable it names."""

    spec: str
    function: Callable[..., Any]

    def __str__(self) -> str:
        return self.spec


def load_extractor(text: str) -> ExtractorSpec:
    """Import ``module`` and look up ``function`` (dots reach into classes or objects).

    Raises:
        ValueError: Saying what failed (the form, the import, the attribute, not callable)
            and the form expected.
    """
    spec = text.strip()
    module_name, colon, attribute = spec.partition(":")
    module_name, attribute = module_name.strip(), attribute.strip()
    if not colon or not module_name or not attribute:
        raise ValueError(f"expected {FORM}")
    try:
        # A module printing on import must not write on stdout, the MCP channel over stdio.
        with contextlib.redirect_stdout(sys.stderr):
            target: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module_name + ".").startswith(exc.name + "."):
            raise ValueError(
                f"no module named {module_name!r} (is its folder on PYTHONPATH?); expected {FORM}"
            ) from None
        raise ValueError(f"importing {module_name!r} failed: {exc}") from None
    except Exception as exc:  # the user's module: any failure is theirs to read
        raise ValueError(f"importing {module_name!r} failed: {type(exc).__name__}: {exc}") from None
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise ValueError(f"module {module_name!r} has no attribute {attribute!r}")
        target = getattr(target, part)
    if not callable(target):
        raise ValueError(
            f"{attribute!r} in {module_name!r} is a {type(target).__name__}, not a function; "
            f"expected {FORM}"
        )
    return ExtractorSpec(spec, target)
