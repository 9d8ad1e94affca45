"""Each distinct recipe document is parsed and canonicalized once per process.

Every attestation of one recipe version carries the same `recipe.yaml` bytes, so in a tree of
thousands of attestations most bundles repeat a recipe that another bundle has already checked.
The memo is keyed by the sha256 of the exact bytes and the predicate type (which picks the
canonicalizer), so a hit returns exactly what parsing and canonicalizing those bytes returns:
every comparison with the bundle's own predicate still runs on every bundle. Only successes are
kept (a document that fails is parsed again and fails with its own message), entries are
bounded in count and bytes, and the memo lives in process memory only, never on disk.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from generator.model import PredicateType

__all__ = ["RecipeMemo", "RECIPES"]

MAX_ENTRIES = 256
"""Distinct recipe documents remembered at once (least recently used go first)."""
MAX_BYTES = 16 * 1024 * 1024
"""The recipe bytes all remembered entries may stand for, summed."""

_Key = tuple[bytes, str]


class RecipeMemo:
    """Parsed recipe and canonical digest per (sha256 of the bytes, predicate type)."""

    def __init__(self, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES) -> None:
        self._entries: OrderedDict[_Key, tuple[Mapping[str, Any], str, int]] = OrderedDict()
        self._bytes = 0
        self.max_entries = max_entries
        self.max_bytes = max_bytes

    @staticmethod
    def key(data: bytes, ptype: PredicateType | str) -> _Key:
        """The memo key: the full sha256 of `data` and the predicate type's text."""
        return hashlib.sha256(data).digest(), str(ptype)

    def get(self, key: _Key) -> tuple[Mapping[str, Any], str] | None:
        """The remembered (recipe, digest) of `key`, or None."""
        hit = self._entries.get(key)
        if hit is None:
            return None
        self._entries.move_to_end(key)
        return hit[0], hit[1]

    def put(self, key: _Key, recipe: Mapping[str, Any], digest: str, size: int) -> None:
        """Remember a recipe that parsed and canonicalized; `size` is its length in bytes."""
        if size > self.max_bytes or key in self._entries:
            return
        self._entries[key] = (recipe, digest, size)
        self._bytes += size
        while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
            _, (_, _, dropped) = self._entries.popitem(last=False)
            self._bytes -= dropped

    def clear(self) -> None:
        """Forget every entry (tests start from an empty memo)."""
        self._entries.clear()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._entries)


RECIPES = RecipeMemo()
"""The process's memo (each pool worker has its own)."""
