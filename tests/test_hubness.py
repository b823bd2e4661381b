"""Hubness reduction for code chunks (rust/memcore/src/vector/hub.rs): a chunk whose
vector is close to many others ("a hub") ranks below a slightly less similar distinctive
one once the engine computed their hubness values, while ``scores.vector`` stays the
plain cosine; the values count only the chunks of the same namespace, survive a close
and reopen, and memories keep ranking by the plain cosine."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

import memcore
from backends import Backend, both_backends, sqlite_only

pytestmark = both_backends

DIM = 8
NO_TERM = "qqzxjv"  # a word nothing holds: the ranking is the vector's alone


def near(i: int, j: int, tilt: float) -> npt.NDArray[np.float32]:
    """Axis `i` plus `tilt` times axis `j`, normalised."""
    v = np.zeros(DIM, dtype=np.float32)
    v[i] = 1.0
    v[j] += tilt
    return v / np.linalg.norm(v)


HUB = near(0, 1, 1.0)  # beside the crowd (axis 0) and the query (axis 1)
LONER = near(2, 3, 0.1)  # alone, a little less close to the query
QUERY = near(1, 2, 0.68)
CROWD = [near(0, 3 + i % 5, 0.2) for i in range(20)]


def index_chunk(
    mem: memcore.Memory, name: str, vector: npt.NDArray[np.float32], namespace: str = "default"
) -> None:
    """One file holding one function, with its vector given."""
    chunk = {
        "start_line": 1,
        "end_line": 2,
        "chunk_type": "function",
        "name": name,
        "content": f"def {name}(): pass",
        "content_hash": f"c-{name}",
    }
    mem._engine.index_file(
        namespace, "proj", f"{name}.py", "python", f"f-{name}", [chunk], vectors=vector[None, :]
    )


def index_hub_and_loner(mem: memcore.Memory, crowd_namespace: str = "default") -> None:
    index_chunk(mem, "hub", HUB)
    index_chunk(mem, "loner", LONER)
    for i, v in enumerate(CROWD):
        index_chunk(mem, f"crowd{i}", v, namespace=crowd_namespace)
    mem._engine.settle_hubness()


def found(mem: memcore.Memory) -> list[str | None]:
    return [h.name for h in mem.search_code(NO_TERM, vector=QUERY, limit=2)]


def test_a_hub_chunk_ranks_below_a_less_similar_distinctive_one(mem: memcore.Memory) -> None:
    assert float(QUERY @ HUB) > float(QUERY @ LONER), "the plain cosine prefers the hub"
    index_hub_and_loner(mem)
    hits = mem.search_code(NO_TERM, vector=QUERY, limit=2)
    assert [h.name for h in hits] == ["loner", "hub"]
    # Callers still read the plain cosine (f16 graph: about three decimals).
    assert hits[1].scores.vector == pytest.approx(float(QUERY @ HUB), abs=2e-3)
    assert hits[0].scores.vector == pytest.approx(float(QUERY @ LONER), abs=2e-3)


def test_another_namespaces_crowd_does_not_penalise(mem: memcore.Memory) -> None:
    index_hub_and_loner(mem, crowd_namespace="elsewhere")
    assert found(mem) == ["hub", "loner"]


def test_memories_rank_by_the_plain_cosine(mem: memcore.Memory) -> None:
    # The same layout as memories, beside the chunks: no penalty for them.
    index_hub_and_loner(mem)
    hub = mem.store_memory("the hub", vector=HUB).id
    loner = mem.store_memory("the loner", vector=LONER).id
    for i, v in enumerate(CROWD):
        mem.store_memory(f"crowd {i}", vector=v)
    mem._engine.settle_hubness()
    hits = mem.search(vector=QUERY, limit=2)
    assert [h.memory.id for h in hits] == [hub, loner]
    assert hits[0].scores.fused == hits[0].scores.vector
    assert [h.memory.id for h in mem.recall(NO_TERM, vector=QUERY, limit=2)] == [hub, loner]


@sqlite_only("a node always writes its replica: read_only is refused by name")
def test_values_survive_a_close_and_reopen(backend: Backend, data_dir: Path) -> None:
    with backend.open(data_dir, model=None) as mem:
        index_hub_and_loner(mem)
    assert (data_dir / "index" / "vectors" / "hubness.bin").exists()
    # A read-only instance computes nothing: it ranks with the values saved.
    with backend.open(data_dir, model=None, read_only=True) as reader:
        assert found(reader) == ["loner", "hub"]
