"""The page cache: finished recipe pages and the Markdown pages of one site, sealed.

Every entry is read back as hostile: a link, a FIFO, a file over `MAX_PAGE_ENTRY_BYTES` or
one whose tag does not check is a miss (a failed tag is counted), never an error.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from generator.cacheauth import TAG_LENGTH, CacheAuth, Purpose, open_cache_entry, read_cache_file
from generator.quickwrite import link_checked

__all__ = [
    "MAX_PAGE_ENTRY_BYTES",
    "PLACED_NAME",
    "ROWS_NAME",
    "SEARCH_NAME",
    "CachedPage",
    "PageCache",
    "page_names",
]

MAX_PAGE_ENTRY_BYTES = 512 << 20
"""A page cache entry larger than this is a miss (a page is hundreds of KB, the Markdown pages
of a 10,000-attestation site 13 MB): a planted file, link or FIFO never takes a build down."""
ROWS_NAME = "rows.json"
"""The page cache entry holding the Markdown pages' rows (`generator.site.rowcache`)."""
SEARCH_NAME = "search.json"
"""The page cache entry holding each recipe page's search text, by its page key."""
PLACED_NAME = "placed.json"
"""The page cache entry naming each recipe's page key in the last site built
(`generator.site.prestage`)."""

_DIGEST_HEX = 64
_SPAN_HEX = 16
_HEX = frozenset("0123456789abcdef")
_PAGE_HEAD = 2 * _DIGEST_HEX + 2 * _SPAN_HEX + 1
"""A finished page's sealed head: its sha256, its shell's digest, its body's offset and length
(hex, fixed widths) and a newline; the page follows."""
_HTML_HEAD = TAG_LENGTH + 1 + _PAGE_HEAD
"""A finished page's entry starts `<tag>\n<sealed head>`."""


@dataclass(frozen=True)
class CachedPage:
    """A finished recipe page as the page cache keeps it (by its body's key): its UTF-8
    bytes, their sha256 (hex), the digest of the shell it was finished in
    (`PageShell.digest`) and where its body lies in it (offset, length)."""

    data: bytes
    sha256: str
    shell: str
    body: tuple[int, int]

    def head(self) -> bytes:
        """The sealed head the entry starts with."""
        offset, length = self.body
        span = f"{offset:0{_SPAN_HEX}x}{length:0{_SPAN_HEX}x}"
        return f"{self.sha256}{self.shell}{span}\n".encode("ascii")

    def body_bytes(self) -> bytes:
        offset, length = self.body
        return self.data[offset : offset + length]


def _page_head(head: bytes, size: int) -> tuple[str, str, tuple[int, int]] | None:
    """A sealed head's page sha256, shell digest and body span, for a page of `size` bytes;
    None for anything else (another layout, a span beyond the page)."""
    if len(head) != _PAGE_HEAD or head[-1:] != b"\n":
        return None
    text = head[:-1].decode("ascii", "replace")
    if not set(text) <= _HEX:
        return None
    digest, shell = text[:_DIGEST_HEX], text[_DIGEST_HEX : 2 * _DIGEST_HEX]
    offset = int(text[2 * _DIGEST_HEX : 2 * _DIGEST_HEX + _SPAN_HEX], 16)
    length = int(text[2 * _DIGEST_HEX + _SPAN_HEX :], 16)
    if offset + length > size:
        return None
    return digest, shell, (offset, length)


