"""Facts captured from a turn (`memory_after_turn`), with no LLM: the rules of
`memcore.capture` read the user's messages of the turn, or the caller's own
`fact_extractor` does (its failures and timeouts fall back to the rules). Each fact is
stored as a memory (source ``conversation``, thread = session, the turn in its metadata,
its retention tier) unless a near-identical one is already stored, and goes through the
update rule of `_facade/updates.py`: a fact that updates exactly one stored fact
supersedes it (history keeps the old one); when the rule names several, or a short-lived
fact meets a durable one, nothing is superseded and the pairs are reported. The result
says what was captured and what was skipped and why, so an agent never believes a fact
was stored when it was not.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypedDict

from memcore._facade.base import Vector
from memcore._facade.facts import FactsAPI
from memcore._facade.lifecycle import item_text
from memcore._facade.tiers import TIERS
from memcore._facade.turn_metrics import TurnMetrics
from memcore.errors import MemcoreError
from memcore.records.facts import MemoryRecord

_log = logging.getLogger("memcore.capture")

#: A user's own fact extractor: the turn's items (input, then output) in, the facts out,
#: each a string or ``{"content", "tier"?}``.
FactExtractor = Callable[[list[dict[str, Any]]], Sequence[str | Mapping[str, Any]]]
#: Cosine at or above which a captured fact counts as one already stored (the same
#: statement in other words: "I live in Austin" / "User lives in Austin").
DUPLICATE_COSINE = 0.95
#: Most facts stored from one turn (a pasted wall of text is not a list of facts).
MAX_FACTS = 20
#: Characters of a skipped statement shown back.
SKIPPED_CHARS = 200


class CapturedFact(TypedDict):
    """A fact stored from the turn."""

    id: str
    content: str
    tier: str
    supersedes: str | None
    possible_updates: list[str]
    embedding: str


class SkippedStatement(TypedDict, total=False):
    """A statement of the turn that was not stored, and why."""

    text: str
    reason: str
    existing_id: str


@dataclass
class CaptureReport:
    """What capture did with one turn."""

    captured: list[CapturedFact] = field(default_factory=list)
    skipped: list[SkippedStatement] = field(default_factory=list)
    extractor: str = "rules"

    def to_dict(self) -> dict[str, Any]:
        """`{captured, skipped, extractor}` for the tool's result."""
        return {"captured": self.captured, "skipped": self.skipped, "extractor": self.extractor}


def turn_user_texts(items: Sequence[Mapping[str, Any]]) -> list[str]:
    """The user's messages of the current turn: the user items after the last item of
    anyone else (a client that sends the whole history sends its old turns too; those
    were captured when they were the turn)."""
    texts: list[str] = []
    for item in reversed(items):
        role = item.get("role")
        if role == "user":
            text = item_text(item)
            if text.strip():
                texts.append(text)
        elif role != "system":  # the memory block and instructions are not the user's
            break
    texts.reverse()
    return texts


def run_extractor(
    extractor: FactExtractor, timeout: float, items: list[dict[str, Any]]
) -> list[tuple[str, str]]:
    """The extractor's facts as (content, tier), run in a thread of its own so that a
    slow one cannot hold the turn longer than `timeout` seconds.

    Raises:
        RuntimeError: It failed, timed out or returned something other than facts.
    """
    outcome: list[Any] = []

    def call() -> None:
        try:
            outcome.append(("ok", extractor(items)))
        except BaseException as exc:  # reported to the turn's thread, never raised here
            outcome.append(("error", exc))

    worker = threading.Thread(target=call, name="memcore-fact-extractor", daemon=True)
    worker.start()
    worker.join(timeout)
    if not outcome:
        raise RuntimeError(f"timed out after {timeout:g} s")
    status, value = outcome[0]
    if status == "error":
        raise RuntimeError(f"{type(value).__name__}: {value}")
    return _extracted(value)


def _extracted(value: Any) -> list[tuple[str, str]]:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise RuntimeError(f"returned {type(value).__name__}, not a list of facts")
    facts: list[tuple[str, str]] = []
    for fact in value:
        if isinstance(fact, str):
            content, tier = fact, "durable"
        elif isinstance(fact, Mapping) and isinstance(fact.get("content"), str):
            content, tier = fact["content"], fact.get("tier") or "durable"
        else:
            raise RuntimeError(
                f"returned a fact that is neither a string nor {{content}}: {fact!r}"
            )
        if tier not in TIERS:
            raise RuntimeError(f"returned tier {tier!r}; use one of {', '.join(TIERS)}")
        if content.strip():
            facts.append((content.strip(), tier))
    return facts


