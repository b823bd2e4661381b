"""retrieve_context: the two discovery paths, the scoring options, budget packing, the
prompt-ready block, embeddings (real MiniLM, and a model still loading), token counts."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import memcore
from backends import Backend, both_backends
from conftest import MINILM_DIR, require_model

pytestmark = both_backends

estimate = memcore._core.Engine.estimate_tokens


@pytest.fixture
def filled(mem: memcore.Memory) -> memcore.Memory:
    """Thirty long turns in thirty conversations, all about deploying."""
    for i in range(30):
        text = f"deploy the service step {i} " + "with many details " * 40
        mem.record_turn(f"c{i}", text, "done " * 100, turn_id="t")
    return mem


@pytest.mark.parametrize("budget", [20, 60, 200, 700, 5000])
def test_packing_never_exceeds_the_budget(filled: memcore.Memory, budget: int) -> None:
    result = filled.retrieve_context("deploy the service", token_budget=budget, limit=10)
    assert result.token_count <= budget
    assert estimate(result.text) <= budget
    assert sum(i.tokens for i in result.items) <= result.token_count
    assert len(result.items) + result.omitted == 30
    if budget >= 700:
        assert result.items, "a generous budget keeps something"


def test_a_larger_budget_keeps_at_least_as_much(filled: memcore.Memory) -> None:
    kept = [
        len(filled.retrieve_context("deploy the service", token_budget=b).items)
        for b in (60, 200, 700, 5000)
    ]
    assert kept == sorted(kept) and kept[-1] == 10  # the limit, once the budget allows


def test_the_current_conversation_is_never_returned(filled: memcore.Memory) -> None:
    result = filled.retrieve_context("deploy the service step 3", conversation_id="c3", limit=50)
    assert "c3" not in {i.turn.conversation_id for i in result.items}
    assert len(result.items) + result.omitted == 29


def test_documents_are_canonicalised_and_found_by_hypernode(
    mem: memcore.Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "auth.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)  # global mode: relative paths are relative to the cwd
    mem.record_turn(
        "c1", "fix the login bug", "fixed", procedures=[{"tool": "EDIT", "documents": ["auth.py"]}]
    )
    mem.record_turn("c2", "unrelated chat about lunch")
    result = mem.retrieve_context("", documents=[str(tmp_path / "." / "auth.py")])
    assert [i.turn.conversation_id for i in result.items] == ["c1"]
    assert result.items[0].shared_documents == [(tmp_path / "auth.py").resolve().as_posix()]
    with pytest.raises(memcore.InvalidParameterError, match="query"):
        mem.retrieve_context("  ")


def test_scoring_options_are_passed_and_checked(mem: memcore.Memory) -> None:
    mem.record_turn(
        "c1",
        "tune the cache",
        procedures=[{"tool": "READ", "documents": [{"path": "https://x.org/a", "content": "a"}]}],
    )
    default = mem.retrieve_context("", documents=["https://x.org/a"]).items[0]
    assert default.score == pytest.approx(0.6 * default.recency * default.familiarity_bonus)
    stronger = mem.retrieve_context("", documents=["https://x.org/a"], document_match=0.9)
    assert stronger.items[0].score > default.score
    flat = mem.retrieve_context("", documents=["https://x.org/a"], familiarity_weight=0)
    assert flat.items[0].familiarity_bonus == 1.0
    with pytest.raises(memcore.InvalidParameterError, match="Unknown scoring option"):
        mem.retrieve_context("cache", recency=3.0)
    with pytest.raises(memcore.InvalidParameterError, match="token_budget"):
        mem.retrieve_context("cache", token_budget=0)


def test_the_result_explains_itself_and_serialises(mem: memcore.Memory) -> None:
    mem.record_turn(
        "c1",
        "rotate the api keys",
        "Rotated them in the vault.",
        procedures=[{"tool": "BASH", "args": {"cmd": "vault rotate"}}],
    )
    result = mem.retrieve_context("api keys", conversation_id="now")
    (item,) = result.items
    assert item.search_score is not None and item.shared_documents == []
    assert item.procedures[0].tool == "BASH" and item.procedures[0].args == {"cmd": "vault rotate"}
    assert result.text.startswith("## Relevant context from past conversations")
    for part in ("similar request", "User: rotate the api keys", "Procedures: BASH", "Agent: "):
        assert part in result.text
    data = json.loads(json.dumps(result.to_dict()))
    assert data["items"][0]["turn"]["created_at"].endswith("Z")


def test_count_tokens_without_a_model_is_the_budget_estimate(mem: memcore.Memory) -> None:
    assert mem.count_tokens("abcdefgh") == 2 == estimate("abcdefgh")
    assert mem.count_tokens("abcdefghi") == 3


# -- embeddings ----------------------------------------------------------------------------


def test_minilm_finds_a_request_worded_differently(backend: Backend, data_dir: Path) -> None:
    model = require_model(MINILM_DIR)
    with backend.open(data_dir, model_path=model) as mem:
        assert mem.embeddings is not None and mem.embeddings.wait_ready(60)
        login = mem.record_turn("c1", "fix the login bug", "Fixed the token check.")
        assert login.embedded
        mem.record_turn("c2", "write the release notes for version 2", "Done.")
        mem.record_turn("c3", "make the charts use a darker colour palette", "Done.")
        result = mem.retrieve_context("resolve the authentication issue", conversation_id="c9")
        assert result.items[0].turn.conversation_id == "c1"
        assert result.items[0].search_score is not None
        # The tokenizer counts real tokens; budgets still use the chars / 4 estimate.
        assert mem.count_tokens("authentication") == 1 < estimate("authentication")


@pytest.fixture
def loading(backend: Backend, data_dir: Path) -> Iterator[tuple[memcore.Memory, threading.Event]]:
    """A Memory whose custom embedding function blocks until released (status loading)."""
    release = threading.Event()

    def embedder(texts: list[str]) -> np.ndarray:
        release.wait(30)
        rows = np.zeros((len(texts), 8), dtype=np.float32)
        rows[:, 0] = 1.0
        return rows

    mem = backend.open(data_dir, embedder=embedder, embedding_wait=0)
    try:
        yield mem, release
    finally:
        release.set()
        mem.close()


def test_a_loading_model_never_loses_a_turn(
    loading: tuple[memcore.Memory, threading.Event],
) -> None:
    mem, release = loading
    assert mem.embeddings is not None and mem.embeddings.status == "loading"
    early = mem.record_turn("c1", "fix the login bug")
    assert early.created and not early.embedded
    # Queries behave like recall: not ready yet is an error, not a silent downgrade...
    with pytest.raises(memcore.EmbeddingError, match="not ready"):
        mem.retrieve_context("login bug")
    # ...except in the thin-client lifecycle, which must not fail a turn over it.
    prepared = mem.memory_before_turn("c2", "t1", "the login bug again")
    assert "fix the login bug" in prepared["input_items"][0]["content"]
    release.set()
    assert mem.embeddings.wait_ready(30)
    later = mem.record_turn("c1", "and the logout bug")
    assert later.embedded
    found = mem.retrieve_context("login bug", conversation_id="c2")
    assert {i.turn.turn_id for i in found.items} == {early.turn_id, later.turn_id}
