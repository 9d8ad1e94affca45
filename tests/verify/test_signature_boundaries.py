"""The signature adapter at its edges: which verified time is kept, log index 0, malformed
bundles and payloads, and the words of a claim mismatch.

Each test signs real bundles with the test authority and verifies them with sigstore-python,
except the time-choice table, which feeds sigstore's own timestamp results to the verifier that
remembers them (the choice among several times is pure logic over what sigstore established).
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sigstore._internal.timestamp import TimestampSource, TimestampVerificationResult
from sigstore.verify import Verifier

from generator.model import SignerIdentity
from generator.testing.authority import TestAuthority
from generator.verify.policy import certificate_identity
from generator.verify.signature import (
    SignatureFailure,
    _TimedVerifier,
    bundle_certificate,
    claim_mismatch,
    parse_statement,
    verifier_for,
    verify_signature,
)
from generator.verify.trust import Trust, load_trust
from tests.verify.conftest import SIGNED_AT, SIGNER, EvidenceCase

LOG = TimestampSource.TRANSPARENCY_SERVICE
TSA = TimestampSource.TIMESTAMP_AUTHORITY


def _at(hour: int) -> datetime:
    return datetime(2026, 9, 1, hour, tzinfo=UTC)


# (case, timestamps sigstore established as (source, hour), the hour kept or None)
TIME_TABLE = [
    ("log-only", [(LOG, 5)], 5),
    ("log-over-an-earlier-tsa", [(TSA, 3), (LOG, 5)], 5),
    ("log-over-a-later-tsa", [(LOG, 5), (TSA, 7)], 5),
    ("earliest-of-two-log-times", [(LOG, 6), (LOG, 5)], 5),
    ("earliest-tsa-without-a-log", [(TSA, 7), (TSA, 4)], 4),
    ("nothing-established", [], None),
]


@pytest.mark.parametrize(("case", "found", "kept"), TIME_TABLE, ids=[row[0] for row in TIME_TABLE])
def test_the_log_time_wins_else_the_earliest_signed_timestamp(
    authority_trust: tuple[TestAuthority, Trust],
    case: str,
    found: list[tuple[TimestampSource, int]],
    kept: int | None,
) -> None:
    verifier = verifier_for(authority_trust[1])
    assert isinstance(verifier, _TimedVerifier)
    verifier._times.last = [
        TimestampVerificationResult(source=source, time=_at(hour)) for source, hour in found
    ]
    try:
        assert verifier.verified_time() == (None if kept is None else _at(kept))
    finally:
        verifier.forget_times()


def _signed(authority: TestAuthority, case: EvidenceCase | None = None) -> bytes:
    statement = (case or EvidenceCase().seal()).statement_bytes()
    return bytes(authority.sign_dsse(statement, signer=SIGNER, signed_at=SIGNED_AT))


def _trust(authority: TestAuthority, tmp_path: Path) -> Trust:
    path = tmp_path / "trusted_root.json"
    path.write_bytes(authority.trusted_root_json())
    return load_trust(root_file=path)


def test_a_time_left_from_an_earlier_bundle_is_never_reused(
    authority_trust: tuple[TestAuthority, Trust], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Should sigstore stop telling us the times it established, the evidence has no log time
    (which the build rejects), never the time kept for the bundle verified before it."""
    authority, trust = authority_trust
    verifier = verifier_for(trust)
    assert isinstance(verifier, _TimedVerifier)
    verifier._times.last = [TimestampVerificationResult(source=LOG, time=_at(5))]
    monkeypatch.setattr(_TimedVerifier, "_establish_time", Verifier._establish_time)
    ok = verify_signature(_signed(authority), trust, expected=SIGNER)
    assert ok.logged_at is None


