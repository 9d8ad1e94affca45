"""The identity policy: issuer from .1.8 (DER UTF8String) or legacy .1.1, exact SAN match."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from sigstore.errors import VerificationError
from sigstore.verify.policy import Identity

from generator.model import SignerIdentity
from generator.verify.policy import (
    OID_ISSUER_V1,
    OID_ISSUER_V2,
    ExactIdentity,
    certificate_identity,
    certificate_issuer,
)

GH = "https://token.actions.githubusercontent.com"
OAUTH = "https://github.com/login/oauth"
WORKFLOW = "https://github.com/acme/evidence/.github/workflows/sign.yml@refs/heads/main"
KEY = ec.generate_private_key(ec.SECP256R1())


def utf8(text: str) -> bytes:
    raw = text.encode()
    assert len(raw) < 128
    return bytes([0x0C, len(raw)]) + raw


def cert(
    *,
    v2: bytes | None = None,
    v1: bytes | None = None,
    sans: tuple[x509.GeneralName, ...] = (x509.UniformResourceIdentifier(WORKFLOW),),
) -> x509.Certificate:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([]))
        .issuer_name(x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, "test")]))
        .public_key(KEY.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + timedelta(minutes=10))
    )
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(list(sans)), critical=True)
    if v1 is not None:
        builder = builder.add_extension(
            x509.UnrecognizedExtension(OID_ISSUER_V1, v1), critical=False
        )
    if v2 is not None:
        builder = builder.add_extension(
            x509.UnrecognizedExtension(OID_ISSUER_V2, v2), critical=False
        )
    return builder.sign(KEY, hashes.SHA256())


# (case, .1.8 value, .1.1 value, expected issuer or None when refused)
ISSUER_TABLE = [
    ("v2-only", utf8(GH), None, GH),
    ("v1-only", None, GH.encode(), GH),
    ("both-agree", utf8(GH), GH.encode(), GH),
    ("both-disagree", utf8(GH), OAUTH.encode(), None),
    ("neither", None, None, None),
    ("v2-not-utf8string", b"\x04\x03abc", None, None),
    ("v2-bad-length", b"\x0c\x7fabc", None, None),
]


@pytest.mark.parametrize(
    ("case", "v2", "v1", "issuer"), ISSUER_TABLE, ids=[r[0] for r in ISSUER_TABLE]
)
def test_certificate_issuer(
    case: str, v2: bytes | None, v1: bytes | None, issuer: str | None
) -> None:
    c = cert(v2=v2, v1=v1)
    if issuer is None:
        with pytest.raises(VerificationError):
            certificate_issuer(c)
    else:
        assert certificate_issuer(c) == issuer


# (case, .1.8, .1.1, policy issuer, policy identity, accepted)
POLICY_TABLE = [
    ("v2-only-match", utf8(GH), None, GH, WORKFLOW, True),
    ("v1-only-match", None, GH.encode(), GH, WORKFLOW, True),
    ("both-match", utf8(GH), GH.encode(), GH, WORKFLOW, True),
    ("issuer-mismatch-v2", utf8(GH), None, OAUTH, WORKFLOW, False),
    ("issuer-mismatch-v1", None, GH.encode(), OAUTH, WORKFLOW, False),
    ("issuer-split", utf8(GH), OAUTH.encode(), GH, WORKFLOW, False),
    ("identity-mismatch", utf8(GH), GH.encode(), GH, WORKFLOW + "x", False),
    ("identity-prefix-only", utf8(GH), GH.encode(), GH, WORKFLOW.split("@")[0], False),
    ("issuer-trailing-slash", utf8(GH), GH.encode(), GH + "/", WORKFLOW, False),
]


@pytest.mark.parametrize(
    ("case", "v2", "v1", "issuer", "identity", "accepted"),
    POLICY_TABLE,
    ids=[r[0] for r in POLICY_TABLE],
)
def test_exact_identity_policy(
    case: str, v2: bytes | None, v1: bytes | None, issuer: str, identity: str, accepted: bool
) -> None:
    policy = ExactIdentity(SignerIdentity(issuer=issuer, identity=identity))
    c = cert(v2=v2, v1=v1)
    if accepted:
        policy.verify(c)
    else:
        with pytest.raises(VerificationError):
            policy.verify(c)


def test_sigstore_identity_policy_misses_v2_only_issuer() -> None:
    """Why our own policy exists: sigstore's Identity reads only the legacy .1.1 extension."""
    c = cert(v2=utf8(GH))
    with pytest.raises(VerificationError):
        Identity(identity=WORKFLOW, issuer=GH).verify(c)
    ExactIdentity(SignerIdentity(issuer=GH, identity=WORKFLOW)).verify(c)


def test_certificate_identity_email_and_uri() -> None:
    assert certificate_identity(
        cert(v2=utf8(OAUTH), sans=(x509.RFC822Name("a@b.example"),))
    ) == SignerIdentity(issuer=OAUTH, identity="a@b.example")
    assert certificate_identity(cert(v1=GH.encode())) == SignerIdentity(
        issuer=GH, identity=WORKFLOW
    )


@pytest.mark.parametrize(
    "sans",
    [
        (),
        (x509.RFC822Name("a@b.example"), x509.UniformResourceIdentifier(WORKFLOW)),
        (x509.DNSName("example.com"),),
    ],
    ids=["none", "two", "dns-only"],
)
def test_certificate_identity_needs_one_email_or_uri(sans: tuple[x509.GeneralName, ...]) -> None:
    with pytest.raises(VerificationError):
        certificate_identity(cert(v2=utf8(GH), sans=sans))


def test_certificate_identity_refuses_line_breaks() -> None:
    with pytest.raises(VerificationError, match="line break"):
        certificate_identity(
            cert(v2=utf8(GH), sans=(x509.UniformResourceIdentifier(WORKFLOW + "\nx"),))
        )


def test_policy_needs_a_signer() -> None:
    with pytest.raises(ValueError):
        ExactIdentity(SignerIdentity(issuer="", identity=WORKFLOW))
