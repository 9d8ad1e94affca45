"""The OCI side of a test bundle: `manifest.json`, the in-toto statement, the deterministic
layer, the image manifest and the signature referrer."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from collections.abc import Mapping
from typing import Any

from generator.model import (
    OciDigest,
)
from generator.testing._bundle_documents import _sha, go_json
from generator.testing._bundle_spec import (
    _NOT_IN_MANIFEST,
    AICR_ARTIFACT_TYPE,
    EMPTY_CONFIG,
    LAYER_MEDIA_TYPE,
    OCI_EMPTY_MEDIA_TYPE,
    OCI_MANIFEST_MEDIA_TYPE,
    STATEMENT_TYPE,
)
from generator.testing.authority import BUNDLE_MEDIA_TYPE


def manifest_json(files: Mapping[str, bytes]) -> bytes:
    """aicr's `manifest.json` (evidence-format 3.2) over every file except the three excluded."""
    entries: list[dict[str, Any]] = []
    for path in sorted((p for p in files if p not in _NOT_IN_MANIFEST), key=lambda p: p.encode()):
        entry: dict[str, Any] = {
            "path": path,
            "size": len(files[path]),
            "sha256": _sha(files[path]),
        }
        media = _media_type(path)
        if media:
            entry["mediaType"] = media
        entries.append(entry)
    return go_json({"schemaVersion": "1.0.0", "files": entries})


def _media_type(path: str) -> str:
    if path.endswith(".cdx.json"):
        return "application/vnd.cyclonedx+json"
    if path.endswith(".intoto.jsonl"):
        return "application/vnd.in-toto+jsonl"
    if path.endswith(".json"):
        return "application/json"
    if path.endswith((".yaml", ".yml")):
        return "application/yaml"
    if path.endswith(".log"):
        return "text/plain"
    return ""


def statement_bytes(
    subject_name: str, subject_hex: str, predicate_type: str, predicate: Mapping[str, Any]
) -> bytes:
    """An in-toto v1 Statement, compact JSON with sorted keys (protojson order is not stable)."""
    doc = {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": subject_name, "digest": {"sha256": subject_hex}}],
        "predicateType": predicate_type,
        "predicate": predicate,
    }
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def layer_tar(files: Mapping[str, bytes], prefix: str = "") -> bytes:
    """Deterministic tar: sorted entries, `dir/` entries mode 0755, files 0644, zero mtimes."""
    names: set[str] = set()
    for path in files:
        full = prefix + path
        parts = full.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            names.add("/".join(parts[:i]) + "/")
        names.add(full)
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name in sorted(names, key=lambda n: n.encode()):
            info = tarfile.TarInfo(name.rstrip("/") if name.endswith("/") else name)
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if name.endswith("/"):
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                tar.addfile(info)
            else:
                data = files[name[len(prefix) :]]
                info.mode = 0o644
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def gzip_deterministic(data: bytes) -> bytes:
    """gzip at best compression, zero mtime, no file name, OS byte 255."""
    packed = bytearray(gzip.compress(data, compresslevel=9, mtime=0))
    packed[9] = 255
    return bytes(packed)


def _empty_config() -> dict[str, Any]:
    return {
        "mediaType": OCI_EMPTY_MEDIA_TYPE,
        "digest": _sha(EMPTY_CONFIG),
        "size": 2,
        "data": "e30=",
    }


def oci_manifest(
    layer: bytes, tar_digest: OciDigest, *, aicr_version: str, recipe_name: str
) -> bytes:
    """The OCI 1.1 image manifest (evidence-format 3.3), compact JSON in Go field order."""
    doc = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST_MEDIA_TYPE,
        "artifactType": AICR_ARTIFACT_TYPE,
        "config": _empty_config(),
        "layers": [
            {
                "mediaType": LAYER_MEDIA_TYPE,
                "digest": _sha(layer),
                "size": len(layer),
                "annotations": {
                    "io.deis.oras.content.digest": tar_digest,
                    "io.deis.oras.content.unpack": "true",
                    "org.opencontainers.image.title": "summary-bundle",
                },
            }
        ],
        "annotations": {
            "org.opencontainers.image.created": "1970-01-01T00:00:00Z",
            "org.opencontainers.image.description": f"AICR recipe evidence for {recipe_name}",
            "org.opencontainers.image.source": "https://github.com/NVIDIA/aicr",
            "org.opencontainers.image.title": "AICR Recipe Evidence",
            "org.opencontainers.image.vendor": "NVIDIA",
            "org.opencontainers.image.version": aicr_version,
        },
    }
    return go_json(doc, indent=None)


def referrer_manifest(
    sigstore_bundle: bytes, subject_manifest: bytes, predicate_type: str
) -> bytes:
    """The signature referrer: subject = the bundle manifest, one Sigstore-bundle layer."""
    doc = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST_MEDIA_TYPE,
        "artifactType": BUNDLE_MEDIA_TYPE,
        "config": _empty_config(),
        "layers": [
            {
                "mediaType": BUNDLE_MEDIA_TYPE,
                "digest": _sha(sigstore_bundle),
                "size": len(sigstore_bundle),
            }
        ],
        "subject": {
            "mediaType": OCI_MANIFEST_MEDIA_TYPE,
            "digest": _sha(subject_manifest),
            "size": len(subject_manifest),
        },
        "annotations": {
            "dev.sigstore.bundle.content": "dsse-envelope",
            "dev.sigstore.bundle.predicateType": predicate_type,
            "org.opencontainers.image.created": "1970-01-01T00:00:00Z",
        },
    }
    return go_json(doc, indent=None)
