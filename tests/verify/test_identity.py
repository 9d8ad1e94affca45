"""One certificate, one signer: a leaf must name exactly one email/URI SAN and one OIDC issuer,
and the pointer's claim is compared with that signer, never substituted for it.

Every hostile leaf here is issued by the real test authority and verified by the real
sigstore-python verifier through `verify_signature` and the pipeline.
"""

from __future__ import annotations

from typing import Any

import pytest

from generator.model import FailureClass, Rejected, SignerIdentity, Verified
from generator.testing.authority import LeafShape, SigningOptions
from generator.verify.pipeline import verify_pointer
from generator.verify.signature import SignatureFailure, verify_signature
from tests.verify.conftest import SIGNED_AT, SIGNER, EvidenceCase, FakeSource, first_log_index

OAUTH = "https://github.com/login/oauth"
ALICE = SignerIdentity(OAUTH, "alice@example.com")
BOB = SignerIdentity(OAUTH, "bob@example.com")
WORKFLOW = "https://github.com/acme/aicr-evidence/.github/workflows/sign.yml@refs/heads/main"
OTHER_WORKFLOW = "https://github.com/acme/aicr-evidence/.github/workflows/other.yml@refs/heads/main"


def _sign(
    authority_trust: Any, case: EvidenceCase, signer: SignerIdentity, shape: LeafShape | None = None
) -> bytes:
    authority, _trust = authority_trust
    return bytes(
        authority.sign_dsse(
            case.statement_bytes(),
            signer=signer,
            signed_at=SIGNED_AT,
            options=SigningOptions(leaf=shape),
        )
    )


def _pipeline(
    authority_trust: Any, case: EvidenceCase, bundle: bytes, claimed: SignerIdentity | None
) -> Any:
    _authority, trust = authority_trust
    pointer, location = case.pointer(
        signer=claimed, log_index=first_log_index(bundle) if claimed else None
    )
    return verify_pointer(pointer, location, FakeSource(case.materialized(bundle)), trust)


# (case, leaf shape, claimed signer, words the reason must contain)
MULTI_SAN = [
    (
        "two-emails",
        LeafShape(sans=("alice@example.com", "bob@example.com")),
        ALICE,
        ("email:alice@example.com", "email:bob@example.com"),
    ),
    (
        "two-emails-claim-second",
        LeafShape(sans=("alice@example.com", "bob@example.com")),
        BOB,
        ("email:alice@example.com", "email:bob@example.com"),
    ),
    (
        "email-and-uri",
        LeafShape(sans=("alice@example.com", WORKFLOW)),
        ALICE,
        ("email:alice@example.com", f"URI:{WORKFLOW}"),
    ),
    (
        "two-uris",
        LeafShape(sans=(WORKFLOW, OTHER_WORKFLOW)),
        SignerIdentity(OAUTH, OTHER_WORKFLOW),
        (f"URI:{WORKFLOW}", f"URI:{OTHER_WORKFLOW}"),
    ),
    ("no-san", LeafShape(sans=()), ALICE, ("SANs found: none",)),
    ("no-san-no-claim", LeafShape(sans=()), None, ("SANs found: none",)),
    (
        "two-emails-no-claim",
        LeafShape(sans=("alice@example.com", "bob@example.com")),
        None,
        ("email:alice@example.com", "email:bob@example.com"),
    ),
    (
        "no-issuer",
        LeafShape(issuers_v2=(), omit_issuer_v1=True),
        ALICE,
        ("no OIDC issuer", "alice@example.com"),
    ),
    (
        "two-issuer-extensions",
        LeafShape(issuers_v2=(OAUTH, "https://evil.example")),
        ALICE,
        ("repeats the extension 1.3.6.1.4.1.57264.1.8", "OIDC issuer"),
    ),
    (
        "split-issuers",
        LeafShape(issuer_v1="https://evil.example"),
        ALICE,
        ("two different OIDC issuers", "alice@example.com"),
    ),
]


@pytest.mark.parametrize(
    ("name", "shape", "claimed", "words"), MULTI_SAN, ids=[c[0] for c in MULTI_SAN]
)
def test_ambiguous_certificate_is_rejected_naming_what_it_carries(
    authority_trust: Any,
    case: EvidenceCase,
    name: str,
    shape: LeafShape,
    claimed: SignerIdentity | None,
    words: tuple[str, ...],
) -> None:
    bundle = _sign(authority_trust, case, claimed or ALICE, shape)
    with pytest.raises(SignatureFailure) as caught:
        verify_signature(
            bundle,
            authority_trust[1],
            expected=claimed,
            rekor_log_index=first_log_index(bundle) if claimed else None,
        )
    for word in words:
        assert word in caught.value.detail, caught.value.detail
    verdict = _pipeline(authority_trust, case, bundle, claimed)
    assert isinstance(verdict, Rejected), verdict
    assert verdict.cause.failure_class is FailureClass.SIGNATURE
    assert verdict.steps[1].status.value == "failed"
    for word in words:
        assert word in verdict.cause.detail, verdict.cause.detail


