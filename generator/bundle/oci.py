"""Pure OCI knowledge shared by every source: media types, manifest checks, `materialize`.

A source (layout, cache, registry) gathers a `RawBundle`: the bundle manifest bytes, its single
layer and its Sigstore referrers, every blob already checked against its digest. `materialize`
then validates the shapes and unpacks the layer, the same way for every source.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from generator import strictjson
from generator.model import FailureClass, OciDigest

from .extract import extract_layer
from .refs import is_digest
from .types import (
    MAX_SIGNATURES,
    BundleFetchError,
    Limits,
    Materialized,
    Origin,
    SignatureCandidate,
    cap_error,
    digest_mismatch,
    integrity_error,
)

MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json"
INDEX_TYPE = "application/vnd.oci.image.index.v1+json"
DOCKER_MANIFEST_TYPE = "application/vnd.docker.distribution.manifest.v2+json"
LAYER_TYPE = "application/vnd.oci.image.layer.v1.tar+gzip"
AICR_ARTIFACT_TYPE = "application/vnd.nvidia.aicr.artifact"
SIGSTORE_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json"
EMPTY_CONFIG_TYPE = "application/vnd.oci.empty.v1+json"
EMPTY_CONFIG = b"{}"
REF_NAME = "org.opencontainers.image.ref.name"
MANIFEST_ACCEPT = ", ".join((MANIFEST_TYPE, INDEX_TYPE, DOCKER_MANIFEST_TYPE))


def sha256_digest(data: bytes) -> OciDigest:
    return OciDigest("sha256:" + hashlib.sha256(data).hexdigest())


def check_digest(data: bytes, digest: str, what: str, where: str) -> None:
    """Raise the (transient) mismatch error unless `data` hashes to `digest`."""
    actual = sha256_digest(data)
    if actual != digest:
        raise digest_mismatch(what, expected=digest, found=actual, where=where)


def referrers_tag(digest: OciDigest) -> str:
    """The OCI 1.1 tag-schema fallback tag for `digest`: `sha256-<hex>`."""
    return digest.replace(":", "-", 1)


@dataclass(frozen=True)
class Descriptor:
    media_type: str
    digest: OciDigest
    size: int
    artifact_type: str | None = None

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "mediaType": self.media_type,
            "digest": self.digest,
            "size": self.size,
        }
        if self.artifact_type:
            body["artifactType"] = self.artifact_type
        return body


@dataclass(frozen=True)
class RawReferrer:
    """A Sigstore referrer: its manifest bytes and its one layer, both digest-checked."""

    manifest: bytes
    layer: bytes

    @property
    def digest(self) -> OciDigest:
        return sha256_digest(self.manifest)


@dataclass(frozen=True)
class RawBundle:
    """Everything fetched for one bundle, before validation and unpacking."""

    manifest: bytes
    layer: bytes
    referrers: tuple[RawReferrer, ...] = ()
    needed_credentials: bool = False

    @property
    def digest(self) -> OciDigest:
        return sha256_digest(self.manifest)


def load_json(
    data: bytes, what: str, where: str, failure_class: FailureClass = FailureClass.INTEGRITY
) -> dict[str, Any]:
    """Parse a JSON object or raise `integrity` (or `failure_class`: `registry` for what a
    registry composed, such as its referrers list)."""
    try:
        value = strictjson.loads(data)
    except (UnicodeDecodeError, ValueError) as exc:
        over = isinstance(exc, strictjson.JsonLimitError)
        raise _refused(
            f"{what} {strictjson.problem(exc)}" if over else f"{what} is not valid JSON",
            where,
            failure_class,
            f"{type(exc).__name__}: {exc}",
        ) from exc
    if not isinstance(value, dict):
        raise _refused(f"{what} is not a JSON object", where, failure_class, type(value).__name__)
    return value


def _refused(message: str, where: str, failure_class: FailureClass, found: str) -> BundleFetchError:
    error = integrity_error(message, where=where, expected="a JSON object", found=found)
    if failure_class is not FailureClass.INTEGRITY:
        error.failure_class = failure_class
        error.hint = "the registry's answer is refused; check the registry or its mirror"
    return error


def parse_descriptor(value: Any, what: str, where: str) -> Descriptor:
    """A descriptor with a sha256 digest and a non-negative size."""
    if not isinstance(value, Mapping):
        raise integrity_error(
            f"{what} is not a descriptor",
            where=where,
            expected="{mediaType, digest, size}",
            found=repr(value)[:80],
        )
    digest, size, media = value.get("digest"), value.get("size"), value.get("mediaType")
    if not isinstance(digest, str) or not is_digest(digest):
        raise integrity_error(
            f"{what} has no usable digest",
            where=where,
            expected="sha256:<64 lowercase hex>",
            found=repr(digest)[:80],
        )
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise integrity_error(
            f"{what} has no usable size",
            where=where,
            expected="a non-negative integer",
            found=repr(size)[:80],
        )
    artifact = value.get("artifactType")
    return Descriptor(
        media_type=media if isinstance(media, str) else "",
        digest=OciDigest(digest),
        size=size,
        artifact_type=artifact if isinstance(artifact, str) else None,
    )


def _single_layer(body: Mapping[str, Any], what: str, where: str) -> Descriptor:
    layers = body.get("layers")
    if not isinstance(layers, list) or len(layers) != 1:
        count = len(layers) if isinstance(layers, list) else "no"
        raise integrity_error(
            f"{what} must have exactly one layer",
            where=where,
            expected="one layer",
            found=f"{count} layers",
        )
    return parse_descriptor(layers[0], f"{what} layer", where)


def bundle_layer(manifest: bytes, limits: Limits, where: str) -> Descriptor:
    """The bundle manifest's single layer descriptor, checked against the layer cap."""
    if len(manifest) > limits.manifest_json:
        raise cap_error(
            "the bundle manifest",
            "manifest_json",
            limits.manifest_json,
            where=where,
            found=f"{len(manifest)} bytes",
        )
    body = load_json(manifest, "bundle manifest", where)
    media = body.get("mediaType", MANIFEST_TYPE)
    if media not in (MANIFEST_TYPE, DOCKER_MANIFEST_TYPE) or body.get("schemaVersion") != 2:
        raise integrity_error(
            "bundle manifest is not an OCI image manifest",
            where=where,
            expected=f"schemaVersion 2, mediaType {MANIFEST_TYPE}",
            found=f"schemaVersion {body.get('schemaVersion')!r}, mediaType {media!r}",
        )
    layer = _single_layer(body, "bundle manifest", where)
    if layer.size > limits.compressed_layer:
        raise cap_error(
            "the bundle layer",
            "compressed_layer",
            limits.compressed_layer,
            where=where,
            found=f"{layer.size} bytes",
        )
    return layer


