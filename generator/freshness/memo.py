"""The freshness memo: answers remembered across builds by the content they came from."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

import generator
import generator.recipe.canonical as canonical
from generator.cacheauth import CacheAuth, Purpose, read_cache_file
from generator.wholefile import write_whole

MEMO_FORMAT = "evidence-dashboard/freshness-memo/v2"
_ABSENT = object()
MAX_MEMO_BYTES = 256 << 20
"""A memo larger than this is not read (it is under 1 MB at 10,000 attestations)."""


class ContentMemo:
    """Answers that depend only on file contents, remembered across builds in one JSON file.

    A warm build would otherwise canonicalise every current overlay and every stale signed
    recipe again. Keys are sha256 over a kind, a parameter and the exact input bytes; the
    file also records a fingerprint of the code that computes the answers (generator and
    PyYAML versions and the canonicaliser's source), and a file with another fingerprint, or
    one that cannot be read, is ignored. The file is sealed with an HMAC tag
    (`generator.cacheauth`): one that fails the check is ignored and counted. `save` writes
    atomically (a temporary file, then `os.replace`), so concurrent builds at worst lose each
    other's additions.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._fingerprint = _code_fingerprint()
        self._loaded: dict[str, Any] = self._load() if path is not None else {}
        self._used: dict[str, Any] = {}
        self._added = False
        self._touched: set[str] = set()

    @staticmethod
    def key(kind: str, parameter: str, *parts: bytes) -> str:
        """The memo key of `kind` with `parameter` over the input byte strings `parts`."""
        digest = hashlib.sha256(f"{kind}\0{parameter}\0{len(parts)}".encode())
        for part in parts:
            digest.update(hashlib.sha256(part).digest())
        return digest.hexdigest()

    def get(self, key: str) -> tuple[bool, Any]:
        """(True, answer) when remembered, else (False, None)."""
        if key in self._used:
            self._touched.add(key)
            return True, self._used[key]
        if key in self._loaded:
            self._used[key] = self._loaded[key]
            self._touched.add(key)
            return True, self._loaded[key]
        return False, None

    def put(self, key: str, value: Any) -> None:
        """Remember a JSON-ready answer."""
        if key not in self._used or self._used[key] != value:
            self._added = True
        self._used[key] = value
        self._touched.add(key)

    def drain(self) -> dict[str, Any]:
        """The answers used or added since the last drain, for `adopt` by another copy of this
        memo (a forked verification worker's, sent back to the build's)."""
        touched, self._touched = self._touched, set()
        return {key: self._used[key] for key in touched}

    def adopt(self, entries: Mapping[str, Any]) -> None:
        """Take in what another copy's `drain` returned, as if this memo had been asked."""
        for key, value in entries.items():
            if key not in self._used and self._loaded.get(key, _ABSENT) == value:
                self._used[key] = value  # a remembered answer, used: kept, nothing new
            else:
                self.put(key, value)

    def save(self) -> None:
        """Write the answers used or added by this build, when there is something new."""
        if self.path is None or not self._added:
            return
        doc = {
            "format": MEMO_FORMAT,
            "fingerprint": self._fingerprint,
            "entries": dict(sorted(self._used.items())),
        }
        data = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

        data = CacheAuth.from_environment().seal(Purpose.FRESHNESS, data)
        try:
            write_whole(self.path, data)
        except OSError:
            return  # a memo that cannot be written only costs the next build time
        self._added = False

    def _load(self) -> dict[str, Any]:
        assert self.path is not None

        stored = read_cache_file(self.path, MAX_MEMO_BYTES)
        if stored is None:
            return {}
        if stored.startswith(b"{"):
            return {}  # written before the memo was sealed: ignored
        data = CacheAuth.from_environment().open(
            Purpose.FRESHNESS, stored, b"", f"freshness memo {self.path.name}"
        )
        if data is None:  # the cache is not trusted (generator.cacheauth)
            return {}
        try:
            doc = json.loads(data)
        except ValueError:
            return {}
        if (
            not isinstance(doc, dict)
            or doc.get("format") != MEMO_FORMAT
            or doc.get("fingerprint") != self._fingerprint
            or not isinstance(doc.get("entries"), dict)
        ):
            return {}
        return dict(doc["entries"])


@lru_cache(maxsize=1)
def _code_fingerprint() -> str:
    """What the remembered answers were computed with; a change forgets them all."""

    try:
        source = Path(canonical.__file__).read_bytes()
    except OSError:
        source = b""
    version = f"{generator.__version__}\0{yaml.__version__}\0"
    return hashlib.sha256(version.encode() + source).hexdigest()
