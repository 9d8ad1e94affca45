"""The build's clock: `SOURCE_DATE_EPOCH` when set, else the newest verified log time."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from generator.model import Verdict, Verified

__all__ = ["build_time_for", "rfc3339", "verdict_logged"]


def rfc3339(moment: datetime) -> str:
    """UTC RFC 3339 with whole seconds and `Z`."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def build_time_for(epoch: int | None, logged: Iterable[str]) -> str:
    """The build time: SOURCE_DATE_EPOCH when set, else the newest of the verified
    transparency-log times `logged`; never the clock, never a claimed attestedAt."""
    if epoch is not None:
        return rfc3339(datetime.fromtimestamp(epoch, UTC))
    newest = max((a for a in logged if a), default="")
    return newest or "1970-01-01T00:00:00Z"


def verdict_logged(verdict: Verdict) -> str:
    """The verified transparency-log time of a verdict's evidence, or ""."""
    if isinstance(verdict, Verified):
        return verdict.evidence.logged_at or ""
    return ""
