"""Pooling, normalisation, tokenizer overrides and batch planning, checked by hand."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from tokenizers import Tokenizer

from embeddings_support.models import MINILM_DIR, POTION_DIR, require_model
from memcore.embeddings.batching import plan_batches
from memcore.embeddings.model_dir import spec_from_model_dir
from memcore.embeddings.onnx_model import OnnxEmbedder, session_options
from memcore.embeddings.pooling import cls_pool, l2_normalize, mean_pool, pool
from memcore.embeddings.retry import RetriesExhaustedError, RetryPolicy
from memcore.embeddings.sources import directory_files
from memcore.embeddings.threads import default_intra_op_threads, physical_cores, usable_cpus
from memcore.embeddings.tokenization import TextTokenizer

TEXTS = ["fix the login bug", "resolve authentication issue in the session handler", ""]


def _hand_embeddings(model_dir: str, texts: list[str]) -> np.ndarray:
    """Reference vectors from onnxruntime and numpy directly, one text at a time.

    Each text runs alone (no padding at all), mean pooling is a plain average of its token
    rows, and normalisation divides by the norm, so nothing here shares code with memcore.
    """
    import json
    from pathlib import Path

    folder = Path(model_dir)
    config = json.loads((folder / "config.json").read_text())
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(config["tokenizer"]["truncation_max_length"])
    session = ort.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"])
    input_names = {i.name for i in session.get_inputs()}
    rows = []
    for text in texts:
        ids = tokenizer.encode(
            text, add_special_tokens=config["tokenizer"]["add_special_tokens"]
        ).ids
        ids_array = np.array([ids or [0]], dtype=np.int64)
        mask = np.array([[1] * len(ids) or [0]], dtype=np.int64)
        feeds = {"input_ids": ids_array, "attention_mask": mask}
        if "token_type_ids" in input_names:
            feeds["token_type_ids"] = np.zeros_like(ids_array)
        output = session.run([config["onnx"]["output"]], feeds)[0][0]
        vector = output.mean(axis=0) if config["pooling"] == "mean" else output
        if not ids:
            vector = np.zeros_like(vector)
        norm = float(np.sqrt((vector.astype(np.float64) ** 2).sum()))
        rows.append(vector / norm if norm > 0 else vector)
    return np.array(rows, dtype=np.float32)


@pytest.mark.parametrize("model_dir", [MINILM_DIR, POTION_DIR], ids=["minilm", "potion"])
def test_pooling_matches_a_hand_computation(model_dir: object) -> None:
    folder = require_model(model_dir)  # type: ignore[arg-type]
    embedder = OnnxEmbedder(spec_from_model_dir(folder), directory_files(folder), threads=1)
    ours = embedder.embed(TEXTS)
    reference = _hand_embeddings(str(folder), TEXTS)
    assert ours.shape == (len(TEXTS), embedder.dim) and ours.dtype == np.float32
    np.testing.assert_allclose(ours, reference, atol=1e-5)
    norms = np.linalg.norm(ours, axis=1)
    np.testing.assert_allclose(norms[:2], 1.0, atol=1e-5)


def test_potion_empty_string_is_a_zero_vector_not_nan() -> None:
    folder = require_model(POTION_DIR)
    embedder = OnnxEmbedder(spec_from_model_dir(folder), directory_files(folder), threads=1)
    vectors = embedder.embed(["", "   ", "hello"])
    assert np.isfinite(vectors).all()
    assert not vectors[0].any() and not vectors[1].any()
    assert abs(float(np.linalg.norm(vectors[2])) - 1.0) < 1e-5


def test_mean_pool_ignores_padding_and_survives_empty_rows() -> None:
    hidden = np.arange(2 * 3 * 2, dtype=np.float32).reshape(2, 3, 2)
    mask = np.array([[1, 1, 0], [0, 0, 0]], dtype=np.int64)
    pooled = mean_pool(hidden, mask)
    np.testing.assert_allclose(pooled[0], hidden[0, :2].mean(axis=0))
    np.testing.assert_array_equal(pooled[1], [0.0, 0.0])


def test_cls_and_pre_pooled_outputs() -> None:
    hidden = np.random.default_rng(0).normal(size=(2, 4, 3)).astype(np.float32)
    mask = np.ones((2, 4), dtype=np.int64)
    np.testing.assert_array_equal(cls_pool(hidden), hidden[:, 0])
    np.testing.assert_array_equal(pool(hidden, mask, "cls"), hidden[:, 0])
    np.testing.assert_array_equal(pool(hidden[:, 0], mask, "none"), hidden[:, 0])
    with pytest.raises(ValueError, match="rank-2"):
        pool(hidden, mask, "none")


def test_l2_normalize_guards_zero_vectors() -> None:
    vectors = np.array([[3.0, 4.0], [0.0, 0.0], [1e-20, 0.0]], dtype=np.float32)
    normalised = l2_normalize(vectors)
    np.testing.assert_allclose(normalised[0], [0.6, 0.8])
    np.testing.assert_array_equal(normalised[1:], 0.0)


def test_minilm_tokenizer_overrides_truncation_and_padding() -> None:
    folder = require_model(MINILM_DIR)
    tokenizer = TextTokenizer(folder / "tokenizer.json", max_length=256, add_special_tokens=True)
    long_text = "authentication " * 400
    rows = tokenizer.encode([long_text, "hi"])
    # The file says truncate at 128 and pad to 128: both are overridden.
    assert [len(r) for r in rows] == [256, 3]
    ids, mask = tokenizer.pad([rows[1], rows[1][:2]])
    assert ids.shape == mask.shape == (2, 3)
    assert mask.tolist() == [[1, 1, 1], [1, 1, 0]]
    assert ids[1, 2] == tokenizer.pad_id == 0
    assert tokenizer.count(long_text) == 400  # counting is not truncated
    # A shorter limit per call keeps [CLS] and [SEP]; a longer one is the model's own.
    short = tokenizer.encode([long_text, "hi"], max_length=128)
    assert [len(r) for r in short] == [128, 3] and short[0][-1] == rows[0][-1] == 102
    assert short[0][:127] == rows[0][:127]
    assert [len(r) for r in tokenizer.encode([long_text], max_length=1000)] == [256]
    assert [len(r) for r in tokenizer.encode([long_text], max_length=1)] == [3]
    assert tokenizer.pad([[], []])[0].shape == (2, 1)


@pytest.mark.parametrize(
    ("lengths", "max_tokens", "max_items"),
    [
        ([5, 1, 300, 40, 40, 2, 0, 17] * 9, 512, 8),
        ([1] * 100, 8192, 32),
        ([256] * 40, 8192, 32),
        ([9000, 3, 4], 8192, 32),
        ([], 10, 2),
    ],
)
def test_plan_batches_respects_both_limits_and_covers_every_text(
    lengths: list[int], max_tokens: int, max_items: int
) -> None:
    batches = plan_batches(lengths, max_tokens, max_items)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    for batch in batches:
        width = max(max(lengths[i] for i in batch), 1)
        assert len(batch) <= max_items
        assert len(batch) * width <= max_tokens or len(batch) == 1
    flat = [lengths[i] for batch in batches for i in batch]
    assert flat == sorted(flat)  # shortest first, so batches carry little padding


def test_plan_batches_packs_full_batches() -> None:
    assert [len(b) for b in plan_batches([10] * 100, 8192, 32)] == [32, 32, 32, 4]
    assert [len(b) for b in plan_batches([256] * 40, 1024, 32)] == [4] * 10
    with pytest.raises(ValueError, match="positive"):
        plan_batches([1], 0, 1)


def test_retry_policy_waits_100ms_500ms_2s_then_gives_up() -> None:
    waits: list[float] = []
    attempts: list[int] = []

    def always_fails() -> int:
        attempts.append(1)
        raise RuntimeError("transient")

    with pytest.raises(RetriesExhaustedError, match="after 4 attempts") as caught:
        RetryPolicy(sleep=waits.append).call(always_fails)
    assert waits == [0.1, 0.5, 2.0] and len(attempts) == 4
    assert isinstance(caught.value.__cause__, RuntimeError)

    waits.clear()
    outcomes: Iterator[int | Exception] = iter([RuntimeError("once"), 7])

    def fails_once() -> int:
        outcome = next(outcomes)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    assert RetryPolicy(sleep=waits.append).call(fails_once) == 7
    assert waits == [0.1]


def test_onnx_inference_is_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    folder = require_model(POTION_DIR)
    waits: list[float] = []
    embedder = OnnxEmbedder(
        spec_from_model_dir(folder),
        directory_files(folder),
        retry=RetryPolicy(sleep=waits.append),
    )
    session = embedder._session
    real_run = session.run
    failures = iter([True, True])

    def flaky_run(*args: object, **kwargs: object) -> object:
        if next(failures, False):
            raise RuntimeError("simulated onnxruntime failure")
        return real_run(*args, **kwargs)

    monkeypatch.setattr(session, "run", flaky_run)
    assert embedder.embed(["hello"]).shape == (1, 256)
    assert waits == [0.1, 0.5]


def test_thread_defaults_follow_the_machine() -> None:
    cores = physical_cores()
    assert 1 <= cores <= len(usable_cpus())
    assert default_intra_op_threads() == min(cores, 4)
    options = session_options(None)
    assert options.intra_op_num_threads == min(cores, 4)
    assert options.execution_mode == ort.ExecutionMode.ORT_SEQUENTIAL
    assert session_options(3).intra_op_num_threads == 3


def test_the_pool_can_stop_spinning_when_a_call_returns(tmp_path: Path) -> None:
    assert (
        session_options(2, spin_between_calls=False).get_session_config_entry(
            "session.force_spinning_stop"
        )
        == "1"
    )
    with pytest.raises(RuntimeError):  # by default onnxruntime keeps spinning a while
        session_options(2).get_session_config_entry("session.force_spinning_stop")

    # The facade option reaches the real session, and the vectors do not change.
    from memcore import Memory

    folder = require_model(POTION_DIR)
    with (
        Memory(tmp_path / "quiet", model_path=folder, embedding_spin=False) as quiet,
        Memory(tmp_path / "spinning", model_path=folder) as spinning,
    ):
        services = [m.embeddings for m in (quiet, spinning)]
        assert all(s is not None and s.wait_ready(60) for s in services)
        session = quiet.embeddings._backend._session  # type: ignore[union-attr]
        stops = session.get_session_options().get_session_config_entry(
            "session.force_spinning_stop"
        )
        assert stops == "1"
        texts = ["the login bug", "a longer passage about the billing service"]
        np.testing.assert_array_equal(
            services[0].embed_passages(texts),  # type: ignore[union-attr]
            services[1].embed_passages(texts),  # type: ignore[union-attr]
        )