def referrer_artifact_type(body: Mapping[str, Any]) -> str | None:
    """`artifactType`, or the config media type for artifacts that predate the field."""
    artifact = body.get("artifactType")
    if isinstance(artifact, str):
        return artifact
    config = body.get("config")
    media = config.get("mediaType") if isinstance(config, Mapping) else None
    return media if isinstance(media, str) else None


def referrer_layer(
    manifest: bytes, subject: OciDigest, limits: Limits, where: str
) -> Descriptor | None:
    """The Sigstore layer of a referrer manifest about `subject`; None if it is another artifact.

    A manifest of the Sigstore type that is malformed or oversized fails closed (`integrity`),
    so junk cannot silently turn a signed bundle into an unsigned one.
    """
    if len(manifest) > limits.referrer_manifest:
        raise cap_error(
            "a referrer manifest",
            "referrer_manifest",
            limits.referrer_manifest,
            where=where,
            found=f"{len(manifest)} bytes",
        )
    body = load_json(manifest, "referrer manifest", where)
    if referrer_artifact_type(body) != SIGSTORE_TYPE:
        return None
    subject_value = body.get("subject")
    subject_digest = subject_value.get("digest") if isinstance(subject_value, Mapping) else None
    if subject_digest != subject:
        return None
    layer = _single_layer(body, "signature referrer", where)
    if layer.size > limits.sigstore_bundle:
        raise cap_error(
            "the signature referrer layer",
            "sigstore_bundle",
            limits.sigstore_bundle,
            where=where,
            found=f"{layer.size} bytes",
        )
    return layer


def index_candidates(
    index: bytes, limits: Limits, where: str, failure_class: FailureClass = FailureClass.INTEGRITY
) -> list[Descriptor]:
    """Descriptors in a referrers index that may be Sigstore referrers, in digest order
    (`failure_class`: what an index that is no JSON object is; `registry` for a registry's
    answer)."""
    if len(index) > limits.referrer_manifest:
        raise cap_error(
            "a referrers index",
            "referrer_manifest",
            limits.referrer_manifest,
            where=where,
            found=f"{len(index)} bytes",
        )
    body = load_json(index, "referrers index", where, failure_class)
    manifests = body.get("manifests", [])
    if not isinstance(manifests, list):
        raise integrity_error(
            "referrers index has no manifests list",
            where=where,
            expected="a list under `manifests`",
            found=type(manifests).__name__,
        )
    found = [parse_descriptor(m, "referrers index entry", where) for m in manifests]
    return select_candidates(found)


def select_candidates(descriptors: Iterable[Descriptor]) -> list[Descriptor]:
    """Sigstore-typed (or untyped) descriptors, de-duplicated, sorted by digest, at most 8."""
    unique = {d.digest: d for d in descriptors if d.artifact_type in (None, SIGSTORE_TYPE)}
    return [unique[k] for k in sorted(unique)][:MAX_SIGNATURES]


def materialize(raw: RawBundle, *, origin: Origin, limits: Limits, where: str) -> Materialized:
    """Validate a raw bundle's shapes, unpack its layer and order its signatures."""
    digest = raw.digest
    layer = bundle_layer(raw.manifest, limits, where)
    check_digest(raw.layer, layer.digest, "bundle layer", where)
    files = extract_layer(raw.layer, limits)
    signatures: dict[OciDigest, SignatureCandidate] = {}
    for referrer in raw.referrers:
        described = referrer_layer(referrer.manifest, digest, limits, where)
        if described is None:
            continue
        check_digest(referrer.layer, described.digest, "signature referrer layer", where)
        signatures[referrer.digest] = SignatureCandidate(referrer.digest, referrer.layer)
    ordered = tuple(signatures[k] for k in sorted(signatures))[:MAX_SIGNATURES]
    return Materialized(
        digest=digest,
        manifest=raw.manifest,
        layer_digest=layer.digest,
        files=files,
        signatures=ordered,
        origin=origin,
        needed_credentials=raw.needed_credentials,
    )
