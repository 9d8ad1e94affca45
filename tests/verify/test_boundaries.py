"""The identity rules at their edges: issuers and SANs that differ only by letter case or by
Unicode normalization are different signers, and the DER reader of the `.1.8` issuer refuses
every malformed length, exactly at each bound, with a `VerificationError` (never a crash)."""

from __future__ import annotations

import base64
import ipaddress
import unicodedata
from datetime import timedelta
from typing import Any

import pytest
from cryptography import x509
from sigstore.errors import VerificationError

from generator.model import FailureClass, Rejected, SignerIdentity, Verified
from generator.verify._signed import _check_statement
from generator.verify.policy import (
    ExactIdentity,
    certificate_identity,
    certificate_issuer,
    certificate_sans,
)
from generator.verify.signature import (
    FOREIGN_AUTHORITY_HINT,
    STALE_ROOT_HINT,
    TAMPERED_HINT,
    SignatureFailure,
    SignatureOk,
    _first_entry,
    claim_mismatch,
    parse_statement,
    stale_root_hint,
    verify_signature,
)
from tests.verify.conftest import SIGNED_AT
from tests.verify.test_identity import _pipeline, _sign
from tests.verify.test_policy import cert, utf8

ISSUER = "https://token.actions.githubusercontent.com"
WORKFLOW = "https://github.com/acme/evidence/.github/workflows/sign.yml@refs/heads/main"
CAFE_NFC = unicodedata.normalize("NFC", "https://issuer.example/caf\u00e9")
CAFE_NFD = unicodedata.normalize("NFD", CAFE_NFC)


def _der(text: bytes, long_form: int = 0) -> bytes:
    """A UTF8String with a short (0) or `long_form`-byte definite length."""
    if long_form == 0:
        return bytes([0x0C, len(text)]) + text
    return bytes([0x0C, 0x80 | long_form]) + len(text).to_bytes(long_form, "big") + text


def _leaf(issuer: str = ISSUER, san: x509.GeneralName | None = None) -> x509.Certificate:
    return cert(v2=_der(issuer.encode()), sans=(san or x509.UniformResourceIdentifier(WORKFLOW),))


# ------------------------------------------------------------------ letter case and normalization


@pytest.mark.parametrize(
    "policy_issuer",
    [
        ISSUER.upper(),
        ISSUER.replace("token", "Token"),
        ISSUER + "/",
        " " + ISSUER,
    ],
    ids=["upper", "one-letter", "trailing-slash", "leading-space"],
)
def test_an_issuer_differing_only_by_case_or_a_character_is_refused(policy_issuer: str) -> None:
    policy = ExactIdentity(SignerIdentity(policy_issuer, WORKFLOW))
    with pytest.raises(VerificationError, match="OIDC issuer"):
        policy.verify(_leaf())


@pytest.mark.parametrize(
    "policy_identity",
    [
        WORKFLOW.upper(),
        WORKFLOW.replace("acme", "ACME"),
        WORKFLOW.replace("main", "Main"),
    ],
    ids=["upper", "org-upper", "ref-one-letter"],
)
def test_a_san_differing_only_by_letter_case_is_refused(policy_identity: str) -> None:
    policy = ExactIdentity(SignerIdentity(ISSUER, policy_identity))
    with pytest.raises(VerificationError, match="identity"):
        policy.verify(_leaf())


def test_an_email_san_differing_only_by_letter_case_is_refused() -> None:
    leaf = _leaf(san=x509.RFC822Name("alice@example.com"))
    ExactIdentity(SignerIdentity(ISSUER, "alice@example.com")).verify(leaf)
    for other in ("Alice@example.com", "alice@EXAMPLE.com"):
        with pytest.raises(VerificationError):
            ExactIdentity(SignerIdentity(ISSUER, other)).verify(leaf)


@pytest.mark.parametrize(
    ("signed", "claimed"),
    [(CAFE_NFC, CAFE_NFD), (CAFE_NFD, CAFE_NFC)],
    ids=["nfc-cert", "nfd-cert"],
)
def test_issuers_differing_only_by_unicode_normalization_are_different(
    signed: str, claimed: str
) -> None:
    leaf = _leaf(issuer=signed)
    assert certificate_issuer(leaf) == signed  # read byte-exactly, never normalized
    ExactIdentity(SignerIdentity(signed, WORKFLOW)).verify(leaf)
    with pytest.raises(VerificationError, match="OIDC issuer"):
        ExactIdentity(SignerIdentity(claimed, WORKFLOW)).verify(leaf)


