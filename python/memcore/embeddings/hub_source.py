"""The Hugging Face source: the local hub cache first, then a download through huggingface_hub.

huggingface_hub reads ``HF_ENDPOINT``, ``HF_HOME``/``HF_HUB_CACHE`` and ``HF_HUB_OFFLINE`` once,
when it is first imported, into ``huggingface_hub.constants``. memcore imports it lazily (in
the loader thread), so setting these variables before the first model load is enough; they
are read back from ``constants`` at call time rather than from the environment so that this
module and huggingface_hub itself always agree on the endpoint, cache and offline mode.

The cache lookup uses ``try_to_load_from_cache``, which only touches the file system: a
cached model therefore loads with no network traffic at all. ``hf_hub_download`` would send
a HEAD request (and a telemetry probe) even for cached files. Importing either takes about
0.2 s (huggingface_hub's download machinery and its HTTP client), so a repository with no
folder in the cache is passed over before that import: the default model, installed with
its wheels, loads without it.

Before downloading, one request with a short timeout checks that the endpoint answers at
all: huggingface_hub retries a refused or timed-out connection five times with growing
pauses (about 24 s) before it gives up, which would leave an offline user waiting in
silence for an error. Any HTTP answer, even an error status, counts as reachable; the
download then reports what went wrong.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from memcore.embeddings.model_dir import declared_dim
from memcore.embeddings.model_files import ModelFiles, SourceUnavailableError
from memcore.embeddings.registry import ModelSpec

PROBE_TIMEOUT = 3.0
"""Seconds the reachability check waits for the hub to answer (connect and response)."""


def _require_repo(spec: ModelSpec) -> str:
    if spec.hf_repo is None:
        raise SourceUnavailableError(f"{spec.name!r} has no Hugging Face repository")
    return spec.hf_repo


def hub_cache_files(spec: ModelSpec) -> ModelFiles:
    """Model files of ``spec`` from the local Hugging Face cache, without network access.

    Raises:
        SourceUnavailableError: If any of the model's files is not cached.
    """
    from huggingface_hub import constants

    repo = _require_repo(spec)
    if not (Path(constants.HF_HUB_CACHE) / _cache_folder(repo)).is_dir():
        raise SourceUnavailableError(f"{repo} is not in {constants.HF_HUB_CACHE}")
    from huggingface_hub import try_to_load_from_cache

    paths: dict[str, Path] = {}
    for filename in spec.hf_files:
        found = try_to_load_from_cache(repo, filename, revision=spec.hf_revision)
        if not isinstance(found, str):
            raise SourceUnavailableError(f"{repo}/{filename} is not in {constants.HF_HUB_CACHE}")
        paths[filename] = Path(found)
    return _checked_files(spec, paths, origin=f"hf-cache {repo}")


def _cache_folder(repo: str) -> str:
    """A model repository's folder in the hub cache (huggingface_hub's documented layout:
    ``models--<owner>--<name>``; tests compare it with the library's own)."""
    return "models--" + repo.replace("/", "--")


def hub_download_files(spec: ModelSpec) -> ModelFiles:
    """Download the model's files into the Hugging Face cache and return them.

    This is memcore's only network access. It honours ``HF_ENDPOINT`` (a mirror) and is
    skipped when ``HF_HUB_OFFLINE`` is set.

    Raises:
        SourceUnavailableError: If offline mode is on, or any download fails.
    """
    from huggingface_hub import constants, hf_hub_download

    repo = _require_repo(spec)
    if constants.HF_HUB_OFFLINE:
        raise SourceUnavailableError("download skipped: HF_HUB_OFFLINE is set")
    unreachable = _unreachable(constants.ENDPOINT)
    if unreachable is not None:
        raise SourceUnavailableError(
            f"download skipped: the hub at {constants.ENDPOINT} is unreachable ({unreachable})"
        )
    paths: dict[str, Path] = {}
    for filename in spec.hf_files:
        try:
            found = hf_hub_download(repo, filename, revision=spec.hf_revision)
        # Any failure (HTTP, file system, bad mirror) is only a reason in the final report.
        except Exception as exc:
            first_line = (str(exc).strip().splitlines() or [""])[0]
            raise SourceUnavailableError(
                f"download of {repo}/{filename} from {constants.ENDPOINT} failed: "
                f"{type(exc).__name__}: {first_line}"
            ) from exc
        paths[filename] = Path(found)
    return _checked_files(spec, paths, origin=f"hf-hub {repo} via {constants.ENDPOINT}")


def _unreachable(endpoint: str) -> str | None:
    """Why ``endpoint`` cannot be reached within :data:`PROBE_TIMEOUT`, or None if it answers.

    Uses huggingface_hub's own HTTP session, so proxies and certificates are those the
    download would use. The request runs in a daemon thread that is abandoned after the
    timeout, because the client's timeout does not cover a name lookup that hangs (a
    machine offline behind an unanswering resolver).
    """
    from huggingface_hub import get_session

    outcome: list[str | None] = []

    def probe() -> None:
        try:
            get_session().head(endpoint, timeout=PROBE_TIMEOUT, follow_redirects=False)
        # Whatever stops the request (refused, timed out, no route, a bad proxy): offline.
        except Exception as exc:
            first_line = (str(exc).strip().splitlines() or [""])[0]
            outcome.append(
                f"{type(exc).__name__}: {first_line}" if first_line else type(exc).__name__
            )
        else:
            outcome.append(None)

    worker = threading.Thread(target=probe, name="memcore-hub-probe", daemon=True)
    worker.start()
    worker.join(PROBE_TIMEOUT + 1.0)
    if not outcome:
        return f"no answer within {PROBE_TIMEOUT + 1.0:g} s"
    return outcome[0]


def _checked_files(spec: ModelSpec, paths: dict[str, Path], *, origin: str) -> ModelFiles:
    """Cross-check the repo's config against the registry before trusting its graph."""
    if spec.config_file is not None:
        config_dim = _config_dim(paths[spec.config_file])
        if config_dim is not None and config_dim != spec.dim:
            raise SourceUnavailableError(
                f"{spec.hf_repo}/{spec.config_file} declares {config_dim}d, "
                f"registry expects {spec.dim}d"
            )
    # Cache paths are symlinks into blobs/; they are kept unresolved so that ONNX external
    # data, looked up beside the graph's path, is found in the same snapshot folder.
    return ModelFiles(
        model=paths[spec.onnx_file], tokenizer=paths[spec.tokenizer_file], source=origin
    )


def _config_dim(path: Path) -> int | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SourceUnavailableError(f"cannot read {path}: {exc}") from None
    return declared_dim(data) if isinstance(data, dict) else None


def hub_cache_location(spec: ModelSpec) -> str | None:
    """Folder of the cached graph if every file of ``spec`` is cached, else ``None``."""
    try:
        return str(hub_cache_files(spec).model.parent)
    except SourceUnavailableError:
        return None
