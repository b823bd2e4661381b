"""The located files of one model, and the errors raised while locating and loading them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ModelFiles:
    """Where a model's files were found on local disk.

    Attributes:
        model: The ONNX graph. External-data files, if any, sit beside it.
        tokenizer: The ``tokenizer.json``.
        source: Human-readable origin, shown in logs and ``memcore models``.
    """

    model: Path
    tokenizer: Path
    source: str


class SourceUnavailableError(Exception):
    """A source cannot provide the model; the message says why, for the final error."""


class ModelLoadError(Exception):
    """The graph or tokenizer cannot be used as the model's spec describes."""
