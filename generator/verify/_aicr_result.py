"""aicr's `VerifyResult` shape: what `evidence-dashboard verify POINTER --format json` prints.

The fields are aicr's, so scripts written for `aicr evidence verify` read it unchanged; sub-rows
checked beyond aicr carry an additive `beyondAicr: true`.
"""

from __future__ import annotations

from typing import Any

from generator.model import (
    Evidence,
    NoVerdict,
    Pending,
    Pointer,
    PointerLocation,
    Rejected,
    SignerIdentity,
    Step,
    StepStatus,
    Verdict,
    Verified,
    VerifyExit,
)


def result_exit(verdict: Verdict) -> VerifyExit:
    """aicr's result `exit`. An unsigned bundle with recorded phase failures is 1, not pending."""
    if isinstance(verdict, Pending) and _failed(verdict.evidence):
        return VerifyExit.VALID_WITH_FAILURES
    return verdict.exit


def _failed(ev: Evidence) -> bool:
    phases = ev.predicate.get("phases") or {}
    return isinstance(phases, dict) and any(
        isinstance(v, dict)
        and isinstance(v.get("failed"), int | float)
        and not isinstance(v.get("failed"), bool)
        and v["failed"] > 0
        for v in phases.values()
    )


def aicr_result_json(
    verdict: Verdict, pointer: Pointer, location: PointerLocation
) -> dict[str, Any]:
    """The verdict in aicr's `VerifyResult` JSON shape (field order as aicr's Go struct)."""
    doc: dict[str, Any] = {"input": "pointer", "pointer": location.path}
    evidence = verdict.evidence if isinstance(verdict, Verified | Pending) else None
    if evidence is not None:
        doc["predicate"] = evidence.predicate
    signer: SignerIdentity | None = None
    log_index: int | None = None
    if isinstance(verdict, Verified):
        signer, log_index = verdict.signer, verdict.rekor_log_index
    elif isinstance(verdict, Rejected):
        signer = verdict.signer
    if signer is not None:
        doc["signer"] = {"identity": signer.identity, "issuer": signer.issuer}
        if log_index:
            doc["signer"]["rekorLogIndex"] = log_index
    doc["recipeName"] = evidence.recipe_name if evidence is not None else pointer.recipe
    bundle_digest = _pulled_digest(verdict)
    if bundle_digest:
        doc["bundleDigest"] = bundle_digest
    doc["steps"] = [_aicr_step(s) for s in verdict.steps]
    exit_value = result_exit(verdict)
    doc["exit"] = int(exit_value)
    if isinstance(verdict, Pending) and exit_value is VerifyExit.VALID:
        doc["pending"] = True
    if isinstance(verdict, Rejected | NoVerdict):
        cause: dict[str, Any] = {
            "class": verdict.cause.failure_class.value,
            "detail": verdict.cause.detail,
        }
        if verdict.cause.http_status is not None:
            cause["httpStatus"] = verdict.cause.http_status
        if verdict.cause.hint:
            cause["hint"] = verdict.cause.hint
        doc["failureCause"] = cause
    return doc


def _pulled_digest(verdict: Verdict) -> str | None:
    if isinstance(verdict, Verified | Pending):
        return str(verdict.evidence.bundle_digest)
    for step in verdict.steps:
        if step.step == 1 and step.status is StepStatus.PASSED:
            for row in step.sub_rows:
                if row.key == "bundleDigest":
                    return row.value
    return None


def _aicr_step(step: Step) -> dict[str, Any]:
    doc: dict[str, Any] = {"step": step.step, "name": step.name, "status": step.status.value}
    if step.detail:
        doc["detail"] = step.detail
    if step.sub_rows:
        rows = []
        for row in step.sub_rows:
            item: dict[str, Any] = {"key": row.key, "value": row.value}
            if row.beyond_aicr:
                item["beyondAicr"] = True
            rows.append(item)
        doc["subRows"] = rows
    return doc
