"""Int8 matrix products for weight-only int8 graphs: derived once per machine, then cached.

The MiniLM that memcore's model packages and the model folders ship stores its weights as int8
but multiplies in float32 (each weight is widened before its product). Quantizing each
product's activations on the fly as well (onnxruntime's dynamic quantization, weights per
output channel) runs the products on the CPU's int8 units. Measured on the 2-core
reference machine: passages 1.7-2x and a short query 2.35 -> 1.35 ms faster, CoSQA code
search unchanged (MRR 50.9 against 50.8) and vectors at cosine 0.993 on average to the
float graph's (0.975 at worst on code), about what the hub's own int8 export of the model
differs by.

The derived graph depends on the source graph and on onnxruntime (whose optimiser folds
the int8 weights into floats first), so its file name holds both and a recipe version; it
is made at most once per machine and checked against the float graph before it is kept.
Processes that start together (a server and a CLI command) take turns through a lock file
in the cache folder, so the second waits for the first's graph instead of deriving its own.
What a start must know of the shipped graph (its digest, whether it already quantizes per
call) is remembered in the cache folder too, keyed by the file's path, size and mtime
(:mod:`memcore.embeddings.file_memo`): a warm start then neither imports onnx nor reads the
23 MB graph (about 0.4 s of a model's load on a busy 2-core machine). The derived graph is
saved with onnxruntime's graph optimisations already applied, so a start does not redo
them (its session opens in 29 ms instead of 41, the same vectors to the bit).
Dynamic quantization scales activations per inference call, so a text's vector would
depend on what it was batched with: such graphs run one text per call (see
:class:`memcore.embeddings.onnx_model.OnnxEmbedder`).
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

from memcore.embeddings.file_memo import cache_dir, remembered, sha256_of
from memcore.embeddings.model_files import ModelFiles

RECIPE = "dq8pc3"
"""Names the derivation below; change it when the derivation changes."""

MIN_COSINE = 0.95
"""A derived graph whose vector for any probe text is further than this from the float
graph's is not used (MiniLM's worst probe is at 0.975)."""

DYNAMIC_OPS = frozenset({"DynamicQuantizeLinear", "DynamicQuantizeMatMul", "MatMulInteger"})
"""Operators that quantize activations per call: a graph holding one runs a text per call."""

DERIVE_LOCK = ".derive.lock"
"""The lock file, in the cache folder, held by the process deriving a graph."""

SOURCE_SUFFIX = ", int8 products"
"""Appended to a model's ``source`` when it runs the derived graph."""

Check = Callable[[Path], float]
"""Lowest cosine between a candidate graph's probe vectors and the float graph's."""

_log = logging.getLogger("memcore.embeddings")


def op_types(model: Path) -> frozenset[str]:
    """The operator types of an ONNX graph (external weights are not read)."""
    import onnx

    graph = onnx.load(str(model), load_external_data=False).graph
    return frozenset(node.op_type for node in graph.node)


def quantizes_per_call(model: Path) -> bool:
    """Whether the graph quantizes activations per inference call (False for a file that
    is not a readable graph: onnxruntime then says what is wrong with it)."""
    try:
        return not DYNAMIC_OPS.isdisjoint(op_types(model))
    except Exception:
        return False


def int8_files(files: ModelFiles, check: Check, *, folder: Path | None = None) -> ModelFiles:
    """The model's files with the graph swapped for its int8-product version.

    The version is made on first use (a few seconds) and cached in ``folder`` (default
    :func:`cache_dir`). The original files come back when the graph already quantizes
    per call, and with a warning logged when deriving fails, when the cache cannot be
    written, or when the derived graph's vectors stray past :data:`MIN_COSINE`
    (remembered, so a rejected graph is not derived again at every start).
    """
    folder = folder or cache_dir()
    try:
        digest, per_call = _source_facts(folder, files.model)
        if per_call:
            return files  # already quantizes per call (the hub's int8 export)
        name = f"{digest}-ort{_ort_version()}-{RECIPE}"
        target, rejected = folder / f"{name}.onnx", folder / f"{name}.rejected"
        if rejected.exists():
            return files
        if not target.is_file():
            folder.mkdir(parents=True, exist_ok=True)
            with derivation_lock(folder):
                # Another process may have derived (or rejected) it while this one waited.
                if not target.is_file() and not rejected.exists():
                    _derive_checked(files.model, target, rejected, check)
            if not target.is_file():
                return files
    except Exception as exc:  # any failure leaves the float graph, which always works
        _log.warning("int8 products unavailable, keeping the float graph: %s", exc)
        return files
    return replace(files, model=target, source=files.source + SOURCE_SUFFIX)


def _source_facts(folder: Path, model: Path) -> tuple[str, bool]:
    """The graph's digest (24 hex digits) and whether it quantizes per call, remembered
    in the folder's memo (:mod:`memcore.embeddings.file_memo`) while the file is
    unchanged; a graph that quantizes per call is never derived from, so nothing of it is
    remembered (and no cache folder made for it)."""
    facts = remembered(
        model,
        {"digest": (str, sha256_of), "per_call": (bool, _quantizes)},
        folder=folder,
        keep=lambda values: values["per_call"] is False,
    )
    return str(facts["digest"])[:24], bool(facts["per_call"])


def _quantizes(model: Path) -> bool:
    """Whether the graph quantizes per call (raising for a file that is not a graph)."""
    return not DYNAMIC_OPS.isdisjoint(op_types(model))


