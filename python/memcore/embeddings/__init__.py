"""Text embeddings for memcore: model registry, sources and a background-loaded service.

Pure Python on onnxruntime, tokenizers and huggingface_hub. Importing this package is cheap:
onnxruntime and tokenizers are imported by the loader thread, and huggingface_hub only when
a listing or a load looks at the hub cache.
"""

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
