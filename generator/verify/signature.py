"""The adapter around sigstore-python's `Verifier`: a Sigstore bundle in, a verified statement out.

`verify_dsse` checks the certificate chain, SCT, transparency-log entry and DSSE signature, but not
the statement (sigstore-offline.md 4.4). This adapter adds what the caller owns: a DSSE envelope
is required, `payloadType` must be in-toto, the payload must be an in-toto Statement (raw JSON or
base64 of JSON, as aicr accepts), at least one tlog entry, and the claimed `rekorLogIndex`
must equal the first entry's `logIndex` (for Rekor v2 entries, which carry no SET, the entry index
must also equal the Merkle-authenticated `inclusionProof.logIndex`, pitfall 7).

One `Verifier` is built per trust root and reused. It keeps the times sigstore-python itself
verified while checking a bundle (the log's integrated time bound by its inclusion promise, and
RFC 3161 timestamps that chain to a trusted TSA), so the caller orders runs by a verified time
rather than by the attestedAt the payload claims.
"""

from __future__ import annotations

import base64
import binascii
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cryptography import x509
from sigstore.errors import Error as SigstoreError
from sigstore.models import Bundle
from sigstore.verify import Verifier

from generator import strictjson
from generator.model import SignerIdentity
from generator.verify._steadyroot import steady
from generator.verify.policy import ExactIdentity, certificate_identity
from generator.verify.trust import Trust
from generator.verify.windows import window_problem, windows_for

IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json"
MAX_SIGSTORE_BUNDLE_BYTES = 10 * 1024 * 1024

STALE_ROOT_HINT = (
    "if this bundle is genuine, the trust root may be stale: rebuild without --offline to "
    "refresh it through TUF, or pass a current --trust-root file"
)
# Errors that mean "this root has no authority for what signed the bundle". A forged or
# foreign bundle fails exactly like this, so the hint says that first: refreshing the root
# helps only a genuine bundle signed by an authority added since.
FOREIGN_AUTHORITY_HINT = (
    "the bundle was signed by an authority this trust root does not hold: a forged or "
    "foreign certificate fails this way; only if the bundle is known to be genuine may the "
    "root be stale (rebuild without --offline to refresh it through TUF, or pass a current "
    "--trust-root file)"
)
# Errors that mean the bundle's own content was changed after signing, or its times do
# not fit: no trust root would accept it, so refreshing one is never the fix.
TAMPERED_HINT = (
    "the bundle does not match what was signed and logged (edited after signing, or its "
    "log entry or times altered): re-create, re-sign and re-push the bundle; a newer trust "
    "root will not make it verify"
)
_HINTS: tuple[tuple[str, str], ...] = (
    # content or times changed after signing: checked first, they are the more specific words
    ("dsse: invalid signature", TAMPERED_HINT),
    ("set: invalid inclusion promise", TAMPERED_HINT),
    ("invalid root hash", TAMPERED_HINT),
    ("inclusion proof", TAMPERED_HINT),
    ("log entry signatures do not match", TAMPERED_HINT),
    ("not valid at validation time", TAMPERED_HINT),
    ("does not match pulled artifact digest", TAMPERED_HINT),
    # an authority (CA, CT log, transparency log, TSA) this root does not hold
    ("certificate signed by unknown authority", FOREIGN_AUTHORITY_HINT),
    ("certificate chain", FOREIGN_AUTHORITY_HINT),
    ("x509", FOREIGN_AUTHORITY_HINT),
    ("unable to verify certificate", FOREIGN_AUTHORITY_HINT),
    ("root certificate", FOREIGN_AUTHORITY_HINT),
    ("certvalidationerror", FOREIGN_AUTHORITY_HINT),
    ("signature does not match", FOREIGN_AUTHORITY_HINT),
    ("failed to verify sct", FOREIGN_AUTHORITY_HINT),
    ("checkpoint: invalid signature", FOREIGN_AUTHORITY_HINT),
    # a root without the timestamp authorities a v2 bundle needs: an old root
    ("no timestamp authorities", STALE_ROOT_HINT),
)

_VERIFIERS: dict[str, Verifier] = {}


class _TimedVerifier(Verifier):
    """sigstore-python's `Verifier`, remembering the times it established for the last bundle.

    `_establish_time` is where sigstore gathers the verified times every later check (chain
    at that time, certificate validity) is made against; its answer is kept per thread. Should a
    sigstore release stop calling it, no time is kept and verified evidence has no log time,
    which the build rejects (fail closed), never falling back to the claimed attestedAt.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._times = threading.local()

    def _establish_time(self, bundle: Bundle) -> Any:
        found = super()._establish_time(bundle)
        self._times.last = list(found)
        return found

    def forget_times(self) -> None:
        self._times.last = []

    def verified_time(self) -> datetime | None:
        """The transparency-log time when sigstore verified one, else the earliest verified
        signed timestamp; None when it kept none."""
        found = getattr(self._times, "last", [])
        log = [t.time for t in found if getattr(t.source, "name", "") == "TRANSPARENCY_SERVICE"]
        times = log or [t.time for t in found]
        return min(times) if times else None


@dataclass(frozen=True)
class SignatureOk:
    """A bundle that verified: who signed it, the first log entry, the verified statement."""

    signer: SignerIdentity
    log_index: int | None
    """The first tlog entry's logIndex when it is greater than 0 (aicr omits 0)."""
    statement: Mapping[str, Any]
    rekor_v2: bool
    logged_at: str | None = None
    """The verified log time (`YYYY-MM-DDTHH:MM:SSZ` UTC), see `_TimedVerifier`."""


