"""LoCoMo through the automatic path: what a thin client that only calls the two hooks
gets (docs/guide.md, "The automatic path").

Every turn of a conversation goes through `memory_after_turn` in order (its session is the
session, its dia_id the turn id, at its session's date), which records it and captures the
facts it states; then each question is asked through `memory_before_turn` in a session of
its own, with the default budgets, as the client would. The retrieved list is what the
memory block holds, in the order the model reads it: the past turns it shows, then the
provenance turn of each fact (its `metadata["turn_id"]`). Scored on the evidence turns
like the other rows, with the real model (the hooks embed as they go).
"""

from __future__ import annotations

import tempfile
from typing import TYPE_CHECKING

from benches import embedding_cache

if TYPE_CHECKING:
    from benches.quality.locomo import Conversation, Question

#: The row's name in the LoCoMo table.
HOOKS_PATH = "hooks (memory_after_turn + memory_before_turn)"


def hooks_path(conv: Conversation, questions: list[Question]) -> list[list[str]]:
    """The dia_ids behind each question's memory block, in the block's order."""
    import memcore

    folder = embedding_cache.model_dir()
    if folder is None:
        raise RuntimeError("the hooks row needs the embedding model")
    found: list[list[str]] = []
    with (
        tempfile.TemporaryDirectory(prefix="locomo-hooks-") as tmp,
        memcore.Memory(tmp, model_path=folder) as mem,
    ):
        assert mem.embeddings is not None and mem.embeddings.wait_ready(120)
        position: dict[int, int] = {}
        for t in conv.turns:
            position[t.session] = position.get(t.session, -1) + 1
            mem.memory_after_turn(
                f"{conv.sample_id}-session-{t.session}",
                t.dia_id,
                [{"role": "user", "content": t.content}],
                "",
                at=t.at(position[t.session]),
            )
        for qi, q in enumerate(questions):
            prepared = mem.memory_before_turn(f"question-{qi}", "q", q.text)
            behind = [turn["turn_id"] for turn in prepared["recall_turns"]]
            for fact_id in prepared["recall_fact_ids"]:
                metadata = mem.get_memory(fact_id).metadata
                behind.append(str(metadata["turn_id"]) if isinstance(metadata, dict) else "")
            found.append(list(dict.fromkeys(t for t in behind if t)))
    return found
