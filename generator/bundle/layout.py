"""Read bundles from an OCI image layout on disk (`--oci-layout DIR`), every blob digest-checked.

The layout is indexed once: `index.json` and any nested indexes (such as a tag-schema
`sha256-<hex>` referrers index) are walked, and every listed manifest that may be a Sigstore
referrer is read to learn its `subject`. A bundle is then found by its manifest digest.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from generator.errors import InputError, Location
from generator.model import BundleRef, FailureClass, OciDigest

from ._files import _json_object, _json_object_or_none, read_capped
from .oci import (
    INDEX_TYPE,
    SIGSTORE_TYPE,
    Descriptor,
    RawBundle,
    RawReferrer,
    bundle_layer,
    check_digest,
    materialize,
    parse_descriptor,
    referrer_artifact_type,
    referrer_layer,
    select_candidates,
)
from .refs import digest_hex, is_digest, parse_reference
from .types import (
    MAX_SIGNATURES,
    BundleFetchError,
    Limits,
    Materialized,
    Origin,
    integrity_error,
)

__all__ = [
    "INDEX_FILE_CAP",
    "MAX_INDEX_DEPTH",
    "LayoutIndex",
    "LayoutReader",
    "OciLayoutSource",
    "read_capped",
]

INDEX_FILE_CAP = 64 * 1024 * 1024
"""`index.json` of a layout may list many bundles; it is still read with a cap."""
MAX_INDEX_DEPTH = 4


@dataclass
class LayoutIndex:
    """What indexing a layout learned: referrers by subject digest, and ref-name tags."""

    referrers: dict[OciDigest, set[OciDigest]] = field(default_factory=dict)
    tags: dict[str, OciDigest] = field(default_factory=dict)
    annotations: dict[OciDigest, Mapping[str, str]] = field(default_factory=dict)
    listed: set[OciDigest] = field(default_factory=set)


class LayoutReader:
    """Digest-checked blob reads from one layout root, shared by the layout source and cache."""

    def __init__(self, root: Path, limits: Limits) -> None:
        self.root = root
        self.limits = limits
        self._blobs = root / "blobs" / "sha256"

    def blob_path(self, digest: OciDigest) -> Path:
        return self._blobs / digest_hex(digest)

    def has_blob(self, digest: OciDigest) -> bool:
        return self.blob_path(digest).is_file()

    def read_blob(self, digest: OciDigest, cap: int, cap_name: str, what: str) -> bytes | None:
        """The blob's bytes after checking their digest; None when the blob is absent."""
        if not is_digest(digest):
            raise integrity_error(
                f"{what} has an unusable digest",
                where=str(self.root),
                expected="sha256:<64 lowercase hex>",
                found=repr(digest),
            )
        path = self.blob_path(digest)
        data = read_capped(path, cap, cap_name, what)
        if data is not None:
            check_digest(data, digest, what, str(path))
        return data

    def require_blob(self, digest: OciDigest, cap: int, cap_name: str, what: str) -> bytes:
        data = self.read_blob(digest, cap, cap_name, what)
        if data is None:
            raise BundleFetchError(
                f"OCI layout lacks the {what}",
                failure_class=FailureClass.NOT_FOUND,
                location=Location(str(self.blob_path(digest))),
                expected=f"blob {digest}",
                found="no such blob",
                hint="re-create the layout with the bundle's manifest, layer and referrers",
            )
        return data

    def index(self) -> LayoutIndex:
        """Walk `index.json` and nested indexes; read possible referrers to learn their subject."""
        top = read_capped(self.root / "index.json", INDEX_FILE_CAP, "index_file", "index.json")
        if top is None:
            raise BundleFetchError(
                "not an OCI image layout (no index.json)",
                failure_class=FailureClass.NOT_FOUND,
                location=Location(str(self.root)),
                expected="oci-layout, index.json and blobs/",
                found="no index.json",
                hint="pass a directory written as an OCI image layout",
            )
        result = LayoutIndex()
        self._walk_folder = str(self.root / "blobs" / "sha256")
        self._walk(top, "index.json", 0, result, top_level=True)
        return result

    def _walk_blob(
        self, digest: OciDigest, cap: int, cap_name: str, what: str
    ) -> tuple[bytes | None, str]:
        """`read_blob` for the index walk, and the blob's path as text (for messages).

        Indexing reads thousands of small manifests each build, so the usual case (a regular
        file within the cap whose bytes hash to its name) is read here without the general
        path's per-call overhead; anything else goes through `read_blob`, which gives the same
        bytes or raises the same error as always.
        """
        hex_digest = digest[7:] if digest.startswith("sha256:") else ""
        where = f"{self._walk_folder}/{hex_digest}" if hex_digest else ""
        data: bytes | None = None
        if hex_digest and is_digest(digest):
            try:
                fd = os.open(where, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError:
                fd = -1
            if fd >= 0:
                try:
                    info = os.fstat(fd)
                    if stat.S_ISREG(info.st_mode) and info.st_size <= cap:
                        data = os.read(fd, info.st_size + 1)
                except OSError:
                    data = None
                finally:
                    os.close(fd)
            if data is not None and (
                len(data) != info.st_size or hashlib.sha256(data).hexdigest() != hex_digest
            ):
                data = None
        if data is None:
            data = self.read_blob(digest, cap, cap_name, what)
            where = str(self.blob_path(digest))
        return data, where

    def _walk(
        self, data: bytes, where: str, depth: int, result: LayoutIndex, *, top_level: bool
    ) -> None:
        body = _json_object(data, where) if top_level else _json_object_or_none(data)
        if body is None:
            return  # a listed index that cannot be read lists nothing (see _json_object_or_none)
        entries = body.get("manifests", [])
        if not isinstance(entries, list):
            raise integrity_error(
                "index has no manifests list", where=where, expected="a list under `manifests`"
            )
        for entry in entries:
            descriptor = parse_descriptor(entry, "index entry", where)
            result.listed.add(descriptor.digest)
            notes = entry.get("annotations") if isinstance(entry, dict) else None
            if isinstance(notes, dict):
                result.annotations[descriptor.digest] = {str(k): str(v) for k, v in notes.items()}
                name = notes.get("org.opencontainers.image.ref.name")
                if top_level and isinstance(name, str):
                    result.tags[name] = descriptor.digest
            if descriptor.media_type == INDEX_TYPE:
                if depth >= MAX_INDEX_DEPTH:
                    continue
                nested, nested_where = self._walk_blob(
                    descriptor.digest, self.limits.manifest_json, "manifest_json", "nested index"
                )
                if nested is not None:
                    self._walk(nested, nested_where, depth + 1, result, top_level=False)
                continue
            self._note_referrer(descriptor, result)

    def _note_referrer(self, descriptor: Descriptor, result: LayoutIndex) -> None:
        if descriptor.artifact_type not in (None, SIGSTORE_TYPE):
            return
        data, where = self._walk_blob(
            descriptor.digest, self.limits.referrer_manifest, "referrer_manifest", "listed manifest"
        )
        if data is None:
            return
        body = _json_object_or_none(data)
        if body is None:
            return
        subject = body.get("subject")
        target = subject.get("digest") if isinstance(subject, dict) else None
        if (
            referrer_artifact_type(body) == SIGSTORE_TYPE
            and isinstance(target, str)
            and is_digest(target)
        ):
            result.referrers.setdefault(OciDigest(target), set()).add(descriptor.digest)

    def raw_bundle(self, digest: OciDigest, referrers: set[OciDigest]) -> RawBundle | None:
        """Read a bundle and up to 8 of its referrers; None if the manifest is not here."""
        where = str(self.blob_path(digest))
        manifest = self.read_blob(
            digest, self.limits.manifest_json, "manifest_json", "bundle manifest"
        )
        if manifest is None:
            return None
        layer_descriptor = bundle_layer(manifest, self.limits, where)
        layer = self.require_blob(
            layer_descriptor.digest,
            self.limits.compressed_layer,
            "compressed_layer",
            "bundle layer",
        )
        chosen = select_candidates(Descriptor("", d, 0) for d in referrers)
        raws = tuple(self._raw_referrer(c.digest, digest) for c in chosen[:MAX_SIGNATURES])
        return RawBundle(manifest=manifest, layer=layer, referrers=raws)

    def _raw_referrer(self, digest: OciDigest, subject: OciDigest) -> RawReferrer:
        where = str(self.blob_path(digest))
        manifest = self.require_blob(
            digest,
            self.limits.referrer_manifest,
            "referrer_manifest",
            "signature referrer manifest",
        )
        layer = referrer_layer(manifest, subject, self.limits, where)
        if layer is None:
            raise integrity_error(
                "listed referrer is not a Sigstore referrer of the bundle", where=where
            )
        blob = self.require_blob(
            layer.digest, self.limits.sigstore_bundle, "sigstore_bundle", "signature referrer layer"
        )
        return RawReferrer(manifest=manifest, layer=blob)

    def materialize(
        self,
        digest: OciDigest,
        referrers: set[OciDigest],
        origin: Origin,
        *,
        needed_credentials: bool = False,
    ) -> Materialized | None:
        raw = self.raw_bundle(digest, referrers)
        if raw is None:
            return None
        if needed_credentials:
            raw = RawBundle(raw.manifest, raw.layer, raw.referrers, needed_credentials=True)
        return materialize(raw, origin=origin, limits=self.limits, where=str(self.root))


class OciLayoutSource:
    """A `BundleSource` over one OCI image layout, indexed once when constructed.

    Raises `InputError` when `root` is not a readable, well-formed layout.
    """

    def __init__(
        self, root: Path, limits: Limits | None = None, index: LayoutIndex | None = None
    ) -> None:
        """`index`: this layout's index made already (by an `IndexPrefetch`), else made here."""
        self.root = root
        self._reader = LayoutReader(root, limits or Limits())
        try:
            self._index = index if index is not None else self._reader.index()
        except BundleFetchError as exc:
            raise InputError(
                f"--oci-layout {root} cannot be used: {exc.message}",
                location=exc.location or Location(str(root)),
                expected=exc.expected,
                found=exc.found,
                hint=exc.hint or "pass a directory written as an OCI image layout",
            ) from exc

    def find(self, ref: BundleRef) -> Materialized | None:
        """The bundle if this layout holds its manifest, else None."""
        digest = parse_reference(ref).digest
        return self.find_digest(digest)

    def find_digest(self, digest: OciDigest) -> Materialized | None:
        """The bundle with manifest `digest` and its indexed Sigstore referrers, else None."""
        referrers = set(self._index.referrers.get(digest, set()))
        return self._reader.materialize(digest, referrers, "layout")

    def fetch(self, ref: BundleRef) -> Materialized:
        found = self.find(ref)
        if found is None:
            raise BundleFetchError(
                f"OCI layout {self.root} does not hold bundle {ref.digest}",
                failure_class=FailureClass.NOT_FOUND,
                location=Location(str(self.root)),
                expected=f"a manifest blob {ref.digest}",
                found="no such blob",
                hint="add the bundle to the layout, or let it be fetched from the registry",
            )
        return found
