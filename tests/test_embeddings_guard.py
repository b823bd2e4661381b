"""The dimension/model guard (docs/configuration.md, "The model guard") with the real test
models: a store keeps the vectors of the model that made it, refuses another one (of
another dimension or not), force_model reopens it with its own model, reset_memory wipes
it for the new one, and reset_all_memory wipes only when confirmed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from conftest import MINILM_DIR, POTION_DIR, require_model
from embeddings_support.hub_env import use_hub
from memcore import (
    DimensionMismatchError,
    EmbeddingError,
    InvalidParameterError,
    Memory,
    NotFoundError,
    _core,
)
from memcore.embeddings import EmbeddingService, model_dir
from memcore.embeddings.int8_graph import SOURCE_SUFFIX as INT8
from test_mcp_support.in_process import run_tool

READY_TIMEOUT = 60.0
MINILM_FACT = "The user's favourite programming language is TypeScript"


@pytest.fixture
def minilm() -> Path:
    return require_model(MINILM_DIR)


@pytest.fixture
def potion() -> Path:
    return require_model(POTION_DIR)


def ready(mem: Memory) -> EmbeddingService:
    service = mem.embeddings
    assert service is not None and service.wait_ready(READY_TIMEOUT), service and service.error
    return service


def recorded_identity(data_dir: Path) -> tuple[str | None, int] | None:
    """The (model, dim) the closed store records, read the way the core reads it."""
    engine = _core.Engine(str(data_dir), read_only=True)
    try:
        return engine.embedding_identity()
    finally:
        engine.close()


def make_store(data_dir: Path, model_path: Path) -> str:
    """A store made with a folder model, holding one embedded fact; returns its id."""
    with Memory(data_dir, model_path=model_path) as mem:
        ready(mem)
        return mem.store_memory(MINILM_FACT).id


# -- refusal ----------------------------------------------------------------------------------


def test_a_minilm_store_refuses_potion_with_the_exact_message(
    data_dir: Path, minilm: Path, potion: Path
) -> None:
    fact = make_store(data_dir, minilm)
    with pytest.raises(DimensionMismatchError) as caught:
        Memory(data_dir, model_path=potion)
    assert caught.value.code == "DIMENSION_MISMATCH"
    assert str(caught.value) == (
        "Dimension mismatch: database has 384d vectors, configured model produces 256d. "
        "Use --force-model or --reset-memory"
    )
    # Refused means untouched, and the directory is free again.
    assert recorded_identity(data_dir) == ("minilm", 384)
    with Memory(data_dir, model_path=minilm) as mem:
        assert [m.id for m in mem.list_memories()] == [fact]


def lookalike(tmp_path: Path, minilm: Path) -> Path:
    """MiniLM's very files run another way (CLS pooling): 384-d as well, other vectors."""
    folder = tmp_path / "minilm-cls"
    folder.mkdir()
    for name in ("model.onnx", "tokenizer.json"):
        (folder / name).symlink_to(minilm / name)
    config = json.loads((minilm / "config.json").read_text(encoding="utf-8"))
    (folder / "config.json").write_text(json.dumps({**config, "pooling": "cls"}), "utf-8")
    return folder


def test_a_same_dimension_folder_model_is_refused_likewise(
    data_dir: Path, tmp_path: Path, minilm: Path
) -> None:
    make_store(data_dir, minilm)
    with pytest.raises(DimensionMismatchError) as caught:
        Memory(data_dir, model_path=lookalike(tmp_path, minilm))
    assert str(caught.value) == (
        "Model mismatch: database vectors were made by 'minilm', configured model is "
        "'path:minilm-cls' (both 384d, but not comparable). Use --force-model or --reset-memory"
    )
    assert recorded_identity(data_dir) == ("minilm", 384)


def letters(texts: list[str]) -> npt.NDArray[np.float32]:
    """A toy 26-d embedding: letter counts."""
    out = np.full((len(texts), 26), 1e-3, dtype=np.float32)
    for row, text in enumerate(texts):
        for ch in text.lower():
            if "a" <= ch <= "z":
                out[row, ord(ch) - 97] += 1
    return out


def reversed_letters(texts: list[str]) -> npt.NDArray[np.float32]:
    """Another 26-d embedding, not comparable with `letters`."""
    return letters(texts)[:, ::-1].copy()


def test_a_custom_embedder_of_the_same_dimension_is_refused_likewise(data_dir: Path) -> None:
    with Memory(data_dir, embedder=letters) as mem:
        ready(mem)
        mem.store_memory("Alice writes Rust")
    with Memory(data_dir, embedder=reversed_letters) as mem:
        service = mem.embeddings
        assert service is not None and not service.wait_ready(READY_TIMEOUT)
        # The dimension of a function is known after its probe, in the loader: the refusal
        # is the service's error, and every embedding call reports it.
        assert (service.status, service.error) == (
            "error",
            "Model mismatch: database vectors were made by 'custom:letters', configured model "
            "is 'custom:reversed_letters' (both 26d, but not comparable). Use --force-model or "
            "--reset-memory",
        )
        with pytest.raises(EmbeddingError, match="Model mismatch: database vectors"):
            mem.search("Bob")
        # A store never fails over the model: kept without its vector until a model that
        # fits the store embeds it (at an open with the right one).
        assert mem.store_memory("Bob writes Go").embedding == "pending"
        assert [h.memory.content for h in mem.search_text("Alice")] == ["Alice writes Rust"]
    assert recorded_identity(data_dir) == ("custom:letters", 26)
    with Memory(data_dir, embedder=reversed_letters, reset_memory=True) as mem:
        ready(mem)
        assert mem.count_memories() == 0
    assert recorded_identity(data_dir) == ("custom:reversed_letters", 26)


