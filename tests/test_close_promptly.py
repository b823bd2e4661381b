"""close() does not wait for the background indexer (issue: a million-vector ingest held
close() for the 21 minutes the graph took to catch up): it saves what is indexed with its
watermark and leaves the rest to the next open, which indexes it again from the store;
`wait_indexed` is the way to wait for the indexes when that is wanted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from memcore import Memory
from memcore.errors import InvalidParameterError

N = 20_000
DIM = 16


def _vectors() -> npt.NDArray[np.float32]:
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((N, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def test_close_leaves_what_the_indexer_has_not_reached_to_the_next_open(tmp_path: Path) -> None:
    vectors = _vectors()
    with Memory(tmp_path, model=None) as mem:
        stored = mem.store_memories([f"note {i} word{i}" for i in range(N)], vectors=vectors)
        ids = [m.id for m in stored]
        # One bulk write publishes 20,000 vectors at once; the graph takes seconds to
        # insert them. close() (the with block) stops after the round in hand.

    with Memory(tmp_path, model=None) as mem:
        # Had close() drained the queue, the graph on disk would hold every vector.
        assert mem.index_health().vectors_pending > 0
        # Meanwhile nothing is missing: vectors not yet in the graph are searched exactly.
        for i in range(0, N, 997):
            hits = mem.search(vector=vectors[i], limit=1)
            assert [h.memory.id for h in hits] == [ids[i]]
        assert mem.search_text(f"word{N - 1}", limit=1)[0].memory.id == ids[-1]
        assert mem.wait_indexed()
        health = mem.index_health()
        assert health.vectors_pending == 0 and health.text_pending == 0
        assert health.vectors == N

    with Memory(tmp_path, model=None) as mem:
        # Waited for, the indexes were saved whole: nothing to index again.
        assert mem.index_health().vectors_pending == 0


def test_wait_indexed_says_whether_the_indexes_caught_up_in_time(tmp_path: Path) -> None:
    with Memory(tmp_path, model=None) as mem:
        mem.store_memories([f"note {i}" for i in range(N)], vectors=_vectors())
        assert mem.wait_indexed(timeout=0) is False  # 20,000 vectors are not inserted at once
        assert mem.wait_indexed(timeout=600) is True
        assert mem.wait_indexed(timeout=30) is True  # nothing left: answered at once
        for bad in (-1.0, float("nan")):
            with pytest.raises(InvalidParameterError) as caught:
                mem.wait_indexed(timeout=bad)
            assert caught.value.details["field"] == "timeout"
