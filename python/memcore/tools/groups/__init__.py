"""Tool groups, one module per capability, each with ``register(registry)``.

Every public module of this package is a group and is found by :func:`load_registry`, so a
new capability (graph, conversation, code) adds its tools by adding its file here.
"""

from __future__ import annotations

import importlib
import pkgutil

from memcore.tools import positions
from memcore.tools.registry import ToolRegistry


def load_registry() -> ToolRegistry:
    """A registry holding every group's tools, as published: reads take ``min_seq`` and
    writes return ``seq`` (:mod:`memcore.tools.positions`)."""
    registry = ToolRegistry(publish=positions.published)
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if module.name.startswith("_"):
            continue
        group = importlib.import_module(f"{__name__}.{module.name}")
        group.register(registry)
    return registry
