"""Verdicts as JSON: a lossless round trip for the verdict cache, and aicr's `VerifyResult` shape.

`verdict_to_json`/`verdict_from_json` rebuild an equal `Verdict`, Evidence included. Parsed YAML
(recipe, snapshot) may hold what JSON cannot say directly (non-string keys, NaN, infinity), so it
is written in a small tagged form; raw bytes (`recipe_yaml`) are base64. CTRF reports are written
field by field.

`aicr_result_json` is what `evidence-dashboard verify POINTER --format json` prints: aicr's
`VerifyResult` fields, so scripts written for `aicr evidence verify` read it unchanged. Sub-rows
checked beyond aicr carry an additive `beyondAicr: true`.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping
from typing import Any

from generator.model import (
    CtrfReport,
    CtrfTest,
    Evidence,
    FailureCause,
    FailureClass,
    NoVerdict,
    OciDigest,
    Pending,
    Phase,
    Pointer,
    PointerLocation,
    PredicateType,
    Rejected,
    SignerIdentity,
    Step,
    StepStatus,
    SubRow,
    TestResult,
    Verdict,
    Verified,
    VerifyExit,
)

FORMAT = "evidence-dashboard/verdict/v1"


class VerdictFormatError(ValueError):
    """A cached verdict document cannot be read back (wrong format or corrupted)."""


# --------------------------------------------------------------------------- tagged data


def encode_data(value: Any) -> Any:
    """Plain data (as JSON or the YAML loader return it) to JSON that `decode_data` inverts."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return {"$float": repr(value)}
        return value
    if isinstance(value, list | tuple):
        return [encode_data(v) for v in value]
    if isinstance(value, Mapping):
        if all(isinstance(k, str) for k in value) and not any(k.startswith("$") for k in value):
            return {k: encode_data(v) for k, v in value.items()}
        return {"$map": [[encode_data(k), encode_data(v)] for k, v in value.items()]}
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    raise TypeError(f"cannot serialize {type(value).__name__} in a verdict")


def decode_data(value: Any) -> Any:
    """Invert `encode_data`."""
    if isinstance(value, list):
        return [decode_data(v) for v in value]
    if isinstance(value, dict):
        if set(value) == {"$float"}:
            return float(value["$float"])
        if set(value) == {"$bytes"}:
            return base64.b64decode(value["$bytes"])
        if set(value) == {"$map"}:
            return {_key(decode_data(k)): decode_data(v) for k, v in value["$map"]}
        return {k: decode_data(v) for k, v in value.items()}
    return value


