"""Real sentence embeddings for the workloads, computed once and kept on disk.

Recall@10 only means something on real embeddings (random Gaussian vectors make every HNSW
look bad), and MiniLM embeds about 640 sentences/s on two cores, so a 100k workload costs a
few minutes the first time. The result is cached under benches/.cache/ (gitignored), keyed by
the model file's identity, the kind (query or passage) and the exact texts.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np

CACHE_DIR = Path(__file__).resolve().parent / ".cache"
# ../shared/models beside the repository, as the tests use it; MEMCORE_BENCH_MODEL overrides.
DEFAULT_MODEL_DIR = (
    Path(__file__).resolve().parents[1].parent / "shared/models/all-MiniLM-L6-v2-int8"
)
# Passages per call into the service: large enough to batch well, small enough to show progress.
_CHUNK = 4096

Kind = Literal["query", "passage"]


def model_dir() -> Path | None:
    """The embedding model folder, or None when neither the override nor the default exists."""
    override = os.environ.get("MEMCORE_BENCH_MODEL")
    path = Path(override) if override else DEFAULT_MODEL_DIR
    return path if (path / "model.onnx").is_file() else None


def available() -> str | None:
    """None if real embeddings can be computed here, else the reason they cannot."""
    if model_dir() is None:
        return f"no model at {DEFAULT_MODEL_DIR} (set MEMCORE_BENCH_MODEL)"
    try:
        import memcore.embeddings  # noqa: F401
    except ImportError as exc:
        return f"memcore.embeddings is not importable: {exc}"
    return None


def _key(folder: Path, kind: Kind, texts: Sequence[str]) -> str:
    from memcore.embeddings.int8_graph import RECIPE  # how MiniLM's products are computed

    model = folder / "model.onnx"
    identity = f"{model.resolve()}|{model.stat().st_size}|{kind}|{RECIPE}"
    digest = hashlib.sha256(identity.encode())
    for text in texts:
        digest.update(text.encode())
        digest.update(b"\x00")
    return digest.hexdigest()[:24]


def embed(texts: Sequence[str], kind: Kind, *, label: str = "") -> np.ndarray:
    """`(len(texts), dim)` float32 unit vectors of `texts`, from the cache when possible.

    Raises:
        RuntimeError: Real embeddings are unavailable here (see `available`).
    """
    reason = available()
    folder = model_dir()
    if reason is not None or folder is None:
        raise RuntimeError(reason)
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    path = CACHE_DIR / f"{kind}-{len(texts)}-{_key(folder, kind, texts)}.npy"
    if path.is_file():
        return np.load(path)
    vectors = _compute(folder, texts, kind, label)
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, vectors)
    tmp.replace(path)
    return vectors


def _compute(folder: Path, texts: Sequence[str], kind: Kind, label: str) -> np.ndarray:
    from memcore.embeddings import EmbeddingService

    service = EmbeddingService(model_path=folder, cache_size=0)
    try:
        if not service.wait_ready(timeout=300):
            raise RuntimeError(f"embedding model failed to load: {service.error}")
        started = time.perf_counter()
        if kind == "query":
            rows = [np.asarray(service.embed_query(t), dtype=np.float32) for t in texts]
            return np.vstack(rows) if rows else np.empty((0, service.dim or 0), np.float32)
        parts = []
        for start in range(0, len(texts), _CHUNK):
            parts.append(service.embed_passages(list(texts[start : start + _CHUNK])))
            done = min(start + _CHUNK, len(texts))
            elapsed = time.perf_counter() - started
            print(
                f"  embedding {label or kind}: {done:,}/{len(texts):,} ({elapsed:.0f} s)",
                file=sys.stderr,
                flush=True,
            )
        return np.ascontiguousarray(np.vstack(parts), dtype=np.float32)
    finally:
        service.close()
