"""Verify one bundle-refs entry: its claimed signer from the certificate, its pointer fields from the
bundle's statement, then the same pipeline as a pointer.

Sigstore and the verify package are imported inside the functions that need them, so reading a
bundle-refs file never loads sigstore-python.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from generator import strictjson
from generator.bundlerefs._parse import (
    MAX_CANDIDATES,
    NO_MATCH_HINT,
    SCHEMA_VERSION,
    BundleRefEntry,
)
from generator.errors import BundleError
from generator.model import (
    BundleRef,
    ClaimedSigner,
    FailureCause,
    FailureClass,
    ParsedPointer,
    Pointer,
    PredicateType,
    RecipeName,
    Rejected,
    SignerIdentity,
    Step,
    StepStatus,
    SubRow,
    Verdict,
    Verified,
)


class _Failing:
    """A bundle source that replays one fetch failure (so the pipeline classifies it)."""

    def __init__(self, error: Exception) -> None:
        self._error = error

    def fetch(self, ref: BundleRef) -> Any:
        raise self._error


def _certificate_signer(bundle_json: bytes) -> SignerIdentity | None:
    """The identity a candidate's certificate names (not yet verified), or None if unreadable."""
    from generator.verify.policy import certificate_identity
    from generator.verify.signature import bundle_certificate

    try:
        return certificate_identity(bundle_certificate(bundle_json))
    except Exception:  # noqa: BLE001 - any unreadable candidate is simply not a match
        return None


def _unverified_statement(bundle_json: bytes) -> Mapping[str, Any]:
    """The DSSE statement of a candidate, parsed but not verified ({} when unreadable).

    Only used to fill in the pointer fields a file would have carried; the pipeline then checks
    every one of them against the verified payload, so a lie here fails verification.
    """
    try:
        envelope = strictjson.loads(bundle_json).get("dsseEnvelope") or {}
        payload = base64.b64decode(str(envelope.get("payload", "")), validate=True)
        statement = strictjson.loads(payload)
    except (ValueError, AttributeError, binascii.Error, UnicodeDecodeError):
        return {}
    return statement if isinstance(statement, dict) else {}


def _normalized_time(value: object) -> str:
    if not isinstance(value, str) or not value:
        return ""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return ""
    if moment.tzinfo is None:
        return ""
    return moment.astimezone(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def derived_pointer(
    entry: BundleRefEntry, statement: Mapping[str, Any], signer: SignerIdentity | None
) -> Pointer:
    """The pointer a file would have carried for this bundle, from its (unverified) statement."""
    predicate = statement.get("predicate")
    predicate = predicate if isinstance(predicate, dict) else {}
    try:
        ptype = PredicateType(str(statement.get("predicateType")))
    except ValueError:
        ptype = PredicateType.V3
    recipe = predicate.get("recipe")
    name = recipe.get("name") if isinstance(recipe, dict) else None
    profile = predicate.get("profile")
    selection = profile.get("selection") if isinstance(profile, dict) else None
    return Pointer(
        schema_version=SCHEMA_VERSION,
        recipe=entry.recipe or RecipeName(name if isinstance(name, str) else ""),
        profile=selection if isinstance(selection, str) and selection else None,
        bundle=BundleRef(oci=entry.ref, digest=entry.digest, predicate_type=ptype),
        signer=ClaimedSigner(identity=signer) if signer is not None else None,
        attested_at=_normalized_time(predicate.get("attestedAt")),
    )


def _no_match(
    entry: BundleRefEntry, materialized: Any, seen: Sequence[SignerIdentity], candidates: int
) -> Rejected:
    """Step 2 fails with class `signature`: no candidate's certificate meets the policy."""
    if candidates == 0:
        detail = "the bundle carries no signature (a bundle ref must be signed)"
    elif not seen:
        detail = f"no certificate identity could be read from {candidates} signature candidate(s)"
    else:
        first = seen[0]
        detail = (
            f"certificate identity {first.identity!r} ({first.issuer}) does not meet the "
            f"bundle ref's policy: identityPattern {entry.identity_pattern!r} "
            f"(RE2 full match) with issuer {entry.issuer!r}"
        )
    skipped = "not run: an earlier step failed"
    steps = (
        Step(
            1,
            "materialize-bundle",
            StepStatus.PASSED,
            f"materialized {entry.ref}",
            (
                SubRow("bundleDigest", str(materialized.digest)),
                SubRow("files", str(len(materialized.files))),
            ),
        ),
        Step(
            2,
            "signature-verify",
            StepStatus.FAILED,
            detail,
            (
                SubRow("identityPattern", entry.identity_pattern, beyond_aicr=True),
                SubRow("issuer", entry.issuer, beyond_aicr=True),
            ),
        ),
        Step(3, "predicate-parse", StepStatus.SKIPPED, skipped),
        Step(4, "manifest-hash-check", StepStatus.SKIPPED, skipped),
        Step(5, "render-summary", StepStatus.INFORMATIONAL, "report assembled"),
    )
    return Rejected(
        steps=steps,
        cause=FailureCause(FailureClass.SIGNATURE, detail, NO_MATCH_HINT),
        signer=seen[0] if seen else None,
    )


def verify_bundle_ref(
    entry: BundleRefEntry, source: Any, trust: Any, *, signature_verifier: Any = None
) -> tuple[ParsedPointer, Verdict]:
    """Fetch and verify one bundle ref; the derived pointer and its verdict."""
    from generator.verify.pipeline import verify_materialized, verify_pointer

    location = entry.location
    placeholder = derived_pointer(entry, {}, None)
    try:
        materialized = source.fetch(placeholder.bundle)
    except (BundleError, OSError) as exc:
        verdict = verify_pointer(placeholder, location, _Failing(exc), trust)
        return ParsedPointer(location, placeholder), verdict
    if materialized.digest != entry.digest:  # step 1 reports the mismatch
        verdict = verify_materialized(
            placeholder, location, materialized, trust, signature_verifier=signature_verifier
        )
        return ParsedPointer(location, placeholder), verdict
    candidates = list(materialized.signatures)[:MAX_CANDIDATES]
    seen: list[SignerIdentity] = []
    for candidate in candidates:
        signer = _certificate_signer(candidate.bundle_json)
        if signer is None:
            continue
        seen.append(signer)
        if entry.matches(signer):
            pointer = derived_pointer(entry, _unverified_statement(candidate.bundle_json), signer)
            verdict = verify_materialized(
                pointer, location, materialized, trust, signature_verifier=signature_verifier
            )
            return ParsedPointer(location, pointer), _with_policy_row(verdict, entry)
    return ParsedPointer(location, placeholder), _no_match(
        entry, materialized, seen, len(candidates)
    )


def _with_policy_row(verdict: Verdict, entry: BundleRefEntry) -> Verdict:
    """Record the bundle ref's identity policy on step 2 of a verified verdict."""
    if not isinstance(verdict, Verified):
        return verdict
    row = SubRow(
        "identityPattern",
        f"{entry.identity_pattern} (RE2 full match; issuer exact)",
        beyond_aicr=True,
    )
    steps = tuple(
        replace(s, sub_rows=(*s.sub_rows, row)) if s.step == 2 else s for s in verdict.steps
    )
    return replace(verdict, steps=steps)
