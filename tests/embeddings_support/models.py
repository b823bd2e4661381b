"""Locating the real ONNX test models in ``../shared/models`` (beside the repository)."""

from __future__ import annotations

from pathlib import Path

import pytest

MODELS_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "models"
MINILM_DIR = MODELS_DIR / "all-MiniLM-L6-v2-int8"
POTION_DIR = MODELS_DIR / "potion-base-8M"

_FILES = ("model.onnx", "tokenizer.json", "config.json")


def require_model(path: Path) -> Path:
    """Return ``path``, or skip the test if the shared model folder is not there."""
    missing = [name for name in _FILES if not (path / name).is_file()]
    if missing:
        pytest.skip(f"test model {path} not available (missing {', '.join(missing)})")
    return path