@contextlib.contextmanager
def derivation_lock(folder: Path) -> Iterator[None]:
    """Hold the cache folder's :data:`DERIVE_LOCK` (an advisory ``flock``, released by the
    kernel if the process dies) for as long as the block runs."""
    if sys.platform == "win32":  # no flock: concurrent derivations only waste time
        yield
        return
    import fcntl

    with (folder / DERIVE_LOCK).open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _derive_checked(model: Path, target: Path, rejected: Path, check: Check) -> None:
    """Derive into a temporary file beside ``target``; keep it only if ``check`` passes."""
    import tempfile  # imported here: only a first start derives a graph

    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".derive-") as work:
        candidate = Path(work) / "int8.onnx"
        derive(model, candidate, Path(work))
        worst = check(candidate)
        if worst < MIN_COSINE:
            _log.warning(
                "int8 products rejected for %s: a probe vector at cosine %.3f", model, worst
            )
            rejected.write_text(f"{worst:.4f}\n")
            return
        candidate.replace(target)  # same folder: atomic, so no reader sees half a file
        _log.info("int8 products ready for %s (worst probe cosine %.3f)", model, worst)


def derive(model: Path, out: Path, work: Path) -> None:
    """Write the dynamically quantized version of ``model`` to ``out``.

    onnxruntime's basic optimisations fold each int8 weight and its scale into a float
    initializer (saved as plain ONNX operators); dynamic quantization then replaces every
    product with a constant weight by an int8 one, weights quantized per output channel
    (per tensor lost up to 0.12 of cosine on MiniLM), and keeps the token embedding table
    in int8 as the source had it. The result is saved with onnxruntime's extended
    optimisations applied (fusions, as every session of it would make them), which a
    session then finds nothing left to do for.
    """
    folded = work / "folded.onnx"
    quiet = _DropAdvice()
    logging.getLogger().addFilter(quiet)
    try:
        _fold_and_quantize(model, folded, out)
    finally:
        logging.getLogger().removeFilter(quiet)


class _DropAdvice(logging.Filter):
    """onnxruntime's quantizer advises pre-processing on the root logger at every call; the
    advice is for static quantization and would reach the server's log as a warning."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Please consider to run pre-processing")


def _fold_and_quantize(model: Path, folded: Path, out: Path) -> None:
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(folded)
    options.log_severity_level = 3
    ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    quantized = folded.with_name("quantized.onnx")
    quantize_dynamic(
        folded,
        quantized,
        weight_type=QuantType.QInt8,
        per_channel=True,
        # Gather: the token embedding table, which folding widened to floats (47 MB).
        op_types_to_quantize=["MatMul", "Gather"],
        extra_options={"MatMulConstBOnly": True},
    )
    unguarded = folded.with_name("unguarded.onnx")
    _drop_nan_guards(quantized, unguarded)
    _optimize(unguarded, out)


def _optimize(model: Path, out: Path) -> None:
    """Save ``model`` as a one-text-per-call session would optimise it. Extended, not all:
    the level above also rearranges layouts for the CPU it runs on, which a cache folder
    shared between machines must not hold (a session still applies it, to nothing in an
    encoder)."""
    import onnxruntime as ort

    from memcore.embeddings.onnx_model import UNFUSED_PER_CALL

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(out)
    options.log_severity_level = 3
    ort.InferenceSession(
        str(model),
        options,
        providers=["CPUExecutionProvider"],
        disabled_optimizers=list(UNFUSED_PER_CALL),
    )


def _drop_nan_guards(model: Path, out: Path) -> None:
    """Write ``model`` to ``out`` without its ``Where(IsNaN(x), 0, x)`` nodes.

    Exporters guard each attention softmax against rows whose every position is masked
    (all -inf gives NaN). A text always has at least its special tokens unmasked, and a
    graph run one text per call is never padded, so the guard never fires; it cost 8%
    of MiniLM int8's time. Any other ``Where`` is left alone.
    """
    import onnx
    from onnx import numpy_helper

    proto = onnx.load(str(model))
    graph = proto.graph
    producers = {output: node for node in graph.node for output in node.output}
    constants = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
    renamed: dict[str, str] = {}
    dropped: set[int] = set()
    for node in graph.node:
        if node.op_type != "Where" or len(node.input) != 3:
            continue
        condition, fallback, value = node.input
        test = producers.get(condition)
        zero = constants.get(fallback)
        if (
            test is not None
            and test.op_type == "IsNaN"
            and list(test.input) == [value]
            and zero is not None
            and zero.size == 1
            and float(zero.reshape(-1)[0]) == 0.0
        ):
            renamed[node.output[0]] = value
            dropped.add(id(node))
    if not renamed or any(output.name in renamed for output in graph.output):
        # Nothing to drop, or a guard is the graph's output (not seen in exports): as is.
        onnx.save(proto, str(out))
        return
    kept = [node for node in graph.node if id(node) not in dropped]
    for node in kept:
        node.input[:] = [renamed.get(name, name) for name in node.input]
    # The NaN tests only the guards read go too.
    read = {name for node in kept for name in node.input} | {o.name for o in graph.output}
    kept = [n for n in kept if n.op_type != "IsNaN" or n.output[0] in read]
    del graph.node[:]
    graph.node.extend(kept)
    onnx.save(proto, str(out))


def _ort_version() -> str:
    import onnxruntime as ort

    return str(ort.__version__)
