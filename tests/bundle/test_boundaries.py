"""OCI shapes at their edges: digests one hex digit apart, sizes exactly at each cap and one
byte over, negative and boolean sizes, and the cap on signature candidates."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from typing import Any

import pytest

from generator.bundle.oci import (
    MANIFEST_TYPE,
    SIGSTORE_TYPE,
    Descriptor,
    bundle_layer,
    check_digest,
    index_candidates,
    parse_descriptor,
    referrer_layer,
    select_candidates,
)
from generator.bundle.types import MAX_SIGNATURES, BundleFetchError, Limits
from generator.model import FailureClass, OciDigest

WHERE = "evidence/p.yaml"


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _flip_last(digest: str, position: int = -1) -> str:
    chars = list(digest)
    chars[position] = "0" if chars[position] != "0" else "1"
    return "".join(chars)


def _manifest(size: int, *, pad: int = 0, **extra: Any) -> bytes:
    body = {
        "schemaVersion": 2,
        "mediaType": MANIFEST_TYPE,
        "layers": [{"mediaType": "x", "digest": _digest(b"l"), "size": size}],
        **extra,
    }
    raw = json.dumps(body).encode()
    return raw[:-1] + b" " * pad + b"}" if pad else raw


@pytest.mark.parametrize("position", [-1, -32, 7])
def test_a_blob_whose_digest_differs_in_one_hex_digit_is_refused(position: int) -> None:
    data = b"bundle layer bytes"
    check_digest(data, _digest(data), "bundle layer", WHERE)
    with pytest.raises(BundleFetchError):
        check_digest(data, _flip_last(_digest(data), position), "bundle layer", WHERE)


def test_a_blob_one_byte_longer_does_not_match_its_digest() -> None:
    data = b"bundle layer bytes"
    with pytest.raises(BundleFetchError):
        check_digest(data + b"\n", _digest(data), "bundle layer", WHERE)


def test_the_bundle_manifest_cap_is_inclusive() -> None:
    manifest = _manifest(1)
    limits = replace(Limits(), manifest_json=len(manifest))
    assert bundle_layer(manifest, limits, WHERE).size == 1
    with pytest.raises(BundleFetchError):
        bundle_layer(manifest, replace(limits, manifest_json=len(manifest) - 1), WHERE)


def test_the_bundle_layer_cap_is_inclusive() -> None:
    limits = replace(Limits(), compressed_layer=1000)
    assert bundle_layer(_manifest(1000), limits, WHERE).size == 1000
    with pytest.raises(BundleFetchError):
        bundle_layer(_manifest(1001), limits, WHERE)


@pytest.mark.parametrize(
    ("size", "ok"),
    [(0, True), (1, True), (-1, False), (True, False), (False, False), (1.0, False), ("1", False)],
)
def test_a_descriptor_size_is_a_non_negative_integer(size: object, ok: bool) -> None:
    value = {"mediaType": "x", "digest": _digest(b"x"), "size": size}
    if ok:
        assert parse_descriptor(value, "layer", WHERE).size == size
    else:
        with pytest.raises(BundleFetchError):
            parse_descriptor(value, "layer", WHERE)


@pytest.mark.parametrize(
    "digest",
    [
        "sha256:" + "a" * 63,
        "sha256:" + "a" * 65,
        "sha256:" + "A" * 64,
        "sha512:" + "a" * 64,
        "a" * 64,
        7,
    ],
)
def test_a_descriptor_digest_is_exactly_sha256_and_64_lowercase_hex(digest: object) -> None:
    with pytest.raises(BundleFetchError):
        parse_descriptor({"mediaType": "x", "digest": digest, "size": 1}, "layer", WHERE)


@pytest.mark.parametrize("layers", [[], [{"digest": _digest(b"a"), "size": 1}] * 2, None])
def test_a_bundle_manifest_needs_exactly_one_layer(layers: object) -> None:
    body = {"schemaVersion": 2, "mediaType": MANIFEST_TYPE, "layers": layers}
    with pytest.raises(BundleFetchError):
        bundle_layer(json.dumps(body).encode(), Limits(), WHERE)


@pytest.mark.parametrize("version", [1, 3, "2", None])
def test_a_bundle_manifest_needs_schema_version_2(version: object) -> None:
    body = {
        "schemaVersion": version,
        "mediaType": MANIFEST_TYPE,
        "layers": [{"mediaType": "x", "digest": _digest(b"l"), "size": 1}],
    }
    with pytest.raises(BundleFetchError):
        bundle_layer(json.dumps(body).encode(), Limits(), WHERE)


SUBJECT = OciDigest(_digest(b"the bundle manifest"))


def _referrer(subject: str = SUBJECT, size: int = 10, artifact: str = SIGSTORE_TYPE) -> bytes:
    return json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": MANIFEST_TYPE,
            "artifactType": artifact,
            "subject": {"mediaType": MANIFEST_TYPE, "digest": subject, "size": 1},
            "layers": [{"mediaType": SIGSTORE_TYPE, "digest": _digest(b"sig"), "size": size}],
        }
    ).encode()


def test_a_referrer_about_another_subject_is_not_a_signature_of_this_bundle() -> None:
    assert referrer_layer(_referrer(), SUBJECT, Limits(), WHERE) is not None
    for position in (-1, 7, 40):
        other = _flip_last(SUBJECT, position)
        assert referrer_layer(_referrer(other), SUBJECT, Limits(), WHERE) is None


def test_a_referrer_of_another_type_is_not_a_signature() -> None:
    manifest = _referrer(artifact=SIGSTORE_TYPE.replace("v0.3", "v0.2"))
    assert referrer_layer(manifest, SUBJECT, Limits(), WHERE) is None


def test_the_signature_layer_cap_is_inclusive() -> None:
    limits = replace(Limits(), sigstore_bundle=500)
    layer = referrer_layer(_referrer(size=500), SUBJECT, limits, WHERE)
    assert layer is not None and layer.size == 500
    with pytest.raises(BundleFetchError):
        referrer_layer(_referrer(size=501), SUBJECT, limits, WHERE)


def test_the_referrer_manifest_cap_is_inclusive() -> None:
    manifest = _referrer()
    limits = replace(Limits(), referrer_manifest=len(manifest))
    assert referrer_layer(manifest, SUBJECT, limits, WHERE) is not None
    with pytest.raises(BundleFetchError):
        referrer_layer(
            manifest, SUBJECT, replace(limits, referrer_manifest=len(manifest) - 1), WHERE
        )


def _descriptor(n: int, artifact: str | None = SIGSTORE_TYPE) -> Descriptor:
    return Descriptor(
        media_type=MANIFEST_TYPE,
        digest=OciDigest(_digest(str(n).encode())),
        size=1,
        artifact_type=artifact,
    )


@pytest.mark.parametrize("count", [MAX_SIGNATURES - 1, MAX_SIGNATURES, MAX_SIGNATURES + 1, 20])
def test_at_most_max_signatures_candidates_lowest_digests_first(count: int) -> None:
    descriptors = [_descriptor(n) for n in range(count)]
    chosen = select_candidates(reversed(descriptors))
    expected = sorted(d.digest for d in descriptors)[:MAX_SIGNATURES]
    assert [d.digest for d in chosen] == expected


def test_candidates_are_deduplicated_and_other_artifacts_dropped() -> None:
    same = _descriptor(1)
    chosen = select_candidates([same, same, _descriptor(2, None), _descriptor(3, "other/type")])
    assert sorted(d.digest for d in chosen) == sorted([same.digest, _descriptor(2).digest])


def test_the_referrers_index_cap_is_inclusive() -> None:
    index = json.dumps(
        {
            "manifests": [
                {
                    "mediaType": MANIFEST_TYPE,
                    "digest": _digest(b"a"),
                    "size": 3,
                    "artifactType": SIGSTORE_TYPE,
                }
            ]
        }
    ).encode()
    limits = replace(Limits(), referrer_manifest=len(index))
    assert len(index_candidates(index, limits, WHERE)) == 1
    with pytest.raises(BundleFetchError):
        index_candidates(index, replace(limits, referrer_manifest=len(index) - 1), WHERE)


# ------------------------------------------------------------------ the registry client's caps


def _pull(fake: Any, sample: Any, limits: Limits) -> Any:
    from generator.bundle.registry import RegistryClient

    return RegistryClient(
        mirrors={"ghcr.io": fake.base_url}, credentials={}, read_timeout=2.0, limits=limits
    ).fetch(sample.ref())


@pytest.mark.parametrize("cap", ["manifest_json", "compressed_layer", "sigstore_bundle"])
def test_a_registry_body_of_exactly_the_cap_is_pulled_one_byte_more_is_refused(
    fake_registry: Any, sample: Any, cap: str
) -> None:
    fake_registry.add("nvidia/aicr-evidence", sample)
    size = {
        "manifest_json": len(sample.bundle.manifest),
        "compressed_layer": len(sample.bundle.blobs[-1]),
        "sigstore_bundle": len(sample.signatures[0].blobs[-1]),
    }[cap]
    pulled = _pull(fake_registry, sample, replace(Limits(), **{cap: size}))
    assert pulled.digest == sample.digest and len(pulled.signatures) == 1
    with pytest.raises(BundleFetchError) as info:
        _pull(fake_registry, sample, replace(Limits(), **{cap: size - 1}))
    assert cap in info.value.message


def test_a_digest_in_another_letter_case_is_not_the_blobs_digest() -> None:
    data = b"bundle layer bytes"
    with pytest.raises(BundleFetchError):
        check_digest(data, _digest(data).upper().replace("SHA256", "sha256"), "layer", WHERE)


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (b"{", "is not valid JSON"),
        (b"[1]", "is not a JSON object"),
        (b'"manifest"', "is not a JSON object"),
        (b"", "is not valid JSON"),
    ],
)
def test_a_manifest_that_is_not_a_json_object_is_an_integrity_failure(
    raw: bytes, words: str
) -> None:
    for parse in (
        lambda: bundle_layer(raw, Limits(), WHERE),
        lambda: referrer_layer(raw, SUBJECT, Limits(), WHERE),
        lambda: index_candidates(raw, Limits(), WHERE),
    ):
        with pytest.raises(BundleFetchError) as info:
            parse()
        assert words in info.value.message
        assert info.value.failure_class is FailureClass.INTEGRITY


def test_a_registrys_bad_referrers_answer_is_a_registry_failure() -> None:
    with pytest.raises(BundleFetchError) as info:
        index_candidates(b"[1]", Limits(), WHERE, FailureClass.REGISTRY)
    assert info.value.failure_class is FailureClass.REGISTRY


@pytest.mark.parametrize("value", ["sha256:abc", None, 3, ["digest"]])
def test_a_descriptor_that_is_not_a_mapping_is_refused(value: object) -> None:
    with pytest.raises(BundleFetchError, match="is not a descriptor"):
        parse_descriptor(value, "layer", WHERE)
