"""`verify-site`'s signature check: the manifest's Sigstore bundle against the trust root and
the expected identity (a DSSE statement naming the manifest, or a message signature over it)."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC
from typing import Any

from generator._verifysite_verdict import Problem, ProblemKind, SignedBy
from generator.manifest import MANIFEST_PREDICATE, SIGNATURE_PATH
from generator.model import SignerIdentity


def verify_manifest_signature(
    manifest: bytes, bundle_json: bytes, trust: Any, expected: SignerIdentity
) -> SignedBy:
    """Verify the manifest's Sigstore bundle; raises `SignatureFailure` with the reason."""
    from sigstore.errors import Error as SigstoreError
    from sigstore.models import Bundle

    from generator.verify.policy import ExactIdentity
    from generator.verify.signature import (
        SignatureFailure,
        _TimedVerifier,
        verifier_for,
        verify_signature,
    )

    try:
        raw = json.loads(bundle_json)
    except ValueError as exc:
        raise SignatureFailure(f"the signature bundle is not JSON: {exc}") from exc
    if isinstance(raw, dict) and "dsseEnvelope" in raw:
        ok = verify_signature(bundle_json, trust, expected=expected)
        statement = ok.statement
        digest = hashlib.sha256(manifest).hexdigest()
        subjects = statement.get("subject") or []
        if statement.get("predicateType") != MANIFEST_PREDICATE or not any(
            isinstance(s, dict) and (s.get("digest") or {}).get("sha256") == digest
            for s in subjects
        ):
            raise SignatureFailure(
                "the signed statement does not name this manifest",
                hint=f"expected predicateType {MANIFEST_PREDICATE} and a subject with sha256 "
                f"{digest}; the manifest was changed after it was signed",
            )
        return SignedBy(ok.signer.identity, ok.signer.issuer, ok.logged_at)
    try:
        bundle = Bundle.from_json(bundle_json)
    except Exception as exc:  # noqa: BLE001 - sigstore and pydantic errors alike
        raise SignatureFailure(f"the signature bundle is malformed: {exc}") from exc
    verifier = verifier_for(trust)
    if isinstance(verifier, _TimedVerifier):
        verifier.forget_times()
    try:
        verifier.verify_artifact(manifest, bundle, ExactIdentity(expected))
    except SigstoreError as exc:
        raise SignatureFailure(f"sigstore verification failed: {exc}") from exc
    when = verifier.verified_time() if isinstance(verifier, _TimedVerifier) else None
    return SignedBy(
        expected.identity,
        expected.issuer,
        None if when is None else when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )


def check_signature(
    manifest: bytes,
    bundle: bytes | None,
    *,
    identity: str,
    issuer: str,
    engine: dict[str, Any],
) -> tuple[SignedBy | None, list[Problem]]:
    """Verify the manifest's Sigstore bundle (None: there is none) against the trust options
    in `engine` and the expected signer; who signed it, or the problem."""
    from generator.verify.signature import SignatureFailure
    from generator.verify.trust import load_trust

    if bundle is None:
        return None, [
            Problem(
                ProblemKind.SIGNATURE,
                SIGNATURE_PATH,
                "the manifest is not signed (no Sigstore bundle next to it)",
            )
        ]
    trust = load_trust(
        mode=str(engine.get("trust_mode") or "production"),
        root_file=engine.get("trust_root"),
        offline=bool(engine.get("offline")),
    )
    try:
        signed_by = verify_manifest_signature(
            manifest, bundle, trust, SignerIdentity(issuer=issuer, identity=identity)
        )
    except SignatureFailure as failure:
        detail = failure.detail + (f" ({failure.hint})" if failure.hint else "")
        return None, [Problem(ProblemKind.SIGNATURE, SIGNATURE_PATH, detail)]
    return signed_by, []
