"""Hubness reduction of the vector signal (rust/memcore/src/vector/hub.rs): a stored
vector close to many others ("a hub") ranks below a slightly less similar distinctive
one once the engine computed their hubness values, while ``scores.vector`` stays the
plain cosine; the values count only the vectors of the same namespace and survive a
close and reopen."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

import memcore
from backends import Backend, both_backends, sqlite_only

pytestmark = both_backends

DIM = 8
NO_TERM = "qqzxjv"  # a word no memory holds: recall ranks by the vector alone


def near(i: int, j: int, tilt: float) -> npt.NDArray[np.float32]:
    """Axis `i` plus `tilt` times axis `j`, normalised."""
    v = np.zeros(DIM, dtype=np.float32)
    v[i] = 1.0
    v[j] += tilt
    return v / np.linalg.norm(v)


HUB = near(0, 1, 1.0)  # beside the crowd (axis 0) and the query (axis 1)
LONER = near(2, 3, 0.1)  # alone, a little less close to the query
QUERY = near(1, 2, 0.68)


def crowd(mem: memcore.Memory, namespace: str | None = None) -> None:
    for i in range(20):
        mem.store_memory(f"crowd {i}", vector=near(0, 3 + i % 5, 0.2), namespace=namespace)


def store_hub_and_loner(mem: memcore.Memory) -> tuple[str, str]:
    hub = mem.store_memory("the hub", vector=HUB).id
    loner = mem.store_memory("the loner", vector=LONER).id
    return hub, loner


def test_a_hub_ranks_below_a_less_similar_distinctive_memory(mem: memcore.Memory) -> None:
    hub, loner = store_hub_and_loner(mem)
    crowd(mem)
    assert float(QUERY @ HUB) > float(QUERY @ LONER), "the plain cosine prefers the hub"
    mem._engine.settle_hubness()

    hits = mem.search(vector=QUERY, limit=2)
    assert [h.memory.id for h in hits] == [loner, hub]
    # Callers still read the plain cosine (f16 graph: about three decimals).
    by_id = {h.memory.id: h.scores for h in hits}
    assert by_id[hub].vector == pytest.approx(float(QUERY @ HUB), abs=2e-3)
    assert by_id[loner].vector == pytest.approx(float(QUERY @ LONER), abs=2e-3)
    assert by_id[hub].fused < by_id[hub].vector - 0.15

    fused = mem.recall(NO_TERM, vector=QUERY, limit=2)
    assert [h.memory.id for h in fused] == [loner, hub]
    assert fused[1].scores.vector == pytest.approx(float(QUERY @ HUB), abs=2e-3)


def test_another_namespaces_crowd_does_not_penalise(mem: memcore.Memory) -> None:
    hub, loner = store_hub_and_loner(mem)
    crowd(mem, namespace="elsewhere")
    mem._engine.settle_hubness()
    hits = mem.search(vector=QUERY, limit=2)
    assert [h.memory.id for h in hits] == [hub, loner]


@sqlite_only("a node always writes its replica: read_only is refused by name")
def test_values_survive_a_close_and_reopen(backend: Backend, data_dir: Path) -> None:
    with backend.open(data_dir, model=None) as mem:
        hub, loner = store_hub_and_loner(mem)
        crowd(mem)
        mem._engine.settle_hubness()
    assert (data_dir / "index" / "vectors" / "hubness.bin").exists()
    # A read-only instance computes nothing: it ranks with the values saved.
    with backend.open(data_dir, model=None, read_only=True) as reader:
        hits = reader.search(vector=QUERY, limit=2)
        assert [h.memory.id for h in hits] == [loner, hub]
