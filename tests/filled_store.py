"""A store holding every record type in every state, for the export/import tests
(tests/test_cli.py, tests/reliability/test_pg_round_trip.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from memcore import Memory


def _letters(texts: list[str]) -> npt.NDArray[np.float32]:
    """A deterministic stand-in embedding: letter counts, normalised. Its name is the
    store's model id (`custom:_letters`), which the export tests read back."""
    rows = np.zeros((len(texts), 26), dtype=np.float32)
    for i, text in enumerate(texts):
        for ch in text.lower():
            if "a" <= ch <= "z":
                rows[i, ord(ch) - 97] += 1
    rows[:, 0] += 1e-3  # never a zero vector
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def fill_store(mem: Memory, project: Path) -> None:
    """Every record type, in every state: memories (all fields, superseded, invalidated,
    another namespace), the graph (observation versions, relations, explicit and found
    mentions), turns with procedures and document versions, and an indexed project."""
    old = mem.store_memory(
        "User lives in Seattle",
        memory_type="episodic",
        source="explicit",
        confidence=0.7,
        importance=0.9,
        metadata={"k": [1, "two"], "nested": {"x": 1.5}},
        thread_id="t1",
        user_id="u1",
        event_time="2024-01-01T10:00:00.123456Z",
        valid_from="2024-01-01T00:00:00Z",
        expires_at="2099-01-01T00:00:00Z",
    )
    new = mem.store_memory("User moved to Austin", entities=["Alice"])
    mem.supersede_memory(old.id, new.id)
    gone = mem.store_memory("User has a cat")
    mem.invalidate(gone.id, "the cat moved out")
    mem.store_memory("Somebody else's fact", namespace="other")
    mem.save_memory(
        [
            {
                "name": "Alice",
                "entityType": "Person",
                "observations": ["Works at ACME", "Lives in Austin"],
                "relations": [{"targetEntity": "Bob", "relationType": "knows"}],
            },
            {
                "name": "Bob",
                "entityType": "Person",
                "observations": ["Writes Rust daily"],
                "relations": [
                    {"targetEntity": "Alice", "relationType": "mentors", "importance": 0.9}
                ],
            },
        ],
        "t1",
    )
    first = mem.get_entity("Alice").observations[0]
    mem.add_observations("Alice", "Works at Initech", supersedes=first.id)
    mem.store_memory("Bob reviewed the release")  # a mention found in the text
    (project / "auth.py").write_text("def login(user):\n    return check(user)\n")
    mem.record_turn(
        "c1",
        "fix the login bug",
        "Fixed it",
        procedures=[
            {"tool": "READ", "documents": [str(project / "auth.py")]},
            {
                "tool": "EDIT",
                "args": {"line": 2},
                "documents": [{"path": "notes.md", "content": "x"}],
            },
        ],
        turn_id="t-1",
        at="2025-06-01T12:00:00.5Z",
    )
    mem.record_turn("c2", "rename the helper", procedures=[{"tool": "BASH", "args": "ls -la"}])
    mem.index_project(project, project_id="proj")
