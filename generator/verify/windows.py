"""Trust-root validity windows at the time of signing, which sigstore-python does not check.

sigstore-python 4.5.1 reads a trust root's `validFor` windows against the wall clock only: a
Fulcio CA, a Rekor key or a CT key whose window has ended still verifies bundles (expired keys
are kept "for verification"), and one whose window starts after the signing but before today
is accepted too. Only timestamp authorities are checked against the signed time. This module
adds the missing rule: the CA that issued the leaf, the log key that signed the entry and the CT
key that signed the SCT must each be inside their window at every verified signing time (the
integrated time of a Rekor v1 entry with a SET, and each RFC 3161 timestamp's genTime).

Key IDs in a bundle are unauthenticated hints (sigstore tries every key when one names no known
key), so a hint that names no key of the trust root is refused rather than guessed at. The
windows are indexed once per trust root (`windows_for`); a check costs a few dict look-ups.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from sigstore.models import Bundle, TrustedRoot

__all__ = ["KeyWindow", "TrustWindows", "signing_times", "window_problem", "windows_for"]

_CACHE: dict[str, TrustWindows] = {}
_SCT_OID = x509.oid.ExtensionOID.PRECERT_SIGNED_CERTIFICATE_TIMESTAMPS


@dataclass(frozen=True)
class KeyWindow:
    """One trust-root component's `validFor`: `start` and optional `end` (both inclusive)."""

    label: str
    start: datetime | None
    end: datetime | None

    def contains(self, moment: datetime) -> bool:
        return (self.start is None or self.start <= moment) and (
            self.end is None or moment <= self.end
        )

    def describe(self) -> str:
        start = _stamp(self.start) if self.start else "(no start)"
        end = _stamp(self.end) if self.end else "(no end)"
        return f"{self.label}, valid {start} to {end}"


@dataclass(frozen=True)
class _CaCert:
    """One certificate of a CA chain, with the window of the CA entry that lists it."""

    cert: x509.Certificate
    window: KeyWindow


@dataclass(frozen=True)
class _LogKey:
    """One log or CT key: its key ID as sigstore's keyring computes it (SHA-256 of the key
    bytes), the ID the trust root declares for it, its window and the protobuf key."""

    key_id: bytes
    declared_id: bytes
    window: KeyWindow
    public_key: Any


@dataclass(frozen=True)
class TrustWindows:
    """A trust root's windows, indexed: CA certificates by subject, log and CT keys by key ID."""

    ca_by_subject: Mapping[x509.Name, tuple[_CaCert, ...]]
    ca_windows: tuple[KeyWindow, ...]
    tlogs: tuple[_LogKey, ...]
    ctlogs: tuple[_LogKey, ...]


def windows_for(digest: str, root: TrustedRoot) -> TrustWindows:
    """The indexed windows of `root` (built once per trust-root digest)."""
    found = _CACHE.get(digest)
    if found is None:
        found = _index(root)
        _CACHE[digest] = found
    return found


def _index(root: TrustedRoot) -> TrustWindows:
    inner = root._inner  # noqa: SLF001 - sigstore exposes no public view of the windows
    by_subject: dict[x509.Name, list[_CaCert]] = {}
    ca_windows: list[KeyWindow] = []
    for ca in inner.certificate_authorities:
        label = _ca_label(ca)
        window = _window(label, ca.valid_for)
        ca_windows.append(window)
        for raw in ca.cert_chain.certificates:
            cert = x509.load_der_x509_certificate(raw.raw_bytes)
            by_subject.setdefault(cert.subject, []).append(_CaCert(cert, window))
    return TrustWindows(
        ca_by_subject={k: tuple(v) for k, v in by_subject.items()},
        ca_windows=tuple(ca_windows),
        tlogs=_keys(inner.tlogs, "transparency log"),
        ctlogs=_keys(inner.ctlogs, "CT log"),
    )