def test_the_exact_signer_is_accepted_and_read_back() -> None:
    leaf = _leaf()
    ExactIdentity(SignerIdentity(ISSUER, WORKFLOW)).verify(leaf)
    assert certificate_identity(leaf) == SignerIdentity(ISSUER, WORKFLOW)


def test_claim_mismatch_names_a_case_only_difference() -> None:
    signer = SignerIdentity(ISSUER, "alice@example.com")
    only_identity = claim_mismatch(SignerIdentity(ISSUER, "Alice@example.com"), signer)
    assert "identity (SAN)" in only_identity and "OIDC issuer" not in only_identity
    only_issuer = claim_mismatch(SignerIdentity(ISSUER.upper(), "alice@example.com"), signer)
    assert "OIDC issuer" in only_issuer and "identity (SAN)" not in only_issuer
    both = claim_mismatch(SignerIdentity(ISSUER.upper(), "Alice@example.com"), signer)
    assert "identity (SAN)" in both and "OIDC issuer" in both


@pytest.mark.parametrize(
    "payload_type",
    [
        "application/vnd.in-toto+JSON",
        "Application/vnd.in-toto+json",
        "APPLICATION/VND.IN-TOTO+JSON",
    ],
    ids=["suffix-upper", "first-letter", "all-upper"],
)
def test_a_dsse_payload_type_differing_only_by_letter_case_is_refused(
    authority_trust: Any, case: Any, payload_type: str
) -> None:
    """sigstore verifies the signature over whatever payloadType the envelope names; only this
    exact check says the payload is an in-toto Statement."""
    authority, trust = authority_trust
    signer = SignerIdentity(ISSUER, WORKFLOW)
    bundle = bytes(
        authority.sign_dsse(
            case.statement_bytes(), signer=signer, signed_at=SIGNED_AT, payload_type=payload_type
        )
    )
    with pytest.raises(SignatureFailure, match="DSSE payloadType is") as caught:
        verify_signature(bundle, trust, expected=signer)
    assert repr(payload_type) in caught.value.detail


def _unreadable_san_leaf() -> x509.Certificate:
    """A leaf whose SAN extension is truncated DER: `cryptography` parses extensions lazily and
    raises `ValueError` when they are first read."""
    from datetime import UTC, datetime

    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.x509.oid import ExtensionOID

    from tests.verify.test_policy import KEY

    now = datetime(2026, 1, 1, tzinfo=UTC)
    built = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([]))
        .issuer_name(x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, "test")]))
        .public_key(KEY.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + timedelta(minutes=10))
        .add_extension(
            x509.UnrecognizedExtension(ExtensionOID.SUBJECT_ALTERNATIVE_NAME, b"\x30\x03\x86\x01"),
            critical=True,
        )
        .sign(KEY, hashes.SHA256())
    )
    return x509.load_der_x509_certificate(built.public_bytes(serialization.Encoding.DER))


@pytest.mark.parametrize(
    "read",
    [
        certificate_identity,
        certificate_issuer,
        certificate_sans,
        lambda leaf: ExactIdentity(SignerIdentity(ISSUER, WORKFLOW)).verify(leaf),
    ],
    ids=["identity", "issuer", "sans", "policy"],
)
def test_a_certificate_with_unreadable_extensions_is_refused_not_crashed_on(read: Any) -> None:
    """A malformed extension is a refusal sigstore and the pipeline report (with the parser's
    words), never an exception that would end the build."""
    with pytest.raises(VerificationError, match="certificate extensions are unreadable"):
        read(_unreadable_san_leaf())


# ------------------------------------------------------------------ the DER UTF8String reader

ACCEPTED = [
    ("short-127", _der(b"i" * 127), "i" * 127),
    ("long-1-byte-128", _der(b"i" * 128, long_form=1), "i" * 128),
    ("long-2-bytes", _der(b"i" * 300, long_form=2), "i" * 300),
    ("long-4-bytes", _der(b"i" * 5, long_form=4), "i" * 5),
    ("long-form-short-value", _der(b"abc", long_form=1), "abc"),
]


@pytest.mark.parametrize(("name", "raw", "issuer"), ACCEPTED, ids=[a[0] for a in ACCEPTED])
def test_a_well_formed_der_issuer_is_read(name: str, raw: bytes, issuer: str) -> None:
    assert certificate_issuer(cert(v2=raw)) == issuer


