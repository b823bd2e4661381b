"""Names a package exports without importing their modules until first use (PEP 562), so
`import memcore` and the CLI stay quick while `memcore.Memory` still works."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def load(package: str, table: Mapping[str, str], name: str) -> Any:
    """The attribute `name` of `package`, imported from the module `table` names for it
    and kept in the package, so later lookups never come back here."""
    module = table.get(name)
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    setattr(sys.modules[package], name, value)
    return value


def exports(
    package: str, modules: Iterable[tuple[str, str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` for the names of ``modules``: pairs of a
    module and the space-separated names the package takes from it."""
    table = {name: module for module, names in modules for name in names.split()}

    def attribute(name: str) -> Any:
        return load(package, table, name)

    def names() -> list[str]:
        return sorted({*vars(sys.modules[package]), *table})

    return attribute, names
