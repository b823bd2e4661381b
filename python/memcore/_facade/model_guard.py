"""The dimension/model guard (docs/configuration.md, "The model guard"): a store keeps the
vectors of one model.

The core records the first model's ``(id, dim)`` and refuses another with
``DIMENSION_MISMATCH``; this module decides what ``force_model`` and ``reset_memory`` do
about it. Decisions, with what a user would expect of them:

- ``force_model`` opens the store with the model that made it, whatever was configured.
  A registry model is loaded by name. A model folder (``model_path``) is found through
  the record this module keeps beside the store (:data:`MODEL_RECORD`: the folder's
  absolute path), because the core's id names only the folder (``path:<name>``) so that
  moving it does not trip the guard. The record is advisory: it is used only while it
  names the store's recorded identity and the folder still yields that identity; if it
  cannot be used, the error says which folder to pass.
- A folder holding a registry model byte for byte is that model (its id is the registry
  name, see ``memcore.embeddings.model_dir.registry_alias``), so the shared MiniLM folder
  and ``model="minilm"`` open each other's stores.
- Stores recorded by earlier versions as ``path:<name>`` for such a folder are upgraded
  to the registry id when opened with a folder of that same name (the guard has always
  trusted the folder name).
- ``reset_memory`` wipes every record and adopts the configured model, only on a mismatch.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memcore.embeddings import REGISTRY, expected_identity
from memcore.embeddings.model_dir import model_dir_id
from memcore.errors import DimensionMismatchError, EmbeddingError

if TYPE_CHECKING:
    from memcore._core import Engine

#: The file in the data directory that remembers where a folder model lives.
MODEL_RECORD = "embedding_model.json"

_log = logging.getLogger("memcore.embeddings")


@dataclass(frozen=True)
class ModelChoice:
    """The model a Memory loads once the guard has admitted it."""

    model: str | None
    model_path: str | os.PathLike[str] | None


class ModelGuard:
    """The guard of one open store."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._record = Path(engine.path) / MODEL_RECORD

    def admit(
        self,
        model: str,
        model_path: str | os.PathLike[str] | None,
        *,
        force_model: bool,
        reset_memory: bool,
    ) -> ModelChoice:
        """Check a registry or folder model against the store; returns the model to load.

        Raises:
            DimensionMismatchError: Another model made the store and neither option says
                what to do, or ``force_model`` cannot locate that model.
            InvalidParameterError: ``model`` is not a registry name.
        """
        try:
            model_id, dim = expected_identity(model, model_path)
        except EmbeddingError:
            # An unusable model folder: the service reports why in its error status,
            # and lexical and graph features keep working.
            return ModelChoice(model, model_path)
        self._upgrade_folder_id(model_id, dim, model_path)
        try:
            self._engine.check_embedding_identity(model_id, dim)
        except DimensionMismatchError:
            if force_model:
                return self._stored_model()
            if not reset_memory:
                raise
            self._engine.reset_all()
            self._engine.set_embedding_identity(model_id, dim)
        if model_path is not None:
            self._remember(model_id, dim, model_path)
        return ModelChoice(model, model_path)

    def custom_check(self, reset_memory: bool) -> Callable[[str, int], None]:
        """The guard for a custom embedder, run once its probe gave the dimension."""

        def check(model_id: str, dim: int) -> None:
            try:
                self._engine.check_embedding_identity(model_id, dim)
            except DimensionMismatchError:
                if not reset_memory:
                    raise
                self._engine.reset_all()
                self._engine.set_embedding_identity(model_id, dim)

        return check

    def _stored_model(self) -> ModelChoice:
        """The model the store was made with, for ``force_model``."""
        identity = self._engine.embedding_identity()
        stored, dim = identity if identity is not None else (None, 0)
        folder = self._recorded_folder(stored, dim)
        if folder is not None:
            return ModelChoice(None, folder)
        if stored in REGISTRY:
            return ModelChoice(stored, None)
        raise DimensionMismatchError(_cannot_force(stored, dim))

    def _upgrade_folder_id(
        self, model_id: str, dim: int, model_path: str | os.PathLike[str] | None
    ) -> None:
        if model_path is None or model_id.startswith("path:") or self._engine.read_only:
            return
        if self._engine.embedding_identity() == (model_dir_id(model_path), dim):
            self._engine.set_embedding_identity(model_id, dim)

    def _remember(self, model_id: str, dim: int, model_path: str | os.PathLike[str]) -> None:
        """Record where the folder model of a writable store lives (if it changed)."""
        if self._engine.read_only or self._engine.embedding_identity() != (model_id, dim):
            return
        entry = {
            "model": model_id,
            "dim": dim,
            "model_path": os.path.normpath(Path(model_path).expanduser().absolute()),
        }
        if self._read_record() == entry:
            return
        staged = self._record.with_name(f"{MODEL_RECORD}.tmp")
        try:
            staged.write_text(json.dumps(entry, indent=2) + "\n", encoding="utf-8")
            staged.replace(self._record)
        except OSError as exc:
            # Only force_model needs the record, and it says what to pass without it.
            _log.warning("could not record the model folder in %s: %s", self._record, exc)
            with contextlib.suppress(OSError):
                staged.unlink()

    def _read_record(self) -> dict[str, Any] | None:
        try:
            entry = json.loads(self._record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return entry if isinstance(entry, dict) else None

    def _recorded_folder(self, model_id: str | None, dim: int) -> str | None:
        """The recorded folder of the store's model, if it still holds that model."""
        entry = self._read_record()
        if entry is None or (entry.get("model"), entry.get("dim")) != (model_id, dim):
            return None
        folder = entry.get("model_path")
        if not isinstance(folder, str):
            return None
        try:
            found = expected_identity(model_path=folder)
        except EmbeddingError:
            return None
        return folder if found == (model_id, dim) else None


def _cannot_force(stored: str | None, dim: int) -> str:
    """Why force_model cannot load the stored model, and what to pass instead."""
    prefix = "force_model cannot select the stored model"
    if stored is None:
        return (
            f"{prefix}: the store holds {dim}d vectors given directly, with no model recorded. "
            "Configure the model that made them, or use reset_memory."
        )
    if stored.startswith("custom:"):
        return (
            f"{prefix} {stored!r}: it is a custom embedding function. Pass "
            f"embedder={stored.removeprefix('custom:')}, or use reset_memory."
        )
    if stored.startswith("path:"):
        return (
            f"{prefix} {stored!r}: the folder it was loaded from is not recorded or no longer "
            f"holds it. Pass model_path pointing at the folder named "
            f"{stored.removeprefix('path:')!r}, or use reset_memory."
        )
    return (
        f"{prefix} {stored!r}: it is not in this version's registry. Pass model_path "
        "pointing at that model, or use reset_memory."
    )