REFUSED = [
    ("tag-only", b"\x0c"),
    ("empty-string", b"\x0c\x00"),
    ("octet-string-tag", b"\x04\x03abc"),
    ("length-one-short", b"\x0c\x04abc"),
    ("length-one-long", b"\x0c\x02abc"),
    ("trailing-byte", _der(b"abc") + b"x"),
    ("long-form-zero-count", b"\x0c\x80abc"),
    ("long-form-five-bytes", b"\x0c\x85\x00\x00\x00\x00\x03abc"),
    ("long-form-truncated-count", b"\x0c\x82\x00"),
    ("long-form-one-over", b"\x0c\x81\x04abc"),
    ("long-form-one-under", b"\x0c\x81\x02abc"),
    ("short-form-128-claimed", b"\x0c\x80" + b"i" * 128),
    ("not-utf8", b"\x0c\x02\xff\xfe"),
]


@pytest.mark.parametrize(("name", "raw"), REFUSED, ids=[r[0] for r in REFUSED])
def test_a_malformed_der_issuer_is_refused(name: str, raw: bytes) -> None:
    with pytest.raises(VerificationError):
        certificate_issuer(cert(v2=raw))


@pytest.mark.parametrize(
    "raw",
    [b"\x0c", b"\x0c\x80abc", b"\x0c\x82\x00"],
    ids=["tag-only", "zero-count", "truncated-count"],
)
def test_a_truncated_der_issuer_is_named_as_such(raw: bytes) -> None:
    with pytest.raises(VerificationError, match=r"\(\.1\.8\)"):
        certificate_issuer(cert(v2=raw))


@pytest.mark.parametrize("raw", [b"\x0c\x00", b"\x0c\x81\x00"], ids=["short", "long-form"])
def test_an_empty_der_issuer_is_no_issuer(raw: bytes) -> None:
    """A well-formed but empty UTF8String names no issuer (not a malformed one), whichever
    length form says it is empty."""
    with pytest.raises(VerificationError, match="no OIDC issuer"):
        certificate_issuer(cert(v2=raw))


def test_a_legacy_issuer_that_is_not_utf8_is_refused_beside_a_good_v2() -> None:
    """A readable `.1.8` does not excuse an unreadable `.1.1`: which one a reader trusts
    would decide the signer."""
    with pytest.raises(VerificationError, match=r"\(\.1\.1\) is not valid UTF-8"):
        certificate_issuer(cert(v2=utf8(ISSUER), v1=b"\xff\xfe"))


def test_a_der_issuer_that_is_not_utf8_is_named_as_such() -> None:
    with pytest.raises(VerificationError, match=r"\(\.1\.8\) is not valid UTF-8"):
        certificate_issuer(cert(v2=b"\x0c\x02\xff\xfe"))


def test_every_san_is_named_in_certificate_order() -> None:
    leaf = cert(
        v2=utf8(ISSUER),
        sans=(
            x509.RFC822Name("alice@example.com"),
            x509.UniformResourceIdentifier(WORKFLOW),
            x509.DNSName("example.com"),
            x509.IPAddress(ipaddress.ip_address("192.0.2.7")),
            x509.DirectoryName(x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, "ci")])),
        ),
    )
    assert certificate_sans(leaf) == (
        "email:alice@example.com",
        f"URI:{WORKFLOW}",
        "DNS:example.com",
        "IP:192.0.2.7",
        "dirName:CN=ci",
    )


def test_the_identity_policy_names_its_signer_when_printed() -> None:
    """sigstore names the policy in its own errors; the repr must say whom it expected."""
    shown = repr(ExactIdentity(SignerIdentity(issuer=ISSUER, identity=WORKFLOW)))
    assert shown == f"ExactIdentity(issuer={ISSUER!r}, identity={WORKFLOW!r})"


@pytest.mark.parametrize(
    ("issuer", "san", "part"),
    [
        (ISSUER + "\n", WORKFLOW, "issuer"),
        (ISSUER + "\r", WORKFLOW, "issuer"),
        (ISSUER, "alice@example.com\n", "identity"),
    ],
)
def test_a_line_break_in_the_signer_is_refused_naming_the_part(
    issuer: str, san: str, part: str
) -> None:
    name: x509.GeneralName = (
        x509.RFC822Name(san) if "@" in san else x509.UniformResourceIdentifier(san)
    )
    with pytest.raises(VerificationError, match=f"certificate {part} is empty or contains"):
        certificate_identity(cert(v2=utf8(issuer), sans=(name,)))


