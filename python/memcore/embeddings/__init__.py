"""Text embeddings for memcore: model registry, sources and a background-loaded service.

Pure Python on onnxruntime, tokenizers and huggingface_hub. Importing this package is cheap:
its names are imported on first access (PEP 562), so the MCP server can check a model's
name against the registry (plain data) before it answers ``tools/list`` without importing
numpy and the sources; onnxruntime and tokenizers are imported by the loader thread, and
huggingface_hub only when a listing or a load looks at the hub cache.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore import _lazy

if TYPE_CHECKING:
    from memcore.embeddings.cache import CacheInfo
    from memcore.embeddings.catalog import ModelListing, expected_identity, list_models
    from memcore.embeddings.custom import EmbedFunction, custom_model_id
    from memcore.embeddings.registry import (
        DEFAULT_MODEL,
        REGISTRY,
        ModelSpec,
        PackageFile,
        Pooling,
        get_spec,
    )
    from memcore.embeddings.service import EmbeddingService, ServiceInfo, Status

#: Where each lazily imported name lives.
__getattr__, __dir__ = _lazy.exports(
    __name__,
    (
        ("memcore.embeddings.cache", "CacheInfo"),
        ("memcore.embeddings.catalog", "ModelListing expected_identity list_models"),
        ("memcore.embeddings.custom", "EmbedFunction custom_model_id"),
        (
            "memcore.embeddings.registry",
            "DEFAULT_MODEL REGISTRY ModelSpec PackageFile Pooling get_spec",
        ),
        ("memcore.embeddings.service", "EmbeddingService ServiceInfo Status"),
    ),
)


__all__ = [
    "DEFAULT_MODEL",
    "REGISTRY",
    "CacheInfo",
    "EmbedFunction",
    "EmbeddingService",
    "ModelListing",
    "ModelSpec",
    "PackageFile",
    "Pooling",
    "ServiceInfo",
    "Status",
    "custom_model_id",
    "expected_identity",
    "get_spec",
    "list_models",
]
