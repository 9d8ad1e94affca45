"""The pointer documents: `data/pointers.json`, one `POINTER` entry per pointer file, each with its
verdict, its steps and the `EVIDENCE` the recipe and source pages render.

`pointer_document` runs once per pointer (in the verification workers of a build), so it only
reads what the verdict already holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from generator.corroborate import Board, run_id_for
from generator.data._board_docs import omitted_document
from generator.data.laidout import plain
from generator.data.records import FreshnessInfo, PointerRecord
from generator.errors import InputError
from generator.facts import (
    bandwidth,
    components,
    criteria,
    criteria_match,
    hardware_facts,
    redacted,
    skip_reason,
    validator_images,
)
from generator.facts.failure import failure_reason
from generator.limits import LIMITS
from generator.model import (
    PHASE_ORDER,
    Evidence,
    NoVerdict,
    ParsedPointer,
    Pending,
    Rejected,
    RejectedPointer,
    TestResult,
    Verified,
    VerifyExit,
)


def evidence_document(
    evidence: Evidence, *, rekor_log_index: int | None = None, log_url: str | None = None
) -> dict[str, Any]:
    """`EVIDENCE`: what the recipe and source pages render about one bundle."""
    try:
        run_id: str | None = run_id_for(evidence)
    except InputError:
        run_id = None
    profile = evidence.predicate.get("profile")
    selection = profile.get("selection") if isinstance(profile, Mapping) else None
    tests, left = _tests(evidence)
    doc = {
        "attestedAt": evidence.attested_at,
        "loggedAt": evidence.logged_at,
        "runId": run_id,
        "aicrVersion": evidence.aicr_version,
        "aicrCommit": evidence.aicr_commit,
        "evidenceRef": evidence.evidence_ref,
        "recipeDigest": str(evidence.recipe_digest),
        "profile": selection if isinstance(selection, str) and selection else None,
        "rekorLogIndex": rekor_log_index,
        "logUrl": log_url,
        "redacted": redacted(evidence),
        "criteria": criteria(evidence).as_dict(),
        "criteriaMatch": _criteria_match(evidence),
        "hardware": [
            {
                "key": f.key,
                "label": f.label,
                "value": f.value,
                "source": f.source,
                "detail": f.detail,
            }
            for f in hardware_facts(evidence)
        ],
        "components": [{"name": c.name, "version": c.version} for c in components(evidence)],
        "validatorImages": [
            {"image": v.image, "digest": v.digest, "mutable": v.mutable}
            for v in validator_images(evidence)
        ],
        "phases": _phases(evidence),
        "tests": tests,
        "bandwidth": _bandwidth(evidence),
    }
    if left:  # ours: tests past the limit, not listed
        doc["truncated"] = {"tests": left}
    return doc


def _criteria_match(evidence: Evidence) -> dict[str, Any]:
    """`EVIDENCE.criteriaMatch`: the recipe's criteria against the cluster fingerprint."""
    match = criteria_match(evidence)
    return {
        "matched": match.matched,
        "mismatched": list(match.mismatched),
        "dimensions": [
            {
                "dimension": d.dimension,
                "recipeRequires": d.recipe_requires,
                "fingerprintProvides": d.fingerprint_provides,
                "match": d.match,
                "mismatched": d.mismatched,
            }
            for d in match.dimensions
        ],
    }


def _phases(evidence: Evidence) -> dict[str, Any]:
    """`EVIDENCE.phases`: the predicate's passed/failed/skipped counts, per phase it names."""
    phases: dict[str, Any] = {}
    raw_phases = evidence.predicate.get("phases")
    for phase in PHASE_ORDER:
        entry = raw_phases.get(str(phase)) if isinstance(raw_phases, Mapping) else None
        if isinstance(entry, Mapping):
            phases[str(phase)] = {k: _int(entry.get(k)) for k in ("passed", "failed", "skipped")}
    return phases


def _tests(evidence: Evidence) -> tuple[list[dict[str, Any]], int]:
    """`EVIDENCE.tests` within the per-pointer limit, and how many were left out."""
    listed = [
        (str(phase), t)
        for phase in PHASE_ORDER
        for t in (evidence.ctrf[phase].tests if phase in evidence.ctrf else ())
    ]
    limit = LIMITS.tests_per_pointer
    left = max(len(listed) - limit, 0)
    if left:  # non-passing tests first, then in report order
        order = sorted(
            range(len(listed)), key=lambda i: (listed[i][1].result is TestResult.PASS, i)
        )
        listed = [listed[i] for i in sorted(order[:limit])]
    tests = [
        {
            "phase": phase,
            "name": t.name,
            "status": t.status,
            "result": str(t.result),
            "skipReason": skip_reason(t),
            **({"failure": failure_reason(t)} if t.result is TestResult.FAIL else {}),
        }
        for phase, t in listed
    ]
    return tests, left


def _bandwidth(evidence: Evidence) -> list[dict[str, Any]]:
    """`EVIDENCE.bandwidth`: each measured bandwidth against its floor."""
    return [
        {
            "check": b.check,
            "measured": b.measured,
            "floor": b.floor,
            "passLine": b.pass_line,
            "status": b.status,
            "result": str(b.result) if b.result else None,
            "disagrees": b.disagrees,
            "note": b.note,
        }
        for b in bandwidth(evidence)
    ]


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _identity(issuer: str, identity: str) -> dict[str, str]:
    return {"identity": identity, "issuer": issuer}


