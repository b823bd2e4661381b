"""MiniLM's int8 graph: derived once and cached, checked against the float graph, run one
text per call, and the float graph kept whenever deriving cannot be trusted."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from embeddings_support.models import MINILM_DIR, POTION_DIR, require_model
from memcore.embeddings import EmbeddingService
from memcore.embeddings import int8_graph as int8
from memcore.embeddings.file_memo import MEMO_FILE
from memcore.embeddings.int8_graph import DERIVE_LOCK
from memcore.embeddings.model_dir import spec_from_model_dir
from memcore.embeddings.model_files import ModelFiles, ModelLoadError
from memcore.embeddings.onnx_model import OnnxEmbedder
from memcore.embeddings.sources import directory_files

TEXTS = [
    "fix the login bug",
    "resolve authentication issue in the session handler",
    "the weather is nice",
    "def parse(path):\n    return json.loads(Path(path).read_text())",
    "",
]


def _passing_check(candidate: Path) -> float:
    return 1.0


@pytest.fixture(scope="module")
def minilm_files() -> ModelFiles:
    return directory_files(require_model(MINILM_DIR))


@pytest.fixture(scope="module")
def derived(tmp_path_factory: pytest.TempPathFactory, minilm_files: ModelFiles) -> ModelFiles:
    """The int8 version of the shared MiniLM, derived into a folder of this module."""
    folder = tmp_path_factory.mktemp("graphs")
    files = int8.int8_files(minilm_files, _passing_check, folder=folder)
    assert files.model.parent == folder, "derived and cached"
    return files


@pytest.fixture(scope="module")
def embedders(
    minilm_files: ModelFiles, derived: ModelFiles
) -> Iterator[tuple[OnnxEmbedder, OnnxEmbedder]]:
    spec = spec_from_model_dir(MINILM_DIR)
    original = OnnxEmbedder(spec, minilm_files, threads=2)
    quantized = OnnxEmbedder(spec, derived, threads=2, one_text_per_run=True)
    yield original, quantized
    original.close()
    quantized.close()


def test_the_derived_graph_multiplies_in_int8_without_nan_guards(derived: ModelFiles) -> None:
    ops = int8.op_types(derived.model)
    # Saved as a session optimises it: the int8 products fused with their quantize step.
    assert {"DynamicQuantizeMatMul", "MatMulIntegerToFloat"} <= ops
    assert "IsNaN" not in ops
    assert int8.quantizes_per_call(derived.model)
    assert not int8.quantizes_per_call(require_model(MINILM_DIR) / "model.onnx")
    assert derived.source.endswith(int8.SOURCE_SUFFIX)
    assert derived.tokenizer == require_model(MINILM_DIR) / "tokenizer.json"


def test_its_vectors_stay_close_and_rank_as_the_float_graph_does(
    embedders: tuple[OnnxEmbedder, OnnxEmbedder],
) -> None:
    original, quantized = embedders
    a, b = original.embed(TEXTS[:4]), quantized.embed(TEXTS[:4])
    cosines = (a * b).sum(axis=1)
    assert cosines.min() > 0.97, cosines
    # The paraphrase still beats the unrelated text by a wide margin.
    assert b[0] @ b[1] > b[0] @ b[2] + 0.3


def test_a_text_gets_the_same_vector_alone_in_any_batch_and_from_any_thread(
    embedders: tuple[OnnxEmbedder, OnnxEmbedder],
) -> None:
    _, quantized = embedders
    alone = np.concatenate([quantized.embed([t]) for t in TEXTS])
    np.testing.assert_array_equal(quantized.embed(TEXTS), alone)
    np.testing.assert_array_equal(quantized.embed(TEXTS[::-1]), alone[::-1])
    results: list[np.ndarray] = []
    threads = [
        threading.Thread(target=lambda: results.append(quantized.embed(TEXTS))) for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 4
    for result in results:
        np.testing.assert_array_equal(result, alone)


def _cached(folder: Path) -> list[str]:
    """The graphs (and rejections) in a cache folder, without its lock and its memo."""
    return sorted(p.name for p in folder.iterdir() if p.name not in (DERIVE_LOCK, MEMO_FILE))


def test_a_warm_start_reads_the_shipped_graph_from_memory(
    tmp_path: Path, minilm_files: ModelFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = int8.int8_files(minilm_files, _passing_check, folder=tmp_path)
    assert (tmp_path / MEMO_FILE).is_file()

    def not_again(*args: object) -> None:
        raise AssertionError("the shipped graph was read again")

    monkeypatch.setattr(int8, "op_types", not_again)
    monkeypatch.setattr(int8, "sha256_of", not_again)
    assert int8.int8_files(minilm_files, _passing_check, folder=tmp_path) == first


def test_a_cached_graph_is_reused_not_derived_again(
    tmp_path: Path, minilm_files: ModelFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = int8.int8_files(minilm_files, _passing_check, folder=tmp_path)
    made = first.model.stat().st_mtime_ns

    def no_second_derivation(*args: object) -> None:
        raise AssertionError("derived again")

    monkeypatch.setattr(int8, "derive", no_second_derivation)
    again = int8.int8_files(minilm_files, _passing_check, folder=tmp_path)
    assert again == first and again.model.stat().st_mtime_ns == made
    assert _cached(tmp_path) == [first.model.name], "no leftovers"


def test_a_graph_that_strays_is_rejected_once_and_for_all(
    tmp_path: Path,
    minilm_files: ModelFiles,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, "memcore.embeddings"):
        kept = int8.int8_files(minilm_files, lambda candidate: 0.5, folder=tmp_path)
    assert kept == minilm_files
    assert "rejected" in caplog.text
    assert [Path(name).suffix for name in _cached(tmp_path)] == [".rejected"]
    monkeypatch.setattr(int8, "derive", lambda *args: pytest.fail("derived again"))
    assert int8.int8_files(minilm_files, _passing_check, folder=tmp_path) == minilm_files


def test_an_unwritable_cache_keeps_the_float_graph(
    tmp_path: Path, minilm_files: ModelFiles, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with caplog.at_level(logging.WARNING, "memcore.embeddings"):
        kept = int8.int8_files(minilm_files, _passing_check, folder=blocker / "graphs")
    assert kept == minilm_files
    assert "keeping the float graph" in caplog.text


def test_a_graph_that_already_quantizes_per_call_is_used_as_it_is(
    tmp_path: Path, derived: ModelFiles
) -> None:
    assert int8.int8_files(derived, _passing_check, folder=tmp_path / "other") == derived
    assert not (tmp_path / "other").exists()


def test_only_nan_guards_are_dropped(tmp_path: Path) -> None:
    """Where(IsNaN(s), 0, s) after a softmax goes; a Where choosing anything else stays."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    zero = helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0])
    one = helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])
    nodes = [
        helper.make_node("Softmax", ["x"], ["s"], axis=-1),
        helper.make_node("IsNaN", ["s"], ["nan"]),
        helper.make_node("Where", ["nan", "zero", "s"], ["guarded"]),
        helper.make_node("IsNaN", ["guarded"], ["nan2"]),
        helper.make_node("Where", ["nan2", "one", "guarded"], ["y"]),  # not a zero guard
    ]
    graph = helper.make_graph(nodes, "g", [x], [y], initializer=[zero, one])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    source, out = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(model, str(source))
    int8._drop_nan_guards(source, out)
    ops = [node.op_type for node in onnx.load(str(out)).graph.node]
    assert ops == ["Softmax", "IsNaN", "Where"]
    values = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, -1.0]], dtype=np.float32)
    before = ort.InferenceSession(str(source)).run(None, {"x": values})[0]
    after = ort.InferenceSession(str(out)).run(None, {"x": values})[0]
    np.testing.assert_array_equal(after, before)


