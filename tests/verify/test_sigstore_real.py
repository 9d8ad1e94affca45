"""All twelve real public-good Sigstore cases through our Sigstore layer, offline.

DSSE cases go through `verify_signature` (the path evidence uses); the message-signature cases
through `Verifier.verify_artifact` with our trust loading and our identity policy.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from sigstore.errors import VerificationError
from sigstore.hashes import Hashed
from sigstore.models import Bundle
from sigstore_models.common.v1 import HashAlgorithm

from generator.model import SignerIdentity
from generator.verify.policy import ExactIdentity
from generator.verify.signature import SignatureFailure, verifier_for, verify_signature
from generator.verify.trust import Trust, load_trust

pytestmark = pytest.mark.fixtures

_CASES_FILE = (
    Path(__file__).resolve().parents[2].parent
    / "shared"
    / "fixtures"
    / "sigstore-real"
    / "cases.json"
)
CASES: list[dict[str, Any]] = json.loads(_CASES_FILE.read_text()) if _CASES_FILE.is_file() else []


def _ids(case: dict[str, Any]) -> str:
    return f"{case['bundle']}-{case['trust']}-{case['expect']}-{case['identity'][-12:]}-{case['issuer'][-8:]}"


@pytest.fixture(scope="module")
def trusts() -> dict[str, Trust]:
    return {mode: load_trust(mode=mode, offline=True) for mode in ("production", "staging")}


def test_twelve_cases_are_present() -> None:
    if not CASES:
        pytest.skip("shared fixtures (sigstore-real) are not present")
    assert len(CASES) == 12


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_real_case(
    case: dict[str, Any], trusts: dict[str, Trust], sigstore_real: Path, no_network: list[Any]
) -> None:
    bundle_json = (sigstore_real / case["bundle"]).read_bytes()
    trust = trusts[case["trust"]]
    signer = SignerIdentity(issuer=case["issuer"], identity=case["identity"])
    if case["kind"] == "dsse":
        if case["expect"] == "valid":
            ok = verify_signature(bundle_json, trust, expected=signer)
            assert ok.signer == signer
            assert ok.log_index is not None and ok.log_index > 0
            if "artifactSha256" in case:
                digests = [s["digest"].get("sha256") for s in ok.statement["subject"]]
                assert case["artifactSha256"] in digests
            assert ok.rekor_v2 == ("rekor-v2" in case["bundle"])
        else:
            with pytest.raises(SignatureFailure):
                verify_signature(bundle_json, trust, expected=signer)
    else:
        # a message signature is never evidence: the evidence path refuses it
        with pytest.raises(SignatureFailure, match="no DSSE envelope"):
            verify_signature(bundle_json, trust, expected=signer)
        bundle = Bundle.from_json(bundle_json) if case["expect"] == "valid" else None
        hashed = Hashed(
            algorithm=HashAlgorithm.SHA2_256, digest=bytes.fromhex(case["artifactSha256"])
        )
        if "artifact" in case:
            import hashlib

            data = (sigstore_real / case["artifact"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() == case["artifactSha256"]
        if case["expect"] == "valid":
            assert bundle is not None
            verifier_for(trust).verify_artifact(hashed, bundle, ExactIdentity(signer))
        else:
            with pytest.raises(Exception) as info:  # noqa: PT011 - InvalidBundle or VerificationError
                verifier_for(trust).verify_artifact(
                    hashed, Bundle.from_json(bundle_json), ExactIdentity(signer)
                )
            assert "sigstore" in type(info.value).__module__
    assert no_network == []


def test_wrong_artifact_digest_is_rejected(trusts: dict[str, Trust], sigstore_real: Path) -> None:
    case = next(c for c in CASES if c["kind"] == "message" and c["expect"] == "valid")
    bundle = Bundle.from_json((sigstore_real / case["bundle"]).read_bytes())
    wrong = Hashed(algorithm=HashAlgorithm.SHA2_256, digest=bytes(32))
    signer = SignerIdentity(issuer=case["issuer"], identity=case["identity"])
    with pytest.raises(VerificationError):
        verifier_for(trusts[case["trust"]]).verify_artifact(wrong, bundle, ExactIdentity(signer))


def test_claimed_log_index_must_equal_first_entry(
    trusts: dict[str, Trust], sigstore_real: Path
) -> None:
    case = CASES[0] if CASES else pytest.skip("no fixtures")
    data = (sigstore_real / case["bundle"]).read_bytes()
    signer = SignerIdentity(issuer=case["issuer"], identity=case["identity"])
    ok = verify_signature(data, trusts["production"], expected=signer)
    assert ok.log_index is not None
    assert (
        verify_signature(
            data, trusts["production"], expected=signer, rekor_log_index=ok.log_index
        ).log_index
        == ok.log_index
    )
    with pytest.raises(SignatureFailure, match="rekorLogIndex"):
        verify_signature(
            data, trusts["production"], expected=signer, rekor_log_index=ok.log_index + 1
        )


def test_no_claimed_signer_reports_certificate_identity(
    trusts: dict[str, Trust], sigstore_real: Path
) -> None:
    case = CASES[0] if CASES else pytest.skip("no fixtures")
    data = (sigstore_real / case["bundle"]).read_bytes()
    ok = verify_signature(data, trusts["production"], expected=None)
    assert ok.signer == SignerIdentity(issuer=case["issuer"], identity=case["identity"])


def test_stale_root_hint_on_wrong_root(trusts: dict[str, Trust], sigstore_real: Path) -> None:
    case = CASES[0] if CASES else pytest.skip("no fixtures")
    data = (sigstore_real / case["bundle"]).read_bytes()
    signer = SignerIdentity(issuer=case["issuer"], identity=case["identity"])
    with pytest.raises(SignatureFailure) as info:
        verify_signature(data, trusts["staging"], expected=signer)
    assert "trust root" in info.value.hint
    assert info.value.signer == signer


def test_socket_guard_blocks_the_network() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        with pytest.raises(OSError, match="blocked"):
            sock.connect(("192.0.2.1", 443))
    finally:
        sock.close()
