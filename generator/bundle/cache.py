"""A content-addressed bundle cache that is itself an OCI image layout.

Each cached bundle is its manifest, layer and Sigstore referrer blobs, the manifest listed in
`index.json` (the commit marker, written last) and, when signed, a tag-schema `sha256-<hex>`
referrers index. Blobs are written by atomic rename and `index.json` is rewritten under an
exclusive file lock, so several processes and threads may share one cache. Only bytes whose
digests were checked are stored; a corrupt or partial entry reads as a miss.

Every blob is checked against its digest when read. What the digests do not cover, the
manifest's annotations in `index.json` (whether the registry needed credentials, which the
site publishes), is covered by an HMAC annotation (`generator.cacheauth`) over the manifest
digest and that flag; an entry without a valid one, or with a blob that no longer matches
its digest, is a miss counted as an authentication failure (an entry written before entries
were tagged is a plain miss).
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from generator.cacheauth import CacheAuth, Purpose, note_failure
from generator.model import OciDigest

from .artifact import Artifact, referrers_index
from .layout import LayoutIndex, LayoutReader
from .layout_writer import LayoutWriter
from .oci import (
    EMPTY_CONFIG,
    INDEX_TYPE,
    MANIFEST_TYPE,
    SIGSTORE_TYPE,
    RawBundle,
    bundle_layer,
    check_digest,
    referrer_layer,
    referrers_tag,
    sha256_digest,
)
from .types import BundleFetchError, Limits, Materialized

NEEDED_CREDENTIALS = "dev.evidence-dashboard.needed-credentials"
"""Index annotation: the registry refused this bundle anonymously."""
ENTRY_TAG = "dev.evidence-dashboard.entry-tag"
"""Index annotation: the HMAC of the manifest digest and the credentials flag."""


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CACHE_HOME/evidence-dashboard` when that is absolute, else the platform's user cache
    folder (`platformdirs.user_cache_dir`: `~/.cache/evidence-dashboard` on Linux)."""
    import platformdirs

    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME", "")
    if base and Path(base).is_absolute():
        return Path(base) / "evidence-dashboard"
    return Path(platformdirs.user_cache_dir("evidence-dashboard", appauthor=False))


class BundleCache:
    """Get and put materialized bundles by manifest digest."""

    def __init__(
        self, root: Path, limits: Limits | None = None, auth: CacheAuth | None = None
    ) -> None:
        self.root = root
        self.auth = auth if auth is not None else CacheAuth.from_environment()
        self.limits = limits or Limits()
        self._reader = LayoutReader(root, self.limits)
        self._lock = threading.Lock()
        self._snapshot: tuple[tuple[int, int, int], LayoutIndex] | None = None

    # ------------------------------------------------------------------ reading

    def _index(self) -> LayoutIndex | None:
        """The parsed index, re-read only when `index.json` changed on disk."""
        try:
            info = os.stat(self.root / "index.json")
        except FileNotFoundError:
            return None
        key = (info.st_ino, info.st_mtime_ns, info.st_size)
        with self._lock:
            if self._snapshot is not None and self._snapshot[0] == key:
                return self._snapshot[1]
        index = self._reader.index()
        with self._lock:
            self._snapshot = (key, index)
        return index

    def get(self, digest: OciDigest) -> Materialized | None:
        """The cached bundle, or None when absent, partial or corrupt (a corrupt entry is a miss)."""
        try:
            index = self._index()
            if index is None or digest not in index.listed:
                return None
            referrers = set(index.referrers.get(digest, set()))
            notes = index.annotations.get(digest, {})
            credentials = notes.get(NEEDED_CREDENTIALS) == "true"
            tag = notes.get(ENTRY_TAG)
            if tag is None:
                return None  # written before entries were tagged: a plain miss
            if not self.auth.check(
                Purpose.BUNDLE, digest.encode(), tag.encode(), _flag(credentials)
            ):
                note_failure(f"bundle {digest}")
                return None
            found = self._reader.materialize(digest, referrers, "cache")
        except BundleFetchError as exc:
            if exc.message.endswith("does not match its digest"):
                note_failure(f"bundle blob {digest}")
            return None
        if found is None:
            return None
        return replace(found, needed_credentials=True) if credentials else found

    # ------------------------------------------------------------------ writing

    @contextmanager
    def _exclusive(self) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with self._lock, open(self.root / ".lock", "a+b") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def put(self, raw: RawBundle) -> OciDigest:
        """Store a fetched bundle after re-checking every digest; returns its manifest digest.

        Raises `BundleFetchError` if a blob does not match the manifest that names it, and
        `OSError` if the cache cannot be written.
        """
        digest = raw.digest
        where = f"cache put {digest}"
        layer = bundle_layer(raw.manifest, self.limits, where)
        check_digest(raw.layer, layer.digest, "bundle layer", where)
        referrers = []
        for referrer in raw.referrers:
            described = referrer_layer(referrer.manifest, digest, self.limits, where)
            if described is None:
                continue
            check_digest(referrer.layer, described.digest, "signature referrer layer", where)
            referrers.append(referrer)
        blobs = [
            EMPTY_CONFIG,
            raw.layer,
            *(b for r in referrers for b in (r.layer, r.manifest)),
            raw.manifest,
        ]
        with self._exclusive():
            for blob in blobs:
                self._evict_corrupt(blob)
            writer = LayoutWriter(self.root)
            writer.put_blob(EMPTY_CONFIG)
            writer.put_blob(raw.layer)
            for referrer in referrers:
                writer.put_blob(referrer.layer)
                writer.put_blob(referrer.manifest)
            if referrers:
                listed = [Artifact(r.manifest, (), MANIFEST_TYPE, SIGSTORE_TYPE) for r in referrers]
                writer.add_manifest(
                    referrers_index(listed), INDEX_TYPE, ref_name=referrers_tag(digest)
                )
            notes = {NEEDED_CREDENTIALS: "true"} if raw.needed_credentials else {}
            notes[ENTRY_TAG] = self.auth.tag(
                Purpose.BUNDLE, sha256_digest(raw.manifest).encode(), _flag(raw.needed_credentials)
            ).decode("ascii")
            writer.add_manifest(raw.manifest, MANIFEST_TYPE, annotations=notes)
            writer.close()
        return sha256_digest(raw.manifest)

    def _evict_corrupt(self, blob: bytes) -> None:
        """Remove a stored blob that no longer matches its name, so it is written afresh."""
        path = self._reader.blob_path(sha256_digest(blob))
        try:
            stored = path.read_bytes() if path.is_file() else None
        except OSError:
            stored = None
        if stored is not None and stored != blob:
            path.unlink(missing_ok=True)


def _flag(needed_credentials: bool) -> bytes:
    return b"needed-credentials" if needed_credentials else b"anonymous"