class SignatureFailure(Exception):
    """The bundle did not verify. `signer` is the certificate's identity when it could be read."""

    def __init__(
        self, detail: str, *, hint: str = "", signer: SignerIdentity | None = None
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.hint = hint
        self.signer = signer


def verifier_for(trust: Trust) -> Verifier:
    """The shared `Verifier` of a trust root (built once; construction does no I/O), over
    the root's keyrings built once (`steady`)."""
    verifier = _VERIFIERS.get(trust.digest)
    if verifier is None:
        verifier = _TimedVerifier(trusted_root=steady(trust.trusted_root))
        _VERIFIERS[trust.digest] = verifier
    return verifier


def stale_root_hint(message: str) -> str:
    """The next step for a signature error: tampering is never blamed on the trust root, an
    unknown authority names forgery first and a stale root only for a genuine bundle, a root
    without timestamp authorities is called stale; other errors get no hint here."""
    low = message.lower()
    return next((hint for marker, hint in _HINTS if marker in low), "")


def bundle_certificate(bundle_json: bytes) -> x509.Certificate:
    """The leaf certificate of a Sigstore bundle (parsed, not verified)."""
    return Bundle.from_json(bundle_json).signing_certificate


def verify_signature(
    bundle_json: bytes,
    trust: Trust,
    *,
    expected: SignerIdentity | None,
    rekor_log_index: int | None = None,
) -> SignatureOk:
    """Verify one Sigstore bundle against `trust`. The signer is the certificate's single SAN and
    OIDC issuer; `expected` (the pointer's claim), when given, must equal it. Raises
    `SignatureFailure`."""
    raw, bundle = _parse_bundle(bundle_json)
    cert_signer = _signer_of(bundle, expected)
    policy = ExactIdentity(cert_signer)

    verifier = verifier_for(trust)
    if isinstance(verifier, _TimedVerifier):
        verifier.forget_times()
    try:
        payload_type, payload = verifier.verify_dsse(bundle, policy)
    except SigstoreError as exc:
        message = _one_line(exc)
        raise SignatureFailure(
            f"sigstore verification failed: {message}",
            hint=stale_root_hint(f"{type(exc).__name__} {message}"),
            signer=cert_signer,
        ) from exc

    problem = window_problem(raw, bundle, windows_for(trust.digest, trust.trusted_root))
    if problem is not None:
        raise SignatureFailure(
            f"trust root validity window: {problem}",
            hint="a CA or log key may only vouch for signatures made inside its validFor "
            "window; check the trust root, or re-sign with the current keys",
            signer=cert_signer,
        )

    if payload_type != IN_TOTO_PAYLOAD_TYPE:
        raise SignatureFailure(
            f"DSSE payloadType is {payload_type!r}, expected {IN_TOTO_PAYLOAD_TYPE!r}",
            signer=cert_signer,
        )
    statement = parse_statement(payload)
    entry_index, rekor_v2 = _first_entry(raw)
    if rekor_log_index is not None and entry_index != rekor_log_index:
        raise SignatureFailure(
            f"pointer rekorLogIndex {rekor_log_index} does not equal the bundle's first tlog "
            f"entry logIndex {entry_index}",
            hint="re-generate the pointer from the signed bundle (is the pointer stale?)",
            signer=cert_signer,
        )
    when = verifier.verified_time() if isinstance(verifier, _TimedVerifier) else None
    return SignatureOk(
        signer=cert_signer,
        log_index=entry_index if entry_index > 0 else None,
        statement=statement,
        rekor_v2=rekor_v2,
        logged_at=None if when is None else when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )


def _parse_bundle(bundle_json: bytes) -> tuple[Mapping[str, Any], Bundle]:
    """The bundle's JSON object and sigstore's model of it: a DSSE bundle under the size cap."""
    if len(bundle_json) > MAX_SIGSTORE_BUNDLE_BYTES:
        raise SignatureFailure(
            f"sigstore bundle is {len(bundle_json)} bytes, over the "
            f"{MAX_SIGSTORE_BUNDLE_BYTES}-byte limit"
        )
    raw = _json_object(bundle_json)
    if "dsseEnvelope" not in raw:
        raise SignatureFailure(
            "sigstore bundle carries no DSSE envelope (a message signature cannot sign a statement)",
            hint="sign the in-toto statement with DSSE (`aicr validate --emit-attestation`)",
        )
    try:
        bundle = Bundle.from_json(bundle_json)
    except SigstoreError as exc:
        raise SignatureFailure(f"sigstore bundle is malformed: {_one_line(exc)}") from exc
    except Exception as exc:  # noqa: BLE001 - pydantic errors from the strict models
        raise SignatureFailure(f"sigstore bundle is malformed: {_one_line(exc)}") from exc
    return raw, bundle


def _signer_of(bundle: Bundle, expected: SignerIdentity | None) -> SignerIdentity:
    """The certificate's identity, which must equal the pointer's claim when there is one."""
    try:
        cert_signer = certificate_identity(bundle.signing_certificate)
    except SigstoreError as exc:
        raise SignatureFailure(
            f"certificate identity rejected: {_one_line(exc)}",
            hint="a bundle's signer is what its certificate names: sign with a certificate "
            "that carries one email or URI SAN and one OIDC issuer (Fulcio's keyless flow)",
        ) from exc
    if expected is not None and expected != cert_signer:
        raise SignatureFailure(
            claim_mismatch(expected, cert_signer),
            hint="correct the pointer's signer.identity and signer.issuer to the certificate's",
            signer=cert_signer,
        )
    return cert_signer


def claim_mismatch(claimed: SignerIdentity, signer: SignerIdentity) -> str:
    """Why a pointer's claimed signer is not the certificate's (the differing parts named)."""
    parts = []
    if claimed.identity != signer.identity:
        parts.append(
            f"certificate identity (SAN) {signer.identity!r} does not equal the "
            f"pointer's claimed {claimed.identity!r}"
        )
    if claimed.issuer != signer.issuer:
        parts.append(
            f"certificate OIDC issuer {signer.issuer!r} does not equal the pointer's "
            f"claimed {claimed.issuer!r}"
        )
    return "; ".join(parts)


def parse_statement(payload: bytes) -> Mapping[str, Any]:
    """Parse a DSSE payload as an in-toto Statement: raw JSON, or base64 of JSON (aicr 5.2)."""
    if not payload.strip():
        raise SignatureFailure("DSSE payload is empty")
    body = payload
    if payload.lstrip()[:1] not in (b"{", b"["):
        try:
            body = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise SignatureFailure("DSSE payload is neither JSON nor base64 of JSON") from exc
    try:
        doc = strictjson.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise SignatureFailure(f"DSSE payload {strictjson.problem(exc)}") from exc
    if not isinstance(doc, dict):
        raise SignatureFailure("in-toto statement is not a JSON object")
    subject = doc.get("subject")
    if not isinstance(subject, list) or not subject:
        raise SignatureFailure("in-toto statement has no subject")
    if not isinstance(doc.get("predicateType"), str) or not doc["predicateType"]:
        raise SignatureFailure("in-toto statement has no predicateType")
    predicate = doc.get("predicate")
    if predicate is not None and not isinstance(predicate, dict):
        raise SignatureFailure("in-toto statement predicate is not an object")
    return doc


def _first_entry(raw: Mapping[str, Any]) -> tuple[int, bool]:
    """(logIndex, is Rekor v2) of the first tlog entry; requires one, and the v2 index binding."""
    material = raw.get("verificationMaterial")
    entries = material.get("tlogEntries") if isinstance(material, dict) else None
    if not isinstance(entries, list) or not entries or not isinstance(entries[0], dict):
        raise SignatureFailure(
            "sigstore bundle has no transparency-log entry (at least one is required)",
            hint="sign with a Rekor log (was it signed with --no-rekor?)",
        )
    entry = entries[0]
    index = _int64(entry.get("logIndex"), "tlog entry logIndex")
    rekor_v2 = not entry.get("inclusionPromise")
    if rekor_v2:
        proof = entry.get("inclusionProof")
        proof_index = _int64(
            proof.get("logIndex") if isinstance(proof, dict) else None,
            "inclusionProof.logIndex",
        )
        if proof_index != index:
            raise SignatureFailure(
                f"Rekor v2 entry logIndex {index} does not equal its authenticated "
                f"inclusionProof.logIndex {proof_index}"
            )
    return index, rekor_v2


def _int64(value: object, what: str) -> int:
    if isinstance(value, bool):
        raise SignatureFailure(f"{what} is not an integer")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    if value is None:
        return 0  # protobuf JSON omits zero values
    raise SignatureFailure(f"{what} is not an integer: {value!r}")


def _json_object(data: bytes) -> Mapping[str, Any]:
    try:
        doc = strictjson.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise SignatureFailure(f"sigstore bundle {strictjson.problem(exc)}") from exc
    if not isinstance(doc, dict):
        raise SignatureFailure("sigstore bundle is not a JSON object")
    return doc


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())
