"""An ONNX sentence-embedding model: tokenize, batch, run, pool, normalise.

Imported only by the loader thread, so ``onnxruntime`` (slow to import) never delays the
construction of a service.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import onnxruntime as ort

from memcore.embeddings.batching import DEFAULT_BATCH_TOKENS, plan_batches
from memcore.embeddings.model_files import ModelFiles, ModelLoadError
from memcore.embeddings.pooling import FloatMatrix, l2_normalize, pool
from memcore.embeddings.registry import ModelSpec
from memcore.embeddings.retry import RetryPolicy
from memcore.embeddings.threads import default_intra_op_threads
from memcore.embeddings.tokenization import IntMatrix, TextTokenizer

_KNOWN_INPUTS = frozenset({"input_ids", "attention_mask", "token_type_ids"})
_REQUIRED_INPUTS = ("input_ids", "attention_mask")
_PROBE_TEXT = "memcore dimension probe"

UNFUSED_PER_CALL = ("SkipLayerNormFusion",)
"""onnxruntime fusions left out for graphs run one text per call. Its fused residual +
layer norm kernel took a quarter of MiniLM int8's time on one thread; the add and layer
norm it replaces take a twentieth (onnxruntime 1.32, 125-token texts: 12.7k -> 16.1k
tokens/s; no difference on the float graph)."""


def session_options(threads: int | None, *, spin_between_calls: bool = True) -> Any:
    """Session settings for low-latency CPU inference.

    Sequential execution: an encoder is one chain of ops, so a parallel executor only adds
    scheduling overhead; all parallelism comes from the intra-op pool inside each matmul.
    Without ``spin_between_calls`` the pool's threads still spin inside a call (between
    its ops) but stop when it returns, instead of holding cores for a while afterwards.
    """
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads or default_intra_op_threads()
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # onnxruntime's own warnings (e.g. unused initializers) would go to stderr, which is the
    # log channel of the MCP server; errors still surface as exceptions.
    options.log_severity_level = 3
    if not spin_between_calls:
        options.add_session_config_entry("session.force_spinning_stop", "1")
    return options


class OnnxEmbedder:
    """Sentence embeddings from an ONNX encoder on the CPU.

    Thread-safe: ``InferenceSession.run`` may be called concurrently and the tokenizer is
    only read after construction. Concurrent calls share the cores, so a short query is
    slowed by, not queued behind, a long passage batch.

    Two ways to run, by graph:

    - Batches (float graphs): texts sorted by length, padded batches, the cores shared by
      onnxruntime's intra-op pool inside each matrix product.
    - One text per call (``one_text_per_run``, for graphs that quantize activations per
      call): a graph that scales activations by the largest value of the call would give
      a text another vector in another batch; alone, a text's vector is its own. The
      session runs single-threaded and the texts of one call go to a pool of one worker
      per core, each running whole texts, which on int8 graphs is also faster than
      batches (no padding, no hand-offs between threads inside a product: MiniLM int8 on
      2 cores, 23k tokens/s for 125-token code chunks against 15k in padded batches). A
      single text (a query) runs on the caller's thread.
    """

    def __init__(
        self,
        spec: ModelSpec,
        files: ModelFiles,
        *,
        threads: int | None = None,
        max_batch_tokens: int = DEFAULT_BATCH_TOKENS,
        max_batch_size: int = 32,
        retry: RetryPolicy | None = None,
        spin_between_calls: bool = True,
        one_text_per_run: bool = False,
    ) -> None:
        """Load the tokenizer and the graph, then probe the output dimension.

        Args:
            spec: Pooling, output, lengths and expected dimension.
            files: Located graph and tokenizer.
            threads: Intra-op threads; ``None`` for ``min(physical cores, 4)``.
            max_batch_tokens: Padded-token budget of one inference call.
            max_batch_size: Most texts in one inference call.
            retry: Retry policy for failed inference calls.
            spin_between_calls: Keep the intra-op threads spinning after a call returns
                (see :func:`session_options`).
            one_text_per_run: Run each text as its own call on a pool of ``threads``
                single-threaded workers (see the class notes).

        Raises:
            ModelLoadError: If the graph lacks a needed input or output, or produces a
                dimension other than ``spec.dim``.
        """
        self.spec = spec
        self.source = files.source
        self._max_batch_tokens = max_batch_tokens
        self._max_batch_size = max_batch_size
        self._retry = retry or RetryPolicy()
        # Workers of the one-text-per-call mode; 0 runs batches.
        self._workers = (threads or default_intra_op_threads()) if one_text_per_run else 0
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self._tokenizer = TextTokenizer(
            files.tokenizer, max_length=spec.max_length, add_special_tokens=spec.add_special_tokens
        )
        self._session: Any = ort.InferenceSession(
            str(files.model),
            sess_options=session_options(
                1 if one_text_per_run else threads, spin_between_calls=spin_between_calls
            ),
            providers=["CPUExecutionProvider"],
            disabled_optimizers=list(UNFUSED_PER_CALL) if one_text_per_run else [],
        )
        self._input_types = _input_types(self._session)
        self._output = _output_name(self._session, spec)
        # The probe doubles as warm-up: the first run allocates and is several times slower.
        self.dim = int(self.embed([_PROBE_TEXT]).shape[1])
        if self.dim != spec.dim:
            raise ModelLoadError(
                f"graph produces {self.dim}d vectors, {spec.name!r} expects {spec.dim}d"
            )

    def embed(self, texts: Sequence[str], max_tokens: int | None = None) -> FloatMatrix:
        """Embed texts (prefixes already applied) in token-bounded batches.

        Args:
            texts: The texts, in order.
            max_tokens: Truncate each text at this many tokens (special tokens included)
                when that is shorter than the model's ``max_length``.

        Returns:
            ``(len(texts), dim)`` float32 rows in input order, L2-normalised if the spec says so.

        Raises:
            RetriesExhaustedError: If a batch still fails after every retry.
        """
        rows = self._tokenizer.encode(texts, max_tokens)
        if self._workers:
            return self._embed_one_by_one(rows)
        batches = plan_batches([len(r) for r in rows], self._max_batch_tokens, self._max_batch_size)
        result: FloatMatrix | None = None
        for batch in batches:
            vectors = self._run(*self._tokenizer.pad([rows[i] for i in batch]))
            if result is None:
                result = np.empty((len(rows), vectors.shape[1]), dtype=np.float32)
            result[batch] = vectors
        return result if result is not None else np.empty((0, self.spec.dim), dtype=np.float32)

    def count_tokens(self, text: str) -> int:
        """Tokens in ``text`` by the model's tokenizer (no special tokens, not truncated)."""
        return self._tokenizer.count(text)

    def close(self) -> None:
        """Drop the session; its memory is freed once in-flight calls finish."""
        self._session = None
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def _embed_one_by_one(self, rows: list[list[int]]) -> FloatMatrix:
        """Each token row as its own call: on the caller's thread for one row, else on
        the worker pool (results in input order)."""

        def run_one(row: list[int]) -> FloatMatrix:
            return self._run(*self._tokenizer.pad([row]))

        if len(rows) == 1 or self._workers == 1:
            vectors = [run_one(row) for row in rows]
        else:
            vectors = list(self._worker_pool().map(run_one, rows))
        if not vectors:
            return np.empty((0, self.spec.dim), dtype=np.float32)
        return np.concatenate(vectors)

    def _worker_pool(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._session is None:
                raise ModelLoadError("model is closed")  # and no pool to start again
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="memcore-embed")
            return self._pool

    def _run(self, input_ids: IntMatrix, attention_mask: IntMatrix) -> FloatMatrix:
        session = self._session
        if session is None:
            raise ModelLoadError("model is closed")
        arrays = {
            "input_ids": input_ids,
            "attention_mask": attention_mask,
            "token_type_ids": np.zeros_like(input_ids),
        }
        feeds = {
            name: arrays[name].astype(dtype, copy=False)
            for name, dtype in self._input_types.items()
        }
        output = self._retry.call(lambda: session.run([self._output], feeds)[0])
        vectors = pool(np.asarray(output, dtype=np.float32), attention_mask, self.spec.pooling)
        return l2_normalize(vectors) if self.spec.normalize else vectors


def _input_types(session: Any) -> dict[str, type[np.integer[Any]]]:
    """The graph's declared inputs and their integer types; feeds are built to match."""
    types: dict[str, type[np.integer[Any]]] = {}
    for graph_input in session.get_inputs():
        if graph_input.name not in _KNOWN_INPUTS:
            raise ModelLoadError(f"graph input {graph_input.name!r} is not supported")
        types[graph_input.name] = np.int32 if "int32" in graph_input.type else np.int64
    missing = [name for name in _REQUIRED_INPUTS if name not in types]
    if missing:
        raise ModelLoadError(f"graph lacks input(s) {', '.join(missing)}")
    return types


def _output_name(session: Any, spec: ModelSpec) -> str:
    names = [output.name for output in session.get_outputs()]
    wanted = spec.output_name or (
        "sentence_embedding" if spec.pooling == "none" else "last_hidden_state"
    )
    if wanted in names:
        return wanted
    if spec.output_name is None and names:
        return str(names[0])
    raise ModelLoadError(f"graph has no output {wanted!r} (outputs: {', '.join(names)})")
