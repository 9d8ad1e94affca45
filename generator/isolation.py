"""The isolation boundary around one pointer: its failure is its own, never the build's.

Fetching, verifying and assessing one pointer runs inside `isolated`. Whatever escapes that
work (a bug, a `RecursionError` on odd input, a `MemoryError`, a fault in a bundle source) becomes
that pointer's verdict: `NoVerdict` (exit 3) with class `internal`, naming the exception type and
message, with a hint to report it. Only what makes the whole build meaningless (an unusable tree,
allowlist, trust root or output folder) is raised outside the per-pointer work and ends the build.

`KeyboardInterrupt` and `SystemExit` are not caught: stopping a build stays possible. The
boundary is a `try` per pointer (nanoseconds when nothing fails), never a process per pointer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from generator.model import (
    STEP_NAMES,
    FailureCause,
    FailureClass,
    NoVerdict,
    ParsedPointer,
    Step,
    StepStatus,
    Verdict,
)

__all__ = ["INTERNAL_HINT", "assess_isolated", "internal_verdict", "isolated"]

INTERNAL_HINT = (
    "this is a fault in evidence-dashboard, not in the evidence: please report it "
    "with this message and the pointer file; the rest of the build went on"
)

_MAX_MESSAGE = 500

T = TypeVar("T")


def internal_verdict(exc: BaseException, stage: str = "verification") -> NoVerdict:
    """The exit-3 verdict of one pointer whose `stage` raised `exc`."""
    message = " ".join(str(exc).split()) or "(no message)"
    if len(message) > _MAX_MESSAGE:
        message = message[:_MAX_MESSAGE] + "..."
    detail = f"internal error during {stage}: {type(exc).__name__}: {message}"
    steps = tuple(
        Step(
            n,
            name,
            StepStatus.INFORMATIONAL
            if n == 5
            else StepStatus.FAILED
            if n == 1
            else StepStatus.SKIPPED,
            detail
            if n == 1
            else "report assembled"
            if n == 5
            else "not run: an earlier step failed",
        )
        for n, name in enumerate(STEP_NAMES, start=1)
    )
    return NoVerdict(steps=steps, cause=FailureCause(FailureClass.INTERNAL, detail, INTERNAL_HINT))


def isolated(work: Callable[[], T], fallback: Callable[[BaseException], T]) -> T:
    """`work()`, or `fallback(exc)` when it raises anything but an interrupt or exit."""
    try:
        return work()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - the boundary: one pointer's fault is its own
        return fallback(exc)


def assess_isolated(
    assessor: Any,
    item: ParsedPointer,
    verdict: Verdict | None,
    *,
    verified_at: str | None = None,
    duplicate_of: str | None = None,
) -> tuple[Any, Any]:
    """`assessor.assess(...)` (a `PointerRecord` and board entry) inside the boundary: on a
    fault the record carries the pointer's `internal` verdict and there is no board entry."""
    from generator.data import PointerRecord

    def fallback(exc: BaseException) -> tuple[Any, Any]:
        return PointerRecord(
            pointer=item, verdict=internal_verdict(exc, "assessment"), duplicate_of=duplicate_of
        ), None

    def work() -> tuple[Any, Any]:
        record, entry = assessor.assess(
            item, verdict, verified_at=verified_at, duplicate_of=duplicate_of
        )
        return record, entry

    return isolated(work, fallback)