@pytest.mark.parametrize("claimed", [ALICE, None], ids=["claimed", "unclaimed"])
def test_single_san_leaf_still_verifies(
    authority_trust: Any, case: EvidenceCase, claimed: SignerIdentity | None
) -> None:
    bundle = _sign(authority_trust, case, ALICE)
    ok = verify_signature(bundle, authority_trust[1], expected=claimed)
    assert ok.signer == ALICE
    verdict = _pipeline(authority_trust, case, bundle, claimed)
    assert isinstance(verdict, Verified), verdict
    assert verdict.signer == ALICE


@pytest.mark.parametrize(
    ("claimed", "words"),
    [
        (BOB, ("'alice@example.com'", "'bob@example.com'", "certificate identity (SAN)")),
        (
            SignerIdentity("https://evil.example", "alice@example.com"),
            ("OIDC issuer", "'https://evil.example'", f"'{OAUTH}'"),
        ),
    ],
    ids=["other-identity", "other-issuer"],
)
def test_claim_other_than_the_single_san_is_rejected(
    authority_trust: Any, case: EvidenceCase, claimed: SignerIdentity, words: tuple[str, ...]
) -> None:
    bundle = _sign(authority_trust, case, ALICE)
    verdict = _pipeline(authority_trust, case, bundle, claimed)
    assert isinstance(verdict, Rejected), verdict
    assert verdict.cause.failure_class is FailureClass.SIGNATURE
    for word in words:
        assert word in verdict.cause.detail, verdict.cause.detail


def test_one_multi_san_key_cannot_be_two_signers(authority_trust: Any, case: EvidenceCase) -> None:
    """The issue's attack at the verifier: one key, two pointers, two claimed identities."""
    shape = LeafShape(sans=("alice@example.com", "bob@example.com"))
    authority, _trust = authority_trust
    verdicts = []
    for claimed in (ALICE, BOB):
        bundle = bytes(
            authority.sign_dsse(
                case.statement_bytes(),
                signer=claimed,
                signed_at=SIGNED_AT,
                options=SigningOptions(leaf=shape, key_label="shared-multi-san"),
            )
        )
        verdicts.append(_pipeline(authority_trust, case, bundle, claimed))
    assert not any(isinstance(v, Verified) for v in verdicts), verdicts
    assert all(v.cause.failure_class is FailureClass.SIGNATURE for v in verdicts)


def test_a_dns_san_beside_the_email_is_a_second_name() -> None:
    """Only one SAN of any kind: a DNS name next to the email is refused, and named."""
    from cryptography import x509
    from sigstore.errors import VerificationError

    from generator.verify.policy import certificate_identity
    from tests.verify.test_policy import GH, cert, utf8

    leaf = cert(v2=utf8(GH), sans=(x509.RFC822Name("a@b.example"), x509.DNSName("b.example")))
    with pytest.raises(VerificationError, match="email:a@b.example, DNS:b.example"):
        certificate_identity(leaf)


def test_the_default_signer_is_unchanged(authority_trust: Any, case: EvidenceCase) -> None:
    """The shared fixtures' signer (a workflow URI) still verifies with its own claim."""
    bundle = _sign(authority_trust, case, SIGNER)
    assert verify_signature(bundle, authority_trust[1], expected=SIGNER).signer == SIGNER


def test_cached_verdicts_of_older_rules_are_not_reused() -> None:
    """A verdict cached before these rules (say, a multi-SAN bundle Verified) is keyed apart."""
    from generator.verify._rules import RULES_VERSION
    from generator.verify.cache import verifier_version

    assert RULES_VERSION == "signature-rules/2"
    assert f"; {RULES_VERSION}; " in verifier_version()


@pytest.mark.parametrize(
    "claimed",
    [
        SignerIdentity(OAUTH, "Alice@example.com"),
        SignerIdentity(OAUTH, "alice@EXAMPLE.COM"),
        SignerIdentity(OAUTH.replace("github", "GitHub"), "alice@example.com"),
        SignerIdentity(OAUTH.upper(), "ALICE@EXAMPLE.COM"),
    ],
    ids=["identity-first-letter", "identity-domain", "issuer-one-word", "both-upper"],
)
def test_a_claim_differing_from_the_certificate_only_by_letter_case_is_refused(
    authority_trust: Any, case: EvidenceCase, claimed: SignerIdentity
) -> None:
    """A signer is its exact (issuer, identity): a claim in another letter case names another
    signer (another allowlist entry, another consensus vote), so it never matches the leaf."""
    bundle = _sign(authority_trust, case, ALICE)
    with pytest.raises(SignatureFailure, match="does not equal the pointer's claimed") as caught:
        verify_signature(bundle, authority_trust[1], expected=claimed)
    assert caught.value.signer == ALICE
    verdict = _pipeline(authority_trust, case, bundle, claimed)
    assert isinstance(verdict, Rejected), verdict
    assert verdict.cause.failure_class is FailureClass.SIGNATURE