def _keys(logs: Sequence[Any], kind: str) -> tuple[_LogKey, ...]:
    found: list[_LogKey] = []
    for log in logs:
        key = log.public_key
        if not key.raw_bytes:
            continue
        key_id = hashlib.sha256(key.raw_bytes).digest()
        declared = bytes(log.log_id.key_id) if log.log_id is not None else key_id
        label = f"{kind} key {declared.hex()[:16]} ({log.base_url})"
        found.append(_LogKey(key_id, declared, _window(label, key.valid_for), key))
    return tuple(found)


def _window(label: str, valid_for: Any) -> KeyWindow:
    if valid_for is None:
        return KeyWindow(label, None, None)
    return KeyWindow(label, _aware(valid_for.start), _aware(valid_for.end))


def _aware(moment: datetime | None) -> datetime | None:
    if moment is None:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _ca_label(ca: Any) -> str:
    subject = ca.subject
    parts = [
        p
        for p in (getattr(subject, "organization", None), getattr(subject, "common_name", None))
        if p
    ]
    name = "/".join(parts) or "(unnamed)"
    return (
        f"certificate authority {name!r} ({ca.uri})"
        if ca.uri
        else f"certificate authority {name!r}"
    )


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --------------------------------------------------------------------------- the check


def signing_times(raw: Mapping[str, Any], bundle: Bundle) -> list[tuple[str, datetime]]:
    """The verified times of a bundle that passed sigstore: (what, when) pairs."""
    times: list[tuple[str, datetime]] = []
    entry = _first_entry(raw)
    integrated = entry.get("integratedTime")
    if entry.get("inclusionPromise") and integrated not in (None, "", "0", 0):
        try:
            times.append(("integrated time", datetime.fromtimestamp(int(integrated), tz=UTC)))
        except (TypeError, ValueError, OverflowError):
            pass  # sigstore refused such an entry already
    material = raw.get("verificationMaterial")
    stamps = material.get("timestampVerificationData") if isinstance(material, dict) else None
    data = bundle.verification_material.timestamp_verification_data if stamps else None
    if data is not None:
        times.extend(
            ("signed timestamp", _utc(response.tst_info.gen_time))
            for response in data.rfc3161_timestamps
        )
    return times


def window_problem(raw: Mapping[str, Any], bundle: Bundle, windows: TrustWindows) -> str | None:
    """Why a verified bundle falls outside a trust-root window at signing time, or None."""
    times = signing_times(raw, bundle)
    if not times:
        return "no verified signing time to check the trust root's validity windows against"
    leaf = bundle.signing_certificate
    # Each kind is only looked into when some component of it is outside at these times.
    if not all(w.contains(t) for w in windows.ca_windows for _, t in times):
        problem = _ca_problem(leaf, windows, times)
        if problem:
            return problem
    if not all(_inside(k, times) for k in windows.tlogs):
        problem = _tlog_problem(_first_entry(raw), windows.tlogs, times)
        if problem:
            return problem
    if not all(_inside(k, times) for k in windows.ctlogs):
        for sct_id in _sct_log_ids(leaf):
            problem = _ct_problem(sct_id, windows.ctlogs, times)
            if problem:
                return problem
    return None


def _ca_problem(
    leaf: x509.Certificate, windows: TrustWindows, times: Sequence[tuple[str, datetime]]
) -> str | None:
    candidates = windows.ca_by_subject.get(leaf.issuer, ())
    if not candidates:
        return "the signing certificate's issuer is in no certificate authority of the trust root"
    verdicts = {all(c.window.contains(t) for _, t in times) for c in candidates}
    if verdicts == {True}:
        return None
    if verdicts != {False}:
        # CAs of one subject disagree: find the one whose key really issued the leaf.
        issuers = [c for c in candidates if _issued_by(leaf, c.cert)]
        if any(all(c.window.contains(t) for _, t in times) for c in issuers):
            return None
        candidates = tuple(issuers) or candidates
    return _outside(candidates[0].window, times)


def _issued_by(leaf: x509.Certificate, issuer: x509.Certificate) -> bool:
    try:
        leaf.verify_directly_issued_by(issuer)
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True