class PageCache:
    """Rendered pages on disk: finished recipe pages (`<key>.html`, by their body's key, with
    the shell they were finished in and where their body lies) and the Markdown pages of one
    site (`markdown-<key>.json`), each sealed with its HMAC tag. Writes are atomic;
    unreadable entries are misses, and so are entries whose tag does not check (counted)."""

    def __init__(self, root: Path, auth: CacheAuth | None = None) -> None:
        self.root = root
        self.auth = auth if auth is not None else CacheAuth.from_environment()
        self._pending: list[threading.Thread] = []

    def __getstate__(self) -> dict[str, Any]:
        """A copy sent to a helper process (`generator.site.pagehelper`) has no writes of its
        own pending: this process's threads stay here."""
        return {**self.__dict__, "_pending": []}

    def commit_mark(self) -> str:
        """What the page bodies kept here see for the commit they link: a secret of this
        cache (the same in every build on it, so bodies and rows are kept across commits),
        never published and unknown to anyone who writes evidence."""
        return self.auth.tag(Purpose.PAGE, b"commit mark")[:40].decode("ascii")

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

    def get_html(self, key: str) -> CachedPage | None:
        """The finished page kept under its body's `key`, when cached and authentic (its
        sha256 made when it was kept: a page placed from the cache is never hashed again for
        the manifest)."""
        stored = self._read(f"{key}.html")
        if stored is None:
            return None
        data = stored[_PAGE_HEAD:]
        head = _page_head(stored[:_PAGE_HEAD], len(data))
        if head is None:
            return None  # an entry of another layout
        return CachedPage(data, *head)

    def html_keys(self) -> frozenset[str]:
        """The keys of the pages kept (by file name alone: an entry may still fail to read)."""
        self.settle()
        try:
            names = [entry.name for entry in os.scandir(self.root)]
        except OSError:
            return frozenset()
        return frozenset(name[: -len(".html")] for name in names if name.endswith(".html"))

    def link_html(self, key: str, previous: Path, target: Path, shell: str) -> str | None:
        """Link `previous` (the page in the output this site replaces) as the new name
        `target` when its bytes are exactly the cached page of `key`, finished in the shell
        whose digest is `shell`: they are checked against the entry's tag, and the entry's own
        copy of the page is never read. The page's sha256 (hex) when linked; None, with nothing
        at `target`, otherwise (`get_html` then reads the entry, and counts a tag that does not
        check)."""
        linked = self._link(key, previous, target, shell)
        return None if linked is None else linked[0]

    def link_html_in_any_shell(
        self, key: str, previous: Path, target: Path
    ) -> tuple[str, str] | None:
        """`link_html` for a page finished in whichever shell its entry names: the page's
        sha256 and that shell's digest when linked."""
        return self._link(key, previous, target, None)

    def _link(
        self, key: str, previous: Path, target: Path, shell: str | None
    ) -> tuple[str, str] | None:
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
        if len(head) != _HTML_HEAD or head[TAG_LENGTH] != 0x0A:
            return None  # the sealed head's own newline is `_page_head`'s to check
        if info.st_size > MAX_PAGE_ENTRY_BYTES:  # the bound `get_html` reads an entry within
            return None
        tag, sealed_head = head[:TAG_LENGTH], head[TAG_LENGTH + 1 :]
        parsed = _page_head(sealed_head, size)
        if parsed is None or (shell is not None and parsed[1] != shell):
            return None  # another layout, or the page in another shell
        digest, finished_in = parsed[0], parsed[1]

        def is_cached_page(page: bytes) -> bool:
            return self.auth.check_parts(Purpose.PAGE, (sealed_head, page), tag, name.encode())

        linked = link_checked(previous, target, size, is_cached_page)
        return (digest, finished_in) if linked else None

    def put_html(self, key: str, page: CachedPage) -> None:
        """Keep a finished page under its body's `key` (its UTF-8 bytes, as written into the
        site)."""
        self._write(f"{key}.html", page.head() + page.data)

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

    def get_search(self) -> dict[str, str] | None:
        """The recipe pages' search texts the last build kept, by page key: a recipe's page
        key covers everything its search text reads (`generator.site.pages.search_summary`)."""
        return self._string_map(SEARCH_NAME)

    def put_search(self, texts: dict[str, str]) -> None:
        self._write_later(SEARCH_NAME, orjson.dumps(texts))

    def get_placed(self) -> dict[str, str] | None:
        """Each recipe's page key in the last site built (`put_placed`)."""
        return self._string_map(PLACED_NAME)

    def put_placed(self, keys: dict[str, str]) -> None:
        self._write_later(PLACED_NAME, orjson.dumps(keys))

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


def page_names(keys: Sequence[str], markdown_key: str | None) -> set[str]:
    """The cache file names one build uses (everything else is pruned after the build)."""
    names = {f"{k}.html" for k in keys} | {ROWS_NAME, SEARCH_NAME, PLACED_NAME}
    if markdown_key is not None:
        names.add(f"markdown-{markdown_key}.json")
    return names
