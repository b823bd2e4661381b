"""Retention tiers (the lifecycle contract, in UTC): a fact about today (``L1``) expires
at the start of the UTC day `l1_retention_days` after the day it was written; one about
this week or a passing state (``L2``) after `l2_retention_days`; a ``durable`` fact never
expires. The expiry is the memory's ``expires_at``, so an expired fact leaves every search
at once (the read-time validity filter), and maintenance turns it into an invalidation
that history keeps.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memcore._facade.turn_settings import TurnSettings
from memcore._time import to_micros
from memcore.errors import invalid

#: The tiers a fact may have, shortest-lived first.
TIERS: tuple[str, ...] = ("L1", "L2", "durable")


def check_tier(tier: object) -> str:
    """`tier` if it names a tier.

    Raises:
        InvalidParameterError: Anything else.
    """
    if not isinstance(tier, str) or tier not in TIERS:
        raise invalid("tier", f"tier must be one of {', '.join(TIERS)}, got {tier!r}.")
    return tier


def tier_expiry(tier: str, written_at: datetime, settings: TurnSettings) -> int | None:
    """When a fact of `tier` written at `written_at` expires (microseconds), or None."""
    days = {"L1": settings.l1_retention_days, "L2": settings.l2_retention_days}.get(tier)
    if days is None:
        return None
    day = written_at.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return to_micros(day + timedelta(days=days), "tier")
