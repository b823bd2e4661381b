"""The knowledge graph handed to graph libraries: `detect_communities` (Leiden) and
`to_rustworkx` (any rustworkx algorithm). The facade reads the graph from the core;
`memcore._facade.communities` moves it into the library in bulk.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memcore._facade import communities
from memcore._facade.facts import _count, _number
from memcore._facade.graph import _strings
from memcore._facade.search import SearchAPI
from memcore.errors import invalid
from memcore.records.graph import Communities

#: The node kinds `to_rustworkx` can include.
GRAPH_KINDS = ("entity", "memory")
#: Page size when collecting the memories of `to_rustworkx` (the core's list maximum).
_MEMORY_PAGE = 1000


class GraphLibrariesAPI(SearchAPI):
    """Communities and the rustworkx view of the knowledge graph (the `graph` extra)."""

    def detect_communities(
        self,
        resolution: float = 1.0,
        seed: int | None = None,
        *,
        min_size: int = 1,
        namespace: str | None = None,
    ) -> Communities:
        """Groups of densely related entities (Leiden, relations undirected, weighted).

        Args:
            resolution: Higher gives more, smaller groups (1.0 = modularity).
            seed: Random seed for a reproducible partition.
            min_size: Leave out groups smaller than this (2 hides isolated entities).
            namespace: Override the instance's namespace.

        Raises:
            ModuleNotFoundError: leidenalg or python-igraph is not installed.
        """
        value = _number("resolution", resolution)
        if not value > 0:
            raise invalid("resolution", f"resolution must be positive, got {resolution!r}.")
        if seed is not None:
            seed = _count("seed", seed, minimum=0)
        arrays = self._engine.graph_arrays(self._ns(namespace))
        return communities.detect_communities(
            arrays, resolution=value, seed=seed, min_size=_count("min_size", min_size)
        )

    def to_rustworkx(
        self, kinds: Sequence[str] = GRAPH_KINDS, *, namespace: str | None = None
    ) -> Any:
        """The live graph as a `rustworkx.PyDiGraph`, for any rustworkx algorithm.

        Entity nodes and relation edges always; with "memory" in `kinds`, also the
        currently valid memories that mention an entity, each with mention edges to
        those entities. Payloads are plain dicts (see `memcore._facade.communities.to_rustworkx`);
        `graph.attrs["node_of"]` maps entity names and memory ids to node indices.

        Raises:
            ModuleNotFoundError: rustworkx is not installed.
            InvalidParameterError: An unknown kind.
        """
        chosen = set(_strings("kinds", kinds))
        if not chosen <= set(GRAPH_KINDS) or "entity" not in chosen:
            raise invalid(
                "kinds", f"kinds must include 'entity' and may add 'memory', got {kinds!r}."
            )
        ns = self._ns(namespace)
        arrays = self._engine.graph_arrays(ns)
        if "memory" not in chosen:
            return communities.to_rustworkx(arrays, namespace=ns)
        mentions = self._engine.mentions(ns)
        memories = self._mentioned_memories(ns, {m for m, _, _ in mentions})
        return communities.to_rustworkx(arrays, namespace=ns, memories=memories, mentions=mentions)

    # -- helpers -----------------------------------------------------------------------------

    def _mentioned_memories(self, namespace: str, ids: set[str]) -> list[dict[str, Any]]:
        """The currently valid memories among `ids`, in one pass over the namespace, as the
        fields a memory node of `to_rustworkx` carries."""
        found: list[dict[str, Any]] = []
        offset = 0
        while ids and len(found) < len(ids):
            page = self._engine.list_memories(
                namespace, limit=_MEMORY_PAGE, offset=offset, valid_only=True
            )
            found.extend(
                {
                    "id": m.id,
                    "content": m.content,
                    "memory_type": m.memory_type,
                    "importance": m.importance,
                    "thread_id": m.thread_id,
                }
                for m in page
                if m.id in ids
            )
            if len(page) < _MEMORY_PAGE:
                break
            offset += _MEMORY_PAGE
        return found
