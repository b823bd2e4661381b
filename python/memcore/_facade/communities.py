"""The knowledge graph handed to graph libraries: Leiden communities (leidenalg over
python-igraph) and a rustworkx view for any other algorithm.

Both start from the arrays the core exports (`Engine.graph_arrays`), so edges go from
numpy to the library in bulk, never through a Python loop over relations. The libraries
are optional (the `graph` extra) and imported only when used.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping, Sequence
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

from memcore.records.graph import Communities, Community

# leidenalg and python-igraph come with memcore; rustworkx comes with the graph extra.
_EXTRA_HINT = (
    "leidenalg and python-igraph are memcore dependencies (pip install memcore-engine "
    "installs them); rustworkx comes with the graph extra: pip install 'memcore-engine[graph]'."
)


def require(module: str, feature: str) -> ModuleType:
    """Import an optional graph library, or explain which extra provides it.

    Raises:
        ModuleNotFoundError: The library is not installed (the message names the extra).
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            f"{feature} needs the '{module}' package, which is not installed. {_EXTRA_HINT}",
            name=exc.name,
        ) from exc


def edge_pairs(arrays: Mapping[str, Any]) -> npt.NDArray[np.int64]:
    """The relations as an (m, 2) array of (source, target) node positions."""
    return np.column_stack((arrays["sources"], arrays["targets"])).astype(np.int64)


def detect_communities(
    arrays: Mapping[str, Any], *, resolution: float, seed: int | None, min_size: int
) -> Communities:
    """Leiden communities of the entity graph, relations undirected and weighted.

    The quality function is RB-configuration modularity: at `resolution` 1.0 it is plain
    modularity; higher values give more, smaller groups.

    Args:
        arrays: `Engine.graph_arrays` of one namespace.
        resolution: Leiden's resolution parameter (> 0).
        seed: Random seed for a reproducible partition.
        min_size: Groups smaller than this are left out of `groups` (isolated entities
            form groups of one).
    """
    igraph = require("igraph", "detect_communities")
    leidenalg = require("leidenalg", "detect_communities")
    names: list[str] = list(arrays["names"])
    if not names:
        return Communities(groups=[], modularity=0.0, resolution=resolution, sizes=[])
    graph = igraph.Graph(n=len(names), edges=edge_pairs(arrays), directed=False)
    # igraph reads numpy float32 attribute values as if unweighted: hand it Python floats.
    # Weights below 0 (relation importances stored before create_relations checked them)
    # would make leidenalg raise a bare BaseException: they count as no tie.
    weights = np.clip(np.asarray(arrays["weights"], dtype=np.float64), 0.0, None)
    graph.es["weight"] = weights.tolist()
    # A relation and its inverse (A created B, B created by A) are one undirected tie.
    graph.simplify(multiple=True, loops=True, combine_edges={"weight": "sum"})
    partition = leidenalg.find_partition(
        graph,
        leidenalg.RBConfigurationVertexPartition,
        weights="weight",
        resolution_parameter=resolution,
        seed=seed,
    )
    membership = np.asarray(partition.membership, dtype=np.int64)
    # Modularity divides by the ties' total weight: with none (no relations, or all of
    # importance 0) it is undefined (igraph says NaN, which JSON cannot carry): 0.0.
    total = sum(graph.es["weight"]) if graph.ecount() else 0.0
    modularity = graph.modularity(membership.tolist(), weights="weight") if total > 0 else 0.0
    importance = np.asarray(arrays["importance"], dtype=np.float64)
    groups = _groups(np.asarray(names, dtype=object), importance, membership, min_size)
    return Communities(
        groups=groups,
        modularity=float(modularity),
        resolution=resolution,
        sizes=[g.size for g in groups],
    )


