"""Deciding what a service loads (at construction, cheaply) and loading it (in the background)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from memcore.embeddings.custom import (
    CustomEmbedder,
    EmbedFunction,
    InvalidEmbedderOutputError,
    custom_model_id,
)
from memcore.embeddings.model_dir import ModelDirError, model_dir_id, spec_from_model_dir
from memcore.embeddings.model_files import ModelFiles, ModelLoadError, SourceUnavailableError
from memcore.embeddings.pooling import FloatMatrix
from memcore.embeddings.registry import ModelSpec, get_spec
from memcore.embeddings.retry import RetryPolicy


class Embedder(Protocol):
    """What the service needs from a loaded model (ONNX or custom function)."""

    dim: int
    source: str

    def embed(self, texts: Sequence[str], max_tokens: int | None = None) -> FloatMatrix: ...

    def count_tokens(self, text: str) -> int | None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class LoadPlan:
    """The model a service will load and how to run it.

    Attributes:
        model_id: Identity for the dimension guard and status reports.
        dim: Dimension if known before loading (registry or ``config.json``), else ``None``.
        spec: The model's spec if known before loading.
        model_path: Model directory, if one was given.
        embedder: Custom function, if one was given.
        threads: onnxruntime intra-op threads (``None``: machine default).
        spin_between_calls: Whether those threads keep spinning after a call returns.
        int8: Whether a model whose spec allows it runs its products in int8.
        batch_size: Most texts per inference call.
        max_batch_tokens: Padded-token budget per inference call.
        retry: Retry policy for inference calls.
    """

    model_id: str
    dim: int | None
    spec: ModelSpec | None
    model_path: str | os.PathLike[str] | None
    embedder: EmbedFunction | None
    threads: int | None
    spin_between_calls: bool
    int8: bool
    batch_size: int
    max_batch_tokens: int
    retry: RetryPolicy


def plan_load(
    model: str | ModelSpec,
    *,
    model_path: str | os.PathLike[str] | None,
    embedder: EmbedFunction | None,
    threads: int | None,
    batch_size: int,
    max_batch_tokens: int,
    retry: RetryPolicy,
    spin_between_calls: bool = True,
    int8: bool = True,
) -> LoadPlan:
    """Resolve the constructor arguments without loading anything heavy.

    Precedence: ``embedder``, then ``model_path``, then the registry ``model``. Reading a
    directory's ``config.json`` is the only I/O; if it fails, the identity is still known
    and the background load reports the reason like any other load failure.

    Raises:
        InvalidParameterError: If a registry name is unknown (only when it is used).
    """
    spec: ModelSpec | None
    if embedder is not None:
        model_id, dim, spec = custom_model_id(embedder), None, None
    elif model_path is not None:
        try:
            spec = spec_from_model_dir(model_path)
        except ModelDirError:
            model_id, dim, spec = model_dir_id(model_path), None, None
        else:
            model_id, dim = spec.name, spec.dim
    else:
        spec = model if isinstance(model, ModelSpec) else get_spec(model)
        model_id, dim = spec.name, spec.dim
    return LoadPlan(
        model_id=model_id,
        dim=dim,
        spec=spec,
        model_path=model_path,
        embedder=embedder,
        threads=threads,
        spin_between_calls=spin_between_calls,
        int8=int8,
        batch_size=batch_size,
        max_batch_tokens=max_batch_tokens,
        retry=retry,
    )


def load(plan: LoadPlan) -> tuple[Embedder, ModelSpec | None]:
    """Load the planned model; slow (files, onnxruntime, a probe call), so run it off-thread.

    Returns:
        The ready embedder, and the spec whose prefixes apply (``None`` for a custom one).
    """
    if plan.embedder is not None:
        custom = CustomEmbedder(plan.embedder, batch_size=plan.batch_size, retry=plan.retry)
        return custom, None
    # Imported here because onnxruntime takes a noticeable time to import and this runs in
    # the loader thread, never in the caller's.
    from memcore.embeddings.int8_graph import int8_files, quantizes_per_call
    from memcore.embeddings.onnx_model import OnnxEmbedder
    from memcore.embeddings.sources import directory_files, resolve_registry_files

    if plan.model_path is not None:
        spec = spec_from_model_dir(plan.model_path)
        files = directory_files(plan.model_path)
    else:
        assert plan.spec is not None  # plan_load always resolves a registry spec
        spec = plan.spec
        files = resolve_registry_files(spec)
    shipped = files
    if plan.int8 and spec.int8_products:
        files = int8_files(files, _probe_check(spec, files))
    # A derived graph quantizes per call by construction; only a shipped one is inspected.
    per_call = files != shipped or quantizes_per_call(files.model)
    onnx = OnnxEmbedder(
        spec,
        files,
        threads=plan.threads,
        max_batch_tokens=plan.max_batch_tokens,
        max_batch_size=plan.batch_size,
        retry=plan.retry,
        spin_between_calls=plan.spin_between_calls,
        one_text_per_run=per_call,
    )
    return onnx, spec


PROBE_TEXTS = (
    "fix the login bug",
    "User prefers TypeScript over JavaScript for new services",
    "def parse_config(path):\n    with open(path) as f:\n        return yaml.safe_load(f)",
    "x",
)
"""Texts a derived graph must embed like the original (prose, code, a one-letter text)."""


def _probe_check(spec: ModelSpec, files: ModelFiles) -> Callable[[Path], float]:
    """A check of a candidate graph: the lowest cosine between its vectors for
    :data:`PROBE_TEXTS` and the original graph's."""
    from memcore.embeddings.onnx_model import OnnxEmbedder

    def check(candidate: Path) -> float:
        original = OnnxEmbedder(spec, files, threads=1)
        derived = OnnxEmbedder(spec, replace(files, model=candidate), threads=1)
        try:
            cosines = (original.embed(PROBE_TEXTS) * derived.embed(PROBE_TEXTS)).sum(axis=1)
        finally:
            original.close()
            derived.close()
        return float(cosines.min())

    return check


def failure_reason(exc: Exception) -> str:
    """One-line reason for a load failure; memcore's own errors already read as sentences."""
    own = (SourceUnavailableError, ModelDirError, ModelLoadError, InvalidEmbedderOutputError)
    if isinstance(exc, own):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
