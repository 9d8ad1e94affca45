"""Pointer files parsed before are not parsed again: the YAML of each, kept between builds.

Reading a tree of 10,000 pointers spends most of its time turning YAML into data. A build keeps
the parsed document of every pointer file it read, under the sha256 of the file's bytes, in one
sealed file (`<cache>/tree/pointer-docs.json`, `generator.cacheauth` purpose `pointer`). The
next build that reads the same bytes takes the document from there and still runs every pointer
rule on it (`validate_pointer`), so a cached document can only be one that, parsed from those
bytes, passed the YAML limits; what a pointer *means* is always decided now. A file whose
YAML fails is parsed again each time (its error names the file).

Every byte read back is hostile until checked: a memo file that is a link, not a regular file,
larger than `MAX_MEMO_BYTES`, failing its tag, written by other code (`code_digest`) or not of
the expected shape is empty; an entry that does not decode to a mapping is a miss. The memo
keeps the documents of the files this build read, no others, so it never outgrows the tree.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson

from generator.buildmemo import code_digest
from generator.cacheauth import CacheAuth, Purpose, read_cache_file
from generator.model import Pointer
from generator.tree import load_pointer_doc, validate_pointer
from generator.verify.serialize import decode_data, encode_data

__all__ = ["MAX_MEMO_BYTES", "MEMO_NAME", "PointerDocs"]

MEMO_NAME = Path("tree") / "pointer-docs.json"
MAX_MEMO_BYTES = 128 << 20
"""A memo file larger than this is not read (10,000 pointers make a few MB)."""
_VERSION = "pointer-docs/v1"
_SEAL_NAME = _VERSION.encode()


class PointerDocs:
    """`parse(data, file)`, the `ParsePointer` of a build's scan, with the documents of the
    previous build's pointer files at hand (see the module). `save` keeps this build's."""

    def __init__(self, file: Path, auth: CacheAuth) -> None:
        self.file = file
        self.auth = auth
        self._code = code_digest()
        self._stored: dict[str, Any] = {}
        self._plain = False
        """The stored documents hold no tagged value (`encode_data`): taken as parsed."""
        self._kept: dict[str, Any] = {}
        self._new = 0
        self.hits = 0
        self.digests: dict[str, str] = {}
        """Each parsed file's path -> the sha256 of the bytes parsed."""

    @classmethod
    def load(cls, file: Path, auth: CacheAuth) -> PointerDocs:
        """The memo at `file` (empty when absent or not usable: never an error)."""
        docs = cls(file, auth)
        docs._stored = docs._read()
        return docs

    def _read(self) -> dict[str, Any]:
        stored = read_cache_file(self.file, MAX_MEMO_BYTES)
        if stored is None:
            return {}
        body = self.auth.open(Purpose.POINTER, stored, _SEAL_NAME, f"pointer memo {self.file}")
        if body is None:
            return {}
        try:
            doc = orjson.loads(body)
        except orjson.JSONDecodeError:
            return {}
        # Every tagged value is an object with a `$` key, so text without `"$` holds none (a
        # string holding `"$` is written `\"$`, which only costs the slower decoding).
        self._plain = b'"$' not in body
        if not isinstance(doc, dict) or doc.get("version") != _VERSION:
            return {}
        entries = doc.get("entries")
        if doc.get("code") != self._code or not isinstance(entries, dict):
            return {}
        return entries

    def parse(self, data: bytes, file: str) -> Pointer:
        """The pointer of `data` (named `file`), every rule checked; raises `PointerError`."""
        digest = hashlib.sha256(data).hexdigest()
        self.digests[file] = digest
        doc = self._remembered(digest)
        if doc is None:
            doc = load_pointer_doc(data, file=file)
            self._kept[digest] = encode_data(doc)
            self._new += 1
        else:
            self.hits += 1
        return validate_pointer(doc, file=file)

    def _remembered(self, digest: str) -> dict[str, Any] | None:
        kept = self._kept.get(digest)
        encoded = kept if kept is not None else self._stored.get(digest)
        if encoded is None:
            return None
        try:
            doc = encoded if kept is None and self._plain else decode_data(encoded)
        except (ValueError, TypeError, KeyError, RecursionError):
            return None
        if not isinstance(doc, dict):
            return None
        self._kept[digest] = encoded
        return doc

    def save(self) -> None:
        """Keep the documents of the files this build read (written whole, then renamed into
        place; a failure only costs the next build)."""
        if self._new == 0 and len(self._kept) == len(self._stored):
            return
        try:
            body = orjson.dumps({"version": _VERSION, "code": self._code, "entries": self._kept})
            self.auth.write_sealed(self.file, Purpose.POINTER, body, _SEAL_NAME)
        except (OSError, TypeError, ValueError):
            pass
