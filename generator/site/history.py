"""A recipe's test history as view models: for each test, each signer's runs over time.

Read from the recipe's series document (`data/series/<recipe>.json`, already bounded to each
signer's newest runs). Runs are newest first by the verified transparency-log time (the claimed
attestation time only for data written before the log time was kept). A flake rate is given
only from three runs on: two runs cannot tell a flaky check from a fixed one.

Drawn TestGrid-style: one column per run (each signer's runs, newest first), its time in the
heading once, and one result per test and run, so no time or label repeats per test.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from generator.site.model import SiteModel, anchor

__all__ = [
    "FLAKE_MIN_RUNS",
    "HistorySigner",
    "HistoryView",
    "TestHistory",
    "flake_rate",
    "test_history",
]

FLAKE_MIN_RUNS = 3
"""Runs a signer needs of a test before its flake rate is shown."""


@dataclass(frozen=True)
class HistorySigner:
    """One signer's runs (columns of the history), newest first: the verified time of each."""

    label: str
    runs: tuple[str, ...]

    @property
    def flaky(self) -> bool:
        """Whether the history has a flake rate column for this signer (three runs or more)."""
        return len(self.runs) >= FLAKE_MIN_RUNS


@dataclass(frozen=True)
class TestHistory:
    """One test's history: a stable anchor, its result in each run of each signer ("" where
    the run did not report it, in the order of `HistoryView.signers`) and each signer's flake
    rate (None: fewer than three runs)."""

    anchor: str
    phase: str
    name: str
    results: tuple[str, ...]
    flakes: tuple[int | None, ...]

    def runs(self, signer: int, view: HistoryView) -> list[tuple[str, str]]:
        """One signer's runs of this test as (time, result), newest first."""
        start = sum(len(s.runs) for s in view.signers[:signer])
        times = view.signers[signer].runs
        mine = self.results[start : start + len(times)]
        return [(w, r) for w, r in zip(times, mine, strict=True) if r]


@dataclass(frozen=True)
class HistoryView:
    """A recipe's test history: the signers' runs (the columns) and one row per test."""

    signers: tuple[HistorySigner, ...]
    tests: tuple[TestHistory, ...]


def _when(build: Mapping[str, Any]) -> str:
    return str(build.get("loggedAt") or build.get("attestedAt") or build.get("when") or "")


def flake_rate(results: Sequence[str]) -> int | None:
    """How often (percent) adjacent runs flipped between pass and fail; None under three runs."""
    judged = [r for r in results if r in ("pass", "fail")]
    if len(results) < FLAKE_MIN_RUNS or len(judged) < 2:
        return None
    flips = sum(1 for a, b in zip(judged, judged[1:], strict=False) if a != b)
    return round(100 * flips / (len(judged) - 1))


def test_history(m: SiteModel, recipe: str, columns: Sequence[str]) -> HistoryView:
    """Every test row of a recipe's series with each signer's (of `columns`) runs."""
    series = m.series.get(recipe) or {}
    builds = series.get("builds") or {}
    ordered = [
        (src, sorted(builds[src], key=_when, reverse=True)) for src in columns if builds.get(src)
    ]
    signers = tuple(
        HistorySigner(m.label(src), tuple(_when(b) for b in runs)) for src, runs in ordered
    )
    tables = [[b.get("resultsByRow") or {} for b in runs] for _src, runs in ordered]
    out = []
    for row in series.get("rows") or ():
        phase, name = str(row.get("phase")), str(row.get("name"))
        key = f"{phase}/{name}"
        results: list[str] = []
        flakes: list[int | None] = []
        for table in tables:
            mine = [str(t[key]) if key in t else "" for t in table]
            results.extend(mine)
            found = [r for r in mine if r]
            flakes.append(flake_rate(found) if found else None)
        out.append(
            TestHistory(anchor("history", phase, name), phase, name, tuple(results), tuple(flakes))
        )
    return HistoryView(signers, tuple(out))
