"""Verdicts as JSON: a lossless round trip for the verdict cache, and aicr's `VerifyResult` shape.

`verdict_to_json`/`verdict_from_json` rebuild an equal `Verdict`, Evidence included. Parsed YAML
(recipe, snapshot) may hold what JSON cannot say directly (non-string keys, NaN, infinity), so it
is written in a small tagged form; raw bytes (`recipe_yaml`) are base64. CTRF reports are written
field by field.

`aicr_result_json` is what `evidence-dashboard verify POINTER --format json` prints: aicr's
`VerifyResult` fields, so scripts written for `aicr evidence verify` read it unchanged. Sub-rows
checked beyond aicr carry an additive `beyondAicr: true`.

The tagged form lives in `_tagged`, the `VerifyResult` shape in `_aicr_result`; this module keeps
the verdict round trip and re-exports both.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
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
    PredicateType,
    Rejected,
    SignerIdentity,
    Step,
    StepStatus,
    SubRow,
    TestResult,
    Verdict,
    Verified,
)
from generator.verify._aicr_result import aicr_result_json, result_exit
from generator.verify._tagged import _as_is, decode_data, encode_data, loads_decoded

__all__ = [
    "FORMAT",
    "VerdictFormatError",
    "aicr_result_json",
    "decode_data",
    "encode_data",
    "loads_decoded",
    "result_exit",
    "verdict_from_json",
    "verdict_to_json",
]

FORMAT = "evidence-dashboard/verdict/v1"


class VerdictFormatError(ValueError):
    """A cached verdict document cannot be read back (wrong format or corrupted)."""


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


def verdict_from_json(
    doc: Mapping[str, Any], *, plain: bool = False, shared: dict[Any, Any] | None = None
) -> Verdict:
    """Rebuild a verdict written by `verdict_to_json`. Raises `VerdictFormatError`.

    `plain=True` says the tagged values are already decoded (`loads_decoded`), so parsed data
    is taken as it is instead of being rebuilt. `shared` (one dict per cache reader) lets equal
    steps of many verdicts be one immutable object, built once.
    """
    decode = _as_is if plain else decode_data
    try:
        if doc.get("format") != FORMAT:
            raise VerdictFormatError(f"not a {FORMAT} document")
        if shared is None:
            steps = tuple(_step_from(s) for s in doc["steps"])
        else:
            steps = tuple(_shared_step(s, shared) for s in doc["steps"])
        kind = doc["kind"]
        if kind == "Verified":
            return Verified(
                steps=steps,
                signer=_signer_from(doc["signer"]),
                rekor_log_index=doc["rekorLogIndex"],
                evidence=_evidence_from(doc["evidence"], decode),
                phase_failures=bool(doc["phaseFailures"]),
                log_url=doc.get("logUrl"),
                needed_credentials=doc.get("neededCredentials") is True,
            )
        if kind == "Pending":
            return Pending(
                steps=steps,
                evidence=_evidence_from(doc["evidence"], decode),
                needed_credentials=doc.get("neededCredentials") is True,
            )
        if kind == "Rejected":
            signer = doc.get("signer")
            return Rejected(
                steps=steps,
                cause=_cause_from(doc["cause"]),
                signer=_signer_from(signer) if signer else None,
            )
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
        "subRows": [
            {"key": r.key, "value": r.value, "beyondAicr": r.beyond_aicr} for r in step.sub_rows
        ],
    }


def _shared_step(doc: Mapping[str, Any], shared: dict[Any, Any]) -> Step:
    """`_step_from`, answered from `shared` when an equal step document was read before."""
    rows = doc["subRows"]
    key = (
        doc["step"],
        doc["name"],
        doc["status"],
        doc["detail"],
        tuple((r["key"], r["value"], r["beyondAicr"]) for r in rows),
    )
    try:
        found = shared.get(key)
    except TypeError:  # an unhashable field: a malformed document, let `_step_from` judge
        return _step_from(doc)
    if found is None or type(found) is not Step:
        found = _step_from(doc)
        shared[key] = found
    return found


_STEP_STATUSES = {s.value: s for s in StepStatus}
"""Value -> member as a dict (a lookup per step of every verdict read; an unknown value raises
KeyError, which reads as a malformed document)."""


def _step_from(doc: Mapping[str, Any]) -> Step:
    return Step(
        step=int(doc["step"]),
        name=str(doc["name"]),
        status=_STEP_STATUSES[doc["status"]],
        detail=str(doc["detail"]),
        sub_rows=tuple(
            SubRow(str(r["key"]), str(r["value"]), bool(r["beyondAicr"])) for r in doc["subRows"]
        ),
    )


def _signer_json(signer: SignerIdentity) -> dict[str, str]:
    return {"issuer": signer.issuer, "identity": signer.identity}


def _signer_from(doc: Mapping[str, Any]) -> SignerIdentity:
    return SignerIdentity(issuer=str(doc["issuer"]), identity=str(doc["identity"]))


def _cause_json(cause: FailureCause) -> dict[str, Any]:
    return {
        "class": cause.failure_class.value,
        "detail": cause.detail,
        "hint": cause.hint,
        "httpStatus": cause.http_status,
    }


def _cause_from(doc: Mapping[str, Any]) -> FailureCause:
    status = doc.get("httpStatus")
    return FailureCause(
        FailureClass(doc["class"]),
        str(doc["detail"]),
        str(doc["hint"]),
        int(status) if status is not None else None,
    )


def _evidence_json(ev: Evidence) -> dict[str, Any]:
    if ev.settled:  # its documents were let go: caching it would lose them for good
        raise ValueError("a settled evidence cannot be serialized")
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
        "loggedAt": ev.logged_at,
    }


def _evidence_from(doc: Mapping[str, Any], decode: Callable[[Any], Any] = decode_data) -> Evidence:
    return Evidence(
        bundle_digest=OciDigest(str(doc["bundleDigest"])),
        evidence_ref=str(doc["evidenceRef"]),
        predicate_type=PredicateType(doc["predicateType"]),
        predicate=decode(doc["predicate"]),
        recipe=decode(doc["recipe"]),
        recipe_yaml=base64.b64decode(doc["recipeYaml"]),
        snapshot=decode(doc["snapshot"]),
        ctrf={Phase(k): _ctrf_from(v, decode) for k, v in doc["ctrf"].items()},
        bom=decode(doc["bom"]),
        # Required: a verdict cached before the verified log time was kept reads as a miss.
        logged_at=_optional_text(doc["loggedAt"]),
    )


def _optional_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise VerdictFormatError(f"expected a string or null, found {value!r}")


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


def _ctrf_from(doc: Mapping[str, Any], decode: Callable[[Any], Any] = decode_data) -> CtrfReport:
    return CtrfReport(
        phase=Phase(doc["phase"]),
        tests=tuple(
            CtrfTest(
                name=str(t["name"]),
                status=str(t["status"]),
                result=TestResult(t["result"]),
                duration_ms=decode(t["durationMs"]),
                message=t["message"],
                stdout=tuple(t["stdout"]),
                extra=decode(t["extra"]),
            )
            for t in doc["tests"]
        ),
        summary={str(k): int(v) for k, v in doc["summary"].items()},
        tool=doc["tool"],
    )
