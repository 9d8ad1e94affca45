"""The identity policy: exact SAN and exact OIDC issuer, read the way Fulcio writes them.

sigstore's `Identity(issuer=...)` reads only the legacy issuer extension `.1.1` (pitfall 2), while
aicr (sigstore-go) reads `.1.8` first. This policy reads `.1.8` (a DER UTF8String) and falls back
to `.1.1` (raw bytes); when both are present they must agree, or the certificate is refused (fail
closed). It implements sigstore's `VerificationPolicy` protocol (`verify(cert)` raising
`VerificationError`). There is deliberately no "accept anything" policy here.
"""

from __future__ import annotations

from cryptography import x509
from cryptography.x509.oid import ExtensionOID, ObjectIdentifier
from sigstore.errors import VerificationError

from generator.model import SignerIdentity

OID_ISSUER_V2 = ObjectIdentifier("1.3.6.1.4.1.57264.1.8")
"""Fulcio OIDC issuer, DER-encoded UTF8String (current)."""

OID_ISSUER_V1 = ObjectIdentifier("1.3.6.1.4.1.57264.1.1")
"""Fulcio OIDC issuer, raw bytes (legacy, deprecated)."""

_UTF8STRING_TAG = 0x0C
_OID_NAMES = {
    OID_ISSUER_V2: " (OIDC issuer, .1.8)",
    OID_ISSUER_V1: " (OIDC issuer, .1.1)",
    ExtensionOID.SUBJECT_ALTERNATIVE_NAME: " (subjectAltName)",
}


def _der_utf8string(data: bytes) -> str:
    """Decode one DER UTF8String (tag 0x0C, definite length, nothing trailing)."""
    if len(data) < 2 or data[0] != _UTF8STRING_TAG:
        raise VerificationError("OIDC issuer extension (.1.8) is not a DER UTF8String")
    first = data[1]
    if first < 0x80:
        length, offset = first, 2
    else:
        count = first & 0x7F
        if count == 0 or count > 4:
            raise VerificationError("OIDC issuer extension (.1.8) has a bad DER length")
        # Length bytes cut short need no check of their own: `offset` then lies past the end,
        # so the whole-length check below refuses them with the same words.
        length, offset = int.from_bytes(data[2 : 2 + count], "big"), 2 + count
    if len(data) != offset + length:
        raise VerificationError("OIDC issuer extension (.1.8) has a bad DER length")
    try:
        return data[offset:].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise VerificationError("OIDC issuer extension (.1.8) is not valid UTF-8") from exc


_Extensions = dict[ObjectIdentifier, x509.Extension[x509.ExtensionType]]


def _extensions(cert: x509.Certificate) -> _Extensions:
    """The certificate's extensions by OID, read in one pass. A repeated extension (two OIDC
    issuers, two SAN lists) is refused: which one a reader takes would decide the signer."""
    try:
        extensions = cert.extensions
    except x509.DuplicateExtension as exc:
        raise VerificationError(
            f"certificate repeats the extension {exc.oid.dotted_string}"
            f"{_OID_NAMES.get(exc.oid, '')}; a signer must be named exactly once"
        ) from exc
    except ValueError as exc:
        raise VerificationError(f"certificate extensions are unreadable: {exc}") from exc
    return {ext.oid: ext for ext in extensions}


def _extension_bytes(extensions: _Extensions, oid: ObjectIdentifier) -> bytes | None:
    ext = extensions.get(oid)
    if ext is None:
        return None
    value = ext.value
    if isinstance(value, x509.UnrecognizedExtension):
        return value.value
    return None  # pragma: no cover - cryptography never parses these private OIDs


def certificate_issuer(cert: x509.Certificate) -> str:
    """The OIDC issuer of a Fulcio certificate: `.1.8`, else `.1.1`. Raises if absent or split."""
    return _issuer(_extensions(cert))


