"""The facade's public helpers beside :class:`memcore.Memory`: what the fronts (the MCP
server's tools, the ``memcore`` command, the settings they read) and programs may use
of the facade's modules, whose own names (``memcore._facade.*``) stay private to it.
tests/test_layers.py refuses a front's import of ``memcore._facade``; a helper the fronts
need is named here instead.

Each name is imported on first use (PEP 562), so reading the settings does not load the
export code's numpy or the code indexer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore import _lazy

if TYPE_CHECKING:
    from memcore._facade.code import project_identity
    from memcore._facade.documents import is_url
    from memcore._facade.placement import namespace_bucket, parse_namespace_range
    from memcore._facade.reference_import import ReferenceImportReport, import_reference_graph
    from memcore._facade.tiers import TIERS
    from memcore._facade.transfer import ImportReport, TransferError, export_store, import_store
    from memcore._facade.turn_metrics import TurnMetrics, TurnMetricsSnapshot, as_plain
    from memcore._facade.turn_settings import (
        TURN_OPTIONS,
        TURN_SETTING_NAMES,
        TurnOption,
        TurnSettings,
    )

__getattr__, __dir__ = _lazy.exports(
    __name__,
    (
        # Moving a store: `memcore export` / `memcore import` (docs/storage.md).
        ("memcore._facade.transfer", "export_store import_store ImportReport TransferError"),
        ("memcore._facade.reference_import", "import_reference_graph ReferenceImportReport"),
        # The automatic path: its settings, its tiers and its counters.
        (
            "memcore._facade.turn_settings",
            "TURN_OPTIONS TURN_SETTING_NAMES TurnOption TurnSettings",
        ),
        ("memcore._facade.tiers", "TIERS"),
        ("memcore._facade.turn_metrics", "TurnMetrics TurnMetricsSnapshot as_plain"),
        # Which node serves a namespace (--namespace-range, docs/scale-out.md).
        ("memcore._facade.placement", "namespace_bucket parse_namespace_range"),
        # A project's root and id as index_project derives them; whether a document is a URL.
        ("memcore._facade.code", "project_identity"),
        ("memcore._facade.documents", "is_url"),
    ),
)

__all__ = [
    "TIERS",
    "TURN_OPTIONS",
    "TURN_SETTING_NAMES",
    "ImportReport",
    "ReferenceImportReport",
    "TransferError",
    "TurnMetrics",
    "TurnMetricsSnapshot",
    "TurnOption",
    "TurnSettings",
    "as_plain",
    "export_store",
    "import_reference_graph",
    "import_store",
    "is_url",
    "namespace_bucket",
    "parse_namespace_range",
    "project_identity",
]
