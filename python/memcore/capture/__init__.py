"""Rule-based fact capture from a user's message: no model, no LLM (see extract.py)."""

from memcore.capture.extract import MAX_CHARS, MAX_STATEMENTS, capture_facts
from memcore.capture.values import (
    SKIP_REASONS,
    TIERS,
    Capture,
    CapturedFact,
    SkippedText,
)

__all__ = [
    "MAX_CHARS",
    "MAX_STATEMENTS",
    "SKIP_REASONS",
    "TIERS",
    "Capture",
    "CapturedFact",
    "SkippedText",
    "capture_facts",
]