class FactCaptureAPI(FactsAPI):
    """Capturing a turn's facts (memory_after_turn's second half)."""

    _turn_metrics: TurnMetrics
    _fact_extractor: tuple[FactExtractor, float] | None

    def _capture_turn_facts(
        self,
        namespace: str,
        session_id: str,
        turn_id: str,
        inputs: list[dict[str, Any]],
        outputs: list[dict[str, Any]],
        *,
        at: datetime,
        user_id: str | None,
    ) -> CaptureReport:
        """Find the turn's facts (the rules read the user's messages of `inputs`; an
        extractor gets the input and output items) and store the new ones."""
        report = CaptureReport()
        facts = self._turn_facts(inputs, outputs, report)
        for content, tier in facts[:MAX_FACTS]:
            self._capture_one(
                namespace, session_id, turn_id, content, tier, at=at, user_id=user_id, into=report
            )
        for content, _ in facts[MAX_FACTS:]:
            report.skipped.append(
                {"text": content[:SKIPPED_CHARS], "reason": f"over {MAX_FACTS} facts in one turn"}
            )
        return report

    def _turn_facts(
        self, inputs: list[dict[str, Any]], outputs: list[dict[str, Any]], report: CaptureReport
    ) -> list[tuple[str, str]]:
        if self._fact_extractor is not None:
            extractor, timeout = self._fact_extractor
            try:
                facts = run_extractor(extractor, timeout, [*inputs, *outputs])
            except RuntimeError as exc:
                _log.warning("fact_extractor failed (%s); the rules capture this turn", exc)
                report.extractor = f"rules (fact_extractor failed: {str(exc)[:200]})"
            else:
                report.extractor = "custom"
                return facts
        # Imported on the first turn: a store that never records turns never loads the rules.
        from memcore.capture import capture_facts

        facts = []
        for text in turn_user_texts(inputs):
            found = capture_facts(text)
            facts.extend((fact.content, fact.tier) for fact in found.facts)
            report.skipped.extend(
                {"text": s.text[:SKIPPED_CHARS], "reason": s.reason} for s in found.skipped
            )
        return facts

    def _capture_one(
        self,
        namespace: str,
        session_id: str,
        turn_id: str,
        content: str,
        tier: str,
        *,
        at: datetime,
        user_id: str | None,
        into: CaptureReport,
    ) -> None:
        vector, embedding, _ = self._stored_vector(content, None)
        existing = self._stored_duplicate(namespace, content, vector)
        if existing is not None:
            into.skipped.append(
                {"text": content[:SKIPPED_CHARS], "reason": "duplicate", "existing_id": existing}
            )
            return
        result = self.store_memory(
            content,
            memory_type="semantic" if tier == "durable" else "episodic",
            source="conversation",
            metadata={"session_id": session_id, "turn_id": turn_id},
            thread_id=session_id,
            user_id=user_id,
            event_time=at,
            valid_from=at,
            tier=tier,
            namespace=namespace,
            vector=vector,
        )
        self._turn_metrics.fact_written(tier)
        updates = [m for m in result.similar if _may_supersede(m, tier)]
        superseded: str | None = None
        if len(updates) == 1 and len(result.similar) == 1:
            try:
                self.supersede_memory(updates[0].id, result.id, namespace=namespace)
                superseded = updates[0].id
            except MemcoreError as exc:  # superseded meanwhile: report, do not fail the turn
                _log.info(
                    "captured fact %s could not supersede %s: %s", result.id, updates[0].id, exc
                )
        into.captured.append(
            {
                "id": result.id,
                "content": content,
                "tier": tier,
                "supersedes": superseded,
                "possible_updates": [m.id for m in result.similar if m.id != superseded],
                "embedding": embedding,
            }
        )

    def _stored_duplicate(self, namespace: str, content: str, vector: Vector | None) -> str | None:
        """The id of a valid stored fact that says the same, if any: the same words, or
        nearly the same meaning with the same names and numbers (a fact that changes a
        name or a number is an update, which the update rule judges, not a repeat)."""
        wanted = _normal(content)
        if vector is not None:
            for hit in self._engine.search_vector(namespace, vector, limit=3, kinds=["memory"]):
                stored = hit.memory.content
                if _normal(stored) == wanted or (
                    hit.relevance_score >= DUPLICATE_COSINE
                    and _specifics(stored) == _specifics(content)
                ):
                    return hit.memory.id
            return None
        for hit in self._engine.search_text(namespace, content, limit=5, kinds=["memory"]):
            if _normal(hit.memory.content) == wanted:
                return hit.memory.id
        return None


def _may_supersede(old: MemoryRecord, tier: str) -> bool:
    """A fact about today or this week does not replace a durable one ("I'm working from
    home today" leaves "User works at the Berlin office" standing)."""
    return tier == "durable" or old.tier != "durable"


_SPECIFIC = re.compile(r"\d+(?:[.,:]\d+)*|(?<!^)(?<![.!?] )\b[A-Z][\w'’-]*")


def _specifics(text: str) -> frozenset[str]:
    """The numbers and the capitalised words past a sentence's start: what makes two
    near-identical sentences two facts ("lives at number 12" / "at number 14")."""
    return frozenset(_SPECIFIC.findall(text)) - {"User", "User's", "I"}


def _normal(text: str) -> str:
    return " ".join(text.lower().replace("’", "'").rstrip(".!").split())
