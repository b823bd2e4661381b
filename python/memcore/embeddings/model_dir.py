"""Reading a model directory (``--model-path DIR``) into a :class:`ModelSpec`.

A model directory holds ``model.onnx``, ``tokenizer.json`` and a ``config.json`` in the format
of ``shared/models/*/config.json`` (``dim``, ``pooling``, ``onnx.output``, ``tokenizer.*``).
A plain Hugging Face ``config.json`` also works: ``hidden_size`` then gives the dimension and
pooling defaults to mean, which is right for sentence-transformers exports.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any, cast

from memcore.embeddings.file_memo import remembered, sha256_of
from memcore.embeddings.registry import REGISTRY, ModelSpec, PackageFile, Pooling

MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
CONFIG_FILE = "config.json"

_POOLING_ALIASES: dict[str, Pooling] = {
    "mean": "mean",
    "cls": "cls",
    "none": "none",
    "pooled": "none",
}
# Keys various exporters use for the hidden size, in order of preference.
_DIM_KEYS = ("dim", "hidden_size", "n_embd", "d_model")


class ModelDirError(Exception):
    """The directory is missing a file or its config cannot be understood."""


def model_dir_id(model_path: str | os.PathLike[str]) -> str:
    """Model id recorded by the dimension guard for a directory model.

    Args:
        model_path: The directory as the user gave it.

    Returns:
        ``"path:<directory name>"``; the name, not the full path, so moving the folder
        does not trip the guard. (:func:`spec_from_model_dir` names a folder that holds a
        registry model byte for byte after that model instead.)
    """
    # Lexical normalisation, not resolve(): a symlinked model folder keeps the name the user
    # chose for it.
    name = Path(os.path.normpath(Path(model_path).expanduser().absolute())).name
    return f"path:{name}"


def read_config(config_path: Path) -> dict[str, Any]:
    """Parse a ``config.json`` into a dict.

    Raises:
        ModelDirError: If the file is missing, unreadable or not a JSON object.
    """
    try:
        data = json.loads(config_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelDirError(f"{config_path} not found") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelDirError(f"cannot read {config_path}: {exc}") from None
    if not isinstance(data, dict):
        raise ModelDirError(f"{config_path} is not a JSON object")
    return cast(dict[str, Any], data)


def declared_dim(config: dict[str, Any]) -> int | None:
    """The embedding dimension a config declares, if any key for it is present."""
    for key in _DIM_KEYS:
        value = config.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def spec_from_model_dir(model_path: str | os.PathLike[str]) -> ModelSpec:
    """Build the spec of a model directory from its ``config.json``, without loading it.

    Args:
        model_path: Directory with ``model.onnx``, ``tokenizer.json`` and ``config.json``.

    Returns:
        A spec with no remote sources, named ``path:<directory name>``, or after the
        registry model the folder holds (see :func:`registry_alias`).

    Raises:
        ModelDirError: If the directory or a required file is missing, or the config has no
            usable dimension or names an unknown pooling.
    """
    root = Path(model_path).expanduser()
    if not root.is_dir():
        raise ModelDirError(f"model path {str(root)!r} is not a directory")
    missing = [f for f in (MODEL_FILE, TOKENIZER_FILE, CONFIG_FILE) if not (root / f).is_file()]
    if missing:
        raise ModelDirError(f"model path {str(root)!r} lacks {', '.join(missing)}")
    config = read_config(root / CONFIG_FILE)
    dim = declared_dim(config)
    if dim is None:
        raise ModelDirError(f"{root / CONFIG_FILE} declares no dimension ('dim' or 'hidden_size')")
    onnx_section = _section(config, "onnx")
    tokenizer_section = _section(config, "tokenizer")
    pooling_name = str(config.get("pooling", "mean")).lower()
    pooling = _POOLING_ALIASES.get(pooling_name)
    if pooling is None:
        raise ModelDirError(f"{root / CONFIG_FILE}: unknown pooling {pooling_name!r}")
    output = onnx_section.get("output")
    max_length = tokenizer_section.get("truncation_max_length", config.get("max_length", 512))
    if not isinstance(max_length, int) or isinstance(max_length, bool) or max_length < 1:
        raise ModelDirError(f"{root / CONFIG_FILE}: max_length must be a positive integer")
    spec = ModelSpec(
        name=model_dir_id(model_path),
        description=str(config.get("model_id") or config.get("name") or root.name),
        dim=dim,
        pooling=pooling,
        output_name=str(output) if isinstance(output, str) else None,
        normalize=bool(config.get("normalize", True)),
        query_prefix=str(config.get("query_prefix", "")),
        passage_prefix=str(config.get("passage_prefix", "")),
        max_length=max_length,
        add_special_tokens=bool(tokenizer_section.get("add_special_tokens", True)),
        uses_token_type_ids="token_type_ids" in _section(onnx_section, "inputs"),
        config_file=CONFIG_FILE,
    )
    alias = registry_alias(root, spec)
    if alias is None:
        return spec
    # The registry's model, so also run as the registry runs it.
    return dataclasses.replace(spec, name=alias, int8_products=REGISTRY[alias].int8_products)


def registry_alias(root: Path, spec: ModelSpec) -> str | None:
    """The registry model that a model folder is, byte for byte, if any.

    A folder holding the very graph and tokenizer a registry model pins (by sha256),
    configured to run them the same way, is that model rather than a lookalike, so it
    gets the registry name as its id: ``model_path=<that folder>`` and ``model="minilm"``
    then open each other's stores, and ``force_model`` can name the model. Only the files
    pinned for the PyPI source are known byte for byte; a folder with another export
    (the hub's avx2 graph, an fp32 one) keeps ``path:<name>``, as the guard cannot tell
    how close its vectors are.

    Sizes are compared before hashing, so an unrelated folder costs two ``stat`` calls;
    a match is hashed once while the file is unchanged (about 30 ms for MiniLM; the
    digest is remembered across processes by :mod:`memcore.embeddings.file_memo`).

    Args:
        root: The model folder.
        spec: The folder's spec as its ``config.json`` describes it.
    """
    for candidate in REGISTRY.values():
        model, tokenizer = candidate.package_model, candidate.package_tokenizer
        if model is None or tokenizer is None or _how_it_runs(candidate) != _how_it_runs(spec):
            continue
        if _holds(root / MODEL_FILE, model) and _holds(root / TOKENIZER_FILE, tokenizer):
            return candidate.name
    return None


def _how_it_runs(spec: ModelSpec) -> tuple[Any, ...]:
    """Everything besides the files that shapes a model's vectors."""
    return (
        spec.dim,
        spec.pooling,
        spec.output_name or "last_hidden_state",  # what the loader reads when unnamed
        spec.normalize,
        spec.query_prefix,
        spec.passage_prefix,
        spec.max_length,
        spec.add_special_tokens,
    )


def _holds(path: Path, pinned: PackageFile) -> bool:
    try:
        if pinned.size is not None and path.stat().st_size != pinned.size:
            return False
        return remembered(path, {"digest": (str, sha256_of)})["digest"] == pinned.sha256
    except OSError:
        return False


def _section(config: dict[str, Any], key: str) -> dict[str, Any]:
    value = config.get(key)
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}