def test_legacy_issuer_that_is_not_utf8_is_refused() -> None:
    with pytest.raises(VerificationError, match=r"\.1\.1"):
        certificate_issuer(cert(v1=b"\xff\xfe"))


def test_an_empty_legacy_issuer_is_no_issuer() -> None:
    with pytest.raises(VerificationError, match="no OIDC issuer"):
        certificate_issuer(cert(v1=b""))


def test_agreeing_issuers_must_agree_exactly() -> None:
    assert certificate_issuer(cert(v2=utf8(ISSUER), v1=ISSUER.encode())) == ISSUER
    with pytest.raises(VerificationError, match="two different OIDC issuers"):
        certificate_issuer(cert(v2=utf8(ISSUER), v1=ISSUER.upper().encode()))


# ------------------------------------------------------------------ the subject digest binding

PULLED = "0123456789abcdef" * 4


def _ok(
    subject_hex: object,
    ptype: str = "https://aicr.run/recipe-evidence/v3",
    predicate: object = None,
) -> SignatureOk:
    statement = {
        "subject": [{"name": "bundle", "digest": {"sha256": subject_hex}}],
        "predicateType": ptype,
        "predicate": {} if predicate is None else predicate,
    }
    return SignatureOk(
        signer=SignerIdentity(ISSUER, WORKFLOW), log_index=1, statement=statement, rekor_v2=False
    )


def _near(hex_text: str, position: int) -> str:
    digit = "0" if hex_text[position] != "0" else "1"
    return hex_text[:position] + digit + hex_text[position + 1 :]


def test_a_subject_equal_to_the_pulled_and_pointer_digest_binds() -> None:
    _check_statement(_ok(PULLED), PULLED, PULLED)


@pytest.mark.parametrize("position", [0, 11, 12, 62, 63])
@pytest.mark.parametrize("against", ["pulled", "pointer"])
def test_a_subject_one_hex_digit_from_the_bundle_does_not_bind(position: int, against: str) -> None:
    near = _near(PULLED, position)
    pulled, pointer = (near, PULLED) if against == "pulled" else (PULLED, near)
    with pytest.raises(SignatureFailure, match=against if against == "pointer" else "pulled"):
        _check_statement(_ok(PULLED), pulled, pointer)


@pytest.mark.parametrize(
    "subject", [PULLED.upper(), PULLED[:63], PULLED + "0", "", None, 7, "sha256:" + PULLED]
)
def test_a_subject_that_is_not_64_lowercase_hex_does_not_bind(subject: object) -> None:
    with pytest.raises(SignatureFailure):
        _check_statement(_ok(subject), PULLED, PULLED)


@pytest.mark.parametrize(
    ("ptype", "predicate", "ok"),
    [
        ("https://aicr.run/recipe-evidence/v1", {}, True),
        ("https://aicr.run/recipe-evidence/v1", {"profile": {}}, False),
        ("https://aicr.run/recipe-evidence/v2", {}, False),
        (
            "https://aicr.run/recipe-evidence/v2",
            {"profile": {"selection": "gpu=h100", "policyDescriptorIdentity": "p"}},
            True,
        ),
        (
            "https://aicr.run/recipe-evidence/v2",
            {"profile": {"selection": "gpu=h100", "policyDescriptorIdentity": ""}},
            False,
        ),
        ("https://aicr.run/recipe-evidence/v3", {}, True),
        ("https://aicr.run/recipe-evidence/V3", {}, False),
        ("https://aicr.run/recipe-evidence/v4", {}, False),
    ],
)
def test_the_predicate_type_must_be_coherent(ptype: str, predicate: object, ok: bool) -> None:
    if ok:
        _check_statement(_ok(PULLED, ptype, predicate), PULLED, PULLED)
    else:
        with pytest.raises(SignatureFailure):
            _check_statement(_ok(PULLED, ptype, predicate), PULLED, PULLED)


# ------------------------------------------------------------------ the DSSE payload

STATEMENT = b'{"subject": [{"digest": {"sha256": "aa"}}], "predicateType": "t", "predicate": {}}'


