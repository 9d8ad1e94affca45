"""Write OCI image layouts (oci-layout, index.json, blobs/sha256/): the demo tree, tests, the cache.

The writer is content-addressed: `put_blob` stores bytes under their own sha256, `add_manifest`
also lists the manifest in `index.json`. `close()` writes `index.json` deterministically (sorted by
digest, then ref name) so the same content always gives the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from generator.model import OciDigest

OCI_LAYOUT_VERSION = {"imageLayoutVersion": "1.0.0"}
INDEX_MEDIA_TYPE = "application/vnd.oci.image.index.v1+json"


def digest_of(data: bytes) -> OciDigest:
    """`sha256:<hex>` of `data`."""
    return OciDigest("sha256:" + hashlib.sha256(data).hexdigest())


def _tmp_suffix() -> str:
    """A temporary-file suffix unique to this process and thread (atomic-rename writes)."""
    return f".tmp{os.getpid()}-{threading.get_ident()}"


class LayoutWriter:
    """Accumulates blobs and manifests into an OCI image layout at `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._blobs = root / "blobs" / "sha256"
        self._blobs.mkdir(parents=True, exist_ok=True)
        (root / "oci-layout").write_text(json.dumps(OCI_LAYOUT_VERSION) + "\n", encoding="utf-8")
        self._entries: dict[tuple[str, str], dict[str, Any]] = {}
        index = root / "index.json"
        if index.is_file():
            for entry in json.loads(index.read_text(encoding="utf-8")).get("manifests", []):
                name = (entry.get("annotations") or {}).get("org.opencontainers.image.ref.name", "")
                self._entries[(entry["digest"], name)] = entry

    def put_blob(self, data: bytes) -> OciDigest:
        """Store `data` as a blob (atomically, once) and return its digest."""
        digest = digest_of(data)
        target = self._blobs / digest.split(":", 1)[1]
        if not target.exists():
            tmp = target.with_name(target.name + _tmp_suffix())
            tmp.write_bytes(data)
            os.replace(tmp, target)
        return digest

    def add_manifest(
        self,
        data: bytes,
        media_type: str,
        *,
        artifact_type: str | None = None,
        ref_name: str | None = None,
        annotations: Mapping[str, str] | None = None,
    ) -> OciDigest:
        """Store a manifest (or index) blob and list it in `index.json`.

        `annotations` are extra descriptor annotations (the ref name is added to them).
        """
        digest = self.put_blob(data)
        entry: dict[str, Any] = {"mediaType": media_type, "digest": digest, "size": len(data)}
        if artifact_type:
            entry["artifactType"] = artifact_type
        notes = dict(annotations or {})
        if ref_name:
            notes["org.opencontainers.image.ref.name"] = ref_name
        if notes:
            entry["annotations"] = notes
        if ref_name:
            # A tag names one manifest: re-tagging moves it (as a registry would).
            for key in [k for k in self._entries if k[1] == ref_name and k[0] != digest]:
                del self._entries[key]
        self._entries[(digest, ref_name or "")] = entry
        return digest

    def close(self) -> None:
        """Write `index.json` (sorted, deterministic) atomically."""
        manifests = [self._entries[key] for key in sorted(self._entries)]
        body = {"schemaVersion": 2, "mediaType": INDEX_MEDIA_TYPE, "manifests": manifests}
        tmp = self.root / f"index.json{_tmp_suffix()}"
        tmp.write_text(json.dumps(body, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, self.root / "index.json")