# -- force_model ------------------------------------------------------------------------------


def test_force_model_opens_a_minilm_folder_store_with_that_folder(
    data_dir: Path, minilm: Path, potion: Path
) -> None:
    fact = make_store(data_dir, minilm)
    with Memory(data_dir, model_path=potion, force_model=True) as mem:
        service = ready(mem)
        assert (service.model_id, service.dim) == ("minilm", 384)
        assert service.source == f"directory {minilm}{INT8}"
        hits = mem.search("which coding language does the user like best?", limit=1)
        assert [h.memory.id for h in hits] == [fact]
    assert recorded_identity(data_dir) == ("minilm", 384)


def test_force_model_opens_a_potion_store_from_its_recorded_folder(
    data_dir: Path, potion: Path
) -> None:
    fact = make_store(data_dir, potion)
    with Memory(data_dir, force_model=True) as mem:  # configured: the default minilm
        service = ready(mem)
        assert (service.model_id, service.dim) == ("path:potion-base-8M", 256)
        assert [h.memory.id for h in mem.search("favourite programming language")] == [fact]


def test_force_model_without_the_folder_says_which_one_to_pass(
    data_dir: Path, minilm: Path, potion: Path
) -> None:
    make_store(data_dir, potion)
    (data_dir / "embedding_model.json").unlink()
    with pytest.raises(DimensionMismatchError) as caught:
        Memory(data_dir, model_path=minilm, force_model=True)
    assert str(caught.value) == (
        "force_model cannot select the stored model 'path:potion-base-8M': the folder it was "
        "loaded from is not recorded or no longer holds it. Pass model_path pointing at the "
        "folder named 'potion-base-8M', or use reset_memory."
    )
    with Memory(data_dir, model_path=potion) as mem:  # that folder still opens it
        assert mem.count_memories() == 1


# -- the MiniLM folder is the registry's minilm --------------------------------------------------


