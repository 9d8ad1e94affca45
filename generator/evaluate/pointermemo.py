"""Pointer files parsed before are not parsed again: what each said, kept between builds.

Reading a tree of 10,000 pointers spends most of its time turning YAML into data and checking
the pointer rules. A build keeps, under the sha256 of each pointer file's bytes, in one sealed
file (`<cache>/tree/pointer-docs.json`, `generator.cacheauth` purpose `pointer`):

- the pointer those bytes gave (`pointers`), when every rule passed: the rules read nothing but
  the document (the file's name only goes into an error), so the same bytes under any name
  give the same pointer, and the memo is bound to the code that checked it (`code_digest`);
- the parsed document (`entries`), when a rule failed: the next build runs the rules on it
  again, so its error names the file it is asked for.

A file whose YAML fails is parsed again each time (its error names the file).

Every byte read back is hostile until checked: a memo file that is a link, not a regular file,
larger than `MAX_MEMO_BYTES`, failing its tag, written by other code (`code_digest`) or not of
the expected shape is empty; an entry that does not decode to a mapping, or a pointer record
of another shape or with a value of another type, is a miss. The memo keeps what the files
this build read gave, no others, so it never outgrows the tree.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from generator.buildmemo import code_digest
from generator.cacheauth import CacheAuth, Purpose, read_cache_file
from generator.errors import PointerError
from generator.model import Pointer
from generator.tree import load_pointer_doc, validate_pointer
from generator.tree.pointerrecord import pointer_from_record, pointer_record
from generator.verify.serialize import decode_data, encode_data

__all__ = ["MAX_MEMO_BYTES", "MEMO_NAME", "PointerDocs"]

MEMO_NAME = Path("tree") / "pointer-docs.json"
MAX_MEMO_BYTES = 128 << 20
"""A memo file larger than this is not read (10,000 pointers make a few MB)."""
_VERSION = "pointer-docs/v2"
_SEAL_NAME = b"pointer-docs/v1"
"""The name the memo is sealed under, the same for every format (its first version's): the
body's `version` tells formats apart, so a memo of another format is a plain miss, not a tag
that fails (which would be counted as a cache failure)."""


class PointerDocs:
    """`parse(data, file)`, the `ParsePointer` of a build's scan, with the documents of the
    previous build's pointer files at hand (see the module). `save` keeps this build's."""

    def __init__(
        self, file: Path, auth: CacheAuth, hashed: Mapping[str, str] | None = None
    ) -> None:
        self.file = file
        self.auth = auth
        self.hashed = hashed or {}
        """The sha256 (hex) of files this build already read, by path (`known_file`)."""
        self._code = code_digest()
        self._stored: dict[str, Any] = {}
        self._stored_pointers: dict[str, Any] = {}
        self._plain = False
        """The stored documents hold no tagged value (`encode_data`): taken as parsed."""
        self._kept: dict[str, Any] = {}
        self._kept_pointers: dict[str, list[Any]] = {}
        self._new = 0
        self.hits = 0
        self.digests: dict[str, str] = {}
        """Each parsed file's path -> the sha256 of the bytes parsed."""

    @classmethod
    def load(
        cls, file: Path, auth: CacheAuth, hashed: Mapping[str, str] | None = None
    ) -> PointerDocs:
        """The memo at `file` (empty when absent or not usable: never an error)."""
        docs = cls(file, auth, hashed)
        docs._stored, docs._stored_pointers = docs._read()
        return docs

    def _read(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The stored documents and pointer records (both empty when the memo is not usable)."""
        stored = read_cache_file(self.file, MAX_MEMO_BYTES)
        if stored is None:
            return {}, {}
        body = self.auth.open(Purpose.POINTER, stored, _SEAL_NAME, f"pointer memo {self.file}")
        if body is None:
            return {}, {}
        try:
            doc = orjson.loads(body)
        except orjson.JSONDecodeError:
            return {}, {}
        # Every tagged value is an object with a `$` key, so text without `"$` holds none (a
        # string holding `"$` is written `\"$`, which only costs the slower decoding).
        self._plain = b'"$' not in body
        if not isinstance(doc, dict) or doc.get("version") != _VERSION:
            return {}, {}
        entries, pointers = doc.get("entries"), doc.get("pointers")
        if doc.get("code") != self._code:
            return {}, {}
        if not isinstance(entries, dict) or not isinstance(pointers, dict):
            return {}, {}
        return entries, pointers

    def parse(self, data: bytes, file: str) -> Pointer:
        """The pointer of `data` (named `file`), every rule checked; raises `PointerError`."""
        digest = hashlib.sha256(data).hexdigest()
        self.digests[file] = digest
        pointer = self._remembered_pointer(digest)
        if pointer is not None:
            self.hits += 1
            return pointer
        doc = self._remembered(digest)
        if doc is None:
            doc = load_pointer_doc(data, file=file)
            self._new += 1
        else:
            self.hits += 1
        try:
            pointer = validate_pointer(doc, file=file)
        except PointerError:
            if digest not in self._kept:  # a remembered document is kept already
                self._kept[digest] = encode_data(doc)
            raise
        self._kept_pointers[digest] = pointer_record(pointer)
        self._kept.pop(digest, None)
        return pointer

    def known_file(self, path: str, file: str) -> Pointer | None:
        """The pointer of the file at `path` (named `file`) without reading it, when this
        build already hashed it (`hashed`, the memo key's read of the tree) and its bytes gave
        a pointer before; None: read and `parse` it. The bytes hashed were a regular file's,
        read without following a link, and a remembered pointer's bytes passed the size cap."""
        digest = self.hashed.get(path)
        if digest is None:
            return None
        pointer = self._remembered_pointer(digest)
        if pointer is not None:
            self.digests[file] = digest
            self.hits += 1
        return pointer

    def _remembered_pointer(self, digest: str) -> Pointer | None:
        """The pointer these bytes gave a build of this code, or None (a miss)."""
        record = self._kept_pointers.get(digest)
        if record is None:
            record = self._stored_pointers.get(digest)
            if record is None:
                return None
        pointer = pointer_from_record(record)
        if pointer is not None:
            self._kept_pointers[digest] = record
        return pointer

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
        if (
            self._new == 0
            and len(self._kept) == len(self._stored)
            and len(self._kept_pointers) == len(self._stored_pointers)
        ):
            return
        try:
            body = orjson.dumps(
                {
                    "version": _VERSION,
                    "code": self._code,
                    "entries": self._kept,
                    "pointers": self._kept_pointers,
                }
            )
            self.auth.write_sealed(self.file, Purpose.POINTER, body, _SEAL_NAME)
        except (OSError, TypeError, ValueError):
            pass
