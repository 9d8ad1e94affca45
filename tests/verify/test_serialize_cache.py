"""Verdict JSON round trip, aicr's VerifyResult shape, and the verdict cache."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import pytest

from generator.bundle.types import status_error
from generator.model import (
    FailureClass,
    NoVerdict,
    Pending,
    Rejected,
    Verified,
)
from generator.verify.cache import Remembered, VerdictCache
from generator.verify.pipeline import verify_pointer
from generator.verify.serialize import (
    VerdictFormatError,
    aicr_result_json,
    decode_data,
    encode_data,
    loads_decoded,
    verdict_from_json,
    verdict_to_json,
)
from generator.verify.trust import load_trust
from tests.verify.conftest import SIGNED_AT, SIGNER, EvidenceCase, FakeSource


def verdicts(case: EvidenceCase, authority_trust: Any) -> dict[str, Any]:
    authority, trust = authority_trust
    bundle = authority.sign_dsse(case.statement_bytes(), signer=SIGNER, signed_at=SIGNED_AT)
    pointer, location = case.pointer(signer=SIGNER)
    out = {
        "verified": verify_pointer(pointer, location, FakeSource(case.materialized(bundle)), trust),
        "rejected": verify_pointer(pointer, location, FakeSource(case.materialized()), trust),
        "no-verdict": verify_pointer(
            pointer, location, FakeSource(status_error(503, "m", url="u")), trust
        ),
    }
    unsigned, unsigned_location = case.pointer()
    out["pending"] = verify_pointer(
        unsigned, unsigned_location, FakeSource(case.materialized()), trust
    )
    return out


def test_round_trip_every_outcome(case: EvidenceCase, authority_trust: Any) -> None:
    for name, verdict in verdicts(case, authority_trust).items():
        doc = json.loads(json.dumps(verdict_to_json(verdict)))
        again = verdict_from_json(doc)
        assert again == verdict, name
        assert type(again) is type(verdict)
    kinds = {type(v) for v in verdicts(case, authority_trust).values()}
    assert kinds == {Verified, Rejected, NoVerdict, Pending}


@pytest.mark.parametrize(
    "value",
    [
        {"a": [1, 2.5, None, True, "x"]},
        {1: "int key", 2.5: "float key", None: "null key"},
        {"$float": "looks tagged"},
        [math.inf, -math.inf],
        b"\x00\xffraw",
        {"nested": {"k": {2: [b"x"]}}},
    ],
    ids=["plain", "non-string-keys", "dollar-key", "infinities", "bytes", "nested"],
)
def test_tagged_data_round_trip(value: Any) -> None:
    assert decode_data(json.loads(json.dumps(encode_data(value)))) == value


def test_untagged_data_is_decoded_without_a_copy() -> None:
    """Plain parsed data comes back as it is (one loop over it, not a rebuild)."""
    plain = json.loads(json.dumps({"a": [1, 2.5, None, True, {"b": "x"}]}))
    assert decode_data(plain) is plain


def test_hostile_nesting_is_probed_a_bounded_number_of_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A tagged value at the bottom of deep nesting: only the first levels look for an
    untagged subtree (each look walks the whole subtree), the rest decode node by node."""
    import generator.verify._tagged as tagged

    depth = 400
    value: Any = {"$float": "inf"}
    for _ in range(depth):
        value = [value, "x"]
    looks = []
    untagged = tagged._untagged

    def counting(subtree: Any) -> bool:
        looks.append(subtree)
        return untagged(subtree)

    monkeypatch.setattr(tagged, "_untagged", counting)
    decoded = decode_data(json.loads(json.dumps(value)))
    assert len(looks) <= tagged._PROBES
    for _ in range(depth):
        decoded = decoded[0]
    assert decoded == math.inf


def test_nan_round_trip() -> None:
    assert math.isnan(decode_data(json.loads(json.dumps(encode_data(math.nan)))))


def test_unknown_types_are_refused() -> None:
    with pytest.raises(TypeError):
        encode_data({"x": object()})


@pytest.mark.parametrize(
    "doc",
    [
        {},
        {"format": "other"},
        {"format": "evidence-dashboard/verdict/v1"},
        {"format": "evidence-dashboard/verdict/v1", "kind": "Nope", "steps": []},
    ],
)
def test_bad_documents(doc: dict[str, Any]) -> None:
    with pytest.raises(VerdictFormatError):
        verdict_from_json(doc)


