"""`memcore.Memory`: the Python facade over the native engine.

Thin by design: it resolves configuration, turns text into vectors through
the embedding service, converts values, and leaves every rule and algorithm
to the Rust core.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from memcore import _core
from memcore._exit import close_at_exit
from memcore._facade.code import CodeAPI
from memcore._facade.fact_capture import FactExtractor
from memcore._facade.facts import FactsAPI
from memcore._facade.graph import GraphAPI
from memcore._facade.graph_libraries import GraphLibrariesAPI
from memcore._facade.maintenance import MaintenanceAPI
from memcore._facade.pending_vectors import VectorBackfill
from memcore._facade.store_health import StoreHealthAPI, default_replica_dir
from memcore._facade.turn_lifecycle import TurnLifecycleAPI
from memcore._facade.turn_metrics import TurnMetrics, TurnMetricsSnapshot
from memcore._facade.turn_settings import TurnSettings
from memcore._time import from_micros, iso
from memcore.arguments import checked_api
from memcore.config import resolve_data_dir
from memcore.errors import invalid

if TYPE_CHECKING:
    from memcore.embeddings import EmbeddingService

Embedder = Callable[[list[str]], npt.NDArray[np.float32]]

_log = logging.getLogger("memcore.indexes")


@checked_api
class Memory(
    TurnLifecycleAPI,  # before FactsAPI: its fact capture builds on the facts API
    FactsAPI,
    GraphAPI,
    GraphLibrariesAPI,
    CodeAPI,
    MaintenanceAPI,
    StoreHealthAPI,
):
    """Long-term memory for an agent, backed by one data directory, or by a
    PostgreSQL database shared with other nodes (docs/scale-out.md).

    Args:
        path: Data directory; None resolves it (MEMCORE_DATA_DIR, then
            ~/.local/share/memcore, or <project_root>/.memcore in local mode).
            A ``postgresql://…`` URL opens a node of that database instead: its
            records live in PostgreSQL, and this process keeps a local replica
            (``replica_dir``) that it writes through and follows.
        mode: "global" or "local" (data inside the project, paths relative to it).
        project_root: The project for local mode (default: nearest .git/.memcore).
        model: Embedding model name from the registry, or None for a text-only
            store (BM25 and graph only; vectors may still be passed explicitly).
        model_path: A folder with model.onnx + tokenizer.json + config.json. One
            holding a registry model's pinned files byte for byte takes that model's
            name (the shared MiniLM folder is "minilm").
        force_model: On a model mismatch, use the model the store was made with: a
            registry model by name, a folder model from the folder last used with
            this store (recorded beside it in embedding_model.json).
        reset_memory: On a model mismatch, wipe every record (memories, graph,
            conversations, code chunks) and start over with the configured model.
        namespace: Default namespace of every call.
        read_only: Open for reading only (searches follow the writers' commits).
            Without it, any number of processes may open one store for reading
            and writing at once: SQLite serialises their writes, each follows
            the others' within a second, and one of them writes the index files.
        embedder: A custom embedding function, list[str] -> 2-D float32 array.
        text_analyzer: BM25 analyser: "english" (default), "simple" or a stemming
            language; changing it rebuilds the text index. A language's stop words
            are left out of queries over prose (not code); "simple" keeps them.
        durability: "normal" or "full" (fsync every commit).
        cache_size: Query-embedding LRU entries.
        batch_size: Texts per embedding batch.
        embedding_spin: Let the model's threads spin on after each embedding, ready
            for the next (fastest back to back). The MCP server turns it off: the
            work that answers the call needs those cores right after the embedding.
        embedding_int8: Run the model's matrix products in int8 where its registry
            entry allows it (MiniLM: 1.7-2x faster, search quality unchanged; the
            int8 graph is derived on first use and cached under MEMCORE_CACHE_DIR,
            default ~/.cache/memcore). False runs the graph as shipped.
        embedding_wait: Seconds a call that needs an embedding waits for the model,
            which loads in the background from the moment Memory() returns (about
            0.2 s; a first start on a machine derives the int8 graph, about 2 s more).
            Only when loading failed or this wait ran out does the call raise
            EmbeddingError, whose message and details say why and how to fix it.
        replica_dir: With a PostgreSQL URL: the node's local replica folder
            (default: ``replica/<identity>`` inside the data directory path=None
            resolves, where the identity names the database: its system identifier,
            oid and memcore's id of it, so no two databases share a folder). A replica
            records the database it copies: opened on another one it is refused with
            StorageError, and two nodes never share one (ResourceBusyError).
        replica_rebuild: With a PostgreSQL URL: a replica that is another database's
            copy, holds writes its database lost, or is damaged, is emptied and built
            again from the database instead of refused.
        namespaces: With a PostgreSQL URL: the namespaces this node serves
            (default: all); writes to others are refused.
        namespace_range: With a PostgreSQL URL, instead of ``namespaces``:
            ``"LO-HI/BUCKETS"``, the namespaces whose bucket (memcore's fixed
            hash, ``memcore namespace-bucket NAME``) lies in LO to HI.
        fact_extractor: Replaces the rules that capture facts in memory_after_turn:
            called with the turn's items (input then output), it returns the facts as
            strings or ``{"content", "tier"?}`` dicts. Its failures and timeouts never
            fail the turn: the rules capture instead and the failure is logged.
        fact_extractor_timeout: Seconds the extractor may take per turn.
        recent_context_items, compact_threshold, l1_retention_days,
            l2_retention_days, compaction_min_age_hours,
            summary_refresh_interval_minutes, max_processed_turns: The automatic
            path's settings (memcore/_facade/turn_settings.py; None: the default).

    Raises:
        ResourceBusyError: A process that must be the store's only writer (a
            PostgreSQL node's replica, an older memcore) has it open.
        DimensionMismatchError: The store was made with another model.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        mode: Literal["global", "local"] = "global",
        project_root: str | os.PathLike[str] | None = None,
        model: str | None = "minilm",
        model_path: str | os.PathLike[str] | None = None,
        force_model: bool = False,
        reset_memory: bool = False,
        namespace: str = "default",
        read_only: bool = False,
        text_analyzer: str | None = None,
        embedder: Embedder | None = None,
        durability: Literal["normal", "full"] = "normal",
        cache_size: int = 1000,
        batch_size: int = 32,
        embedding_spin: bool = True,
        embedding_int8: bool = True,
        embedding_wait: float = 60.0,
        replica_dir: str | os.PathLike[str] | None = None,
        namespaces: Sequence[str] | None = None,
        namespace_range: str | None = None,
        replica_rebuild: bool = False,
        fact_extractor: FactExtractor | None = None,
        fact_extractor_timeout: float = 10.0,
        recent_context_items: int | None = None,
        compact_threshold: float | None = None,
        l1_retention_days: int | None = None,
        l2_retention_days: int | None = None,
        compaction_min_age_hours: float | None = None,
        summary_refresh_interval_minutes: float | None = None,
        max_processed_turns: int | None = None,
    ) -> None:
        if not isinstance(namespace, str) or not namespace.strip():
            raise invalid("namespace", "namespace must be a non-empty string.")
        if force_model and reset_memory:
            raise invalid("force_model", "Pass force_model or reset_memory, not both.")
        database_url = _database_url(path)
        if database_url is None:
            node_options = {
                "replica_dir": replica_dir,
                "namespaces": namespaces,
                "namespace_range": namespace_range,
                "replica_rebuild": replica_rebuild or None,
            }
            given = [name for name, value in node_options.items() if value is not None]
            if given:
                raise invalid(
                    given[0],
                    "replica_dir, namespaces, namespace_range and replica_rebuild configure a "
                    "PostgreSQL node; pass a postgresql://… URL as path, or leave them out.",
                )
            data_dir, root = resolve_data_dir(path, mode, project_root)
        elif replica_dir is not None:
            data_dir, root = resolve_data_dir(replica_dir, mode, project_root)
        else:
            data_dir, root = default_replica_dir(database_url, mode, project_root)
        if isinstance(namespaces, str):
            raise invalid("namespaces", "namespaces must be a list of names, not one string.")
        # Checked before the store opens: a bad setting fails at start, not on a turn.
        self._turn_settings = TurnSettings.from_values(
            {
                "recent_context_items": recent_context_items,
                "compact_threshold": compact_threshold,
                "l1_retention_days": l1_retention_days,
                "l2_retention_days": l2_retention_days,
                "compaction_min_age_hours": compaction_min_age_hours,
                "summary_refresh_interval_minutes": summary_refresh_interval_minutes,
                "max_processed_turns": max_processed_turns,
            }
        )
        self._fact_extractor = _extractor(fact_extractor, fact_extractor_timeout)
        self._turn_metrics = TurnMetrics()
        self._mode = mode
        self._project_root = root
        self._namespace = namespace
        self._close_lock = threading.Lock()
        self._engine = _core.Engine(
            str(data_dir),
            read_only=read_only,
            durability=durability,
            text_analyzer=text_analyzer,
            database_url=database_url,
            namespaces=None if namespaces is None else list(namespaces),
            namespace_range=namespace_range,
            replica_rebuild=replica_rebuild,
        )
        # A node checks every call's namespace: one serving some namespaces refuses the
        # others, and one that found another database behind its URL refuses them all.
        self._checks_node = database_url is not None
        # Damaged index files set aside at open, rebuilds under way: say so once.
        for warning in self._engine.index_status().warnings:
            _log.warning("%s: %s", data_dir, warning)
        try:
            self._embeddings = self._start_embeddings(
                model,
                model_path,
                embedder,
                force_model,
                reset_memory,
                cache_size,
                batch_size,
                embedding_spin,
                embedding_int8,
                embedding_wait,
            )
        except BaseException:
            self._engine.close()
            raise
        self._backfill = self._start_backfill()
        # Closed at interpreter exit if the program did not: its threads must end first.
        close_at_exit(self, Memory.close)

    # -- lifecycle -----------------------------------------------------------------

    def close(self) -> None:
        """Release the data directory (idempotent)."""
        with self._close_lock:
            self._close_code()  # watchers first: a pass in flight uses both below
            if self._backfill is not None:
                self._backfill.close()
            if self._embeddings is not None:
                self._embeddings.close()
            self._engine.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def path(self) -> Path:
        """The data directory."""
        return Path(self._engine.path)

    @property
    def namespace(self) -> str:
        """The default namespace of this instance."""
        return self._namespace

    @property
    def project_root(self) -> Path | None:
        """The project root in local mode, else None."""
        return self._project_root

    @property
    def turn_settings(self) -> TurnSettings:
        """The automatic path's settings of this instance."""
        return self._turn_settings

    def turn_metrics(self) -> TurnMetricsSnapshot:
        """The automatic path's counters in this process (the lifecycle contract's
        seven metrics, without their ``mcp_memory_`` prefix)."""
        return self._turn_metrics.snapshot()

    @property
    def embeddings(self) -> EmbeddingService | None:
        """The embedding service, or None for a text-only store."""
        return self._embeddings

    def status(self) -> dict[str, Any]:
        """Version, store state, counts and embedding status."""
        meta = self._engine.metadata()
        embedding: dict[str, Any] = (
            dict(self._embeddings.info())
            if self._embeddings is not None
            else {"status": "disabled", "model": None, "dim": None, "error": None}
        )
        health = self._engine.index_status()
        return {
            "version": _core.__version__,
            "store": {
                "path": str(self.path),
                "schema_version": _core.SCHEMA_VERSION,
                "read_only": self._engine.read_only,
                "created_at": _iso_micros(meta.get("created_at")),
                "indexes": {
                    "status": _index_state(health),
                    "last_error": health.last_error,
                    "warnings": list(health.warnings),
                    # Whether this process writes the index files; the other
                    # processes that share the store keep theirs in memory.
                    "owner": self._engine.owns_indexes,
                },
            },
            "counts": {"memories": self._engine.count_memories(self._namespace)},
            "embedding": embedding,
        }

    # -- nodes of a PostgreSQL database (docs/scale-out.md) ---------------------------

    @property
    def on_postgres(self) -> bool:
        """Whether this store is a node of a PostgreSQL database."""
        return self._engine.on_postgres

    def last_write_seq(self) -> int | None:
        """The seq of the calling thread's last write in the shared log of its
        namespace (PostgreSQL), for a read elsewhere to wait for with `wait_for_seq`;
        None on SQLite, or when the thread wrote nothing since the last call."""
        position = self._engine.last_write_position()
        return None if position is None else position[1]

    def applied_seq(self, *, namespace: str | None = None) -> int:
        """The last seq of the namespace's shared log this node holds (0: none yet;
        always 0 on SQLite): a position a read elsewhere may wait for to see everything
        this node had seen of the namespace."""
        return self._engine.applied_seq(self._ns(namespace))

    def wait_for_seq(
        self, min_seq: int, *, namespace: str | None = None, timeout: float = 2.0
    ) -> int:
        """Wait until this node holds the namespace's writes up to `min_seq` (a seq
        another node's write returned), at most `timeout` seconds; then a read here
        sees that write. Returns the seq applied; on SQLite, at once.

        Raises:
            ResourceBusyError: Not applied within `timeout`: retry, or read from the
                node that took the write.
        """
        return self._engine.wait_for_seq(self._ns(namespace), min_seq, timeout)

    # -- embeddings and the model guard ----------------------------------------------

    def _start_backfill(self) -> VectorBackfill | None:
        """The thread that embeds memories stored while the model was not ready; its
        first pass starts now when some from an earlier run still wait."""
        if self._embeddings is None or self._engine.read_only:
            return None
        backfill = VectorBackfill(self._engine, self._embeddings)
        if self._engine.count_pending_vectors() > 0:
            backfill.schedule()
        return backfill

    def _start_embeddings(
        self,
        model: str | None,
        model_path: str | os.PathLike[str] | None,
        embedder: Embedder | None,
        force_model: bool,
        reset_memory: bool,
        cache_size: int,
        batch_size: int,
        spin: bool,
        int8: bool,
        wait: float,
    ) -> EmbeddingService | None:
        if model is None and model_path is None and embedder is None:
            return None
        from memcore._facade.model_guard import ModelGuard
        from memcore.embeddings import DEFAULT_MODEL, EmbeddingService

        guard = ModelGuard(self._engine)
        if embedder is None:
            choice = guard.admit(
                model or DEFAULT_MODEL,
                model_path,
                force_model=force_model,
                reset_memory=reset_memory,
            )
            model, model_path = choice.model, choice.model_path
        return EmbeddingService(
            model or DEFAULT_MODEL,
            model_path=model_path,
            embedder=embedder,
            cache_size=cache_size,
            batch_size=batch_size,
            spin_between_calls=spin,
            int8=int8,
            wait=wait,
            on_ready=None if embedder is None else guard.custom_check(reset_memory),
        )


def _extractor(
    extractor: FactExtractor | None, timeout: float
) -> tuple[FactExtractor, float] | None:
    if extractor is None:
        return None
    if not callable(extractor):
        raise invalid("fact_extractor", "fact_extractor must be a callable (items -> facts).")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout < 1e6:
        raise invalid(
            "fact_extractor_timeout",
            f"fact_extractor_timeout must be a number of seconds above 0, got {timeout!r}.",
        )
    return extractor, float(timeout)


def _database_url(path: str | os.PathLike[str] | None) -> str | None:
    """`path` when it is a PostgreSQL connection URL, else None."""
    if isinstance(path, str) and path.startswith(("postgresql://", "postgres://")):
        return path
    return None


def _iso_micros(value: str | None) -> str | None:
    """A stored microsecond timestamp (metadata text) as ISO 8601."""
    return None if value is None else iso(from_micros(int(value)))


def _index_state(health: _core.IndexHealth) -> str:
    """One word for the derived indexes: ok; failing (a commit or save keeps failing,
    e.g. on a full disk; every document stays searchable from memory); or degraded
    (something happened since open: a damaged file set aside and rebuilt, a panic
    caught; see the warnings). Pending work is normal and not a state of its own."""
    if health.last_error is not None:
        return "failing"
    if health.warnings:
        return "degraded"
    return "ok"
