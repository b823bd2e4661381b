"""LoCoMo retrieval; gold = each question's evidence turns (dia_ids). Two ways of storing a
conversation, each in a store of its own:

- isolated memories: a memory per dialogue turn (`store_memories`, its session as its
  `thread_id`, as an agent files what it learns under the conversation it came from, and
  `memory_type="episodic"`: a turn is a moment of a conversation, which recall's thread
  prior reads in its session), searched with `search`, `search_text`, `recall` and
  `search_memories`: memories keyed by their own text;
- the conversation log: every turn through `record_turn` (a LoCoMo session is a conversation,
  the turn happens at its session's date), searched with `retrieve_context` over all of
  them: turns keyed by their context (the turns before them and their day);
- the automatic path (benches/quality/hooks.py): every turn through `memory_after_turn`,
  each question through `memory_before_turn`, scored on what the memory block holds.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benches import embedding_cache
from benches.quality.hooks import HOOKS_PATH, hooks_path
from benches.quality.metrics import Scores, per_query
from benches.quality.retrievers import usable

KS = (1, 5, 10, 25)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
# The LoCoMo paper's DRAGON retriever, dialogue level, all categories (recall@k, %).
DRAGON = {"R@5": 58.8, "R@10": 67.5, "R@25": 79.9}
_EVIDENCE = re.compile(r"D:?(\d+):0*(\d+)")
# Session dates read "1:56 pm on 8 May, 2023".
_DATE = re.compile(r"(\d{1,2}):(\d{2}) ?([ap]m) on (\d{1,2}) (\w+),? (\d{4})", re.IGNORECASE)
#: The conversation-log retriever: retrieve_context over every recorded turn.
TURN_PATH = "retrieve_context (turns via record_turn)"
# A conversation's history is not stale: recency must not reorder it (LoCoMo's sessions
# span months, the questions ask about all of them).
_NO_RECENCY = 36_500.0


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

    def at(self, position: int) -> datetime:
        """When the turn happened: its session's date, a second per position in it."""
        match = _DATE.search(self.date)
        if match is None:
            raise ValueError(f"unreadable session date {self.date!r} of {self.dia_id}")
        hour, minute, half, day, month, year = match.groups()
        clock = int(hour) % 12 + (12 if half.lower() == "pm" else 0)
        start = datetime.strptime(f"{day} {month} {year}", "%d %B %Y").replace(tzinfo=UTC)
        return start + timedelta(hours=clock, minutes=int(minute), seconds=position)


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
    """Scores per retriever: overall, overall without category 5, per category, and per
    conversation (``conv:<sample_id>``: the folds of leave-one-conversation-out)."""
    import memcore

    vectors_ok = embedding_cache.available() is None
    conversations = load(path)[:max_conversations]
    retrievers = usable(vectors_ok)
    scores: dict[str, dict[str, Scores]] = {r.name: {} for r in retrievers}
    scores[TURN_PATH] = {}
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
                thread_ids=[f"session-{t.session}" for t in conv.turns],
                # A turn is a moment of a conversation: an episode, read in its session.
                memory_type="episodic",
            )
            for qi, q in enumerate(questions):
                vector = None if query_v is None else query_v[qi]
                for r in retrievers:
                    hits = r.search(mem, q.text, vector, max(KS))
                    found = [h.memory.metadata["dia_id"] for h in hits]  # type: ignore[index]
                    values = per_query(found, q.gold, KS, r.max_depth)
                    _add(scores.setdefault(r.name, {}), q, conv.sample_id, values)
        turn_scores = scores.setdefault(TURN_PATH, {})
        for q, found in zip(
            questions, _turn_path(conv, questions, query_v, vectors_ok), strict=True
        ):
            _add(turn_scores, q, conv.sample_id, per_query(found, q.gold, KS, max(KS)))
        if vectors_ok:  # the hooks embed as they go: no row without the model
            hook_scores = scores.setdefault(HOOKS_PATH, {})
            for q, found in zip(questions, hooks_path(conv, questions), strict=True):
                _add(hook_scores, q, conv.sample_id, per_query(found, q.gold, KS, max(KS)))
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


def _add(
    scores: dict[str, Scores], q: Question, conversation: str, values: dict[str, float | None]
) -> None:
    buckets = ["all", f"cat{q.category}", f"conv:{conversation}"]
    buckets += ["all_but_5"] if q.category != 5 else []
    for bucket in buckets:
        scores.setdefault(bucket, Scores()).add(values)


def _turn_path(
    conv: Conversation, questions: list[Question], query_v: Any, vectors_ok: bool
) -> list[list[str]]:
    """Every turn recorded as an agent's log would be, then each question answered by
    retrieve_context over all of them: the dia_ids it returns, best first."""
    import memcore
    from memcore import _core

    ats = []
    position: dict[int, int] = {}
    for t in conv.turns:
        position[t.session] = position.get(t.session, -1) + 1
        ats.append(t.at(position[t.session]))
    passage_v = None
    if vectors_ok:
        # The text record_turn itself embeds (its day and its own text).
        keys = [
            _core.turn_vector_text(int(at.timestamp() * 1_000_000), t.content)
            for t, at in zip(conv.turns, ats, strict=True)
        ]
        passage_v = embedding_cache.embed(keys, "passage", label=f"{conv.sample_id} turns")
    found: list[list[str]] = []
    with (
        tempfile.TemporaryDirectory(prefix="locomo-turns-") as tmp,
        memcore.Memory(tmp, model=None) as mem,
    ):
        for i, (t, at) in enumerate(zip(conv.turns, ats, strict=True)):
            mem.record_turn(
                f"{conv.sample_id}-session-{t.session}",
                t.content,
                turn_id=t.dia_id,
                at=at,
                vector=None if passage_v is None else passage_v[i],
            )
        for qi, q in enumerate(questions):
            result = mem.retrieve_context(
                q.text,
                limit=max(KS),
                token_budget=1_000_000,
                vector=None if query_v is None else query_v[qi],
                recency_half_life_days=_NO_RECENCY,
            )
            found.append([item.turn.turn_id for item in result.items])
    return found