def _groups(
    names: npt.NDArray[Any],
    importance: npt.NDArray[np.float64],
    membership: npt.NDArray[np.int64],
    min_size: int,
) -> list[Community]:
    """Groups largest first (ids renumbered in that order), members most important first."""
    sizes = np.bincount(membership)
    by_size = np.argsort(-sizes, kind="stable")
    # Sort members by group, then importance descending; ties keep the graph's order.
    order = np.lexsort((-importance, membership))
    starts = np.concatenate(([0], np.cumsum(sizes)))
    groups: list[Community] = []
    for group in by_size:
        size = int(sizes[group])
        if size < min_size:
            break
        members = names[order[starts[group] : starts[group + 1]]].tolist()
        groups.append(Community(id=len(groups), size=size, members=members))
    return groups


def to_rustworkx(
    arrays: Mapping[str, Any],
    *,
    namespace: str,
    memories: Sequence[Mapping[str, Any]] | None = None,
    mentions: Iterable[tuple[str, str, bool]] = (),
) -> Any:
    """A `rustworkx.PyDiGraph` of the entity graph, optionally with memory nodes.

    Entity nodes carry `{"kind": "entity", "id", "name", "entity_type", "importance"}`;
    relation edges `{"kind": "relation", "relation_type", "weight"}`. Each memory in
    `memories` becomes a node `{"kind": "memory", "id", "content", "memory_type",
    "importance", "thread_id"}` with a mention edge `{"kind": "mention", "explicit"}` to
    each entity it names. `graph.attrs` holds the namespace and `node_of`, a map from
    entity names and memory ids to node indices.

    Raises:
        ModuleNotFoundError: rustworkx is not installed.
    """
    rustworkx = require("rustworkx", "to_rustworkx")
    graph = rustworkx.PyDiGraph(multigraph=True)
    entity_ids: list[str] = list(arrays["entity_ids"])
    names: list[str] = list(arrays["names"])
    importance = np.asarray(arrays["importance"], dtype=np.float64).tolist()
    entity_nodes = graph.add_nodes_from(
        [
            {"kind": "entity", "id": i, "name": n, "entity_type": t, "importance": w}
            for i, n, t, w in zip(
                entity_ids, names, arrays["entity_types"], importance, strict=True
            )
        ]
    )
    weights = np.asarray(arrays["weights"], dtype=np.float64).tolist()
    relation_payloads = [
        {"kind": "relation", "relation_type": t, "weight": w}
        for t, w in zip(arrays["relation_types"], weights, strict=True)
    ]
    pairs = edge_pairs(arrays)
    graph.add_edges_from(
        list(zip(pairs[:, 0].tolist(), pairs[:, 1].tolist(), relation_payloads, strict=True))
    )
    node_of: dict[str, int] = dict(zip(names, entity_nodes, strict=True))
    if memories is not None:
        node_of.update(_add_memories(graph, memories, mentions, entity_ids, entity_nodes))
    graph.attrs = {"namespace": namespace, "node_of": node_of}
    return graph


def _add_memories(
    graph: Any,
    memories: Sequence[Mapping[str, Any]],
    mentions: Iterable[tuple[str, str, bool]],
    entity_ids: list[str],
    entity_nodes: Sequence[int],
) -> dict[str, int]:
    """Add memory nodes and their mention edges; return memory id → node index."""
    nodes = graph.add_nodes_from(
        [
            {
                "kind": "memory",
                "id": m["id"],
                "content": m["content"],
                "memory_type": m["memory_type"],
                "importance": m["importance"],
                "thread_id": m["thread_id"],
            }
            for m in memories
        ]
    )
    memory_node = dict(zip((m["id"] for m in memories), nodes, strict=True))
    entity_node = dict(zip(entity_ids, entity_nodes, strict=True))
    graph.add_edges_from(
        [
            (memory_node[memory], entity_node[entity], {"kind": "mention", "explicit": explicit})
            for memory, entity, explicit in mentions
            if memory in memory_node and entity in entity_node
        ]
    )
    return memory_node
