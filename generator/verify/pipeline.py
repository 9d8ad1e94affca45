"""aicr's five verification steps for one pointer, fail closed, plus this project's extra checks.

Steps (evidence-format.md 5.1-5.5): 1 `materialize-bundle`, 2 `signature-verify`, 3
`predicate-parse`, 4 `manifest-hash-check`, 5 `render-summary`. The first failing step stops the
checks; later steps are recorded as `skipped` and step 5 is always `informational`, so every
result lists all five steps. Failure classes and exits follow 5.6 (`classify`, `merge_cause`).

Checks aicr does not make (spec 11) are separate sub-rows with `beyond_aicr=True`, run only after
aicr's own step-4 checks passed, so a verdict that differs from `aicr evidence verify` is always
explained by a marked row.

Decisions:
- A bundle outside every trusted registry prefix was never fetched: that is `NoVerdict` (class
  `registry`, "not fetched: outside every --trusted-registry prefix"), not `Rejected`, because
  nothing is known about a possibly valid bundle.
- A fetch error flagged `transient` (e.g. bytes that do not hash to their digest) is `NoVerdict`
  whatever its class; any other fetch error keeps the class the bundle seam gave it.
- A pointer that claims no signer on a signed bundle is verified against the certificate's own
  identity (a real exact policy, never a no-op) and is `Verified` with that identity, as aicr
  accepts any Fulcio identity without pins; the allowlist decides what it counts for.
- `criteriaMatch.matched == false` is flagged in a sub-row but does not fail (ADR-007 step 7 is
  only proposed); a `matched` value that contradicts `perDimension` fails.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from generator.errors import BundleError
from generator.model import (
    PHASE_ORDER,
    Evidence,
    FailureClass,
    Pending,
    Pointer,
    PointerLocation,
    StepStatus,
    SubRow,
    Verdict,
    Verified,
)
from generator.verify._fields import _phase_failures, _phase_summary, phase_failures_recorded
from generator.verify._manifest import UNLISTED_OK, _step4
from generator.verify._run import (
    FORBIDDEN_HINT,
    INTEGRITY_HINT,
    MAX_CTRF_BYTES,
    MAX_MANIFEST_BYTES,
    MAX_RECIPE_BYTES,
    MAX_SIGNATURE_CANDIDATES,
    MAX_STATEMENT_BYTES,
    POLICY_EXCLUDED_DETAIL,
    SCHEMA_HINT,
    TRANSIENT_HINT,
    _Run,
    _step,
    classify,
    merge_cause,
)
from generator.verify._seams import (
    BundleSourceLike,
    MaterializedLike,
    SignatureCandidateLike,
    SignatureVerifier,
)
from generator.verify._signed import _step2, predicate_type_problem
from generator.verify._statement import _step3
from generator.verify.signature import SignatureOk, verify_signature
from generator.verify.trust import Trust

__all__ = [
    "FORBIDDEN_HINT",
    "INTEGRITY_HINT",
    "MAX_CTRF_BYTES",
    "MAX_MANIFEST_BYTES",
    "MAX_RECIPE_BYTES",
    "MAX_SIGNATURE_CANDIDATES",
    "MAX_STATEMENT_BYTES",
    "POLICY_EXCLUDED_DETAIL",
    "SCHEMA_HINT",
    "TRANSIENT_HINT",
    "UNLISTED_OK",
    "BundleSourceLike",
    "MaterializedLike",
    "SignatureCandidateLike",
    "SignatureVerifier",
    "classify",
    "merge_cause",
    "phase_failures_recorded",
    "predicate_type_problem",
    "verify_materialized",
    "verify_pointer",
]


def verify_pointer(
    pointer: Pointer,
    location: PointerLocation,
    source: BundleSourceLike,
    trust: Trust,
    *,
    signature_verifier: SignatureVerifier | None = None,
) -> Verdict:
    """Fetch the pointer's bundle from `source` (step 1) and verify it (steps 2-5)."""
    run = _Run()
    ref = pointer.bundle
    if not ref.oci:
        run.fail(
            1,
            "pointer has no bundle.oci (the bundle was never pushed)",
            failure_class=FailureClass.UNKNOWN,
            hint="push the bundle and record bundle.oci and bundle.digest in the pointer",
        )
        return run.outcome()
    if not ref.digest:
        run.fail(
            1,
            f"refusing tag-only reference {ref.oci}: the pointer has no bundle.digest",
            failure_class=FailureClass.UNKNOWN,
            hint="pin the bundle by digest (bundle.digest: sha256:<hex>)",
        )
        return run.outcome()
    try:
        materialized = source.fetch(ref)
    except BundleError as exc:
        _fetch_failure(run, exc)
        return run.outcome()
    except OSError as exc:
        run.fail(1, f"bundle could not be read: {exc}", failure_class=FailureClass.TRANSIENT)
        return run.outcome()
    return verify_materialized(
        pointer, location, materialized, trust, signature_verifier=signature_verifier
    )


