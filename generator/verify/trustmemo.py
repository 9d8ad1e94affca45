"""The trust roots a cache has seen parse, so a build that verifies nothing need not parse one.

Parsing a trust root imports sigstore and builds its models: about 0.3 s, which a build whose
verdicts all come from the verdict cache (the maintainer's loop) would spend on a root it never
uses. A root that cannot be used must still be refused before anything is verified, so a build
parses its root unless this cache holds a record that these exact bytes parsed, under the same
versions of the libraries that parse them; a build that verifies parses the root before its
first verification anyway (`generator.evaluate.engine.Engines.verifying`, `build_engine`).

A record is `<cache>/trust/<sha256 of the root>.parsed`, sealed (`generator.cacheauth`,
purpose `trust`) and bound to that digest, holding the library versions. Every byte read back
is hostile until checked: a record that is missing, a link, larger than `MAX_RECORD_BYTES`,
forged (counted as an authentication failure), made for other bytes or under other library
versions vouches for nothing, and the root is parsed now. Records are written only after a
root parsed, and never read as anything but that one yes or no.
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

from generator.cacheauth import CacheAuth, Purpose, read_cache_file

__all__ = ["MAX_RECORD_BYTES", "TrustRecords"]

MAX_RECORD_BYTES = 4096
"""A record is a tag and a line of library versions; anything larger is not one."""
_LIBRARIES = ("sigstore", "sigstore-models", "pydantic", "pydantic-core", "cryptography")
"""What decides whether given bytes parse as a trust root."""
_DIGEST = re.compile(r"[0-9a-f]{64}")


def _versions() -> bytes:
    parts = []
    for name in _LIBRARIES:
        try:
            parts.append(f"{name}={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{name}=absent")
    return " ".join(parts).encode("ascii")


class TrustRecords:
    """The records under `<cache>/trust/`: `vouches` for `generator.verify.trust.load_trust`,
    `remember` once a root has parsed."""

    def __init__(self, root: Path, auth: CacheAuth) -> None:
        self.root = root
        self.auth = auth
        self._expected: bytes | None = None
        self._answers: dict[str, bool] = {}
        """What `vouches` found, by digest: `remember` after `load_trust` reads no record twice."""

    def _file(self, digest: str) -> Path | None:
        return self.root / f"{digest}.parsed" if _DIGEST.fullmatch(digest) else None

    def _wanted(self) -> bytes:
        if self._expected is None:
            self._expected = _versions()
        return self._expected

    def vouches(self, digest: str) -> bool:
        """Whether an authentic record says the root of `digest` parsed under these libraries
        (read once per digest by this instance)."""
        answer = self._answers.get(digest)
        if answer is None:
            answer = self._answers[digest] = self._read(digest)
        return answer

    def _read(self, digest: str) -> bool:
        path = self._file(digest)
        stored = None if path is None else read_cache_file(path, MAX_RECORD_BYTES)
        if stored is None:
            return False
        data = self.auth.open(Purpose.TRUST, stored, digest.encode(), f"trust record {digest}")
        return data is not None and data == self._wanted()

    def remember(self, digest: str) -> None:
        """Record that the root of `digest` parsed; a record that cannot be written only costs
        the next build a parse."""
        path = self._file(digest)
        if path is None or self.vouches(digest):
            return
        try:
            self.auth.write_sealed(path, Purpose.TRUST, self._wanted(), digest.encode())
        except OSError:
            return
        self._answers[digest] = True
