"""search_nodes and the embeddings of graph writes: one batch per save, no vectors when
the model is off or failed, EmbeddingError while it loads, and the real MiniLM model
finding an entity by a paraphrase of its observation."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

import memcore
from backends import Backend, both_backends
from conftest import MINILM_DIR, require_model
from test_graph_save import entity, rel, seed_valid_request

pytestmark = both_backends

READY_TIMEOUT = 60.0


def bag_of_letters(texts: list[str]) -> npt.NDArray[np.float32]:
    """A deterministic toy embedding: letter counts."""
    out = np.zeros((len(texts), 26), dtype=np.float32)
    for row, text in enumerate(texts):
        for ch in text.lower():
            if "a" <= ch <= "z":
                out[row, ord(ch) - 97] += 1
    return out + 1e-3


def test_save_memory_embeds_everything_in_one_batch(backend: Backend, data_dir: Path) -> None:
    calls: list[list[str]] = []

    def recording(texts: list[str]) -> npt.NDArray[np.float32]:
        calls.append(texts)
        return bag_of_letters(texts)

    with backend.open(data_dir, embedder=recording) as mem:
        assert mem.embeddings is not None and mem.embeddings.wait_ready(READY_TIMEOUT)
        calls.clear()
        mem.save_memory(seed_valid_request(), "t1")
        assert len(calls) == 1
        assert len(calls[0]) == 3 + 9  # three entity texts and nine observations
        assert "Andrii (Person)" in calls[0]
        hits = mem.search_nodes("Works at Google", limit=3)
        assert hits[0].name == "Andrii"
        assert hits[0].scores.vector is not None
        assert "vector" not in hits[0].to_dict()
        calls.clear()
        mem.add_observations("Andrii", ["Moved to Berlin", "Learns German"])
        assert len(calls) == 1 and len(calls[0]) == 2


def test_graph_writes_wait_for_a_loading_model(backend: Backend, data_dir: Path) -> None:
    release = threading.Event()

    def slow(texts: list[str]) -> npt.NDArray[np.float32]:
        release.wait(READY_TIMEOUT)
        return bag_of_letters(texts)

    with backend.open(data_dir, embedder=slow, embedding_wait=0) as mem:
        assert mem.embeddings is not None and mem.embeddings.status == "loading"
        with pytest.raises(memcore.EmbeddingError):
            mem.save_memory(seed_valid_request(), "t1")
        assert mem.read_graph().total_entities == 0
        release.set()
        assert mem.embeddings.wait_ready(READY_TIMEOUT)
        assert mem.save_memory(seed_valid_request(), "t1").entities_created == 3


def test_a_failed_model_leaves_the_graph_working(backend: Backend, data_dir: Path) -> None:
    def broken(texts: list[str]) -> npt.NDArray[np.float32]:
        return np.full((len(texts), 4), np.nan, dtype=np.float32)

    with backend.open(data_dir, embedder=broken) as mem:
        assert mem.embeddings is not None
        mem.embeddings.wait_ready(READY_TIMEOUT)
        assert mem.embeddings.status == "error"
        assert mem.save_memory(seed_valid_request(), "t1").entities_created == 3
        assert [h.name for h in mem.search_nodes("Google")][:1] == ["Andrii"]
        assert mem.add_observations("Andrii", "Drinks green tea")[0].version == 1


def test_search_nodes_without_a_model_is_lexical_and_graph(mem: memcore.Memory) -> None:
    mem.save_memory(seed_valid_request(), "t1")
    hits = mem.search_nodes("lxml")
    assert hits[0].name == "Python Scripts"
    assert hits[0].scores.vector is None and hits[0].scores.bm25
    assert hits[0].view.observation_count == 3
    names = [h.name for h in mem.search_nodes("Andrii", limit=50)]
    assert names[0] == "Andrii" and len(names) == len(set(names))  # one hit per entity
    assert mem.search_nodes("CodeArtifact")[0].name == "Python Scripts"  # types are searched
    with pytest.raises(memcore.InvalidParameterError):
        mem.search_nodes("  ")
    with pytest.raises(memcore.InvalidParameterError):
        mem.search_nodes("x", limit=51)


def test_minilm_finds_an_entity_by_a_paraphrase(backend: Backend, data_dir: Path) -> None:
    folder = require_model(MINILM_DIR)
    with backend.open(data_dir, model_path=folder) as mem:
        assert mem.embeddings is not None and mem.embeddings.wait_ready(READY_TIMEOUT)
        mem.save_memory(
            [
                entity("Marta", ["Is allergic to peanuts"], [rel("Oslo Office", "works at")]),
                entity(
                    "Oslo Office", ["Has a rooftop terrace"], [rel("Marta", "employs")], "Place"
                ),
                entity(
                    "Quarterly Report", ["Revenue grew in spring"], [rel("Marta", "written by")]
                ),
                entity(
                    "Build Server", ["Runs the nightly tests"], [rel("Oslo Office", "hosted in")]
                ),
            ],
            "t1",
        )
        hits = mem.search_nodes("which colleague cannot eat nuts", limit=4)
        assert hits[0].name == "Marta"
        assert hits[0].scores.vector is not None and hits[0].scores.vector > 0.3
