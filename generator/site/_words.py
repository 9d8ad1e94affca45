"""The words pages use for states, verdicts, ages and freshness (plain functions of the data
documents; part of `generator.site.model`'s face)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

STATE_ORDER = ("CONFIRMED", "SINGLE", "PARTIAL", "UNTESTED", "FAILING", "CONTESTED")
STATE_CLASS = {
    "CONFIRMED": "confirmed",
    "SINGLE": "single",
    "PARTIAL": "partial",
    "UNTESTED": "untested",
    "FAILING": "failing",
    "CONTESTED": "contested",
}
RESULT_WORD = {"pass": ("✓", "pass"), "fail": ("✗", "fail"), "not-run": ("·", "not run")}
EXIT_WORD = {0: "verified", 1: "verified, phase failures recorded", 2: "rejected", 3: "no verdict"}
COMMIT_URL = "https://github.com/NVIDIA/aicr/commit/"


def _parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def age(attested: str | None, build_time: str | None) -> str:
    """How long before the build a run was attested, in plain words."""
    a, b = _parse_time(attested), _parse_time(build_time)
    if a is None or b is None:
        return "age unknown"
    days = (b - a).days
    if days < 0:
        return "after this build"
    if days == 0:
        return "same day as this build"
    return f"{days} day{'s' if days != 1 else ''} before this build"


def freshness_text(fresh: Mapping[str, Any]) -> str:
    """`fresh`, `stale (<12 hex>… vs current <12 hex>…)` or `unknown`."""
    state = fresh.get("state")
    if state == "fresh":
        return "fresh"
    if state == "stale":
        signed = str(fresh.get("signed") or "")[:12]
        current = str(fresh.get("current") or "")[:12]
        return f"stale ({signed}… vs current {current}…)"
    return "unknown"


def unknown_reason(fresh: Mapping[str, Any]) -> str:
    """Why an attestation's freshness is unknown, from what the comparison lacked."""
    if not fresh.get("signed"):
        return "the bundle records no recipe digest to compare"
    if not fresh.get("current"):
        return (
            "the digest of this recipe as it stands could not be computed (for example, no overlay "
            "for it in this tree)"
        )
    return "the signed and current digests could not be compared"