def _key(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


# --------------------------------------------------------------------------- verdict round trip


def verdict_to_json(verdict: Verdict) -> dict[str, Any]:
    """A JSON-ready dict holding everything needed to rebuild `verdict` exactly."""
    doc: dict[str, Any] = {
        "format": FORMAT,
        "kind": type(verdict).__name__,
        "steps": [_step_json(s) for s in verdict.steps],
    }
    if isinstance(verdict, Verified):
        doc.update(
            signer=_signer_json(verdict.signer),
            rekorLogIndex=verdict.rekor_log_index,
            evidence=_evidence_json(verdict.evidence),
            phaseFailures=verdict.phase_failures,
            logUrl=verdict.log_url,
            neededCredentials=verdict.needed_credentials,
        )
    elif isinstance(verdict, Pending):
        doc["evidence"] = _evidence_json(verdict.evidence)
        doc["neededCredentials"] = verdict.needed_credentials
    elif isinstance(verdict, Rejected):
        doc["cause"] = _cause_json(verdict.cause)
        doc["signer"] = _signer_json(verdict.signer) if verdict.signer else None
    else:
        doc["cause"] = _cause_json(verdict.cause)
    return doc


def verdict_from_json(doc: Mapping[str, Any]) -> Verdict:
    """Rebuild a verdict written by `verdict_to_json`. Raises `VerdictFormatError`."""
    try:
        if doc.get("format") != FORMAT:
            raise VerdictFormatError(f"not a {FORMAT} document")
        steps = tuple(_step_from(s) for s in doc["steps"])
        kind = doc["kind"]
        if kind == "Verified":
            return Verified(
                steps=steps,
                signer=_signer_from(doc["signer"]),
                rekor_log_index=doc["rekorLogIndex"],
                evidence=_evidence_from(doc["evidence"]),
                phase_failures=bool(doc["phaseFailures"]),
                log_url=doc.get("logUrl"),
                needed_credentials=doc.get("neededCredentials") is True,
            )
        if kind == "Pending":
            return Pending(steps=steps, evidence=_evidence_from(doc["evidence"]),
                           needed_credentials=doc.get("neededCredentials") is True)
        if kind == "Rejected":
            signer = doc.get("signer")
            return Rejected(steps=steps, cause=_cause_from(doc["cause"]),
                            signer=_signer_from(signer) if signer else None)
        if kind == "NoVerdict":
            return NoVerdict(steps=steps, cause=_cause_from(doc["cause"]))
        raise VerdictFormatError(f"unknown verdict kind {kind!r}")
    except VerdictFormatError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise VerdictFormatError(f"malformed verdict document: {exc!r}") from exc


def _step_json(step: Step) -> dict[str, Any]:
    return {
        "step": step.step,
        "name": step.name,
        "status": step.status.value,
        "detail": step.detail,
        "subRows": [{"key": r.key, "value": r.value, "beyondAicr": r.beyond_aicr}
                    for r in step.sub_rows],
    }


def _step_from(doc: Mapping[str, Any]) -> Step:
    return Step(
        step=int(doc["step"]),
        name=str(doc["name"]),
        status=StepStatus(doc["status"]),
        detail=str(doc["detail"]),
        sub_rows=tuple(SubRow(str(r["key"]), str(r["value"]), bool(r["beyondAicr"]))
                       for r in doc["subRows"]),
    )


def _signer_json(signer: SignerIdentity) -> dict[str, str]:
    return {"issuer": signer.issuer, "identity": signer.identity}


def _signer_from(doc: Mapping[str, Any]) -> SignerIdentity:
    return SignerIdentity(issuer=str(doc["issuer"]), identity=str(doc["identity"]))


def _cause_json(cause: FailureCause) -> dict[str, Any]:
    return {"class": cause.failure_class.value, "detail": cause.detail, "hint": cause.hint,
            "httpStatus": cause.http_status}


def _cause_from(doc: Mapping[str, Any]) -> FailureCause:
    status = doc.get("httpStatus")
    return FailureCause(FailureClass(doc["class"]), str(doc["detail"]), str(doc["hint"]),
                        int(status) if status is not None else None)


def _evidence_json(ev: Evidence) -> dict[str, Any]:
    return {
        "bundleDigest": ev.bundle_digest,
        "evidenceRef": ev.evidence_ref,
        "predicateType": ev.predicate_type.value,
        "predicate": encode_data(ev.predicate),
        "recipe": encode_data(ev.recipe),
        "recipeYaml": base64.b64encode(ev.recipe_yaml).decode("ascii"),
        "snapshot": encode_data(ev.snapshot),
        "ctrf": {phase.value: _ctrf_json(report) for phase, report in ev.ctrf.items()},
        "bom": encode_data(ev.bom),
    }


def _evidence_from(doc: Mapping[str, Any]) -> Evidence:
    return Evidence(
        bundle_digest=OciDigest(str(doc["bundleDigest"])),
        evidence_ref=str(doc["evidenceRef"]),
        predicate_type=PredicateType(doc["predicateType"]),
        predicate=decode_data(doc["predicate"]),
        recipe=decode_data(doc["recipe"]),
        recipe_yaml=base64.b64decode(doc["recipeYaml"]),
        snapshot=decode_data(doc["snapshot"]),
        ctrf={Phase(k): _ctrf_from(v) for k, v in doc["ctrf"].items()},
        bom=decode_data(doc["bom"]),
    )


def _ctrf_json(report: CtrfReport) -> dict[str, Any]:
    return {
        "phase": report.phase.value,
        "tool": report.tool,
        "summary": dict(report.summary),
        "tests": [
            {
                "name": t.name,
                "status": t.status,
                "result": t.result.value,
                "durationMs": encode_data(t.duration_ms),
                "message": t.message,
                "stdout": list(t.stdout),
                "extra": encode_data(t.extra),
            }
            for t in report.tests
        ],
    }


def _ctrf_from(doc: Mapping[str, Any]) -> CtrfReport:
    return CtrfReport(
        phase=Phase(doc["phase"]),
        tests=tuple(
            CtrfTest(
                name=str(t["name"]),
                status=str(t["status"]),
                result=TestResult(t["result"]),
                duration_ms=decode_data(t["durationMs"]),
                message=t["message"],
                stdout=tuple(t["stdout"]),
                extra=decode_data(t["extra"]),
            )
            for t in doc["tests"]
        ),
        summary={str(k): int(v) for k, v in doc["summary"].items()},
        tool=doc["tool"],
    )


# --------------------------------------------------------------------------- aicr VerifyResult


def result_exit(verdict: Verdict) -> VerifyExit:
    """aicr's result `exit`. An unsigned bundle with recorded phase failures is 1, not pending."""
    if isinstance(verdict, Pending) and _failed(verdict.evidence):
        return VerifyExit.VALID_WITH_FAILURES
    return verdict.exit


def _failed(ev: Evidence) -> bool:
    phases = ev.predicate.get("phases") or {}
    return isinstance(phases, dict) and any(
        isinstance(v, dict) and isinstance(v.get("failed"), int | float)
        and not isinstance(v.get("failed"), bool) and v["failed"] > 0
        for v in phases.values())


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
        cause: dict[str, Any] = {"class": verdict.cause.failure_class.value,
                                 "detail": verdict.cause.detail}
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