def test_aicr_result_shape(case: EvidenceCase, authority_trust: Any) -> None:
    all_verdicts = verdicts(case, authority_trust)
    pointer, location = case.pointer(signer=SIGNER)
    ok = aicr_result_json(all_verdicts["verified"], pointer, location)
    assert list(ok)[:2] == ["input", "pointer"] and ok["input"] == "pointer"
    assert ok["exit"] == 0 and "pending" not in ok and "failureCause" not in ok
    assert ok["signer"]["identity"] == SIGNER.identity and ok["signer"]["issuer"] == SIGNER.issuer
    assert ok["recipeName"] == case.recipe_name and ok["bundleDigest"] == case.digest
    assert ok["predicate"]["recipe"]["name"] == case.recipe_name
    assert [s["name"] for s in ok["steps"]] == [
        "materialize-bundle",
        "signature-verify",
        "predicate-parse",
        "manifest-hash-check",
        "render-summary",
    ]
    rows = [r for s in ok["steps"] for r in s.get("subRows", [])]
    assert all(set(r) <= {"key", "value", "beyondAicr"} for r in rows)
    assert any(r.get("beyondAicr") for r in rows)

    bad = aicr_result_json(all_verdicts["rejected"], pointer, location)
    assert bad["exit"] == 2 and bad["failureCause"]["class"] == FailureClass.SIGNATURE.value
    none = aicr_result_json(all_verdicts["no-verdict"], pointer, location)
    assert none["exit"] == 3 and none["failureCause"]["httpStatus"] == 503
    assert none["failureCause"]["class"] == "transient" and "predicate" not in none
    unsigned, unsigned_location = case.pointer()
    pending = aicr_result_json(all_verdicts["pending"], unsigned, unsigned_location)
    assert pending["exit"] == 0 and pending["pending"] is True and "signer" not in pending
    json.dumps(ok), json.dumps(bad), json.dumps(pending)


def test_cache_key_covers_every_part(
    case: EvidenceCase, tmp_path: Path, authority_trust: Any
) -> None:
    cache = VerdictCache(tmp_path)
    production = load_trust(offline=True)
    _, test_trust = authority_trust
    pointer, location = case.pointer(signer=SIGNER)
    base = cache.key(pointer, location, production)
    assert base == cache.key(pointer, location, production)
    other_pointer, _ = case.pointer(signer=SIGNER, log_index=5)
    unsigned, _ = case.pointer()
    variants = {
        cache.key(pointer, location, test_trust),
        cache.key(pointer, location, production, policy="other"),
        cache.key(other_pointer, location, production),
        cache.key(unsigned, location, production),
        cache.key(pointer, type(location)("evidence/x.yaml", None, None), production),
    }
    assert base not in variants and len(variants) == 5


def test_cache_put_get_and_remembered(
    case: EvidenceCase, tmp_path: Path, authority_trust: Any
) -> None:
    verdict = verdicts(case, authority_trust)["verified"]
    cache = VerdictCache(tmp_path)
    trust = authority_trust[1]
    pointer, location = case.pointer(signer=SIGNER)
    key = cache.key(pointer, location, trust)
    assert cache.get(key) is None
    cache.put(key, verdict, "2026-09-19T03:00:00Z", trust_root=trust.digest)
    assert cache.get(key) == (verdict, "2026-09-19T03:00:00Z")
    # a fresh cache object (a later build) remembers it under the same full key only
    later = VerdictCache(tmp_path)
    assert later.remembered(key) == Remembered(verdict, "2026-09-19T03:00:00Z", trust.digest)
    for other_key in (
        later.key(pointer, location, load_trust(offline=True)),
        later.key(pointer, location, trust, policy="other"),
    ):
        assert later.get(other_key) is None and later.remembered(other_key) is None
    assert not list(tmp_path.rglob(".tmp-*"))


def test_remembered_sees_packs_written_after_the_index_was_read(
    case: EvidenceCase, tmp_path: Path, authority_trust: Any
) -> None:
    verdict = verdicts(case, authority_trust)["verified"]
    pointer, location = case.pointer(signer=SIGNER)
    reader = VerdictCache(tmp_path)
    key = reader.key(pointer, location, authority_trust[1])
    assert reader.get(key) is None  # the index is read now
    VerdictCache(tmp_path).put(key, verdict, "2026-09-19T03:00:00Z")
    assert reader.remembered(key) is not None


