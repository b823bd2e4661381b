"""Store-wide maintenance: compaction, index rebuilds and the confirmed full reset.

These act on the whole data directory, every namespace, not on the instance's namespace.
"""

from __future__ import annotations

from memcore._facade.base import FacadeBase
from memcore.errors import invalid
from memcore.records.facts import CompactReport, IndexHealth

RESET_REFUSED = (
    "reset_all_memory deletes every memory, entity, relation, conversation and code chunk "
    "in every namespace, and cannot be undone. Nothing was deleted: call "
    "reset_all_memory(confirm=True) to proceed."
)


class MaintenanceAPI(FacadeBase):
    """Operations on the derived indexes and on the store as a whole."""

    def compact(self, force: bool = False) -> CompactReport:
        """Reclaim the space deleted and replaced records leave in the search indexes.

        Deletions and re-embeddings leave tombstones in the HNSW graph; the core rebuilds
        the graph once they pass about 20% of it, or now with `force`, and merges the BM25
        segments. Searches keep working meanwhile; nothing stored changes. A read-only
        instance has no indexer, so it reports that nothing was done.

        Args:
            force: Rebuild the vector graph even below the tombstone threshold.

        Returns:
            What was done.
        """
        return self._engine.compact(force=force)

    def rebuild_indexes(self) -> IndexHealth:
        """Drop both search indexes and rebuild them from the store (SQLite is the truth).

        The cure for an index suspected to be damaged or out of step; writes wait until
        it is done. The same happens on open when an index folder is missing.

        Returns:
            The rebuilt indexes' sizes.

        Raises:
            StorageError: The instance is read-only or closed.
        """
        self._engine.rebuild_indexes()
        return self.index_health()

    def index_health(self) -> IndexHealth:
        """Sizes of the vector and BM25 indexes, pending work and the last indexing error."""
        return self._engine.index_status()

    def wait_indexed(self, timeout: float | None = None) -> bool:
        """Wait until the search indexes hold every write made so far, saved to disk.

        Writes are searchable the moment they return (documents the background indexer
        has not reached are searched from memory), and `close()` does not wait for the
        indexer: what it had not reached is indexed again at the next open, from the
        store. A bulk ingest that wants its indexes on disk before it exits, or a
        benchmark that times searches on a caught-up index, waits here.

        Args:
            timeout: Seconds to wait at most (None: as long as it takes).

        Returns:
            Whether the indexes caught up in time (the work goes on either way). True at
            once where this process writes no index files (read-only, or another process
            owns a shared store's index files).

        Raises:
            InvalidParameterError: `timeout` is negative or not a number.
        """
        return self._engine.wait_indexed(timeout)

    def reset_all_memory(self, confirm: bool = False) -> None:
        """Delete every record in every namespace, and the derived indexes.

        Memories, entities, observations, relations, conversations, documents and code
        chunks all go; it cannot be undone, so it runs only with `confirm=True` (the
        MCP tool requires `confirm: true` likewise). The configured model's identity is
        recorded again afterwards, so the emptied store keeps its dimension guard.

        Args:
            confirm: Must be True: confirms the irreversible wipe.

        Raises:
            InvalidParameterError: `confirm` is not True; nothing was deleted.
            StorageError: The instance is read-only or closed.
        """
        if confirm is not True:
            raise invalid("confirm", RESET_REFUSED)
        self._engine.reset_all()
        service = self._embeddings
        if service is not None and service.dim is not None:
            self._engine.set_embedding_identity(service.model_id, service.dim)
