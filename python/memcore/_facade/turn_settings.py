"""The settings of the automatic path (docs/guide.md, "The automatic path"): how much of a
session stays verbatim, when it is compacted, how long short-lived facts live, and how
maintenance paces itself. The defaults are the lifecycle contract's.

Each setting is described once, in :data:`TURN_OPTIONS`: its default, the values it
accepts and a one-line help. ``Memory(...)`` takes them as keyword arguments and the
server and the CLI as ``--flags`` and ``MEMCORE_*`` variables (``memcore.settings.options``
builds those from this table), so the three never disagree on a range.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from memcore.errors import invalid


@dataclass(frozen=True, slots=True)
class TurnOption:
    """One setting: its type, its inclusive lower bound (or exclusive when ``open_low``),
    its upper bound and its help."""

    name: str
    kind: type[int] | type[float]
    low: float
    high: float
    help: str
    open_low: bool = False

    def accepted(self) -> str:
        """The accepted values in words, for error messages."""
        what = "an integer" if self.kind is int else "a number"
        low = f"greater than {_plain(self.low)}" if self.open_low else f"from {_plain(self.low)}"
        return f"{what} {low} up to {_plain(self.high)}"

    def check(self, value: Any) -> int | float:
        """`value` converted to the option's type.

        Raises:
            InvalidParameterError: Not a number of the right kind, or out of range.
        """
        number: int | float
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise invalid(self.name, f"{self.name} must be {self.accepted()}, got {value!r}.")
        if self.kind is int:
            if isinstance(value, float) and not value.is_integer():
                raise invalid(self.name, f"{self.name} must be {self.accepted()}, got {value!r}.")
            number = int(value)
        else:
            number = float(value)
        too_low = number <= self.low if self.open_low else number < self.low
        if not math.isfinite(number) or too_low or number > self.high:
            raise invalid(self.name, f"{self.name} must be {self.accepted()}, got {value!r}.")
        return number


def _plain(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


#: The settings, in the order the docs list them.
TURN_OPTIONS: tuple[TurnOption, ...] = (
    TurnOption(
        "recent_context_items",
        int,
        1,
        100_000,
        "items of a session memory_before_turn keeps verbatim when it compacts (30)",
    ),
    TurnOption(
        "compact_threshold",
        float,
        0,
        1,
        "compact the input when it exceeds this share of max_input_tok (0.8)",
        open_low=True,
    ),
    TurnOption(
        "l1_retention_days",
        int,
        1,
        36_500,
        "days a captured fact about today lives, counted in whole UTC days (1)",
    ),
    TurnOption(
        "l2_retention_days",
        int,
        1,
        36_500,
        "days a captured fact about this week or a passing state lives (7)",
    ),
    TurnOption(
        "compaction_min_age_hours",
        float,
        0,
        876_000,
        "hours an operation-log entry must be old before maintenance compacts it (24)",
    ),
    TurnOption(
        "summary_refresh_interval_minutes",
        float,
        0,
        5_256_000,
        "minutes between refreshes of one conversation's summary (60)",
    ),
    TurnOption(
        "max_processed_turns",
        int,
        1,
        100_000_000,
        "turn ids per session kept for memory_after_turn's idempotency history (1024)",
    ),
)


@dataclass(frozen=True, slots=True)
class TurnSettings:
    """Resolved settings of the automatic path; the defaults are the seed's."""

    recent_context_items: int = 30
    compact_threshold: float = 0.8
    l1_retention_days: int = 1
    l2_retention_days: int = 7
    compaction_min_age_hours: float = 24.0
    summary_refresh_interval_minutes: float = 60.0
    max_processed_turns: int = 1024

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> TurnSettings:
        """Settings from keyword values (None or absent: the default), each checked.

        Raises:
            InvalidParameterError: A value is out of range, names the setting.
        """
        known = {option.name: option for option in TURN_OPTIONS}
        checked: dict[str, Any] = {}
        for name, value in values.items():
            if name not in known:
                raise invalid(name, f"Unknown setting {name!r}; use one of: {', '.join(known)}.")
            if value is not None:
                checked[name] = known[name].check(value)
        settings = cls(**checked)
        if settings.l2_retention_days < settings.l1_retention_days:
            raise invalid(
                "l2_retention_days",
                f"l2_retention_days ({settings.l2_retention_days}) must be at least "
                f"l1_retention_days ({settings.l1_retention_days}): a week's facts outlive "
                "a day's.",
            )
        return settings

    def as_dict(self) -> dict[str, int | float]:
        """The settings as plain values (status, logs)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


#: The names, for callers that pass them through (``Memory(**...)``).
TURN_SETTING_NAMES: tuple[str, ...] = tuple(option.name for option in TURN_OPTIONS)
