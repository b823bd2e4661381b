"""Names a package exports without importing their modules until first use (PEP 562), so
`import memcore` and the CLI stay quick while `memcore.Memory` still works."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
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
