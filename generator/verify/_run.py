"""One verification's running record and aicr's failure classification (spec 5.6).

`_Run` collects the steps as they pass or fail; `classify` and `merge_cause` are aicr's
`classifyFailure` and `recordFailure`. The size limits and hints are shared by every step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from generator.model import (
    STEP_NAMES,
    FailureCause,
    FailureClass,
    NoVerdict,
    Rejected,
    SignerIdentity,
    Step,
    StepStatus,
    SubRow,
)

MiB = 1024 * 1024


MAX_SIGNATURE_CANDIDATES = 8


MAX_MANIFEST_BYTES = 1 * MiB


MAX_RECIPE_BYTES = 1 * MiB


MAX_STATEMENT_BYTES = 10 * MiB


MAX_CTRF_BYTES = 10 * MiB


POLICY_EXCLUDED_DETAIL = "not fetched: outside every --trusted-registry prefix"


FORBIDDEN_HINT = "make the fork's aicr-evidence package public, or provide registry credentials"


TRANSIENT_HINT = "retry later; this says nothing about the evidence itself"


INTEGRITY_HINT = (
    "re-create the bundle with `aicr validate --emit-attestation`, re-sign and re-push it"
)


SCHEMA_HINT = "re-generate the pointer and bundle with a current aicr"


_STEP_CLASS = {2: FailureClass.SIGNATURE, 3: FailureClass.SCHEMA, 4: FailureClass.INTEGRITY}


def classify(
    step: int, *, http_status: int | None = None, transient: bool = False, canceled: bool = False
) -> FailureClass:
    """aicr's `classifyFailure` (5.6): HTTP status, then cancel, then transient, then the step."""
    if http_status is not None:
        if http_status in (401, 403):
            return FailureClass.REGISTRY_FORBIDDEN
        if http_status == 404:
            return FailureClass.NOT_FOUND
        if http_status == 429 or http_status >= 500:
            return FailureClass.TRANSIENT
        return FailureClass.REGISTRY
    if canceled:
        return FailureClass.CANCELED
    if transient:
        return FailureClass.TRANSIENT
    return _STEP_CLASS.get(step, FailureClass.UNKNOWN)


def merge_cause(current: FailureCause | None, new: FailureCause) -> FailureCause:
    """`recordFailure`: the first cause wins, except a non-verdict cause yields to a real one."""
    if current is None:
        return new
    if not current.failure_class.is_verdict and new.failure_class.is_verdict:
        return new
    return current


@dataclass
class _Run:
    """The mutable record of one verification while its steps run (private to `verify`)."""

    steps: list[Step] = field(default_factory=list)
    cause: FailureCause | None = None
    no_verdict: bool = False
    signer: SignerIdentity | None = None

    def passed(self, step: int, detail: str, rows: Sequence[SubRow] = ()) -> None:
        self.steps.append(_step(step, StepStatus.PASSED, detail, rows))

    def skipped(self, step: int, detail: str, rows: Sequence[SubRow] = ()) -> None:
        self.steps.append(_step(step, StepStatus.SKIPPED, detail, rows))

    def fail(
        self,
        step: int,
        detail: str,
        *,
        failure_class: FailureClass | None = None,
        hint: str = "",
        http_status: int | None = None,
        rows: Sequence[SubRow] = (),
        status: StepStatus = StepStatus.FAILED,
        no_verdict: bool = False,
    ) -> None:
        cls = failure_class or classify(step, http_status=http_status)
        self.steps.append(_step(step, status, detail, rows))
        cause = FailureCause(cls, detail, hint or _default_hint(cls), http_status)
        merged = merge_cause(self.cause, cause)
        if merged is cause:
            self.no_verdict = no_verdict or not cls.is_verdict
        self.cause = merged

    def outcome(self) -> Rejected | NoVerdict:
        done = {s.step for s in self.steps}
        for number in range(1, 5):
            if number not in done:
                self.skipped(number, "not run: an earlier step failed")
        self.steps.append(_step(5, StepStatus.INFORMATIONAL, "report assembled"))
        steps = tuple(sorted(self.steps, key=lambda s: s.step))
        assert self.cause is not None
        if self.no_verdict:
            return NoVerdict(steps=steps, cause=self.cause)
        return Rejected(steps=steps, cause=self.cause, signer=self.signer)


def _step(number: int, status: StepStatus, detail: str, rows: Sequence[SubRow] = ()) -> Step:
    return Step(number, STEP_NAMES[number - 1], status, detail, tuple(rows))


def _default_hint(cls: FailureClass) -> str:
    return {
        FailureClass.REGISTRY_FORBIDDEN: FORBIDDEN_HINT,
        FailureClass.TRANSIENT: TRANSIENT_HINT,
        FailureClass.INTEGRITY: INTEGRITY_HINT,
        FailureClass.SCHEMA: SCHEMA_HINT,
    }.get(cls, "")