@pytest.mark.parametrize(("guess", "limit", "found"), [(16, 1 << 20, True), (16, 40, False)])
def test_a_pack_header_is_read_only_as_far_as_its_first_line(
    case: EvidenceCase,
    tmp_path: Path,
    authority_trust: Any,
    monkeypatch: pytest.MonkeyPatch,
    guess: int,
    limit: int,
    found: bool,
) -> None:
    """A header longer than the first read is read again up to `MAX_HEADER_BYTES`; one that
    does not end within it is no header (its entries are misses)."""
    import generator.verify.cache as cache_module

    verdict = verdicts(case, authority_trust)["verified"]
    pointer, location = case.pointer(signer=SIGNER)
    writer = VerdictCache(tmp_path)
    key = writer.key(pointer, location, authority_trust[1])
    writer.put(key, verdict, "2026-09-19T03:00:00Z")
    monkeypatch.setattr(cache_module, "_HEADER_GUESS", guess)
    monkeypatch.setattr(cache_module, "MAX_HEADER_BYTES", limit)
    assert (VerdictCache(tmp_path).get(key) is not None) is found


def _tamper(pack: Path, old: bytes, new: bytes) -> None:
    data = pack.read_bytes()
    assert old in data
    pack.write_bytes(data.replace(old, new))


def test_an_edited_pack_line_is_a_counted_miss(
    case: EvidenceCase, tmp_path: Path, authority_trust: Any
) -> None:
    """Editing a cached rejection into a pass (a JSON edit that keeps the line well formed)
    must not be believed: the line fails its HMAC and is counted."""
    from generator.cacheauth import failures, reset_failures

    rejected = verdicts(case, authority_trust)["rejected"]
    assert isinstance(rejected, Rejected)
    pointer, location = case.pointer(signer=SIGNER)
    cache = VerdictCache(tmp_path)
    key = cache.key(pointer, location, authority_trust[1])
    cache.put(key, rejected, "2026-09-19T03:00:00Z")
    (pack,) = (tmp_path / "packs").iterdir()
    _tamper(pack, b'"recordedAt":"2026-09-19T03:00:00Z"', b'"recordedAt":"2026-09-19T03:00:01Z"')
    reset_failures()
    assert VerdictCache(tmp_path).get(key) is None
    assert VerdictCache(tmp_path).remembered(key) is None
    assert len(failures()) == 1


def test_a_pack_written_under_another_key_is_all_misses(
    case: EvidenceCase, tmp_path: Path, authority_trust: Any
) -> None:
    from generator.cacheauth import CacheAuth, failures, reset_failures

    verdict = verdicts(case, authority_trust)["verified"]
    pointer, location = case.pointer(signer=SIGNER)
    writer = VerdictCache(tmp_path, CacheAuth(b"k1" * 32))
    key = writer.key(pointer, location, authority_trust[1])
    writer.put(key, verdict, "2026-09-19T03:00:00Z")
    assert VerdictCache(tmp_path, CacheAuth(b"k1" * 32)).get(key) is not None
    reset_failures()
    assert VerdictCache(tmp_path, CacheAuth(b"k2" * 32)).get(key) is None
    assert len(failures()) == 1


def test_corrupt_cache_entries_are_misses(
    case: EvidenceCase, tmp_path: Path, authority_trust: Any
) -> None:
    verdict = verdicts(case, authority_trust)["verified"]
    pointer, location = case.pointer(signer=SIGNER)
    cache = VerdictCache(tmp_path)
    key = cache.key(pointer, location, authority_trust[1])
    cache.put(key, verdict, "2026-09-19T03:00:00Z")
    (pack,) = (tmp_path / "packs").iterdir()
    header, line, _ = pack.read_bytes().split(b"\n")
    pack.write_bytes(header + b"\n{not json\n")  # a damaged entry
    assert VerdictCache(tmp_path).get(key) is None
    assert VerdictCache(tmp_path).remembered(key) is None
    pack.write_bytes(b"{not json\n" + line + b"\n")  # a damaged header
    assert VerdictCache(tmp_path).get(key) is None
    pack.write_bytes(header + b"\n")  # cut short
    assert VerdictCache(tmp_path).get(key) is None
    other = "f" * 64  # an entry filed under another key than the one it holds
    pack.write_bytes(header.replace(key.encode(), other.encode()) + b"\n" + line + b"\n")
    assert VerdictCache(tmp_path).get(other) is None
    with pytest.raises(ValueError):
        cache.get("../../etc")


