"""Build OCI artifacts in aicr's shape: the bundle manifest, its layer, the Sigstore referrer.

Used by tests, the demo and the cache. The layer is a deterministic gzip tar (sorted entries,
directory entries, zero mtimes, gzip mtime 0), so the same files always give the same digest.
"""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from generator.model import OciDigest

from .layout_writer import LayoutWriter
from .oci import (
    AICR_ARTIFACT_TYPE,
    EMPTY_CONFIG,
    EMPTY_CONFIG_TYPE,
    INDEX_TYPE,
    LAYER_TYPE,
    MANIFEST_TYPE,
    SIGSTORE_TYPE,
    Descriptor,
    referrers_tag,
    sha256_digest,
)


def _json(body: object) -> bytes:
    return json.dumps(body, indent=2, sort_keys=True).encode() + b"\n"


def build_layer(files: Mapping[str, bytes], *, prefix: str | None = None) -> bytes:
    """A deterministic gzip tar of `files` (paths with `/`), optionally under `prefix/`."""
    paths = {f"{prefix}/{p}" if prefix else p: data for p, data in files.items()}
    dirs = sorted({"/".join(p.split("/")[:i]) for p in paths for i in range(1, p.count("/") + 1)})
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted([*dirs, *paths]):
            info = tarfile.TarInfo(name + "/" if name in dirs else name)
            info.mtime = 0
            if name in paths:
                info.size = len(paths[name])
                info.mode = 0o644
                tar.addfile(info, io.BytesIO(paths[name]))
            else:
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                tar.addfile(info)
    return gzip.compress(raw.getvalue(), compresslevel=9, mtime=0)


@dataclass(frozen=True)
class Artifact:
    """A manifest and the blobs it references (config first, then layers)."""

    manifest: bytes
    blobs: tuple[bytes, ...]
    media_type: str = MANIFEST_TYPE
    artifact_type: str | None = None

    @property
    def digest(self) -> OciDigest:
        return sha256_digest(self.manifest)

    @property
    def descriptor(self) -> Descriptor:
        return Descriptor(self.media_type, self.digest, len(self.manifest), self.artifact_type)


def build_manifest(
    artifact_type: str,
    layer: bytes,
    layer_type: str,
    subject: Descriptor | None = None,
    annotations: Mapping[str, str] | None = None,
) -> Artifact:
    """A single-layer OCI 1.1 artifact manifest with the empty config."""
    config = Descriptor(EMPTY_CONFIG_TYPE, sha256_digest(EMPTY_CONFIG), len(EMPTY_CONFIG))
    body: dict[str, object] = {
        "schemaVersion": 2,
        "mediaType": MANIFEST_TYPE,
        "artifactType": artifact_type,
        "config": config.as_json(),
        "layers": [Descriptor(layer_type, sha256_digest(layer), len(layer)).as_json()],
    }
    if subject is not None:
        body["subject"] = {
            "mediaType": subject.media_type,
            "digest": subject.digest,
            "size": subject.size,
        }
    if annotations:
        body["annotations"] = dict(annotations)
    return Artifact(_json(body), (EMPTY_CONFIG, layer), MANIFEST_TYPE, artifact_type)


def bundle_artifact(layer: bytes, *, annotations: Mapping[str, str] | None = None) -> Artifact:
    """The aicr evidence manifest (artifactType `application/vnd.nvidia.aicr.artifact`)."""
    notes = {
        "org.opencontainers.image.created": "1970-01-01T00:00:00Z",
        "org.opencontainers.image.title": "AICR Recipe Evidence",
    }
    notes.update(annotations or {})
    return build_manifest(AICR_ARTIFACT_TYPE, layer, LAYER_TYPE, None, notes)


def signature_artifact(subject: Descriptor, bundle_json: bytes) -> Artifact:
    """A Sigstore-bundle referrer whose `subject` is the bundle manifest."""
    return build_manifest(SIGSTORE_TYPE, bundle_json, SIGSTORE_TYPE, subject, None)


def referrers_index(referrers: Iterable[Artifact]) -> bytes:
    """An OCI image index listing referrers (the tag-schema `sha256-<hex>` content)."""
    manifests = [r.descriptor.as_json() for r in sorted(referrers, key=lambda a: a.digest)]
    return _json({"schemaVersion": 2, "mediaType": INDEX_TYPE, "manifests": manifests})


def write_to_layout(
    writer: LayoutWriter,
    bundle: Artifact,
    signatures: Sequence[Artifact] = (),
    *,
    tag: str | None = None,
    tag_schema: bool = False,
) -> OciDigest:
    """Store a bundle and its referrers in a layout; optionally also the `sha256-<hex>` index."""
    for blob in (*bundle.blobs, *(b for s in signatures for b in s.blobs)):
        writer.put_blob(blob)
    digest = writer.add_manifest(
        bundle.manifest, bundle.media_type, artifact_type=bundle.artifact_type, ref_name=tag
    )
    for signature in signatures:
        if tag_schema:
            writer.put_blob(signature.manifest)
        else:
            writer.add_manifest(
                signature.manifest, signature.media_type, artifact_type=signature.artifact_type
            )
    if tag_schema and signatures:
        writer.add_manifest(referrers_index(signatures), INDEX_TYPE, ref_name=referrers_tag(digest))
    return digest
