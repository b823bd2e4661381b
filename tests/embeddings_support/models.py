"""Locating the real ONNX test models: ``../shared/models`` (beside the repository) when it
is there, else, for MiniLM, the default model the install carries.

A plain install of memcore holds MiniLM's graph (its data-only package) and tokenizer
(inside memcore), so the tests that need "a real model" run wherever memcore is installed,
GitHub's CI included: :data:`MINILM_DIR` is then a folder made once per machine, with links
to those two verified files and a ``config.json`` written from the registry. The shared
folder stays optional; tests of models the install does not carry (potion) still skip
without it.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

MODELS_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "models"
SHARED_MINILM_DIR = MODELS_DIR / "all-MiniLM-L6-v2-int8"
POTION_DIR = MODELS_DIR / "potion-base-8M"

_FILES = ("model.onnx", "tokenizer.json", "config.json")


def _complete(path: Path) -> bool:
    return all((path / name).is_file() for name in _FILES)


def installed_minilm_dir() -> Path | None:
    """A MiniLM model folder made of the install's own files, or ``None`` when the model's
    package is not installed (a folder's files are verified by sha256 first)."""
    from memcore.embeddings.model_files import SourceUnavailableError
    from memcore.embeddings.package_source import locate_package_file
    from memcore.embeddings.registry import get_spec

    spec = get_spec("minilm")
    if spec.package_model is None or spec.package_tokenizer is None:
        return None
    try:
        model = locate_package_file(spec.package_model)
        tokenizer = locate_package_file(spec.package_tokenizer)
    except SourceUnavailableError:
        return None
    # Named as the shared folder: a store records a folder model by its name.
    folder = Path(tempfile.gettempdir()) / f"memcore-tests-{os.getuid()}" / SHARED_MINILM_DIR.name
    folder.mkdir(parents=True, exist_ok=True)
    for name, target in (("model.onnx", model), ("tokenizer.json", tokenizer)):
        link = folder / name
        if not link.is_symlink() or link.resolve() != target.resolve():
            temporary = folder / f".{name}.{os.getpid()}"
            temporary.unlink(missing_ok=True)
            temporary.symlink_to(target)
            temporary.replace(link)
    config = {
        "name": "all-MiniLM-L6-v2-int8",
        "model_id": "sentence-transformers/all-MiniLM-L6-v2 (int8 weights), from the install",
        "dim": spec.dim,
        "pooling": spec.pooling,
        "normalize": spec.normalize,
        "max_length": spec.max_length,
        "onnx": {
            "file": "model.onnx",
            "inputs": {
                name: "int64[batch,seq]"
                for name in ("input_ids", "attention_mask", "token_type_ids")
                if name != "token_type_ids" or spec.uses_token_type_ids
            },
            "output": spec.output_name,
        },
        "tokenizer": {
            "file": "tokenizer.json",
            "add_special_tokens": spec.add_special_tokens,
            "truncation_max_length": spec.max_length,
        },
        "sources": [
            {"package": f.distribution, "version": f.version, "path_in_wheel": f.path}
            for f in (spec.package_model, spec.package_tokenizer)
        ],
        "files": {
            "model.onnx": {"sha256": spec.package_model.sha256, "size": spec.package_model.size},
            "tokenizer.json": {
                "sha256": spec.package_tokenizer.sha256,
                "size": spec.package_tokenizer.size,
            },
        },
    }
    text = json.dumps(config, indent=1) + "\n"
    target_config = folder / "config.json"
    if not target_config.is_file() or target_config.read_text() != text:
        temporary = folder / f".config.json.{os.getpid()}"
        temporary.write_text(text)
        temporary.replace(target_config)
    return folder


def _minilm_dir() -> Path:
    # MEMCORE_TEST_MODELS=installed runs the tests on the install's model even where the
    # shared folder exists: how this fallback is checked on a machine that has both.
    if _complete(SHARED_MINILM_DIR) and os.environ.get("MEMCORE_TEST_MODELS") != "installed":
        return SHARED_MINILM_DIR
    return installed_minilm_dir() or SHARED_MINILM_DIR


MINILM_DIR = _minilm_dir()
"""MiniLM int8: the shared test folder, else the install's own files (see above)."""


def require_model(path: Path) -> Path:
    """Return ``path``, or skip the test if the model folder is not there."""
    missing = [name for name in _FILES if not (path / name).is_file()]
    if missing:
        pytest.skip(f"test model {path} not available (missing {', '.join(missing)})")
    return path