def test_a_batch_is_one_pack_and_a_later_pack_wins(
    case: EvidenceCase, tmp_path: Path, authority_trust: Any
) -> None:
    verdict = verdicts(case, authority_trust)["verified"]
    rejected = verdicts(case, authority_trust)["rejected"]
    cache = VerdictCache(tmp_path)
    keys = [f"{n:x}" * 64 for n in range(1, 6)]
    with cache.batched():
        for key in keys:
            cache.put(key, verdict, "2026-01-01T00:00:00Z", claims_key="c" * 64)
        assert not (tmp_path / "packs").exists()  # written when the batch ends
        assert cache.get(keys[0]) is None
    assert len(list((tmp_path / "packs").iterdir())) == 1
    assert all(cache.get(key) == (verdict, "2026-01-01T00:00:00Z") for key in keys)
    cache.put(keys[0], rejected, "2027-01-01T00:00:00Z", claims_key="c" * 64)
    later = VerdictCache(tmp_path)
    assert later.get(keys[0]) == (rejected, "2027-01-01T00:00:00Z")
    assert later.get(keys[1]) == (verdict, "2026-01-01T00:00:00Z")
    assert len(list((tmp_path / "packs").iterdir())) == 2
    assert not list(tmp_path.rglob(".tmp-*"))


def test_a_big_batch_is_written_in_packs_of_bounded_size(
    case: EvidenceCase, tmp_path: Path, authority_trust: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from generator.verify import cache as cache_module

    monkeypatch.setattr(cache_module, "PACK_ENTRIES", 3)
    verdict = verdicts(case, authority_trust)["no-verdict"]
    cache = VerdictCache(tmp_path)
    keys = [hashlib.sha256(str(n).encode()).hexdigest() for n in range(7)]
    with cache.batched(), cache.batched():  # a nested batch joins the outer one
        for key in keys:
            cache.put(key, verdict, "2026-01-01T00:00:00Z")
    assert len(list((tmp_path / "packs").iterdir())) == 3  # 3 + 3 + 1
    later = VerdictCache(tmp_path)
    assert all(later.get(key) == (verdict, "2026-01-01T00:00:00Z") for key in keys)


@pytest.mark.parametrize(
    "value",
    [
        {"a": [1, 2.5, None, True, "x"]},
        {1: "int key", 2.5: "float key", None: "null key"},
        {"$float": "looks tagged", "$schema": "x"},
        [math.inf, -math.inf, {"$bytes": b"\x00"}],
        b"\x00\xffraw",
        {"nested": {"k": {2: [b"x"]}}, "$map": [[1, 2]]},
        {(1, 2): "tuple key"},
    ],
    ids=["plain", "non-string-keys", "dollar-keys", "infinities", "bytes", "nested", "tuple-key"],
)
def test_decoding_while_parsing_matches_decode_data(value: Any) -> None:
    text = json.dumps({"data": encode_data(value)})
    assert loads_decoded(text) == {"data": decode_data(json.loads(text)["data"])}


def test_cache_reads_tagged_evidence_back(
    case: EvidenceCase, tmp_path: Path, authority_trust: Any
) -> None:
    import dataclasses

    verified = verdicts(case, authority_trust)["verified"]
    assert isinstance(verified, Verified)
    odd = {
        "$schema": "https://example.invalid/bom",
        "ratio": math.inf,
        "raw": b"\x01",
        3: ["int key"],
        "note": "\\u0024float",
    }
    verdict = dataclasses.replace(
        verified, evidence=dataclasses.replace(verified.evidence, bom=odd)
    )
    cache = VerdictCache(tmp_path)
    pointer, location = case.pointer(signer=SIGNER)
    key = cache.key(pointer, location, authority_trust[1])
    cache.put(key, verdict, "2026-09-19T03:00:00Z")
    assert VerdictCache(tmp_path).get(key) == (verdict, "2026-09-19T03:00:00Z")
    assert VerdictCache(tmp_path).remembered(key) == Remembered(
        verdict, "2026-09-19T03:00:00Z", None
    )


def test_the_key_covers_the_verifier_code(
    case: EvidenceCase, tmp_path: Path, authority_trust: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A verdict is remembered for the verifier code that made it, not only its version."""
    from generator.verify import _cache_keys

    pointer, location = case.pointer(signer=SIGNER)
    key = VerdictCache(tmp_path).key(pointer, location, authority_trust[1])
    assert len(_cache_keys.verifier_code_digest()) == 64
    monkeypatch.setattr(_cache_keys, "verifier_code_digest", lambda: "0" * 64)
    assert VerdictCache(tmp_path).key(pointer, location, authority_trust[1]) != key
