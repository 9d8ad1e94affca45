"""A recipe's test history as view models: for each test, each signer's runs over time.

Read from the recipe's series document (`data/series/<recipe>.json`, already bounded to each
signer's newest runs). Runs are newest first by the verified transparency-log time (the claimed
attestation time only for data written before the log time was kept). A flake rate is given
only from three runs on: two runs cannot tell a flaky check from a fixed one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from generator.site.model import SiteModel, anchor

__all__ = ["FLAKE_MIN_RUNS", "HistoryRun", "SignerHistory", "TestHistory", "test_history"]

FLAKE_MIN_RUNS = 3
"""Runs a signer needs of a test before its flake rate is shown."""


@dataclass(frozen=True)
class HistoryRun:
    """One run of a test by one signer: when (verified time) and its result."""

    when: str
    result: str


@dataclass(frozen=True)
class SignerHistory:
    """One signer's runs of one test, newest first, and its flake rate (None: too few runs)."""

    label: str
    runs: tuple[HistoryRun, ...]
    flake: int | None


@dataclass(frozen=True)
class TestHistory:
    """One test's history: a stable anchor and each signer's runs."""

    anchor: str
    phase: str
    name: str
    signers: tuple[SignerHistory, ...]


def _when(build: Mapping[str, Any]) -> str:
    return str(build.get("loggedAt") or build.get("attestedAt") or build.get("when") or "")


def flake_rate(results: Sequence[str]) -> int | None:
    """How often (percent) adjacent runs flipped between pass and fail; None under three runs."""
    judged = [r for r in results if r in ("pass", "fail")]
    if len(results) < FLAKE_MIN_RUNS or len(judged) < 2:
        return None
    flips = sum(1 for a, b in zip(judged, judged[1:], strict=False) if a != b)
    return round(100 * flips / (len(judged) - 1))


def test_history(m: SiteModel, recipe: str, columns: Sequence[str]) -> list[TestHistory]:
    """Every test row of a recipe's series with each signer's (of `columns`) runs."""
    series = m.series.get(recipe) or {}
    builds = series.get("builds") or {}
    ordered = {
        src: sorted(builds[src], key=_when, reverse=True) for src in columns if builds.get(src)
    }
    out = []
    for row in series.get("rows") or ():
        phase, name = str(row.get("phase")), str(row.get("name"))
        key = f"{phase}/{name}"
        signers = []
        for src, runs in ordered.items():
            found = tuple(
                HistoryRun(_when(b), str(b["resultsByRow"][key]))
                for b in runs
                if key in (b.get("resultsByRow") or {})
            )
            if found:
                rate = flake_rate([r.result for r in found])
                signers.append(SignerHistory(m.label(src), found, rate))
        out.append(TestHistory(anchor("history", phase, name), phase, name, tuple(signers)))
    return out
