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


def test_a_referrer_type_or_subject_in_capitals_is_not_a_signature_of_this_bundle() -> None:
    """Media types and digests are compared exactly: a referrer that says its type or its
    subject in capitals is another artifact, not this bundle's signature."""
    shouted_type = _referrer(artifact=SIGSTORE_TYPE.upper())
    assert referrer_layer(shouted_type, SUBJECT, Limits(), WHERE) is None
    shouted_subject = _referrer(subject="sha256:" + SUBJECT.removeprefix("sha256:").upper())
    assert referrer_layer(shouted_subject, SUBJECT, Limits(), WHERE) is None


@pytest.mark.parametrize(
    ("config", "is_signature"),
    [({"mediaType": SIGSTORE_TYPE}, True), ({"mediaType": "other"}, False), ({}, False)],
    ids=["sigstore-config", "other-config", "no-config-type"],
)
def test_a_referrer_that_predates_artifact_type_is_typed_by_its_config(
    config: dict[str, str], is_signature: bool
) -> None:
    """Older referrers carry no `artifactType`; their config's media type says what they are."""
    body = json.loads(_referrer())
    del body["artifactType"]
    body["config"] = {**config, "digest": _digest(b"{}"), "size": 2}
    layer = referrer_layer(json.dumps(body).encode(), SUBJECT, Limits(), WHERE)
    assert (layer is not None) is is_signature


@pytest.mark.parametrize("manifests", [{}, "x", None], ids=["an-object", "a-string", "null"])
def test_a_referrers_index_whose_manifests_is_not_a_list_is_refused(manifests: object) -> None:
    index = json.dumps({"schemaVersion": 2, "manifests": manifests}).encode()
    with pytest.raises(BundleFetchError, match="no manifests list") as caught:
        index_candidates(index, Limits(), WHERE)
    assert caught.value.failure_class is FailureClass.INTEGRITY


def test_a_manifest_without_a_layers_list_says_it_has_no_layers() -> None:
    body = {"schemaVersion": 2, "mediaType": MANIFEST_TYPE}
    with pytest.raises(BundleFetchError, match="exactly one layer") as caught:
        bundle_layer(json.dumps(body).encode(), Limits(), WHERE)
    assert "no" in str(caught.value.found).split()


@pytest.mark.parametrize(("artifact", "listed"), [("x/y", True), (None, False), ("", False)])
def test_a_descriptor_names_its_artifact_type_only_when_it_has_one(
    artifact: str | None, listed: bool
) -> None:
    descriptor = Descriptor("m", OciDigest(_digest(b"a")), 1, artifact)
    assert ("artifactType" in descriptor.as_json()) is listed


def test_the_empty_config_is_oci_s_empty_descriptor() -> None:
    """Artifacts this project writes use OCI's empty config: the two bytes `{}`, whose digest
    every registry knows (sha256:44136fa3...)."""
    from generator.bundle.oci import EMPTY_CONFIG

    assert EMPTY_CONFIG == b"{}"
    assert _digest(EMPTY_CONFIG) == (
        "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
    )


def test_the_manifest_accept_header_lists_each_type_apart() -> None:
    from generator.bundle.oci import DOCKER_MANIFEST_TYPE, INDEX_TYPE, MANIFEST_ACCEPT

    assert MANIFEST_ACCEPT.split(", ") == [MANIFEST_TYPE, INDEX_TYPE, DOCKER_MANIFEST_TYPE]


def _raw_with_referrers(subjects: list[str]) -> Any:
    from generator.bundle.artifact import build_layer, bundle_artifact, signature_artifact
    from generator.bundle.oci import RawBundle, RawReferrer

    bundle = bundle_artifact(
        build_layer({"recipe.yaml": b"kind: RecipeResult\n", "manifest.json": b"{}"})
    )
    other = bundle_artifact(build_layer({"recipe.yaml": b"kind: Other\n", "manifest.json": b"{}"}))
    referrers = []
    for n, subject in enumerate(subjects):
        about = bundle if subject == "ours" else other
        sig = signature_artifact(about.descriptor, json.dumps({"n": n}).encode())
        referrers.append(RawReferrer(sig.manifest, sig.blobs[-1]))
    return bundle, RawBundle(bundle.manifest, bundle.blobs[-1], tuple(referrers))


def test_a_raw_referrer_about_another_bundle_is_not_among_its_signatures() -> None:
    from generator.bundle.oci import materialize

    bundle, raw = _raw_with_referrers(["theirs", "ours"])
    got = materialize(raw, origin="layout", limits=Limits(), where=WHERE)
    assert len(got.signatures) == 1


def test_materialize_keeps_at_most_max_signatures_whatever_its_source_sent() -> None:
    from generator.bundle.oci import materialize

    bundle, raw = _raw_with_referrers(["ours"] * (MAX_SIGNATURES + 2))
    got = materialize(raw, origin="layout", limits=Limits(), where=WHERE)
    assert len(got.signatures) == MAX_SIGNATURES
    assert [s.referrer_digest for s in got.signatures] == sorted(
        s.referrer_digest for s in got.signatures
    )
