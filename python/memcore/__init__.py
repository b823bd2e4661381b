"""memcore: long-term memory for AI agents, with a Rust core and no LLM calls.

The version and the exceptions are imported at once (they live in the native module,
which every use needs). Everything else is imported on first access (PEP 562): the
facade pulls in numpy and the code indexer, which the MCP server's start-up must not wait
for before it answers ``tools/list``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore import _lazy
from memcore._core import __version__
from memcore.errors import (
    DimensionMismatchError,
    EmbeddingError,
    InvalidParameterError,
    MemcoreError,
    MemoryNotFoundError,
    NotFoundError,
    PayloadTooLargeError,
    ResourceBusyError,
    StorageError,
    UnauthorizedError,
    ValidationFailedError,
)

if TYPE_CHECKING:
    from memcore._facade.conversation_handles import Conversation, Turn
    from memcore.memory import Memory
    from memcore.records.code import (
        CodeHit,
        IndexProgress,
        IndexReport,
        IndexStatus,
    )
    from memcore.records.conversation import (
        ContextItem,
        ContextProcedure,
        ContextResult,
        DocumentHistory,
        DocumentRead,
        DocumentSignal,
        DocumentVersion,
        ProcedureRecord,
        TurnRecord,
        TurnResult,
        VersionTouch,
    )
    from memcore.records.facts import (
        CompactReport,
        IndexHealth,
        MemoryRecord,
        StoreResult,
        SupersedeResult,
    )
    from memcore.records.graph import (
        Analytics,
        Communities,
        Community,
        EntityHit,
        EntityRecord,
        EntityScore,
        EntityView,
        GraphPage,
        GraphQuality,
        GraphView,
        ObservationRecord,
        RelatedEntity,
        RelationPath,
        RelationRecord,
        SaveResult,
    )

#: Where each lazily imported name lives.
__getattr__, __dir__ = _lazy.exports(
    __name__,
    (
        ("memcore.records.code", "CodeHit IndexProgress IndexReport IndexStatus"),
        ("memcore._facade.conversation_handles", "Conversation Turn"),
        (
            "memcore.records.conversation",
            "ContextItem ContextProcedure ContextResult DocumentHistory DocumentRead "
            "DocumentSignal DocumentVersion ProcedureRecord TurnRecord TurnResult VersionTouch",
        ),
        (
            "memcore.records.graph",
            "Analytics Communities Community EntityHit EntityRecord EntityScore EntityView "
            "GraphPage GraphQuality GraphView ObservationRecord RelatedEntity RelationPath "
            "RelationRecord "
            "SaveResult",
        ),
        ("memcore.memory", "Memory"),
        (
            "memcore.records.facts",
            "CompactReport IndexHealth MemoryRecord StoreResult SupersedeResult",
        ),
    ),
)


__all__ = [
    "Analytics",
    "CodeHit",
    "Communities",
    "Community",
    "CompactReport",
    "ContextItem",
    "ContextProcedure",
    "ContextResult",
    "Conversation",
    "DimensionMismatchError",
    "DocumentHistory",
    "DocumentRead",
    "DocumentSignal",
    "DocumentVersion",
    "EmbeddingError",
    "EntityHit",
    "EntityRecord",
    "EntityScore",
    "EntityView",
    "GraphPage",
    "GraphQuality",
    "GraphView",
    "IndexHealth",
    "IndexProgress",
    "IndexReport",
    "IndexStatus",
    "InvalidParameterError",
    "MemcoreError",
    "Memory",
    "MemoryNotFoundError",
    "MemoryRecord",
    "NotFoundError",
    "ObservationRecord",
    "PayloadTooLargeError",
    "ProcedureRecord",
    "RelatedEntity",
    "RelationPath",
    "RelationRecord",
    "ResourceBusyError",
    "SaveResult",
    "StorageError",
    "StoreResult",
    "SupersedeResult",
    "Turn",
    "TurnRecord",
    "TurnResult",
    "UnauthorizedError",
    "ValidationFailedError",
    "VersionTouch",
    "__version__",
]