@pytest.mark.parametrize("payload", [STATEMENT, base64.b64encode(STATEMENT), b"  \n" + STATEMENT])
def test_a_statement_is_read_from_json_or_base64_of_json(payload: bytes) -> None:
    assert parse_statement(payload)["predicateType"] == "t"


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b"", "DSSE payload is empty"),
        (b" \n", "DSSE payload is empty"),
        (b"not base64!", "neither JSON nor base64"),
        (b"[1, 2]", "not a JSON object"),
        (base64.b64encode(b"[1, 2]"), "not a JSON object"),
        (b'{"predicateType": "t"}', "has no subject"),
        (b'{"subject": [], "predicateType": "t"}', "has no subject"),
        (b'{"subject": {"a": 1}, "predicateType": "t"}', "has no subject"),
        (b'{"subject": [{}]}', "has no predicateType"),
        (b'{"subject": [{}], "predicateType": ""}', "has no predicateType"),
        (b'{"subject": [{}], "predicateType": 3}', "has no predicateType"),
        (b'{"subject": [{}], "predicateType": "t", "predicate": []}', "predicate is not an object"),
    ],
)
def test_a_payload_that_is_not_a_statement_is_a_signature_failure(
    payload: bytes, reason: str
) -> None:
    with pytest.raises(SignatureFailure) as info:
        parse_statement(payload)
    assert reason in info.value.detail


# ------------------------------------------------------------------ the first tlog entry


def _material(entries: object) -> dict[str, object]:
    return {"verificationMaterial": {"tlogEntries": entries}}


@pytest.mark.parametrize(
    "entries",
    [[], None, {"logIndex": 1}, ["entry"], [None]],
    ids=["empty", "missing", "not-a-list", "string", "null"],
)
def test_a_bundle_without_a_usable_tlog_entry_is_refused(entries: object) -> None:
    with pytest.raises(SignatureFailure, match="no transparency-log entry"):
        _first_entry(_material(entries))
    with pytest.raises(SignatureFailure, match="no transparency-log entry"):
        _first_entry({})


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"logIndex": "7", "inclusionPromise": {"x": 1}}, (7, False)),
        ({"logIndex": 7, "inclusionPromise": {"x": 1}}, (7, False)),
        ({"inclusionPromise": {"x": 1}}, (0, False)),
        ({"logIndex": "7", "inclusionProof": {"logIndex": "7"}}, (7, True)),
        ({"logIndex": "0", "inclusionProof": {}}, (0, True)),
    ],
)
def test_the_first_entry_gives_its_index_and_log_version(
    entry: dict[str, object], expected: tuple[int, bool]
) -> None:
    assert _first_entry(_material([entry, {"logIndex": "99"}])) == expected


@pytest.mark.parametrize(
    "entry",
    [
        {"logIndex": "7", "inclusionProof": {"logIndex": "8"}},
        {"logIndex": "7", "inclusionProof": {"logIndex": "6"}},
        {"logIndex": "7"},
        {"logIndex": True, "inclusionPromise": {"x": 1}},
        {"logIndex": "-1", "inclusionPromise": {"x": 1}},
        {"logIndex": 1.5, "inclusionPromise": {"x": 1}},
    ],
    ids=["v2-index-above", "v2-index-below", "v2-no-proof", "bool", "negative", "float"],
)
def test_a_first_entry_with_an_unbound_or_bad_index_is_refused(entry: dict[str, object]) -> None:
    with pytest.raises(SignatureFailure):
        _first_entry(_material([entry]))


# ------------------------------------------------------------------ the stale-root hint


@pytest.mark.parametrize(
    "message",
    [
        "x509: certificate signed by unknown authority",
        "CertValidationError: root certificate",
        "Signature does not match",
        "failed to verify SCT",
        "checkpoint: invalid signature",
    ],
)
def test_unknown_authority_errors_name_forgery_before_a_stale_root(message: str) -> None:
    hint = stale_root_hint(message)
    assert hint == FOREIGN_AUTHORITY_HINT
    assert hint.index("forged") < hint.index("stale")


def test_a_root_without_timestamp_authorities_gets_the_refresh_hint() -> None:
    assert stale_root_hint("no timestamp authorities in the trusted root") == STALE_ROOT_HINT


