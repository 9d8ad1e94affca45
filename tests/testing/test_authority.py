"""The test authority's bundles through the REAL sigstore Verifier (sigstore-offline.md 6).

Must-accept cases of 6.1 and every 6.2 tamper case that sigstore itself catches, each asserting
the specific error. Policies are always real identity policies, never UnsafeNoOp.
"""

from __future__ import annotations

import base64
import copy
import importlib.resources
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from sigstore.dsse import InvalidEnvelope
from sigstore.errors import CertValidationError, VerificationError
from sigstore.models import Bundle, ClientTrustConfig, InvalidBundle, TrustedRoot
from sigstore.verify import Verifier
from sigstore.verify.policy import AllOf, Identity, OIDCIssuer, OIDCIssuerV2

from generator.model import SignerIdentity
from generator.testing.authority import SigningOptions, TestAuthority
from generator.testing.merkle import MerkleTree, leaf_hash, root_from_proof
from tests.testing.conftest import EMAIL, SHARD, SIGNED_AT, WORKFLOW

STATEMENT = json.dumps(
    {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": "ghcr.io/acme/aicr-evidence:t", "digest": {"sha256": "ab" * 32}}],
        "predicateType": "https://aicr.run/recipe-evidence/v1",
        "predicate": {"schemaVersion": "1.0.0"},
    }
).encode()


def policy(signer: SignerIdentity) -> Identity:
    return Identity(identity=signer.identity, issuer=signer.issuer)


def sign(authority: TestAuthority, signer: SignerIdentity = EMAIL, **kw: Any) -> bytes:
    return authority.sign_dsse(STATEMENT, signer=signer, signed_at=SIGNED_AT, **kw)


def verify(
    verifier: Verifier, bundle_json: bytes, signer: SignerIdentity = EMAIL
) -> tuple[str, bytes]:
    return verifier.verify_dsse(Bundle.from_json(bundle_json), policy(signer))


def edit(bundle_json: bytes, fn: Callable[[dict[str, Any]], None]) -> bytes:
    doc = json.loads(bundle_json)
    fn(doc)
    return json.dumps(doc).encode()


