"""LoCoMo retrieval: one store per conversation, a memory per dialogue turn, each question
searched; gold = the question's evidence turns (dia_ids)."""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benches import embedding_cache
from benches.quality.metrics import Scores, per_query
from benches.quality.retrievers import usable

KS = (1, 5, 10, 25)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
# The LoCoMo paper's DRAGON retriever, dialogue level, all categories (recall@k, %).
DRAGON = {"R@5": 58.8, "R@10": 67.5, "R@25": 79.9}
_EVIDENCE = re.compile(r"D:?(\d+):0*(\d+)")


@dataclass
class Turn:
    dia_id: str
    speaker: str
    text: str
    session: int
    date: str

    @property
    def content(self) -> str:
        return f"{self.speaker}: {self.text}"


@dataclass
class Question:
    text: str
    category: int
    gold: set[str]


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]
    dropped: dict[str, int] = field(default_factory=dict)


def normalise_evidence(raw: list[Any]) -> tuple[list[str], int]:
    """Canonical dia_ids ("D<session>:<turn>", no zero padding) and how many parts were
    unreadable. Upstream has "D8:6; D9:17" (two ids in one), "D:11:26" and "D30:05"."""
    ids: list[str] = []
    bad = 0
    for item in raw:
        for part in re.split(r"[;,\s]+", str(item)):
            if not part:
                continue
            match = _EVIDENCE.fullmatch(part)
            if match is None:
                bad += 1
                continue
            dia_id = f"D{int(match[1])}:{int(match[2])}"
            if dia_id not in ids:
                ids.append(dia_id)
    return ids, bad


def load(path: Path) -> list[Conversation]:
    conversations = []
    for sample in json.loads(path.read_text()):
        conv = sample["conversation"]
        turns = []
        for key, value in conv.items():
            session = re.fullmatch(r"session_(\d+)", key)
            if session is None or not isinstance(value, list):
                continue
            date = str(conv.get(f"{key}_date_time", ""))
            for t in value:
                dia_id, _ = normalise_evidence([t["dia_id"]])
                turns.append(Turn(dia_id[0], t["speaker"], t["text"], int(session[1]), date))
        known = {t.dia_id for t in turns}
        dropped = {
            "unreadable evidence ids": 0,
            "evidence ids not in the conversation": 0,
            "questions without usable evidence": 0,
        }
        questions = []
        for qa in sample["qa"]:
            ids, bad = normalise_evidence(qa.get("evidence", []))
            dropped["unreadable evidence ids"] += bad
            gold = {i for i in ids if i in known}
            dropped["evidence ids not in the conversation"] += len(ids) - len(gold)
            if not gold:
                dropped["questions without usable evidence"] += 1
                continue
            questions.append(Question(str(qa["question"]), int(qa["category"]), gold))
        conversations.append(
            Conversation(str(sample.get("sample_id", "?")), turns, questions, dropped)
        )
    return conversations


def evaluate(
    path: Path,
    *,
    max_conversations: int | None = None,
    max_questions: int | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Scores per retriever: overall, overall without category 5, and per category."""
    import memcore

    vectors_ok = embedding_cache.available() is None
    conversations = load(path)[:max_conversations]
    retrievers = usable(vectors_ok)
    scores: dict[str, dict[str, Scores]] = {r.name: {} for r in retrievers}
    dropped: dict[str, int] = {}
    n_questions = 0
    for conv in conversations:
        questions = conv.questions[:max_questions]
        n_questions += len(questions)
        for reason, n in conv.dropped.items():
            dropped[reason] = dropped.get(reason, 0) + n
        log(f"  locomo {conv.sample_id}: {len(conv.turns)} turns, {len(questions)} questions")
        texts = [t.content for t in conv.turns]
        passage_v = (
            embedding_cache.embed(texts, "passage", label=conv.sample_id) if vectors_ok else None
        )
        query_v = (
            embedding_cache.embed([q.text for q in questions], "query", label="questions")
            if vectors_ok and questions
            else None
        )
        with (
            tempfile.TemporaryDirectory(prefix="locomo-") as tmp,
            memcore.Memory(tmp, model=None) as mem,
        ):
            mem.store_memories(
                texts,
                vectors=passage_v,
                metadatas=[
                    {"speaker": t.speaker, "dia_id": t.dia_id, "session": t.session, "date": t.date}
                    for t in conv.turns
                ],
            )
            for qi, q in enumerate(questions):
                vector = None if query_v is None else query_v[qi]
                for r in retrievers:
                    hits = r.search(mem, q.text, vector, max(KS))
                    found = [h.memory.metadata["dia_id"] for h in hits]  # type: ignore[index]
                    values = per_query(found, q.gold, KS, r.max_depth)
                    buckets = ["all", f"cat{q.category}"] + (
                        ["all_but_5"] if q.category != 5 else []
                    )
                    for bucket in buckets:
                        scores[r.name].setdefault(bucket, Scores()).add(values)
    return {
        "file": str(path),
        "conversations": [c.sample_id for c in conversations],
        "questions": n_questions,
        "vectors": "all-MiniLM-L6-v2 int8"
        if vectors_ok
        else f"none ({embedding_cache.available()})",
        "dropped": dropped,
        "dragon": DRAGON,
        "retrievers": {
            name: {bucket: {"n": s.count, **s.means()} for bucket, s in buckets.items()}
            for name, buckets in scores.items()
        },
    }
