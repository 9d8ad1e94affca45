"""The page cache: finished recipe pages and the Markdown pages of one site, sealed.

Every entry is read back as hostile: a link, a FIFO, a file over `MAX_PAGE_ENTRY_BYTES` or
one whose tag does not check is a miss (a failed tag is counted), never an error.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import orjson

from generator.cacheauth import TAG_LENGTH, CacheAuth, Purpose, open_cache_entry, read_cache_file
from generator.quickwrite import link_checked

__all__ = ["MAX_PAGE_ENTRY_BYTES", "ROWS_NAME", "PageCache"]

MAX_PAGE_ENTRY_BYTES = 512 << 20
"""A page cache entry larger than this is a miss (a page is hundreds of KB, the Markdown pages
of a 10,000-attestation site 13 MB): a planted file, link or FIFO never takes a build down."""
ROWS_NAME = "rows.json"
"""The page cache entry holding the Markdown pages' rows (`generator.site.rowcache`)."""

_DIGEST_HEX = 64
_HEX = frozenset("0123456789abcdef")
_HTML_HEAD = TAG_LENGTH + 1 + _DIGEST_HEX + 1
"""A finished page's entry starts `<tag>\n<sha256 hex>\n`; the page follows."""


class PageCache:
    """Rendered pages on disk: finished recipe pages (`<key>.html`) and the Markdown pages of
    one site (`markdown-<key>.json`), each sealed with its HMAC tag. Writes are atomic;
    unreadable entries are misses, and so are entries whose tag does not check (counted)."""

    def __init__(self, root: Path, auth: CacheAuth | None = None) -> None:
        self.root = root
        self.auth = auth if auth is not None else CacheAuth.from_environment()
        self._pending: list[threading.Thread] = []

    def _write(self, name: str, data: bytes) -> None:
        try:
            self.auth.write_sealed(self.root / name, Purpose.PAGE, data, name.encode())
        except OSError:
            pass  # a cache that cannot be written only costs speed

    def _write_later(self, name: str, data: bytes) -> None:
        """`_write` on a thread of its own: sealing and writing the Markdown pages and their
        rows (13 MB each at 10,000 attestations) is a tenth of a second each that the build
        need not wait for (hashing and writing let go of the interpreter). Every read and
        `keep_only` first waits for it (`settle`)."""
        thread = threading.Thread(target=self._write, args=(name, data), daemon=True)
        thread.start()
        self._pending.append(thread)

    def settle(self) -> None:
        """Wait for the writes `_write_later` started."""
        while self._pending:
            self._pending.pop().join()

    def _read(self, name: str) -> bytes | None:
        self.settle()
        stored = read_cache_file(self.root / name, MAX_PAGE_ENTRY_BYTES)
        if stored is None:
            return None
        return self.auth.open(Purpose.PAGE, stored, name.encode(), f"page {name}")

    def get_html(self, key: str) -> tuple[bytes, str] | None:
        """A finished page's bytes and their sha256 (hex, made when it was kept), when cached
        and authentic: a page placed from the cache is never hashed again for the manifest."""
        stored = self._read(f"{key}.html")
        if stored is None or stored[_DIGEST_HEX : _DIGEST_HEX + 1] != b"\n":
            return None
        digest = stored[:_DIGEST_HEX].decode("ascii", "replace")
        if not set(digest) <= _HEX:
            return None  # an entry of another layout
        return stored[_DIGEST_HEX + 1 :], digest

    def link_html(self, key: str, previous: Path, target: Path) -> str | None:
        """Link `previous` (the page in the output this site replaces) as the new name
        `target` when its bytes are exactly the cached page of `key`: they are checked against
        the entry's tag, and the entry's own copy of the page is never read. The page's sha256
        (hex) when linked; None, with nothing at `target`, otherwise (`get_html` then reads
        the entry, and counts a tag that does not check)."""
        name = f"{key}.html"
        opened = open_cache_entry(self.root / name)
        if opened is None:
            return None
        fd, info = opened
        try:
            head = os.read(fd, _HTML_HEAD)
        except OSError:
            head = b""
        finally:
            os.close(fd)
        size = info.st_size - _HTML_HEAD
        if len(head) != _HTML_HEAD or head[TAG_LENGTH] != 0x0A or head[-1] != 0x0A:
            return None
        if info.st_size > MAX_PAGE_ENTRY_BYTES:  # the bound `get_html` reads an entry within
            return None
        tag, sealed_head = head[:TAG_LENGTH], head[TAG_LENGTH + 1 :]
        digest = sealed_head[:_DIGEST_HEX].decode("ascii", "replace")
        if not set(digest) <= _HEX:
            return None

        def is_cached_page(page: bytes) -> bool:
            return self.auth.check_parts(Purpose.PAGE, (sealed_head, page), tag, name.encode())

        return digest if link_checked(previous, target, size, is_cached_page) else None

    def put_html(self, key: str, data: bytes, sha256: str) -> None:
        """Keep a finished page (its UTF-8 bytes, as written into the site, and their
        sha256)."""
        self._write(f"{key}.html", sha256.encode("ascii") + b"\n" + data)

    def get_markdown(self, key: str) -> dict[str, str] | None:
        return self._string_map(f"markdown-{key}.json")

    def _string_map(self, name: str) -> dict[str, str] | None:
        """A stored JSON object of strings, or None (missing, not authentic, other shape)."""
        data = self._read(name)
        if data is None:
            return None
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError:
            return None
        if not isinstance(doc, dict) or not all(isinstance(v, str) for v in doc.values()):
            return None
        return {str(k): v for k, v in doc.items()}

    def put_markdown(self, key: str, pages: dict[str, str]) -> None:
        self._write_later(f"markdown-{key}.json", orjson.dumps(pages))

    def get_rows(self) -> dict[str, str] | None:
        """The Markdown pages' rows the last build kept (`generator.site.rowcache`)."""
        return self._string_map(ROWS_NAME)

    def put_rows(self, rows: dict[str, str]) -> None:
        self._write_later(ROWS_NAME, orjson.dumps(rows))

    def keep_only(self, names: set[str]) -> None:
        """Delete entries this build did not use, so the cache holds one site's pages."""
        self.settle()
        try:
            entries = list(os.scandir(self.root))
        except OSError:
            return
        for entry in entries:
            if entry.name not in names:
                try:
                    os.unlink(entry.path)
                except OSError:
                    pass