def test_the_minilm_folder_and_the_registry_name_open_each_others_stores(
    data_dir: Path, tmp_path: Path, minilm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No hub and no wheel here: the registry model cannot load, but the guard is checked
    # at open, before loading, and that is what is under test.
    use_hub(monkeypatch, hf_home=tmp_path / "hf", offline=True)
    with Memory(data_dir, model="minilm") as mem:
        assert mem.embeddings is not None and mem.embeddings.model_id == "minilm"
    fact = make_store(data_dir, minilm)  # no mismatch: the same model
    with Memory(data_dir, model="minilm") as mem:
        assert mem.embeddings is not None and mem.embeddings.model_id == "minilm"
        assert [m.id for m in mem.list_memories()] == [fact]
    assert recorded_identity(data_dir) == ("minilm", 384)


def test_the_minilm_folder_is_known_without_reading_its_graph_again(
    minilm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert model_dir.spec_from_model_dir(minilm).name == "minilm"

    def not_again(path: Path) -> str:
        raise AssertionError(f"{path} was hashed again")

    # What a later process finds: the digest comes from the cache folder's memo.
    monkeypatch.setattr(model_dir, "sha256_of", not_again)
    assert model_dir.spec_from_model_dir(minilm).name == "minilm"


def test_a_changed_copy_of_the_minilm_folder_is_not_minilm(
    data_dir: Path, tmp_path: Path, minilm: Path
) -> None:
    folder = tmp_path / "minilm-tampered"
    folder.mkdir()
    for name in ("tokenizer.json", "config.json"):
        (folder / name).symlink_to(minilm / name)
    weights = bytearray((minilm / "model.onnx").read_bytes())
    weights[len(weights) // 2] ^= 0xFF  # one byte of the weights
    (folder / "model.onnx").write_bytes(bytes(weights))
    with Memory(data_dir, model_path=folder) as mem:
        assert mem.embeddings is not None
        assert mem.embeddings.model_id == "path:minilm-tampered"
    with pytest.raises(DimensionMismatchError, match="made by 'path:minilm-tampered'"):
        Memory(data_dir, model_path=minilm)


def test_a_store_recorded_under_the_folder_name_is_upgraded(data_dir: Path, minilm: Path) -> None:
    # Earlier versions recorded the MiniLM folder as path:<its name>.
    engine = _core.Engine(str(data_dir))
    engine.set_embedding_identity("path:all-MiniLM-L6-v2-int8", 384)
    engine.close()
    with Memory(data_dir, model_path=minilm) as mem:
        assert ready(mem).model_id == "minilm"
    assert recorded_identity(data_dir) == ("minilm", 384)


# -- reset_memory -------------------------------------------------------------------------------

GRAPH = [
    {
        "name": "Alice",
        "entityType": "Person",
        "observations": ["Leads the search team"],
        "relations": [{"targetEntity": "Search", "relationType": "leads"}],
    },
    {
        "name": "Search",
        "entityType": "Team",
        "observations": ["Owns the ranking service"],
        "relations": [{"targetEntity": "Alice", "relationType": "led by"}],
    },
]


def fill(mem: Memory, tmp_path: Path) -> dict[str, Any]:
    """One of every kind of record: a memory, a graph, a turn with a document, code."""
    mem.store_memory(MINILM_FACT)
    mem.save_memory(GRAPH, "t1")
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\nThe ranking service moved to Rust.\n", "utf-8")
    mem.record_turn(
        "conv-1", "summarise my notes", "Done.", [{"tool": "READ", "documents": [notes]}]
    )
    project = tmp_path / "project"
    project.mkdir()
    (project / "config.py").write_text("def parse_config(path):\n    return {}\n", "utf-8")
    report = mem.index_project(project, "proj")
    assert report.total_chunks >= 1
    return {"notes": notes}


def inventory(mem: Memory, notes: Path) -> dict[str, int]:
    graph = mem.read_graph(summary=True)
    try:
        versions = len(mem.get_document_history(notes).versions)
    except NotFoundError:
        versions = 0
    return {
        "memories": mem.count_memories(),
        "entities": graph.total_entities,
        "relations": graph.total_relations,
        "turns": len(mem.list_turns("conv-1")),
        "document_versions": versions,
        "code_projects": len(mem.list_projects()),
        "code_hits": len(mem.search_code("parse_config")),
    }


def test_reset_memory_wipes_everything_and_adopts_the_new_model(
    data_dir: Path, tmp_path: Path, minilm: Path, potion: Path
) -> None:
    with Memory(data_dir, model_path=minilm) as mem:
        ready(mem)
        notes = fill(mem, tmp_path)["notes"]
        before = inventory(mem, notes)
    assert before == {
        "memories": 1,
        "entities": 2,
        "relations": 2,
        "turns": 1,
        "document_versions": 1,
        "code_projects": 1,
        "code_hits": 1,
    }
    with Memory(data_dir, model_path=potion, reset_memory=True) as mem:
        service = ready(mem)
        assert (service.model_id, service.dim) == ("path:potion-base-8M", 256)
        assert inventory(mem, notes) == dict.fromkeys(before, 0)
        fresh = mem.store_memory("The office moved to Lisbon").id
        assert [h.memory.id for h in mem.search("where is the office?")] == [fresh]
    assert recorded_identity(data_dir) == ("path:potion-base-8M", 256)
    with pytest.raises(DimensionMismatchError, match="database has 256d vectors, configured model"):
        Memory(data_dir, model_path=minilm)


def test_reset_memory_keeps_a_store_of_the_same_model(data_dir: Path, minilm: Path) -> None:
    make_store(data_dir, minilm)
    with Memory(data_dir, model_path=minilm, reset_memory=True) as mem:
        assert mem.count_memories() == 1


# -- reset_all_memory ---------------------------------------------------------------------------


def test_reset_all_memory_refuses_without_confirm_and_wipes_with_it(
    data_dir: Path, tmp_path: Path, minilm: Path, potion: Path
) -> None:
    with Memory(data_dir, model_path=minilm) as mem:
        ready(mem)
        notes = fill(mem, tmp_path)["notes"]
        before = inventory(mem, notes)
        for refused in ({}, {"confirm": False}):
            with pytest.raises(InvalidParameterError) as caught:
                mem.reset_all_memory(**refused)
            assert caught.value.code == "INVALID_PARAMETER"
            assert caught.value.details == {"field": "confirm"}
            assert "Nothing was deleted" in str(caught.value)
            assert "reset_all_memory(confirm=True)" in str(caught.value)
            assert inventory(mem, notes) == before
        mem.reset_all_memory(confirm=True)
        assert inventory(mem, notes) == dict.fromkeys(before, 0)
        # The store keeps its model: new facts are embedded and found as before.
        fact = mem.store_memory(MINILM_FACT).id
        assert [h.memory.id for h in mem.search("favourite coding language", limit=1)] == [fact]
    assert recorded_identity(data_dir) == ("minilm", 384)
    with pytest.raises(DimensionMismatchError):
        Memory(data_dir, model_path=potion)


def test_the_mcp_tool_passes_its_confirmation(data_dir: Path) -> None:
    with Memory(data_dir, model=None) as mem:
        mem.store_memory("keep me until the wipe")
        with pytest.raises(InvalidParameterError, match="confirm"):
            run_tool(mem, "reset_all_memory", {"confirm": False})
        assert mem.count_memories() == 1
        assert run_tool(mem, "reset_all_memory", {"confirm": True})["success"] is True
        assert mem.count_memories() == 0