def _issuer(extensions: _Extensions) -> str:
    v2_raw = _extension_bytes(extensions, OID_ISSUER_V2)
    v1_raw = _extension_bytes(extensions, OID_ISSUER_V1)
    v2 = _der_utf8string(v2_raw) if v2_raw is not None else None
    v1: str | None = None
    if v1_raw is not None:
        try:
            v1 = v1_raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise VerificationError("OIDC issuer extension (.1.1) is not valid UTF-8") from exc
    if v2 is not None and v1 is not None and v2 != v1:
        raise VerificationError(
            f"certificate carries two different OIDC issuers: {v2!r} (.1.8) and {v1!r} (.1.1)"
        )
    issuer = v2 if v2 is not None else v1
    if not issuer:
        raise VerificationError("certificate carries no OIDC issuer extension (.1.8 or .1.1)")
    return issuer


def certificate_sans(cert: x509.Certificate) -> tuple[str, ...]:
    """Every SAN of a certificate as `kind:value`, in certificate order (for messages)."""
    return tuple(_describe(name) for name in _general_names(_extensions(cert)))


def _general_names(extensions: _Extensions) -> tuple[x509.GeneralName, ...]:
    ext = extensions.get(ExtensionOID.SUBJECT_ALTERNATIVE_NAME)
    if ext is None or not isinstance(ext.value, x509.SubjectAlternativeName):
        return ()
    return tuple(ext.value)


def _describe(name: x509.GeneralName) -> str:
    """`kind:value` for messages; control characters escaped so a reason stays one line."""
    kind = _SAN_KINDS.get(type(name), type(name).__name__)
    raw = name.value
    if isinstance(raw, x509.Name):
        value = raw.rfc4514_string()
    else:
        value = raw if isinstance(raw, str) else str(raw)
    return f"{kind}:{repr(value)[1:-1]}"


_SAN_KINDS: dict[type, str] = {
    x509.RFC822Name: "email",
    x509.UniformResourceIdentifier: "URI",
    x509.DNSName: "DNS",
    x509.IPAddress: "IP",
    x509.OtherName: "otherName",
    x509.DirectoryName: "dirName",
    x509.RegisteredID: "registeredID",
}


def _single_san(extensions: _Extensions) -> str:
    """The one email or URI SAN; any other count or kind is refused with the SANs named."""
    names = _general_names(extensions)
    if len(names) != 1 or not isinstance(
        names[0], x509.RFC822Name | x509.UniformResourceIdentifier
    ):
        found = ", ".join(_describe(n) for n in names) or "none"
        raise VerificationError(
            f"certificate must name exactly one signer (one email or URI SAN); SANs found: {found}"
        )
    return str(names[0].value)


def _hygienic(value: str, what: str) -> str:
    if not value or any(c in value for c in "\n\r\x00"):
        raise VerificationError(f"certificate {what} is empty or contains a line break: {value!r}")
    return value


def certificate_identity(cert: x509.Certificate) -> SignerIdentity:
    """The signer a certificate names: its single email/URI SAN and its single OIDC issuer.

    This is the only source of a bundle's signer; a pointer's claim is compared with it, never
    substituted for it. Raises `VerificationError` naming what was found."""
    extensions = _extensions(cert)
    identity = _single_san(extensions)
    try:
        issuer = _issuer(extensions)
    except VerificationError as exc:
        raise VerificationError(f"{exc} (SAN: {identity})") from exc
    return SignerIdentity(
        issuer=_hygienic(issuer, "issuer"),
        identity=_hygienic(identity, "identity"),
    )


class ExactIdentity:
    """A sigstore verification policy: the only SAN equals `identity`, the issuer `issuer`."""

    def __init__(self, signer: SignerIdentity) -> None:
        if not signer.identity or not signer.issuer:
            raise ValueError("an identity policy needs a non-empty identity and issuer")
        self.signer = signer

    def verify(self, cert: x509.Certificate) -> None:
        """Raise `VerificationError` unless the certificate names exactly this signer."""
        extensions = _extensions(cert)
        issuer = _issuer(extensions)
        if issuer != self.signer.issuer:
            raise VerificationError(
                f"certificate OIDC issuer {issuer!r} does not equal the expected "
                f"{self.signer.issuer!r}"
            )
        identity = _single_san(extensions)
        if identity != self.signer.identity:
            raise VerificationError(
                f"certificate identity (SAN) {identity!r} does not equal the expected "
                f"{self.signer.identity!r}"
            )

    def __repr__(self) -> str:
        return f"ExactIdentity(issuer={self.signer.issuer!r}, identity={self.signer.identity!r})"
