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
import json
import math
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


_PROBES = 2
"""How many levels of `encode_data` look for untouched subtrees (`_untagged`) before the rest of
a subtree is encoded node by node: each level walks its subtree once more, so the cost stays a
few walks even for hostile, deeply nested data."""
_MAX_PROBE_NODES = 4_000_000
"""A tree larger than this (or a cyclic one) is never taken as is; it is encoded node by node."""
_INF = math.inf


def encode_data(value: Any, _probes: int = _PROBES) -> Any:
    """Plain data (as JSON or the YAML loader return it) to JSON that `decode_data` inverts.

    A value that needs no tagging (`_untagged`) is returned as it is, not copied: it already
    is what the node-by-node encoding below would build, and one cheap walk over it costs far
    less than rebuilding it. Otherwise its children are encoded the same way (for `_PROBES`
    levels), so one `$schema` key at the top of a document leaves the rest untouched.
    """
    kind = type(value)
    if value is None or kind is str or kind is bool or kind is int:
        return value
    if _probes and (kind is dict or kind is list) and _untagged(value):
        return value
    probes = _probes - 1 if _probes > 0 else 0
    if isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return {"$float": repr(value)}
        return value
    if isinstance(value, list | tuple):
        return [encode_data(v, probes) for v in value]
    if isinstance(value, Mapping):
        if all(isinstance(k, str) for k in value) and not any(k.startswith("$") for k in value):
            return {k: encode_data(v, probes) for k, v in value.items()}
        return {"$map": [[encode_data(k, 0), encode_data(v, probes)] for k, v in value.items()]}
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    raise TypeError(f"cannot serialize {type(value).__name__} in a verdict")


def _untagged(value: Any) -> bool:
    """True when `encode_data` would rebuild `value` unchanged: only exact dicts with `str` keys
    not starting with `$`, lists, `str`, `int`, `bool`, None and finite floats (no subclasses,
    tuples or bytes). One loop, no calls per node; False for a tree over `_MAX_PROBE_NODES`."""
    stack = [value]
    pop, extend = stack.pop, stack.extend
    budget = _MAX_PROBE_NODES
    while stack:
        item = pop()
        kind = type(item)
        if kind is dict:
            budget -= len(item)
            if budget < 0:
                return False
            for key in item:
                if type(key) is not str or key[:1] == "$":
                    return False
            extend(item.values())
        elif kind is list:
            budget -= len(item)
            if budget < 0:
                return False
            extend(item)
        elif kind is str or kind is int or kind is bool or item is None:
            continue
        elif kind is float:
            if item != item or item == _INF or item == -_INF:
                return False
        else:
            return False
    return True


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


def _as_is(value: Any) -> Any:
    """`decode_data` for data known to hold no tagged values."""
    return value


def loads_decoded(text: bytes | str) -> Any:
    """Parse JSON written from `encode_data` output with its tagged values already decoded.

    The parser hands each object to `_untag` as it is built (innermost first), which is much
    cheaper than walking the parsed tree again with `decode_data`; feed the result to
    `verdict_from_json(..., plain=True)`. Only the data fields of a verdict document hold
    objects with a single `$` key, since `encode_data` writes any other mapping with
    `$`-keys as `$map`. Raises `ValueError` or `TypeError` for malformed input.
    """
    return json.loads(text, object_hook=_untag)


def _untag(obj: dict[str, Any]) -> Any:
    if len(obj) == 1:
        if "$float" in obj:
            return float(obj["$float"])
        if "$bytes" in obj:
            return base64.b64decode(obj["$bytes"])
        if "$map" in obj:
            return {_key(k): v for k, v in obj["$map"]}
    return obj


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


def _step_from(doc: Mapping[str, Any]) -> Step:
    return Step(
        step=int(doc["step"]),
        name=str(doc["name"]),
        status=StepStatus(doc["status"]),
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


# --------------------------------------------------------------------------- aicr VerifyResult


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