def entry(doc: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = doc["verificationMaterial"]["tlogEntries"][0]
    return result


def verifier_for(root: bytes, tmp_path: Path) -> Verifier:
    path = tmp_path / "root.json"
    path.write_bytes(root)
    return Verifier(trusted_root=TrustedRoot.from_file(str(path)))


# --------------------------------------------------------------------------- 6.1 must accept


def test_email_san_is_accepted_and_payload_returned(
    authority: TestAuthority, verifier: Verifier
) -> None:
    payload_type, payload = verify(verifier, sign(authority))
    assert payload_type == "application/vnd.in-toto+json"
    assert payload == STATEMENT


def test_uri_san_with_github_issuer_is_accepted(
    authority: TestAuthority, verifier: Verifier
) -> None:
    bundle = sign(authority, WORKFLOW)
    verify(verifier, bundle, WORKFLOW)
    cert = x509.load_der_x509_certificate(
        base64.b64decode(json.loads(bundle)["verificationMaterial"]["certificate"]["rawBytes"])
    )
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    assert san.critical
    assert san.value.get_values_for_type(x509.UniformResourceIdentifier) == [WORKFLOW.identity]
    assert cert.subject == x509.Name([])


def test_proof_at_signing_time_and_later_bigger_tree(
    authority: TestAuthority, verifier: Verifier
) -> None:
    bundle = sign(authority)
    at_signing = entry(json.loads(bundle))["inclusionProof"]
    verify(verifier, bundle)
    authority.add_filler_entries(9)
    later = authority.reprove(bundle)
    grown = entry(json.loads(later))["inclusionProof"]
    assert int(grown["treeSize"]) == authority.log_size > int(at_signing["treeSize"])
    assert grown["rootHash"] != at_signing["rootHash"]
    verify(verifier, later)


def test_log_with_one_leaf(tmp_path: Path) -> None:
    fresh = TestAuthority("one-leaf")
    bundle = sign(fresh)
    proof = entry(json.loads(bundle))["inclusionProof"]
    assert proof["treeSize"] == "1" and proof["hashes"] == []
    verify(verifier_for(fresh.trusted_root_json(), tmp_path), bundle)


def test_multi_leaf_sharded_entry(authority: TestAuthority, verifier: Verifier) -> None:
    bundle = sign(authority)
    e = entry(json.loads(bundle))
    assert int(e["logIndex"]) == SHARD + int(e["inclusionProof"]["logIndex"])
    assert e["inclusionProof"]["hashes"], "a multi-leaf tree has a non-empty audit path"
    verify(verifier, bundle)


def test_all_of_issuer_v1_v2_and_identity(authority: TestAuthority, verifier: Verifier) -> None:
    combined = AllOf([OIDCIssuer(EMAIL.issuer), OIDCIssuerV2(EMAIL.issuer), policy(EMAIL)])
    verifier.verify_dsse(Bundle.from_json(sign(authority)), combined)


def test_root_loaded_through_client_trust_config(authority: TestAuthority) -> None:
    config = ClientTrustConfig.from_json(authority.trust_config_json().decode())
    verify(Verifier(trusted_root=config.trusted_root), sign(authority))


def test_rekor_v2_shape_with_tsa(authority: TestAuthority, verifier: Verifier) -> None:
    bundle = sign(authority, rekor_v2=True)
    doc = json.loads(bundle)
    e = entry(doc)
    assert e["kindVersion"] == {"kind": "hashedrekord", "version": "0.0.2"}
    assert "inclusionPromise" not in e and "integratedTime" not in e
    assert doc["verificationMaterial"]["timestampVerificationData"]["rfc3161Timestamps"]
    verify(verifier, bundle)


def test_certificate_expired_now_but_valid_at_signing(
    authority: TestAuthority, verifier: Verifier
) -> None:
    long_ago = datetime(2021, 3, 1, 8, 0, 0, tzinfo=UTC)
    bundle = authority.sign_dsse(STATEMENT, signer=EMAIL, signed_at=long_ago)
    cert = x509.load_der_x509_certificate(
        base64.b64decode(json.loads(bundle)["verificationMaterial"]["certificate"]["rawBytes"])
    )
    assert cert.not_valid_after_utc == long_ago + timedelta(minutes=10)
    verify(verifier, bundle)


def test_trust_root_is_stable_across_regenerations() -> None:
    assert (
        TestAuthority("stable").trusted_root_json() == TestAuthority("stable").trusted_root_json()
    )
    assert TestAuthority("stable").trusted_root_json() != TestAuthority("other").trusted_root_json()


def test_trusted_root_valid_from_is_configurable(authority: TestAuthority) -> None:
    start = datetime(2024, 5, 1, tzinfo=UTC)
    root = json.loads(authority.trusted_root_json(valid_from=start))
    assert root["mediaType"] == "application/vnd.dev.sigstore.trustedroot+json;version=0.1"
    assert root["tlogs"][0]["publicKey"]["validFor"]["start"] == "2024-05-01T00:00:00Z"


def test_signing_100_bundles_is_fast() -> None:
    a = TestAuthority("speed")
    started = time.process_time()  # CPU time: the machine's load does not change it much
    for _ in range(100):
        sign(a)
    cpu = time.process_time() - started
    assert cpu < 3.0, f"100 signatures took {cpu:.2f}s of CPU"


# --------------------------------------------------------------------------- 6.2 tamper cases


def _set_log_index(value: Callable[[dict[str, Any]], int]) -> Callable[[dict[str, Any]], None]:
    def fn(doc: dict[str, Any]) -> None:
        entry(doc)["logIndex"] = str(value(entry(doc)))

    return fn


def _shift_time(seconds: int) -> Callable[[dict[str, Any]], None]:
    def fn(doc: dict[str, Any]) -> None:
        entry(doc)["integratedTime"] = str(int(entry(doc)["integratedTime"]) + seconds)

    return fn


def _flip_proof_hash(doc: dict[str, Any]) -> None:
    hashes = entry(doc)["inclusionProof"]["hashes"]
    raw = bytearray(base64.b64decode(hashes[0]))
    raw[0] ^= 1
    hashes[0] = base64.b64encode(bytes(raw)).decode()


def _edit_checkpoint(doc: dict[str, Any]) -> None:
    cp = entry(doc)["inclusionProof"]["checkpoint"]
    cp["envelope"] = cp["envelope"].replace(" - ", " -- ", 1)


def _payload(doc: dict[str, Any]) -> None:
    doc["dsseEnvelope"]["payload"] = base64.b64encode(STATEMENT.replace(b"ab", b"cd")).decode()


def _payload_type(doc: dict[str, Any]) -> None:
    doc["dsseEnvelope"]["payloadType"] = "application/json"


def _proof_index(doc: dict[str, Any]) -> None:
    proof = entry(doc)["inclusionProof"]
    proof["logIndex"] = str(int(proof["logIndex"]) - 1)


JSON_TAMPERS = [
    ("payload modified", _payload, VerificationError, "DSSE: invalid signature"),
    ("payloadType modified", _payload_type, VerificationError, "DSSE: invalid signature"),
    (
        "entry logIndex changed",
        _set_log_index(lambda e: int(e["logIndex"]) + 1),
        VerificationError,
        "SET: invalid inclusion promise",
    ),
    (
        "shard-local index as entry logIndex",
        _set_log_index(lambda e: int(e["inclusionProof"]["logIndex"])),
        VerificationError,
        "SET: invalid inclusion promise",
    ),
    ("inclusionProof.logIndex changed", _proof_index, VerificationError, "inclusion proof"),
    ("integratedTime +1s", _shift_time(1), VerificationError, "SET: invalid inclusion promise"),
    ("integratedTime -1s", _shift_time(-1), VerificationError, "SET: invalid inclusion promise"),
    (
        "integratedTime outside validity",
        _shift_time(3600),
        CertValidationError,
        "not valid at validation time",
    ),
    ("proof hash flipped", _flip_proof_hash, VerificationError, "inclusion proof"),
    (
        "checkpoint text edited",
        _edit_checkpoint,
        VerificationError,
        "checkpoint: invalid signature",
    ),
]


@pytest.mark.parametrize(
    ("case", "tamper", "error", "text"), JSON_TAMPERS, ids=[c[0] for c in JSON_TAMPERS]
)
def test_tampered_bundle_is_rejected(
    authority: TestAuthority,
    verifier: Verifier,
    case: str,
    tamper: Callable[[dict[str, Any]], None],
    error: type[Exception],
    text: str,
) -> None:
    bundle = sign(authority)
    verify(verifier, bundle)  # the untampered original is good
    with pytest.raises(error, match=text):
        verify(verifier, edit(bundle, tamper))


def test_set_removed_without_tsa_is_invalid_bundle(authority: TestAuthority) -> None:
    bundle = edit(sign(authority), lambda d: entry(d).pop("inclusionPromise"))
    with pytest.raises(InvalidBundle, match="inclusion promise or signed timestamp"):
        Bundle.from_json(bundle)


@pytest.mark.parametrize(
    "delay", [timedelta(minutes=20), timedelta(minutes=-1)], ids=["expired", "not-yet-valid"]
)
def test_certificate_invalid_at_integration_time(
    authority: TestAuthority, verifier: Verifier, delay: timedelta
) -> None:
    bundle = sign(authority, options=SigningOptions(log_delay=delay))
    with pytest.raises(CertValidationError, match="not valid at validation time"):
        verify(verifier, bundle)


def test_untrusted_ca_with_look_alike_names(authority: TestAuthority, verifier: Verifier) -> None:
    rogue = TestAuthority("rogue", name=authority.name, shard_offset=SHARD)
    assert rogue.intermediate_cert.subject == authority.intermediate_cert.subject
    with pytest.raises(CertValidationError, match="signature does not match"):
        verify(verifier, sign(rogue))


@pytest.mark.parametrize(
    ("make", "text"),
    [
        (lambda: sign(TestAuthority("tests-testing", ct_seed="rogue")), "failed to verify SCT"),
        (lambda: None, "does not contain a signed certificate timestamp"),
    ],
    ids=["unknown-ct-key", "no-sct"],
)
def test_sct_from_unknown_key_or_missing(
    authority: TestAuthority,
    verifier: Verifier,
    make: Callable[[], bytes | None],
    text: str,
) -> None:
    bundle = make() or sign(authority, options=SigningOptions(embed_sct=False))
    with pytest.raises(VerificationError, match=text):
        verify(verifier, bundle)


def test_entry_and_checkpoint_from_unknown_rekor_key(verifier: Verifier) -> None:
    rogue = TestAuthority("tests-testing", rekor_seed="rogue", shard_offset=SHARD)
    with pytest.raises(VerificationError, match="checkpoint: invalid signature"):
        verify(verifier, sign(rogue))


def test_wrong_identity_and_wrong_issuer(authority: TestAuthority, verifier: Verifier) -> None:
    bundle = Bundle.from_json(sign(authority))
    with pytest.raises(VerificationError, match="SANs do not match"):
        verifier.verify_dsse(bundle, Identity(identity="bob@example.com", issuer=EMAIL.issuer))
    with pytest.raises(VerificationError, match="OIDCIssuer does not match"):
        verifier.verify_dsse(
            bundle, Identity(identity=EMAIL.identity, issuer="https://accounts.google.com")
        )


def test_leaf_swapped_for_another_genuine_leaf(
    authority: TestAuthority, verifier: Verifier
) -> None:
    other = json.loads(sign(authority))
    bundle = edit(
        sign(authority),
        lambda d: d["verificationMaterial"].update(
            certificate=other["verificationMaterial"]["certificate"]
        ),
    )
    with pytest.raises(VerificationError, match="DSSE: invalid signature"):
        verify(verifier, bundle)


def test_genuine_tlog_entry_from_another_signing(
    authority: TestAuthority, verifier: Verifier
) -> None:
    first = sign(authority)
    other_doc = json.loads(authority.sign_dsse(STATEMENT, signer=EMAIL, signed_at=SIGNED_AT))
    # Same certificate, but the log entry records another signing's signature.
    second = edit(
        first,
        lambda d: d["verificationMaterial"].update(
            tlogEntries=other_doc["verificationMaterial"]["tlogEntries"]
        ),
    )
    with pytest.raises(VerificationError, match="log entry signatures do not match bundle"):
        verify(verifier, second)


def test_two_dsse_signatures(authority: TestAuthority, verifier: Verifier) -> None:
    bundle = edit(
        sign(authority),
        lambda d: d["dsseEnvelope"]["signatures"].append(
            copy.deepcopy(d["dsseEnvelope"]["signatures"][0])
        ),
    )
    with pytest.raises(InvalidEnvelope, match="exactly one signature"):
        verify(verifier, bundle)


def test_two_tlog_entries(authority: TestAuthority) -> None:
    bundle = edit(
        sign(authority),
        lambda d: d["verificationMaterial"]["tlogEntries"].append(copy.deepcopy(entry(d))),
    )
    with pytest.raises(InvalidBundle):
        Bundle.from_json(bundle)


def test_checked_against_the_production_root(authority: TestAuthority) -> None:
    store = (
        importlib.resources.files("sigstore._store")
        / "https%3A%2F%2Ftuf-repo-cdn.sigstore.dev"
        / "trusted_root.json"
    )
    production = Verifier(trusted_root=TrustedRoot.from_file(str(store)))
    with pytest.raises(CertValidationError):
        verify(production, sign(authority))


def test_v2_tsa_missing_from_root(authority: TestAuthority, tmp_path: Path) -> None:
    no_tsa = verifier_for(authority.trusted_root_json(include_tsa=False), tmp_path)
    with pytest.raises(VerificationError, match="no Timestamp Authorities"):
        verify(no_tsa, sign(authority, rekor_v2=True))


def test_v2_rogue_tsa(verifier: Verifier) -> None:
    rogue = TestAuthority("tests-testing", tsa_seed="rogue", shard_offset=SHARD)
    with pytest.raises(VerificationError, match="not enough sources of verified time"):
        verify(verifier, sign(rogue, rekor_v2=True))


def test_v2_timestamp_over_another_signature(authority: TestAuthority, verifier: Verifier) -> None:
    other = json.loads(sign(authority, rekor_v2=True))["verificationMaterial"][
        "timestampVerificationData"
    ]
    bundle = edit(
        sign(authority, rekor_v2=True),
        lambda d: d["verificationMaterial"].update(timestampVerificationData=other),
    )
    with pytest.raises(VerificationError, match="not enough sources of verified time"):
        verify(verifier, bundle)


def test_v2_timestamp_after_certificate_expiry(
    authority: TestAuthority, verifier: Verifier
) -> None:
    bundle = sign(
        authority, rekor_v2=True, options=SigningOptions(timestamp_delay=timedelta(minutes=11))
    )
    with pytest.raises(CertValidationError, match="not valid at validation time"):
        verify(verifier, bundle)


def test_v2_proof_index_changed(authority: TestAuthority, verifier: Verifier) -> None:
    authority.add_filler_entries(3, rekor_v2=True)
    bundle = edit(sign(authority, rekor_v2=True), _proof_index)
    with pytest.raises(VerificationError, match="inclusion proof"):
        verify(verifier, bundle)


def test_v2_entry_log_index_is_not_bound_by_sigstore(
    authority: TestAuthority, verifier: Verifier
) -> None:
    """Pitfall 7: documented sigstore behaviour the project's own checks must cover."""
    bundle = edit(sign(authority, rekor_v2=True), _set_log_index(lambda e: int(e["logIndex"]) + 7))
    verify(verifier, bundle)


# --------------------------------------------------------------------------- Merkle tree


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 13, 64, 100])
def test_merkle_proofs_recompute_the_root(size: int) -> None:
    tree = MerkleTree()
    for i in range(size):
        tree.append(b"leaf-%d" % i)
    for index in range(size):
        for prefix in {index + 1, size}:
            path = tree.proof(index, prefix)
            assert root_from_proof(leaf_hash(b"leaf-%d" % index), index, prefix, path) == tree.root(
                prefix
            )
