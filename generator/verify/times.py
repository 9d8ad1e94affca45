"""Claimed time against verified time: `attestedAt` is a claim, the log time is a fact.

A signed predicate says when the run was attested (`attestedAt`), but whoever signs can write any
date there. What sigstore-python verified is the transparency log's time for the signature
(`Evidence.logged_at`). Runs are ordered by the verified time; the claim is only compared with it:

- more than `TOLERANCE_SECONDS` apart: the pointer is flagged (`attested_skew`, shown on its
  card and as `attestedAtSkew` in pointers.json);
- after the log time, or after the build time, by more than the tolerance: the evidence is
  rejected with class `time` (`judge_time`): a postdated run must never become a signer's
  "latest" and hide a later failure.

`judge_time` runs after the verdict cache (a cached verdict holds the raw verification), because
the build time is not part of the cache key. Pure; about two string parses per verdict.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache

from generator.model import (
    FailureCause,
    FailureClass,
    Rejected,
    Step,
    StepStatus,
    SubRow,
    Verdict,
    Verified,
)

__all__ = [
    "TIME_HINT",
    "TOLERANCE_SECONDS",
    "attested_skew",
    "epoch_seconds",
    "flagged_skew",
    "judge_time",
    "newest_verified_time",
]

TOLERANCE_SECONDS = 24 * 3600
"""How far the claimed attestedAt may lie from the verified log time before it is flagged."""

TIME_HINT = (
    "re-attest the run on a host with a correct clock and re-sign it; the "
    "transparency-log time, not attestedAt, says when the evidence was signed"
)


@lru_cache(maxsize=65536)
def epoch_seconds(text: str) -> int | None:
    """Seconds since 1970 of an RFC 3339 timestamp (any offset), or None when it is not one."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return int(moment.timestamp())


def attested_skew(verdict: Verdict | None) -> int | None:
    """attestedAt minus the verified log time, in seconds (negative: claimed earlier), for
    verified evidence with both times; else None."""
    if not isinstance(verdict, Verified):
        return None
    logged = epoch_seconds(verdict.evidence.logged_at or "")
    attested = epoch_seconds(verdict.evidence.attested_at)
    if logged is None or attested is None:
        return None
    return attested - logged


def flagged_skew(verdict: Verdict | None) -> int | None:
    """`attested_skew` when it exceeds the tolerance either way (the pointer is flagged)."""
    skew = attested_skew(verdict)
    return skew if skew is not None and abs(skew) > TOLERANCE_SECONDS else None


def judge_time(verdict: Verdict, build_epoch: int | None) -> Verdict:
    """`verdict`, or a `Rejected` (class `time`) when verified evidence has no verified log
    time, or claims an attestedAt after the log time or after `build_epoch` (the build time,
    when SOURCE_DATE_EPOCH fixes it) by more than the tolerance."""
    if not isinstance(verdict, Verified):
        return verdict
    evidence = verdict.evidence
    logged_text = evidence.logged_at or ""
    logged = epoch_seconds(logged_text)
    attested = epoch_seconds(evidence.attested_at)
    if logged is None:
        return _rejected(
            verdict,
            "the signature carries no time sigstore verified (no "
            "transparency-log or signed timestamp), so the run cannot be "
            "placed in time",
            logged_text,
        )
    if attested is None:
        return _rejected(
            verdict,
            f"attestedAt {evidence.attested_at!r} is not an RFC 3339 timestamp",
            logged_text,
        )
    ahead = attested - logged
    if ahead > TOLERANCE_SECONDS:
        return _rejected(
            verdict,
            f"attestedAt {evidence.attested_at} lies {_span(ahead)} after "
            f"the verified transparency-log time {logged_text} (more than "
            f"the {_span(TOLERANCE_SECONDS)} tolerance)",
            logged_text,
        )
    if build_epoch is not None and attested - build_epoch > TOLERANCE_SECONDS:
        build = datetime.fromtimestamp(build_epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return _rejected(
            verdict,
            f"attestedAt {evidence.attested_at} lies "
            f"{_span(attested - build_epoch)} after the build time {build} "
            f"(more than the {_span(TOLERANCE_SECONDS)} tolerance)",
            logged_text,
        )
    return verdict


def newest_verified_time(times: list[str]) -> str:
    """The newest of verified log times (normalised RFC 3339 `Z`, so the string order is the
    time order), or "" when there is none."""
    return max((t for t in times if t), default="")


def _rejected(verdict: Verified, detail: str, logged: str) -> Rejected:
    """The verified steps with step 4 failed by the time check (a check beyond aicr)."""
    rows = (
        SubRow("attestedAt (claimed)", verdict.evidence.attested_at, beyond_aicr=True),
        SubRow("transparency-log time (verified)", logged or "(none)", beyond_aicr=True),
    )
    steps = tuple(
        Step(s.step, s.name, StepStatus.FAILED, detail, (*s.sub_rows, *rows)) if s.step == 4 else s
        for s in verdict.steps
    )
    return Rejected(
        steps=steps, cause=FailureCause(FailureClass.TIME, detail, TIME_HINT), signer=verdict.signer
    )


def _span(seconds: int) -> str:
    """`3 d 04:05:06` / `04:05:06`: a human-readable length of time."""
    days, rest = divmod(abs(seconds), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    clock = f"{hours:02d}:{minutes:02d}:{secs:02d}"
    return f"{days} d {clock}" if days else clock