@pytest.mark.parametrize(
    "message",
    [
        "DSSE: invalid signature",
        "SET: invalid inclusion promise",
        "inclusion proof: invalid root hash",
        "certificate not valid at validation time",
        "log entry signatures do not match bundle",
        "subject does not match pulled artifact digest",
        # a tampered entry whose wording also names a signature mismatch
        "SET: invalid inclusion promise; signature does not match",
    ],
)
def test_a_tampered_bundle_is_never_blamed_on_a_stale_root(message: str) -> None:
    hint = stale_root_hint(message)
    assert hint == TAMPERED_HINT
    assert "stale" not in hint and "--offline" not in hint


@pytest.mark.parametrize(
    "message",
    [
        "",
        "DSSE payloadType mismatch",
        "in-toto statement has no subject",
        "x50",
        "certificate",
    ],
)
def test_other_errors_get_no_refresh_hint(message: str) -> None:
    assert stale_root_hint(message) == ""


# ------------------------------------------------------------------ the sigstore bundle byte cap

TEN_MIB = 10 * 1024 * 1024


def _json_of_size(size: int) -> bytes:
    """A JSON object with no DSSE envelope, padded with whitespace to `size` bytes."""
    return b"{" + b" " * (size - 2) + b"}"


def test_a_sigstore_bundle_of_exactly_10_mib_passes_the_size_check(authority_trust: Any) -> None:
    _authority, trust = authority_trust
    with pytest.raises(SignatureFailure) as info:
        verify_signature(_json_of_size(TEN_MIB), trust, expected=None)
    assert "DSSE envelope" in info.value.detail  # it got as far as reading the bundle


def test_a_sigstore_bundle_one_byte_over_10_mib_is_refused_unread(authority_trust: Any) -> None:
    _authority, trust = authority_trust
    with pytest.raises(SignatureFailure) as info:
        verify_signature(_json_of_size(TEN_MIB + 1), trust, expected=None)
    assert info.value.detail == (
        f"sigstore bundle is {TEN_MIB + 1} bytes, over the {TEN_MIB}-byte limit"
    )


# ------------------------------------------------------------------ real bundles


@pytest.mark.parametrize(
    "claimed",
    [
        SignerIdentity("https://github.com/login/oauth", "Alice@example.com"),
        SignerIdentity("https://github.com/login/OAuth", "alice@example.com"),
        SignerIdentity("https://github.com/login/oauth", "alice@example.com\u200b"),
    ],
    ids=["identity-case", "issuer-case", "zero-width"],
)
def test_a_real_bundle_claimed_by_a_case_variant_of_its_signer_is_rejected(
    authority_trust: Any, case: Any, claimed: SignerIdentity
) -> None:
    signer = SignerIdentity("https://github.com/login/oauth", "alice@example.com")
    bundle = _sign(authority_trust, case, signer)
    assert isinstance(_pipeline(authority_trust, case, bundle, signer), Verified)
    verdict = _pipeline(authority_trust, case, bundle, claimed)
    assert isinstance(verdict, Rejected), verdict
    assert verdict.cause.failure_class is FailureClass.SIGNATURE


@pytest.mark.parametrize("rekor_v2", [False, True], ids=["rekor-v1-log-time", "rekor-v2-tsa-time"])
def test_a_verified_bundle_carries_the_time_sigstore_verified(
    authority_trust: Any, case: Any, rekor_v2: bool
) -> None:
    """The log's integrated time (v1) or the TSA's signed time (v2), never the claimed one."""
    authority, trust = authority_trust
    signer = SignerIdentity("https://github.com/login/oauth", "alice@example.com")
    bundle = bytes(
        authority.sign_dsse(
            case.statement_bytes(), signer=signer, signed_at=SIGNED_AT, rekor_v2=rekor_v2
        )
    )
    ok = verify_signature(bundle, trust, expected=signer)
    assert ok.logged_at == (SIGNED_AT + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert ok.rekor_v2 is rekor_v2


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"[1, 2]", "sigstore bundle is not a JSON object"),
        (b'"dsseEnvelope"', "sigstore bundle is not a JSON object"),
        (b"{}", "carries no DSSE envelope"),
        (b"{", "sigstore bundle"),
    ],
)
def test_a_sigstore_bundle_that_is_not_an_object_is_named_as_such(
    authority_trust: Any, raw: bytes, reason: str
) -> None:
    _authority, trust = authority_trust
    with pytest.raises(SignatureFailure) as info:
        verify_signature(raw, trust, expected=None)
    assert reason in info.value.detail