def pointer_document(record: PointerRecord) -> dict[str, Any]:
    """One `POINTER` entry."""
    pf = record.pointer
    verdict = record.verdict
    claimed = None
    bundle = None
    if isinstance(pf, ParsedPointer):
        p = pf.pointer
        bundle = {
            "oci": p.bundle.oci,
            "digest": p.bundle.digest,
            "predicateType": str(p.bundle.predicate_type),
        }
        if p.signer is not None:
            claimed = _identity(p.signer.identity.issuer, p.signer.identity.identity)
    evidence = None
    if isinstance(verdict, Verified):
        evidence = evidence_document(
            verdict.evidence, rekor_log_index=verdict.rekor_log_index, log_url=verdict.log_url
        )
    elif isinstance(verdict, Pending):
        evidence = evidence_document(verdict.evidence)
    recipe = pf.pointer.recipe if isinstance(pf, ParsedPointer) else pf.recipe
    return {
        "path": pf.location.path,
        "recipe": recipe or pf.location.folder_recipe,
        "source": pf.location.folder_source,
        "bundle": bundle,
        "signer": _signer(record, claimed),
        "verify": _verify(record),
        "duplicateOf": record.duplicate_of,
        "attestedAtSkew": record.attested_at_skew,
        "freshness": freshness_document(record.freshness),
        "evidence": evidence,
    }


def _signer(record: PointerRecord, claimed: dict[str, str] | None) -> dict[str, Any]:
    """`POINTER.signer`: the claimed and the verified identity, and how the allowlist sees it."""
    verdict = record.verdict
    verified = None
    source_id = None
    signer = verdict.signer if isinstance(verdict, Verified | Rejected) else None
    if signer is not None and signer.issuer and signer.identity:
        verified = _identity(signer.issuer, signer.identity)
        source_id = str(signer.source_id)
    cls = record.classification
    return {
        "claimed": claimed,
        "verified": verified,
        "class": str(cls.signer_class) if cls else None,
        "allowlisted": bool(cls and cls.allowlisted),
        "label": record.label,
        "sourceId": source_id,
    }


def _outcome(record: PointerRecord) -> tuple[int, dict[str, Any] | None]:
    """aicr's exit code and `failureCause` for one pointer (a rejected pointer file: schema)."""
    pf = record.pointer
    verdict = record.verdict
    if isinstance(pf, RejectedPointer):
        return int(VerifyExit.INVALID), {
            "class": "schema",
            "detail": pf.message,
            "httpStatus": None,
            "hint": pf.hint,
        }
    if verdict is None:
        return int(VerifyExit.NO_VERDICT), None
    cause = verdict.cause if isinstance(verdict, Rejected | NoVerdict) else None
    failure = (
        None
        if cause is None
        else {
            "class": str(cause.failure_class),
            "detail": cause.detail,
            "httpStatus": cause.http_status,
            "hint": cause.hint,
        }
    )
    return int(verdict.exit), failure


def _verify(record: PointerRecord) -> dict[str, Any]:
    """`POINTER.verify`: exit, failure cause, aicr's five steps and where the verdict came from."""
    pf = record.pointer
    verdict = record.verdict
    exit_code, failure = _outcome(record)
    steps = verdict.steps if verdict is not None else ()
    return {
        "exit": exit_code,
        "pending": isinstance(verdict, Pending),
        "failureCause": failure,
        "steps": [
            {
                "step": s.step,
                "name": s.name,
                "status": str(s.status),
                "detail": s.detail,
                "subRows": [
                    {"key": r.key, "value": r.value, "beyondAicr": r.beyond_aicr}
                    for r in s.sub_rows
                ],
            }
            for s in steps
        ],
        "rule": pf.rule if isinstance(pf, RejectedPointer) else None,
        "verifiedAt": record.verified_at,
        "reusedFrom": None
        if record.verified_at is None
        else {"verifiedAt": record.verified_at, "trustRoot": record.reused_trust_root},
        "anonymous": (
            not verdict.needed_credentials if isinstance(verdict, Verified | Pending) else None
        ),
    }


def freshness_document(info: FreshnessInfo) -> dict[str, Any]:
    """`POINTER.freshness`, with the (ours) `explanation` of stale evidence or null."""
    why = info.explanation
    return {
        "state": str(info.state),
        "signed": info.signed,
        "current": info.current,
        "provider": info.provider,
        "explanation": None
        if why is None
        else {
            "diff": list(why.diff),
            "truncated": why.truncated,
            "commits": None if why.commits is None else list(why.commits),
        },
    }


def pointers_document(
    records: Iterable[PointerRecord],
    made: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    board: Board | None = None,
) -> dict[str, Any]:
    """`data/pointers.json`: every pointer file, sorted by path.

    `made` holds entries already made (by path): by `pointer_document` where the verdicts
    were (a build's verification workers), or taken from a stored recipe product (which has
    no record); the other records are made here. With a `board`, pointers whose run a count
    limit left out of its recipe say so (`omitted`), and the recipes that left something out
    are counted (`omitted`, ours)."""
    known = made or {}
    left = board.omitted_origins if board is not None else {}
    by_path = {r.path: r for r in records}
    pointers = []
    for path in sorted({*by_path, *known}):
        doc = known.get(path) or pointer_document(by_path[path])
        if path in left:
            doc = {**plain(doc), "omitted": left[path]}
        pointers.append(doc)
    out: dict[str, Any] = {"pointers": pointers}
    recipes = {
        t.recipe: omitted_document(t.omitted)
        for t in (board.tabs if board is not None else ())
        if t.omitted.any
    }
    if recipes:
        out["omitted"] = dict(sorted(recipes.items()))
    return out
