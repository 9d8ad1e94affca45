"""aicr's cell vocabulary for the Verify and Digest match columns (aicr-dashboard 4.4).

Each cell is a distinct outcome type carrying its own data; `text` renders aicr's wording and
`warning` says whether it counts. A broken bundle warns once (Verify), never twice.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.data import FreshnessInfo, PointerRecord
from generator.model import Freshness, NoVerdict, Pending, Rejected, Verified

_HEX = frozenset("0123456789abcdef")


def _hex_prefix(value: str | None) -> str:
    """The first 12 hex characters of a digest (anything else dropped: it is signed input)."""
    return "".join(c for c in (value or "").lower() if c in _HEX)[:12]


@dataclass(frozen=True)
class VerifyPassed:
    pending: bool = False
    kind: str = "passed"
    warning: bool = False

    @property
    def text(self) -> str:
        return ":hourglass: pending signature" if self.pending else ":white_check_mark: passed"


@dataclass(frozen=True)
class VerifyPhaseFailures:
    kind: str = "phase-failures"
    warning: bool = False

    @property
    def text(self) -> str:
        return ":warning: phase failures recorded (informational)"


@dataclass(frozen=True)
class VerifyInvalid:
    failure_class: str
    http_status: int | None
    hint: str
    detail: str = ""
    """The error itself; the hint is only the next step and never stands in for it."""
    kind: str = "invalid"
    warning: bool = True

    @property
    def text(self) -> str:
        text = f":x: invalid — {self.failure_class}"
        if self.http_status is not None:
            text += f" (HTTP {self.http_status})"
        if self.detail:
            text += f": {self.detail}"
        if self.hint:
            text += f" (next step: {self.hint})" if self.detail else f": {self.hint}"
        return text


@dataclass(frozen=True)
class VerifyError:
    """No verdict (exit 3) or no result at all: aicr's "verify error (result exit N)"."""

    exit: int
    failure_class: str | None
    kind: str = "error"
    warning: bool = True

    @property
    def text(self) -> str:
        text = f":x: verify error (result exit {self.exit})"
        return f"{text} — {self.failure_class}" if self.failure_class else text


VerifyCell = VerifyPassed | VerifyPhaseFailures | VerifyInvalid | VerifyError


@dataclass(frozen=True)
class DigestMatches:
    kind: str = "matches"
    warning: bool = False

    @property
    def text(self) -> str:
        return ":white_check_mark: matches"


@dataclass(frozen=True)
class DigestStale:
    signed: str
    current: str
    kind: str = "stale"
    warning: bool = True

    @property
    def text(self) -> str:
        return (
            f":warning: stale (`{_hex_prefix(self.signed)}…` vs current "
            f"`{_hex_prefix(self.current)}…`)"
        )


@dataclass(frozen=True)
class DigestUnknown:
    kind: str = "could-not-compute"
    warning: bool = True

    @property
    def text(self) -> str:
        return ":warning: could not compute current digest"


@dataclass(frozen=True)
class DigestSkipped:
    """No signed digest; a warning only when verification itself succeeded."""

    warning: bool
    kind: str = "skipped"

    @property
    def text(self) -> str:
        return ":warning: skipped (no signed digest)"


DigestCell = DigestMatches | DigestStale | DigestUnknown | DigestSkipped


def verify_cell(record: PointerRecord) -> VerifyCell:
    verdict = record.verdict
    if isinstance(verdict, Pending):
        return VerifyPassed(pending=True)
    if isinstance(verdict, Verified):
        return VerifyPhaseFailures() if verdict.phase_failures else VerifyPassed()
    if isinstance(verdict, Rejected):
        cause = verdict.cause
        return VerifyInvalid(
            str(cause.failure_class), cause.http_status, cause.hint, detail=cause.detail
        )
    if isinstance(verdict, NoVerdict):
        return VerifyError(int(verdict.exit), str(verdict.cause.failure_class))
    return VerifyError(3, None)


def digest_cell(record: PointerRecord, verify: VerifyCell) -> DigestCell:
    verdict = record.verdict
    verified = isinstance(verify, VerifyPassed | VerifyPhaseFailures)
    signed = ""
    if isinstance(verdict, Verified | Pending):
        signed = str(verdict.evidence.recipe_digest)
    if not signed:
        return DigestSkipped(warning=verified)
    fresh: FreshnessInfo = record.freshness
    if fresh.state is Freshness.FRESH:
        return DigestMatches()
    if fresh.state is Freshness.STALE and fresh.current:
        return DigestStale(signed=fresh.signed or signed, current=fresh.current)
    return DigestUnknown()
