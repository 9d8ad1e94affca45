"""NCCL bandwidth readings and skip reasons from a bundle's CTRF reports and recipe.

The number comes only from CTRF stdout (or the failure message) of full bundles; minimal bundles
strip both, so their readings carry no number and say so. The floor is the bundle's own signed
`recipe.yaml` constraint (`">= N"`); aicr passes a check at 0.9 x floor.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from generator.facts.models import BandwidthReading
from generator.model import CtrfTest, Evidence, Phase, TestResult

NCCL_CHECKS: tuple[str, ...] = (
    "nccl-all-reduce-bw",
    "nccl-all-reduce-bw-net",
    "nccl-all-reduce-bw-nvls",
    "nccl-cre-all-reduce-bw",
)
TOLERANCE = Decimal("0.9")

# Linear patterns over lines capped at 512 characters by aicr; no nested quantifiers.
_STDOUT_LINE = re.compile(
    r"NCCL All Reduce bandwidth \(([^)]{1,200})\): ([0-9]{1,12}(?:\.[0-9]{1,12})?) GB/s"
)
_MESSAGE = re.compile(r"NCCL bandwidth ([0-9]{1,12}(?:\.[0-9]{1,12})?) GB/s")
_FLOOR = re.compile(r"\s*>=\s*([0-9]{1,12}(?:\.[0-9]{1,12})?)\s*(?:GB/s)?\s*")


def skip_reason(test: CtrfTest) -> str | None:
    """Why a not-run test did not run: its message, else `extra.skipReason`; None otherwise."""
    if test.result is not TestResult.NOT_RUN:
        return None
    if test.message and test.message.strip():
        return test.message.strip()
    reason = test.extra.get("skipReason")
    return str(reason) if isinstance(reason, str) and reason else None


def _measured(test: CtrfTest, check: str) -> Decimal | None:
    found: Decimal | None = None
    for line in test.stdout:
        match = _STDOUT_LINE.search(line)
        if match and match.group(1).strip() == check:
            found = Decimal(match.group(2))  # the last line wins
    if found is None and test.message:
        match = _MESSAGE.search(test.message)
        if match:
            found = Decimal(match.group(1))
    return found


def _constraints(evidence: Evidence) -> Mapping[str, str]:
    validation = evidence.recipe.get("validation")
    perf = validation.get("performance") if isinstance(validation, Mapping) else None
    raw = perf.get("constraints") if isinstance(perf, Mapping) else None
    out: dict[str, str] = {}
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, Mapping) and isinstance(item.get("name"), str):
            value: Any = item.get("value")
            out.setdefault(item["name"], "" if value is None else str(value))
    return out


def _floor(value: str) -> Decimal | None:
    match = _FLOOR.fullmatch(value)
    if not match:
        return None
    try:
        return Decimal(match.group(1))
    except InvalidOperation:
        return None


def _tests(evidence: Evidence) -> Mapping[str, CtrfTest]:
    report = evidence.ctrf.get(Phase.PERFORMANCE)
    return {t.name: t for t in report.tests} if report else {}


def _num(value: Decimal | None) -> float | None:
    return float(value) if value is not None else None


def redacted(evidence: Evidence) -> bool:
    """A minimal bundle: `predicate.redaction` is present (absent only for `--full` bundles)."""
    return isinstance(evidence.predicate.get("redaction"), Mapping)


def bandwidth(evidence: Evidence) -> tuple[BandwidthReading, ...]:
    """One reading per NCCL check the performance report lists or the recipe sets a floor for."""
    tests = _tests(evidence)
    constraints = _constraints(evidence)
    out: list[BandwidthReading] = []
    for check in NCCL_CHECKS:
        test = tests.get(check)
        if test is None and check not in constraints:
            continue
        notes: list[str] = []
        floor = _floor(constraints[check]) if check in constraints else None
        if check in constraints and floor is None:
            notes.append(f"recipe constraint {constraints[check]!r} is not a '>= N' floor")
        elif check not in constraints:
            notes.append("the recipe sets no floor for this check")
        pass_line = floor * TOLERANCE if floor is not None else None
        measured = _measured(test, check) if test is not None else None
        if test is None:
            notes.append("the check is not in the performance report")
        elif measured is None:
            if redacted(evidence):
                notes.append("minimal bundle: stdout is redacted, so no number is available")
            elif test.result is TestResult.NOT_RUN:
                notes.append(skip_reason(test) or "the check did not run")
            else:
                notes.append("no bandwidth line in the check's stdout")
        disagrees = False
        if (
            test is not None
            and measured is not None
            and pass_line is not None
            and test.result is not TestResult.NOT_RUN
        ):
            clears = measured >= pass_line
            disagrees = clears != (test.result is TestResult.PASS)
            if disagrees:
                side = "clears" if clears else "is below"
                notes.append(
                    f"measured {measured} GB/s {side} the pass line {pass_line} GB/s, "
                    f"but the check reported {test.status}"
                )
        out.append(
            BandwidthReading(
                check=check,
                measured=_num(measured),
                floor=_num(floor),
                pass_line=_num(pass_line),
                status=test.status if test else None,
                result=test.result if test else None,
                disagrees=disagrees,
                note="; ".join(notes) if notes else None,
            )
        )
    return tuple(out)