def _inside(key: _LogKey, times: Sequence[tuple[str, datetime]]) -> bool:
    return all(key.window.contains(t) for _, t in times)


def _tlog_problem(
    entry: Mapping[str, Any], keys: Sequence[_LogKey], times: Sequence[tuple[str, datetime]]
) -> str | None:
    """The entry's log key must be inside its window. sigstore verifies the SET and checkpoint
    with the key whose computed ID equals the entry's `logId`, or, when none does (Rekor v2
    declares other IDs), with whichever key works; then the key that signs the checkpoint is
    found here the same way (only when some log key is outside its window)."""
    hint = _log_key_id(entry)
    exact = [k for k in keys if k.key_id == hint]
    if exact:
        return None if any(_inside(k, times) for k in exact) else _outside(exact[0].window, times)
    if all(_inside(k, times) for k in keys):
        return None
    if any(_signs_checkpoint(entry, k, hint) for k in keys if _inside(k, times)):
        return None
    named = [k for k in keys if k.declared_id == hint]
    if named:
        return _outside(named[0].window, times)
    return (
        f"no transparency-log key of the trust root that is valid at "
        f"{_stamp(times[0][1])} signed this entry (its logId names "
        f"{hint.hex() if hint else '(none)'})"
    )


def _ct_problem(
    sct_id: bytes, keys: Sequence[_LogKey], times: Sequence[tuple[str, datetime]]
) -> str | None:
    """The SCT's CT key (RFC 6962 log ID = SHA-256 of the key) must be inside its window; an
    SCT naming no key passes only when every CT key is inside (sigstore tried them all)."""
    exact = [k for k in keys if k.key_id == sct_id]
    if exact:
        return None if any(_inside(k, times) for k in exact) else _outside(exact[0].window, times)
    if all(_inside(k, times) for k in keys):
        return None
    return (
        f"the certificate's SCT names CT key {sct_id.hex()}, which is no key of the trust "
        "root, and some CT keys are outside their validity window at signing time"
    )


def _signs_checkpoint(entry: Mapping[str, Any], key: _LogKey, hint: bytes | None) -> bool:
    """Whether `key` signed the entry's checkpoint (sigstore's own note verification)."""
    from sigstore._internal.rekor.checkpoint import SignedCheckpoint
    from sigstore._internal.trust import Keyring
    from sigstore._utils import KeyID
    from sigstore.errors import Error as SigstoreError

    proof = entry.get("inclusionProof")
    checkpoint = proof.get("checkpoint") if isinstance(proof, dict) else None
    envelope = checkpoint.get("envelope") if isinstance(checkpoint, dict) else None
    if not isinstance(envelope, str):
        return False
    try:
        note = SignedCheckpoint.from_text(envelope).signed_note
        note.verify(Keyring([key.public_key]), KeyID(hint or key.declared_id))  # type: ignore[arg-type]
    except (SigstoreError, ValueError):
        return False
    return True


def _outside(window: KeyWindow, times: Sequence[tuple[str, datetime]]) -> str:
    what, moment = next(((w, t) for w, t in times if not window.contains(t)), times[0])
    return (
        f"{window.describe()} in the trust root, but the bundle's {what} is "
        f"{_stamp(moment)}, outside that window"
    )


def _first_entry(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    material = raw.get("verificationMaterial")
    entries = material.get("tlogEntries") if isinstance(material, dict) else None
    if isinstance(entries, list) and entries and isinstance(entries[0], dict):
        return entries[0]
    return {}


def _log_key_id(entry: Mapping[str, Any]) -> bytes | None:
    log_id = entry.get("logId")
    text = log_id.get("keyId") if isinstance(log_id, dict) else None
    if not isinstance(text, str):
        return None
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def _sct_log_ids(leaf: x509.Certificate) -> list[bytes]:
    try:
        ext = leaf.extensions.get_extension_for_oid(_SCT_OID)
    except (x509.ExtensionNotFound, ValueError):
        return []
    value = ext.value
    if not isinstance(value, x509.PrecertificateSignedCertificateTimestamps):
        return []
    return [sct.log_id for sct in value]