def test_log_index_zero_is_omitted_as_aicr_does(tmp_path: Path) -> None:
    """The first entry of an unsharded log has logIndex 0, which aicr leaves out; index 1 is
    kept."""
    authority = TestAuthority("index-zero", shard_offset=0)
    trust = _trust(authority, tmp_path)
    first = verify_signature(_signed(authority), trust, expected=SIGNER)
    second = verify_signature(_signed(authority), trust, expected=SIGNER)
    assert (first.log_index, second.log_index) == (None, 1)


@pytest.mark.parametrize(
    "certificate",
    [{"rawBytes": 42}, {"rawBytes": "AAAA"}],
    ids=["schema-refused-by-sigstore", "der-refused-by-the-parser"],
)
def test_a_bundle_sigstore_cannot_model_is_malformed_not_a_crash(
    authority_trust: tuple[TestAuthority, Trust], certificate: dict[str, object]
) -> None:
    """Whether sigstore's model or the certificate parser refuses it, a malformed bundle is a
    signature failure with the parser's words, never an exception that ends the build."""
    authority, trust = authority_trust
    raw = json.loads(_signed(authority))
    raw["verificationMaterial"]["certificate"] = certificate
    with pytest.raises(SignatureFailure, match="sigstore bundle is malformed") as caught:
        verify_signature(json.dumps(raw).encode(), trust, expected=SIGNER)
    assert caught.value.hint == ""


def test_a_dsse_signature_that_does_not_match_is_a_failure_with_the_tamper_hint(
    authority_trust: tuple[TestAuthority, Trust],
) -> None:
    authority, trust = authority_trust
    raw = json.loads(_signed(authority))
    signature = bytearray(base64.b64decode(raw["dsseEnvelope"]["signatures"][0]["sig"]))
    signature[-1] ^= 1
    raw["dsseEnvelope"]["signatures"][0]["sig"] = base64.b64encode(bytes(signature)).decode()
    with pytest.raises(SignatureFailure, match="sigstore verification failed") as caught:
        verify_signature(json.dumps(raw).encode(), trust, expected=SIGNER)
    assert caught.value.signer == SIGNER


def test_the_certificate_of_a_bundle_names_its_signer(
    authority_trust: tuple[TestAuthority, Trust],
) -> None:
    """`--bundle-refs` reads a bundle's signer from its certificate before verifying it."""
    leaf = bundle_certificate(_signed(authority_trust[0]))
    assert certificate_identity(leaf) == SIGNER


def test_a_failure_without_a_next_step_has_an_empty_hint() -> None:
    assert SignatureFailure("why").hint == ""


def test_a_claim_wrong_in_both_parts_names_both_apart() -> None:
    claimed = SignerIdentity("https://a.example", "alice@example.com")
    actual = SignerIdentity("https://b.example", "bob@example.com")
    message = claim_mismatch(claimed, actual)
    identity, issuer = message.split("; ")
    assert "'bob@example.com'" in identity and "'alice@example.com'" in identity
    assert "'https://b.example'" in issuer and "'https://a.example'" in issuer


@pytest.mark.parametrize(
    "payload",
    [b"not-base64!!", b"eyJhIjoxfQ==!", b"e30=\x00"],
    ids=["punctuation", "trailing-junk", "nul-byte"],
)
def test_a_payload_that_is_not_strict_base64_is_refused(payload: bytes) -> None:
    """Lenient base64 would drop the stray characters and read a statement the signer never
    wrote; a payload is JSON or strict base64 of JSON."""
    with pytest.raises(SignatureFailure, match="neither JSON nor base64 of JSON"):
        parse_statement(payload)


@pytest.mark.parametrize(
    "payload",
    [b'{"a": ', base64.b64encode(b'{"a": '), base64.b64encode(b"\xff\xfe")],
    ids=["cut-json", "base64-of-cut-json", "base64-of-bytes"],
)
def test_a_payload_that_does_not_parse_is_a_signature_failure(payload: bytes) -> None:
    with pytest.raises(SignatureFailure, match="DSSE payload"):
        parse_statement(payload)
