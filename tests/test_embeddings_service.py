"""EmbeddingService: background loading, errors, cache, batching and thread safety."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from embeddings_support.models import MINILM_DIR, POTION_DIR, require_model
from memcore.embeddings import EmbeddingService
from memcore.embeddings.tokenization import TextTokenizer
from memcore.errors import EmbeddingError, InvalidParameterError

READY_TIMEOUT = 60
PAIRS = [
    ("fix the login bug", "resolve authentication issue", "the weather is nice"),
    ("the database query is slow", "optimise the SQL index", "my cat likes to sleep"),
    ("deploy the app to production", "release the new version to the servers", "bake bread"),
]


def _ready(service: EmbeddingService) -> EmbeddingService:
    assert service.wait_ready(READY_TIMEOUT), service.error
    return service


def _embed_calls(service: EmbeddingService) -> list[Callable[[], object]]:
    return [lambda: service.embed_query("q"), lambda: service.embed_passages(["p"])]


@pytest.fixture(scope="module")
def minilm() -> Iterator[EmbeddingService]:
    service = _ready(EmbeddingService(model_path=require_model(MINILM_DIR)))
    yield service
    service.close()


@pytest.fixture(scope="module")
def potion() -> Iterator[EmbeddingService]:
    service = _ready(EmbeddingService(model_path=require_model(POTION_DIR)))
    yield service
    service.close()


@pytest.mark.parametrize("name", ["minilm", "potion"])
def test_similar_pairs_score_above_unrelated_ones(
    name: str, request: pytest.FixtureRequest
) -> None:
    service: EmbeddingService = request.getfixturevalue(name)
    for anchor, similar, unrelated in PAIRS:
        query = service.embed_query(anchor)
        passages = service.embed_passages([similar, unrelated])
        similar_score, unrelated_score = passages @ query
        assert similar_score > unrelated_score + 0.1, (anchor, similar_score, unrelated_score)


def test_vectors_are_unit_float32_of_the_model_dimension(
    minilm: EmbeddingService, potion: EmbeddingService
) -> None:
    for service, dim in ((minilm, 384), (potion, 256)):
        query = service.embed_query("hello world")
        passages = service.embed_passages(["a", "b c", "d e f"])
        assert query.shape == (dim,) and query.dtype == np.float32
        assert passages.shape == (3, dim) and passages.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)
        assert service.embed_passages([]).shape == (0, dim)
    assert not potion.embed_query("").any()  # zero vector, no NaN


def test_loading_then_ready_for_a_real_model() -> None:
    service = EmbeddingService(model_path=require_model(MINILM_DIR), autostart=False)
    try:
        assert service.status == "loading"
        # The shared folder holds the registry's MiniLM files, so it has the registry id.
        assert (service.model_id, service.dim) == ("minilm", 384)
        with pytest.raises(EmbeddingError, match=r"^Embedding service not ready: ") as early:
            service.embed_query("too early")
        assert "'minilm' is still loading" in str(early.value)
        assert early.value.details == {"model": "minilm", "state": "loading", "waited_seconds": 0.0}
        service.start()
        service.start()  # idempotent
        assert service.wait_ready(READY_TIMEOUT)
        assert service.info() == {
            "status": "ready",
            "model": "minilm",
            "dim": 384,
            "error": None,
        }
        assert service.source is not None and service.source.startswith("directory ")
    finally:
        service.close()


def test_constructor_never_waits_and_calls_get_not_ready_while_loading() -> None:
    release = threading.Event()

    def slow_embedder(texts: list[str]) -> np.ndarray:
        release.wait(READY_TIMEOUT)
        return np.ones((len(texts), 8), dtype=np.float32)

    service = EmbeddingService(embedder=slow_embedder)
    try:
        # The probe call blocks until `release`: a constructor that waited for the model
        # would have returned only once the load timed out or finished, never "loading".
        assert service.status == "loading"
        assert (service.model_id, service.dim) == ("custom:slow_embedder", None)
        assert service.info()["status"] == "loading"
        for call in _embed_calls(service):
            with pytest.raises(EmbeddingError) as caught:
                call()
            assert str(caught.value).startswith("Embedding service not ready: ")
            assert caught.value.code == "EMBEDDING_ERROR"
            assert caught.value.details["state"] == "loading"
        assert service.count_tokens("twelve chars") == 3  # estimate while loading
        assert not service.wait_ready(timeout=0.05)
        release.set()
        assert service.wait_ready(READY_TIMEOUT)
        assert service.dim == 8
        np.testing.assert_allclose(service.embed_query("q"), np.full(8, 8**-0.5), rtol=1e-6)
    finally:
        release.set()
        service.close()


def test_a_call_made_while_loading_waits_for_the_model() -> None:
    release = threading.Event()

    def gated(texts: list[str]) -> np.ndarray:
        release.wait(READY_TIMEOUT)
        return np.ones((len(texts), 4), dtype=np.float32)

    service = EmbeddingService(embedder=gated, wait=READY_TIMEOUT)
    try:
        assert service.status == "loading" and service.wait == READY_TIMEOUT
        answers: list[np.ndarray] = []
        caller = threading.Thread(target=lambda: answers.append(service.embed_query("q")))
        caller.start()
        release.set()
        caller.join(READY_TIMEOUT)
        assert len(answers) == 1 and answers[0].shape == (4,)
    finally:
        release.set()
        service.close()


def test_the_wait_must_be_a_number_of_seconds() -> None:
    for bad in (-1, float("inf"), True, "5"):
        with pytest.raises(InvalidParameterError, match="embedding_wait"):
            EmbeddingService(autostart=False, wait=bad)  # type: ignore[arg-type]


def test_bad_model_path_fails_with_the_reason(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    service = EmbeddingService(model_path=missing)
    assert not service.wait_ready(READY_TIMEOUT)
    assert service.status == "error"
    assert service.model_id == "path:no-such-model" and service.dim is None
    assert service.error is not None and "is not a directory" in service.error
    assert service.info()["error"] == service.error
    for call in _embed_calls(service):
        with pytest.raises(EmbeddingError) as caught:
            call()
        message = str(caught.value)
        assert message.startswith(f"Embedding service failed to load: {service.error} Fix: ")
        assert "--model-path DIR" in message  # the remedy comes with the reason
        assert caught.value.details == {
            "model": "path:no-such-model",
            "state": "failed",
            "error": service.error,
        }
    assert service.count_tokens("abcdefgh") == 2  # token budgets keep working


def test_corrupt_graph_fails_with_the_runtime_reason(tmp_path: Path) -> None:
    source = require_model(POTION_DIR)
    folder = tmp_path / "broken"
    folder.mkdir()
    for name in ("tokenizer.json", "config.json"):
        (folder / name).write_bytes((source / name).read_bytes())
    (folder / "model.onnx").write_bytes(b"not an onnx graph")
    service = EmbeddingService(model_path=folder)
    assert not service.wait_ready(READY_TIMEOUT)
    assert service.dim == 256  # known from config.json even though loading failed
    assert service.error is not None
    assert service.error.startswith("InvalidProtobuf:") and "model.onnx" in service.error


def test_graph_dimension_must_match_the_config(tmp_path: Path) -> None:
    source = require_model(POTION_DIR)
    folder = tmp_path / "potion-claims-384"
    folder.mkdir()
    for name in ("model.onnx", "tokenizer.json"):
        (folder / name).symlink_to(source / name)
    config = json.loads((source / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "dim": 384}))
    service = EmbeddingService(model_path=folder)
    assert not service.wait_ready(READY_TIMEOUT)
    assert service.error == "graph produces 256d vectors, 'path:potion-claims-384' expects 384d"


def test_query_cache_hits_return_the_same_read_only_array() -> None:
    service = _ready(EmbeddingService(model_path=require_model(POTION_DIR), cache_size=2))
    try:
        assert service.cache_info() == {"hits": 0, "misses": 0, "size": 0, "maxsize": 2}
        first = service.embed_query("fix the login bug")
        again = service.embed_query("fix the login bug")
        assert again is first and not first.flags.writeable
        assert service.cache_info() == {"hits": 1, "misses": 1, "size": 1, "maxsize": 2}
        service.embed_query("second")
        service.embed_query("third")  # evicts the least recently used query
        assert service.cache_info()["size"] == 2
        assert service.embed_query("fix the login bug") is not first
        assert service.cache_info() == {"hits": 1, "misses": 4, "size": 2, "maxsize": 2}
        # Passages are never cached.
        service.embed_passages(["fix the login bug"])
        assert service.cache_info()["hits"] == 1
    finally:
        service.close()


def test_cache_can_be_disabled() -> None:
    service = _ready(EmbeddingService(model_path=require_model(POTION_DIR), cache_size=0))
    try:
        first = service.embed_query("q")
        assert service.embed_query("q") is not first
        assert service.cache_info() == {"hits": 0, "misses": 2, "size": 0, "maxsize": 0}
    finally:
        service.close()


def test_prefixes_from_the_model_config_are_applied(tmp_path: Path) -> None:
    source = require_model(POTION_DIR)
    folder = tmp_path / "potion-prefixed"
    folder.mkdir()
    for name in ("model.onnx", "tokenizer.json"):
        (folder / name).symlink_to(source / name)
    config = json.loads((source / "config.json").read_text())
    prefixes = {"query_prefix": "search query: ", "passage_prefix": "stored document: "}
    (folder / "config.json").write_text(json.dumps({**config, **prefixes}))
    plain = _ready(EmbeddingService(model_path=source))
    prefixed = _ready(EmbeddingService(model_path=folder))
    try:
        expected = plain.embed_passages(["search query: login", "stored document: login"])
        np.testing.assert_allclose(prefixed.embed_query("login"), expected[0], atol=1e-6)
        np.testing.assert_allclose(prefixed.embed_passages(["login"])[0], expected[1], atol=1e-6)
        assert not np.allclose(expected[0], expected[1])
    finally:
        plain.close()
        prefixed.close()


def _varied_texts() -> list[str]:
    words = ["the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "while"]
    words += ["servers", "restart", "at", "night"]
    rng = np.random.default_rng(7)
    texts = [" ".join(rng.choice(words, size=int(n))) for n in rng.integers(0, 320, size=20)]
    return [*texts, "", "x"]


@pytest.fixture(scope="module")
def varied(minilm: EmbeddingService) -> tuple[list[str], np.ndarray]:
    """Texts of 0 to ~320 words, and their vectors embedded one at a time (no padding)."""
    texts = _varied_texts()
    return texts, np.stack([minilm.embed_passages([t])[0] for t in texts])


def test_adaptive_batches_respect_the_token_limit_and_keep_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The float graph runs in batches (MiniLM's int8 graph runs a text per call).
    texts = _varied_texts()
    shapes: list[tuple[int, int]] = []
    real_pad = TextTokenizer.pad

    def recording_pad(self: TextTokenizer, rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        ids, mask = real_pad(self, rows)
        shapes.append(ids.shape)
        return ids, mask

    service = _ready(
        EmbeddingService(
            model_path=require_model(MINILM_DIR), batch_size=8, max_batch_tokens=512, int8=False
        )
    )
    try:
        one_by_one = np.stack([service.embed_passages([t])[0] for t in texts])
        monkeypatch.setattr(TextTokenizer, "pad", recording_pad)
        batched = service.embed_passages(texts)
    finally:
        service.close()
    assert len(shapes) > 1 + len(texts) // 8  # the token budget, not only the count, splits
    assert all(rows <= 8 and rows * width <= 512 for rows, width in shapes)
    assert max(width for _, width in shapes) == 256  # long texts truncated at 256, not 128
    np.testing.assert_allclose(batched, one_by_one, atol=1e-5)


def test_default_batching_matches_one_by_one(
    minilm: EmbeddingService, varied: tuple[list[str], np.ndarray]
) -> None:
    # MiniLM's int8 graph scales activations per call: a text's vector must still not
    # depend on what it is embedded with, bit for bit.
    texts, one_by_one = varied
    np.testing.assert_array_equal(minilm.embed_passages(texts), one_by_one)
    reversed_batch = minilm.embed_passages(texts[::-1])
    np.testing.assert_array_equal(reversed_batch, one_by_one[::-1])


def test_many_threads_get_the_same_vectors(minilm: EmbeddingService) -> None:
    texts = [f"memory number {i} about topic {i % 5}" for i in range(24)]
    expected = minilm.embed_passages(texts)
    results: dict[int, np.ndarray] = {}
    errors: list[BaseException] = []

    def worker(index: int) -> None:
        try:
            if index % 2:
                results[index] = minilm.embed_passages(texts[index : index + 3])
            else:
                results[index] = minilm.embed_query(texts[index])[np.newaxis, :]
        except BaseException as exc:  # surfaced by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(texts) - 3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(READY_TIMEOUT)
    assert not errors
    for index, vectors in results.items():
        np.testing.assert_allclose(vectors, expected[index : index + len(vectors)], atol=1e-5)


def test_passages_can_be_truncated_shorter_than_the_model(minilm: EmbeddingService) -> None:
    # "authentication" is one MiniLM token: with [CLS] and [SEP], 126 of them fill 128
    # tokens; another topic follows.
    head = "authentication " * 126
    long_text = head + "the weather is sunny and warm " * 40
    short, whole, cut = minilm.embed_passages(
        ["fix the login bug", long_text, head.strip()], max_tokens=128
    )
    # [CLS] + 126 words + [SEP]: the tail is cut off, so the text embeds as its head.
    np.testing.assert_allclose(short, minilm.embed_passages(["fix the login bug"])[0], atol=1e-5)
    np.testing.assert_allclose(whole, cut, atol=1e-5)
    at_model_length = minilm.embed_passages([long_text])[0]
    assert float(at_model_length @ cut) < 0.99  # at 256 tokens the tail counts
    # A limit at or above the model's own changes nothing; one too short to hold the
    # special tokens is raised to fit them rather than disabling truncation.
    np.testing.assert_allclose(
        minilm.embed_passages([long_text], max_tokens=4096)[0], at_model_length, atol=1e-5
    )
    one = minilm.embed_passages([long_text], max_tokens=1)[0]
    np.testing.assert_allclose(one, minilm.embed_passages(["authentication"])[0], atol=1e-5)
    for bad in (0, -3, True, 2.5):
        with pytest.raises(InvalidParameterError, match="max_tokens"):
            minilm.embed_passages(["x"], max_tokens=bad)  # type: ignore[arg-type]


def test_count_tokens_uses_the_tokenizer(minilm: EmbeddingService) -> None:
    assert minilm.count_tokens("hello world") == 2
    assert minilm.count_tokens("") == 0
    assert minilm.count_tokens("authentication " * 300) == 300  # not truncated


def test_custom_embedder_output_is_validated_and_normalised() -> None:
    def doubled(texts: list[str]) -> list[list[float]]:
        return [[2.0, 0.0, 0.0] if t != "zero" else [0.0, 0.0, 0.0] for t in texts]

    service = _ready(EmbeddingService(embedder=doubled))
    try:
        assert service.model_id == "custom:doubled" and service.dim == 3
        np.testing.assert_array_equal(service.embed_passages(["a", "zero"]), [[1, 0, 0], [0, 0, 0]])
        assert service.count_tokens("abcdefgh") == 2  # no tokenizer: estimate
    finally:
        service.close()


@pytest.mark.parametrize(
    ("output", "fragment"),
    [
        (lambda n: np.ones((n, 4, 1), dtype=np.float32), "expected shape"),
        (lambda n: np.ones((n + 1, 4), dtype=np.float32), "expected shape"),
        (lambda n: np.ones((n, 5), dtype=np.float32), "expected 4 columns"),
        (lambda n: np.full((n, 4), np.nan, dtype=np.float32), "NaN"),
        (lambda n: [["x"] * 4] * n, "float32"),
    ],
)
def test_custom_embedder_bad_output_raises_embedding_error(output: object, fragment: str) -> None:
    calls = {"n": 0}

    def embedder(texts: list[str]) -> object:
        calls["n"] += 1
        if calls["n"] == 1:  # the probe sees a good answer
            return np.ones((len(texts), 4), dtype=np.float32)
        return output(len(texts))  # type: ignore[operator]

    service = _ready(EmbeddingService(embedder=embedder, retry_delays=(0, 0, 0)))
    try:
        with pytest.raises(EmbeddingError, match=f"invalid output.*{fragment}"):
            service.embed_passages(["a", "b"])
        assert calls["n"] == 2  # malformed output is not retried
    finally:
        service.close()


def test_failing_embedder_is_retried_then_reported() -> None:
    calls: list[int] = []

    def flaky(texts: list[str]) -> np.ndarray:
        calls.append(len(texts))
        if len(calls) in (2, 3):
            raise ConnectionError("remote embedder hiccup")
        return np.ones((len(texts), 2), dtype=np.float32)

    service = _ready(EmbeddingService(embedder=flaky, retry_delays=(0.001, 0.001, 0.001)))
    try:
        assert service.embed_passages(["a"]).shape == (1, 2)
        assert len(calls) == 4  # probe, two failures, success
    finally:
        service.close()

    def broken(texts: list[str]) -> np.ndarray:
        if texts == ["memcore dimension probe"]:
            return np.ones((1, 2), dtype=np.float32)
        raise ConnectionError("down")

    service = _ready(EmbeddingService(embedder=broken, retry_delays=(0.001, 0.001, 0.001)))
    try:
        with pytest.raises(EmbeddingError, match="failed after 4 attempts: ConnectionError: down"):
            service.embed_query("q")
    finally:
        service.close()


def test_custom_embedder_probe_failure_is_a_load_error() -> None:
    def empty(texts: list[str]) -> np.ndarray:
        return np.zeros((len(texts), 0), dtype=np.float32)

    service = EmbeddingService(embedder=empty)
    assert not service.wait_ready(READY_TIMEOUT)
    assert service.error == "expected shape (1, dim), got (1, 0)"


def test_invalid_arguments_fail_fast() -> None:
    with pytest.raises(InvalidParameterError, match="valid models: minilm, e5_small"):
        EmbeddingService("no-such-model")
    with pytest.raises(InvalidParameterError, match="cache_size must be >= 0"):
        EmbeddingService(cache_size=-1, autostart=False)
    with pytest.raises(InvalidParameterError, match="batch_size must be >= 1") as caught:
        EmbeddingService(batch_size=0, autostart=False)
    assert caught.value.details == {"field": "batch_size"}
    with pytest.raises(InvalidParameterError, match=r"max_batch_tokens must be in 1\.\.8192"):
        EmbeddingService(max_batch_tokens=8193, autostart=False)
    with pytest.raises(InvalidParameterError, match="threads"):
        EmbeddingService(threads=0, autostart=False)


def test_non_string_input_is_rejected(potion: EmbeddingService) -> None:
    with pytest.raises(InvalidParameterError):
        potion.embed_passages("a single string")
    with pytest.raises(InvalidParameterError):
        potion.embed_passages(["ok", 3])  # type: ignore[list-item]
    with pytest.raises(InvalidParameterError):
        potion.embed_query(None)  # type: ignore[arg-type]


def test_close_releases_the_model() -> None:
    with EmbeddingService(model_path=require_model(POTION_DIR)) as service:
        assert service.wait_ready(READY_TIMEOUT)
        service.embed_query("q")
    assert service.status == "error"
    with pytest.raises(EmbeddingError, match="closed"):
        service.embed_query("q")
    assert service.cache_info()["size"] == 0
