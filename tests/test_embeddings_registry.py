"""The model registry, model directories, listings and the identity used by the guard."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import memcore
from embeddings_support.hub_env import use_hub
from embeddings_support.models import MINILM_DIR, POTION_DIR, require_model
from memcore.embeddings import REGISTRY, expected_identity, get_spec, list_models
from memcore.embeddings.model_dir import ModelDirError, spec_from_model_dir
from memcore.embeddings.package_source import package_location
from memcore.embeddings.registry import DISTRIBUTION
from memcore.errors import EmbeddingError, InvalidParameterError

EXPECTED_DIMS = {"minilm": 384, "e5_small": 384, "e5_multi": 768, "nomic": 768, "bge_m3": 1024}


def test_registry_has_the_five_models_with_their_dimensions() -> None:
    assert {name: spec.dim for name, spec in REGISTRY.items()} == EXPECTED_DIMS
    assert next(iter(REGISTRY)) == "minilm"


def test_asymmetric_models_carry_their_prefixes() -> None:
    for name in ("e5_small", "e5_multi"):
        assert (get_spec(name).query_prefix, get_spec(name).passage_prefix) == (
            "query: ",
            "passage: ",
        )
    nomic = get_spec("nomic")
    assert (nomic.query_prefix, nomic.passage_prefix) == ("search_query: ", "search_document: ")
    assert get_spec("minilm").query_prefix == get_spec("bge_m3").query_prefix == ""


def test_registry_entries_are_complete() -> None:
    for spec in REGISTRY.values():
        assert spec.hf_repo and spec.onnx_file.endswith(".onnx")
        assert spec.tokenizer_file.endswith("tokenizer.json")
        assert spec.pooling in ("mean", "cls", "none")
        assert spec.max_length >= 256 and spec.size_mb > 0
        assert spec.hf_files[0] == spec.onnx_file
    assert get_spec("bge_m3").pooling == "cls"
    assert "onnx/model.onnx_data" in get_spec("bge_m3").hf_files
    minilm = get_spec("minilm")
    assert minilm.max_length == 256 and minilm.uses_token_type_ids
    assert minilm.package_model is not None and minilm.package_tokenizer is not None


def test_minilm_package_digests_match_the_shared_model_config() -> None:
    config = json.loads((require_model(MINILM_DIR) / "config.json").read_text())
    minilm = get_spec("minilm")
    assert minilm.package_model is not None and minilm.package_tokenizer is not None
    assert minilm.package_model.sha256 == config["files"]["model.onnx"]["sha256"]
    assert minilm.package_tokenizer.sha256 == config["files"]["tokenizer.json"]["sha256"]
    sources = {s["package"]: s for s in config["sources"]}
    source = sources[minilm.package_model.distribution]
    assert (source["version"], source["path_in_wheel"]) == (
        minilm.package_model.version,
        minilm.package_model.path,
    )
    # The tokenizer ships inside memcore (no data-only package carries it): the same bytes.
    assert minilm.package_tokenizer.distribution == DISTRIBUTION
    shipped = Path(memcore.__file__).parent.parent / minilm.package_tokenizer.path
    assert shipped.read_bytes() == (require_model(MINILM_DIR) / "tokenizer.json").read_bytes()
    assert shipped.stat().st_size == minilm.package_tokenizer.size


def test_specs_and_registry_are_immutable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        get_spec("minilm").dim = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        REGISTRY["other"] = get_spec("minilm")  # type: ignore[index]


def test_unknown_model_name_lists_the_valid_ones() -> None:
    with pytest.raises(InvalidParameterError) as caught:
        get_spec("gpt-embed")
    message = str(caught.value)
    assert "'gpt-embed'" in message
    assert all(name in message for name in EXPECTED_DIMS)
    assert caught.value.code == "INVALID_PARAMETER"
    assert caught.value.details == {"field": "model"}
    assert "model_path" not in message


def test_a_folder_given_as_model_name_points_at_model_path() -> None:
    with pytest.raises(InvalidParameterError, match="pass it as model_path instead"):
        get_spec("/opt/models/all-MiniLM-L6-v2")


def test_model_dir_specs_follow_their_config() -> None:
    minilm = spec_from_model_dir(require_model(MINILM_DIR))
    # The folder holds the registry's pinned MiniLM files byte for byte: it is "minilm".
    assert (minilm.name, minilm.dim, minilm.pooling) == ("minilm", 384, "mean")
    assert (minilm.output_name, minilm.max_length, minilm.add_special_tokens) == (
        "last_hidden_state",
        256,
        True,
    )
    assert minilm.uses_token_type_ids
    potion = spec_from_model_dir(require_model(POTION_DIR))
    assert (potion.name, potion.dim, potion.pooling) == ("path:potion-base-8M", 256, "none")
    assert (potion.output_name, potion.max_length, potion.add_special_tokens) == (
        "sentence_embedding",
        512,
        False,
    )
    assert not potion.uses_token_type_ids


def _model_dir(tmp_path: Path, config: dict[str, object]) -> Path:
    folder = tmp_path / "my-model"
    folder.mkdir()
    for name in ("model.onnx", "tokenizer.json"):
        (folder / name).write_bytes(b"")
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_model_dir_accepts_a_plain_hugging_face_config(tmp_path: Path) -> None:
    spec = spec_from_model_dir(_model_dir(tmp_path, {"hidden_size": 768}))
    assert (spec.name, spec.dim, spec.pooling, spec.max_length) == (
        "path:my-model",
        768,
        "mean",
        512,
    )


@pytest.mark.parametrize(
    ("config", "fragment"),
    [
        ({"pooling": "mean"}, "declares no dimension"),
        ({"dim": 8, "pooling": "max"}, "unknown pooling 'max'"),
        ({"dim": 8, "max_length": "long"}, "max_length"),
    ],
)
def test_model_dir_rejects_unusable_configs(
    tmp_path: Path, config: dict[str, object], fragment: str
) -> None:
    with pytest.raises(ModelDirError, match=fragment):
        spec_from_model_dir(_model_dir(tmp_path, config))


def test_model_dir_names_missing_files(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"dim": 8}')
    with pytest.raises(ModelDirError, match=r"lacks model\.onnx, tokenizer\.json"):
        spec_from_model_dir(tmp_path)
    with pytest.raises(ModelDirError, match="is not a directory"):
        spec_from_model_dir(tmp_path / "absent")


def test_a_folder_is_a_registry_model_only_with_its_files_run_its_way(tmp_path: Path) -> None:
    minilm = require_model(MINILM_DIR)
    renamed = tmp_path / "any-name"
    renamed.mkdir()
    for name in ("model.onnx", "tokenizer.json", "config.json"):
        (renamed / name).symlink_to(minilm / name)
    assert expected_identity(model_path=renamed) == ("minilm", 384)
    config = json.loads((minilm / "config.json").read_text())
    (renamed / "config.json").unlink()
    (renamed / "config.json").write_text(json.dumps({**config, "normalize": False}))
    assert expected_identity(model_path=renamed) == ("path:any-name", 384)
    (renamed / "config.json").write_text(json.dumps(config))
    (renamed / "tokenizer.json").unlink()
    (renamed / "tokenizer.json").write_text((minilm / "tokenizer.json").read_text() + " ")
    assert expected_identity(model_path=renamed) == ("path:any-name", 384)


def test_expected_identity_from_registry_and_directory() -> None:
    assert expected_identity() == ("minilm", 384)
    assert expected_identity("bge_m3") == ("bge_m3", 1024)
    potion = require_model(POTION_DIR)
    assert expected_identity(model_path=potion) == ("path:potion-base-8M", 256)
    # model_path wins over the registry name, as in the service.
    assert expected_identity("e5_multi", model_path=str(potion) + os.sep) == (
        "path:potion-base-8M",
        256,
    )


def test_expected_identity_errors(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError):
        expected_identity("nope")
    with pytest.raises(EmbeddingError, match="Invalid model path") as caught:
        expected_identity(model_path=tmp_path / "absent")
    assert caught.value.code == "EMBEDDING_ERROR"


def test_identity_and_listing_do_not_import_onnxruntime() -> None:
    code = (
        "import sys, memcore.embeddings as e\n"
        f"e.expected_identity(model_path={str(POTION_DIR)!r})\n"
        "e.expected_identity('nomic'); e.list_models()\n"
        "e.EmbeddingService('minilm', autostart=False)\n"
        "assert 'onnxruntime' not in sys.modules and 'tokenizers' not in sys.modules\n"
    )
    require_model(POTION_DIR)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "HF_HUB_OFFLINE": "1"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=60)


def test_list_models_reports_local_availability(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_hub(monkeypatch, hf_home=tmp_path / "hf", offline=True)
    rows = {row["name"]: row for row in list_models()}
    assert list(rows) == list(EXPECTED_DIMS)
    assert {name: row["dim"] for name, row in rows.items()} == EXPECTED_DIMS
    minilm = rows["minilm"]
    assert minilm["default"] and minilm["hf_repo"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert minilm["pooling"] == "mean" and minilm["max_length"] == 256
    assert rows["e5_small"]["query_prefix"] == "query: "
    # Nothing is in the empty cache; only the offline wheels, if installed, provide minilm.
    installed = package_location(get_spec("minilm"))
    assert minilm["available_locally"] is (installed is not None)
    assert minilm["location"] == (f"package {installed}" if installed else None)
    assert not any(rows[name]["available_locally"] for name in ("e5_small", "nomic", "bge_m3"))