def _fetch_failure(run: _Run, exc: BundleError) -> None:
    if getattr(exc, "policy_excluded", False):
        detail = getattr(exc, "published_detail", None) or POLICY_EXCLUDED_DETAIL
        run.fail(
            1,
            detail,
            failure_class=FailureClass.REGISTRY,
            hint=exc.hint or "add the registry prefix with --trusted-registry",
            status=StepStatus.SKIPPED,
            no_verdict=True,
        )
        return
    given = getattr(exc, "failure_class", None)
    cls = (
        given
        if isinstance(given, FailureClass)
        else classify(1, http_status=exc.http_status, transient=exc.transient)
    )
    detail = exc.message
    if exc.found and exc.found not in detail:
        detail = f"{detail} ({exc.found})"
    run.fail(
        1,
        detail,
        failure_class=cls,
        hint=exc.hint or "",
        http_status=exc.http_status,
        no_verdict=exc.transient,
    )


def verify_materialized(
    pointer: Pointer,
    location: PointerLocation,
    materialized: MaterializedLike,
    trust: Trust,
    *,
    signature_verifier: SignatureVerifier | None = None,
) -> Verdict:
    """Verify an already materialized bundle against its pointer: steps 1 (digest) to 5."""
    run = _Run()
    if not _step1(run, pointer, materialized):
        return run.outcome()
    ok: SignatureOk | None = None
    if not materialized.signatures:
        if not _unsigned_step2(run, pointer):
            return run.outcome()
    else:
        ok = _step2(run, pointer, materialized, trust, signature_verifier or verify_signature)
        if ok is None:
            return run.outcome()
    parsed = _step3(run, pointer, materialized.files, ok)
    if parsed is None:
        return run.outcome()
    predicate_type, predicate = parsed
    evidence = _step4(run, pointer, location, materialized.files, predicate_type, predicate)
    if evidence is None:
        return run.outcome()
    return _step5(run, materialized, trust, ok, evidence, predicate)


def _step1(run: _Run, pointer: Pointer, materialized: MaterializedLike) -> bool:
    """`materialize-bundle`: the pulled digest is the pointer's; False (recorded) when not."""
    pulled = materialized.digest
    if pointer.bundle.digest != pulled:
        run.fail(
            1,
            f"pointer digest {pointer.bundle.digest} does not match pulled digest {pulled}",
            failure_class=FailureClass.UNKNOWN,
            hint="the pointer and the registry disagree; re-generate the pointer",
        )
        return False
    rows = [SubRow("bundleDigest", str(pulled)), SubRow("files", str(len(materialized.files)))]
    if getattr(materialized, "needed_credentials", False) is True:
        rows.append(
            SubRow(
                "registry access",
                "needed credentials: not anonymously reproducible",
                beyond_aicr=True,
            )
        )
    run.passed(1, f"materialized {pointer.bundle.pinned_ref}", rows)
    return True


def _unsigned_step2(run: _Run, pointer: Pointer) -> bool:
    """`signature-verify` of a bundle without signature: pending, unless the pointer claims one."""
    if pointer.signer is not None:
        claimed = pointer.signer.identity
        run.fail(
            2,
            f"pointer claims a signer ({claimed.identity}, {claimed.issuer}) but the "
            "bundle carries no signature",
            hint="attach the Sigstore bundle as a referrer (re-run the signing step)",
        )
        return False
    run.skipped(2, "no signature attached (unsigned bundle — pending signature)")
    return True


def _step5(
    run: _Run,
    materialized: MaterializedLike,
    trust: Trust,
    ok: SignatureOk | None,
    evidence: Evidence,
    predicate: Mapping[str, Any],
) -> Verified | Pending:
    """`render-summary`: the phase counts, then `Verified` (signed) or `Pending` (unsigned)."""
    failed = _phase_failures(predicate)
    rows = [
        SubRow(f"phases.{p}", _phase_summary(predicate, p))
        for p in PHASE_ORDER
        if p.value in (predicate.get("phases") or {})
    ]
    if ok is None:
        rows.append(SubRow("pending", "true" if not failed else "false (phase failures recorded)"))
    run.steps.append(_step(5, StepStatus.INFORMATIONAL, "report assembled", rows))
    steps = tuple(run.steps)
    credentials = getattr(materialized, "needed_credentials", False) is True
    if ok is None:
        return Pending(steps=steps, evidence=evidence, needed_credentials=credentials)
    if ok.logged_at is not None:  # the time sigstore verified, carried with the evidence
        evidence = replace(evidence, logged_at=ok.logged_at)
    return Verified(
        steps=steps,
        signer=ok.signer,
        rekor_log_index=ok.log_index,
        evidence=evidence,
        phase_failures=failed,
        log_url=trust.log_url(ok.log_index, rekor_v2=ok.rekor_v2),
        needed_credentials=credentials,
    )