def test_the_service_runs_minilm_in_int8_unless_told_not_to(derived: ModelFiles) -> None:
    with (
        EmbeddingService(model_path=require_model(MINILM_DIR)) as fast,
        EmbeddingService(model_path=require_model(MINILM_DIR), int8=False) as exact,
    ):
        assert fast.wait_ready(60) and exact.wait_ready(60), (fast.error, exact.error)
        assert fast.source is not None and fast.source.endswith(int8.SOURCE_SUFFIX)
        assert exact.source is not None and not exact.source.endswith(int8.SOURCE_SUFFIX)
        a, b = fast.embed_passages(TEXTS[:3]), exact.embed_passages(TEXTS[:3])
        assert not np.array_equal(a, b)
        assert (a * b).sum(axis=1).min() > 0.97
        assert fast.model_id == exact.model_id == "minilm", "one model to the store's guard"


def test_models_not_marked_for_int8_run_as_shipped() -> None:
    with EmbeddingService(model_path=require_model(POTION_DIR)) as potion:
        assert potion.wait_ready(60), potion.error
        assert potion.source is not None and not potion.source.endswith(int8.SOURCE_SUFFIX)


def test_a_closed_embedder_refuses_work(derived: ModelFiles) -> None:
    embedder = OnnxEmbedder(
        spec_from_model_dir(MINILM_DIR), derived, threads=2, one_text_per_run=True
    )
    embedder.embed(TEXTS)  # the worker pool is running
    embedder.close()
    for texts in (TEXTS, TEXTS[:1]):
        with pytest.raises(ModelLoadError, match="closed"):
            embedder.embed(texts)
