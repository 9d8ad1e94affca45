"""The index of an OCI layout (`LayoutIndex`), kept between builds.

Indexing a layout reads every manifest its `index.json` lists (thirty thousand small files for
ten thousand bundles, more than a second of a core), yet what it learns depends only on those
bytes: `index.json` and the blobs it names, which are named by their own sha256 and checked
against it whenever a bundle is read (`LayoutReader`), as the evaluation memo's key assumes
(`generator.buildmemo`). A layout's index is kept under a key over the layout's path, the
sha256 of its `index.json` and `oci-layout` files, its `blobs/sha256` folder's identity and
modification time (a blob added or removed changes it) and the read limits. `<cache>/layouts/
<key>.json` is sealed with an HMAC tag (`generator.cacheauth`, purpose `layout`) bound to its
key, at most `MAX_INDEX_BYTES`, read without following a link; anything that does not check or
is not exactly the shape written (every digest `sha256:<64 hex>`) is a miss, and the layout is
indexed again. A blob changed in place after its layout was indexed is found when a bundle
reads it, as it is without this memo.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path
from typing import Any

import orjson

from generator.cacheauth import CacheAuth, Purpose, keep_only_entries, keyed_entry, read_cache_file
from generator.model import OciDigest

from .layout import INDEX_FILE_CAP, LayoutIndex
from .refs import is_digest
from .types import Limits

__all__ = ["MAX_INDEX_BYTES", "LayoutIndexMemo"]

INDEX_VERSION = "layout-index/v1"
MAX_INDEX_BYTES = 256 << 20
"""A kept index larger than this is not read."""


class LayoutIndexMemo:
    """Kept layout indexes under `<cache>/layouts/`, one sealed file per key."""

    def __init__(self, root: Path, auth: CacheAuth) -> None:
        self.root = root
        self.auth = auth

    def key(self, layout: Path, limits: Limits) -> str | None:
        """The key of `layout`'s index as it is now; None when its files cannot be read (it
        is then indexed, which reports what is wrong)."""
        try:
            blobs = os.stat(layout / "blobs" / "sha256", follow_symlinks=False)
        except OSError:
            return None
        parts: list[Any] = [INDEX_VERSION, str(layout.absolute()), repr(limits)]
        parts.append([blobs.st_dev, blobs.st_ino, blobs.st_mode, blobs.st_mtime_ns])
        for name in ("index.json", "oci-layout"):
            data = read_cache_file(layout / name, INDEX_FILE_CAP)
            if data is None:
                return None
            parts.append(hashlib.sha256(data).hexdigest())
        return hashlib.sha256(orjson.dumps(parts)).hexdigest()

    def _file(self, key: str) -> Path:
        return keyed_entry(self.root, key, ".json", "layout index")

    def has(self, key: str) -> bool:
        """Whether an index is kept under `key` (not yet checked: `load` does)."""
        return self._file(key).is_file()

    def load(self, key: str) -> LayoutIndex | None:
        """The index kept under `key`, or None (absent, unreadable, failing its tag, or of
        another shape, then removed): never an error."""
        stored = read_cache_file(self._file(key), MAX_INDEX_BYTES)
        if stored is None:
            return None
        body = self.auth.open(Purpose.LAYOUT, stored, key.encode(), f"layout index {key}")
        try:
            if body is not None:
                return _index_from(orjson.loads(body))
        except (ValueError, TypeError, AttributeError, orjson.JSONDecodeError):
            pass
        with contextlib.suppress(OSError):  # the next build indexes the layout and keeps it
            os.unlink(self._file(key))
        return None

    def store(self, key: str, index: LayoutIndex) -> None:
        """Keep `index` under `key` (the only index kept for its layout path is the newest:
        older ones are left for `keep_only`); failures only cost the next build."""
        doc = {
            "referrers": {d: sorted(s) for d, s in sorted(index.referrers.items())},
            "tags": dict(sorted(index.tags.items())),
            "annotations": {d: dict(a) for d, a in sorted(index.annotations.items())},
            "listed": sorted(index.listed),
        }
        with contextlib.suppress(OSError, TypeError):
            self.root.mkdir(parents=True, exist_ok=True)
            self.auth.write_sealed(self._file(key), Purpose.LAYOUT, orjson.dumps(doc), key.encode())

    def keep_only(self, keys: set[str]) -> None:
        """Remove every kept index but those of `keys`."""
        keep_only_entries(self.root, {f"{key}.json" for key in keys})


def _digest(value: Any) -> OciDigest:
    if type(value) is not str or not is_digest(value):
        raise ValueError("a kept layout index holds something that is not a digest")
    return OciDigest(value)


def _text(value: Any) -> str:
    if type(value) is not str:
        raise ValueError("a kept layout index holds something that is not text")
    return value


def _index_from(doc: Any) -> LayoutIndex:
    """The `LayoutIndex` of a kept document; ValueError (TypeError, AttributeError) for any
    other shape."""
    if type(doc) is not dict or set(doc) != {"referrers", "tags", "annotations", "listed"}:
        raise ValueError("a kept layout index of another shape")
    return LayoutIndex(
        referrers={
            _digest(d): {_digest(r) for r in _list(rs)} for d, rs in _dict(doc["referrers"]).items()
        },
        tags={_text(name): _digest(d) for name, d in _dict(doc["tags"]).items()},
        annotations={
            _digest(d): {_text(k): _text(v) for k, v in _dict(notes).items()}
            for d, notes in _dict(doc["annotations"]).items()
        },
        listed={_digest(d) for d in _list(doc["listed"])},
    )


def _dict(value: Any) -> dict[str, Any]:
    if type(value) is not dict:
        raise ValueError("a kept layout index field is not an object")
    return value


def _list(value: Any) -> list[Any]:
    if type(value) is not list:
        raise ValueError("a kept layout index field is not a list")
    return value
