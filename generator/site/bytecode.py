"""The theme's compiled Jinja templates, kept between builds, authenticated.

Jinja's own `FileSystemBytecodeCache` unmarshals whatever code object it finds in the cache
folder and runs it: a shared cache would be a way to run code in the publishing build. Here
each compiled template is sealed with an HMAC tag bound to its bucket key
(`generator.cacheauth`), and one that fails the check is compiled again (counted).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from jinja2.bccache import BytecodeCache

from generator.cacheauth import CacheAuth, Purpose, read_cache_file
from generator.wholefile import write_whole

__all__ = ["SealedBytecodeCache"]

MAX_BYTECODE_BYTES = 64 << 20
"""A compiled template larger than this is a miss (they are tens of KB)."""


class SealedBytecodeCache(BytecodeCache):
    """A bytecode cache in `folder` whose entries load only when their tag checks."""

    def __init__(self, folder: Path, auth: CacheAuth | None = None, prefix: str = "") -> None:
        self.folder = folder
        self.auth = auth if auth is not None else CacheAuth.from_environment()
        self.prefix = prefix
        """Part of every entry's name: Jinja keys an entry by template and source alone, so
        an environment whose options or extensions may change names them with a digest of
        those (`prefix`)."""

    def _path(self, bucket: Any) -> Path:
        return self.folder / f"sealed-{self.prefix}{bucket.key}.cache"

    def prune(self, stem: str) -> None:
        """Delete the entries named `sealed-<stem>...` but not with this cache's prefix (an
        earlier version of the same environment's)."""
        try:
            entries = list(os.scandir(self.folder))
        except OSError:
            return
        mine = f"sealed-{self.prefix}"
        for entry in entries:
            if entry.name.startswith(f"sealed-{stem}") and not entry.name.startswith(mine):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)

    def load_bytecode(self, bucket: Any) -> None:
        stored = read_cache_file(self._path(bucket), MAX_BYTECODE_BYTES)
        if stored is None:
            return
        data = self.auth.open(
            Purpose.TEMPLATE, stored, str(bucket.key).encode(), f"template {bucket.key}"
        )
        if data is None:
            return
        bucket.bytecode_from_string(data)

    def dump_bytecode(self, bucket: Any) -> None:
        data = self.auth.seal(
            Purpose.TEMPLATE, bucket.bytecode_to_string(), str(bucket.key).encode()
        )
        try:
            write_whole(self._path(bucket), data)
        except OSError:
            pass  # a cache that cannot be written only costs speed
