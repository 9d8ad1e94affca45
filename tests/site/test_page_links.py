"""A cached page is linked from the output a build replaces only when that file holds exactly
the cached page, checked against the cache entry's tag without reading the entry's own copy;
anything else (another page, a tampered entry, a link, a shared file, another size) is not
linked, and the page is placed from the cache as before."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from generator.cacheauth import CacheAuth, failures, reset_failures
from generator.manifest import Written
from generator.site.pagecache import CachedPage, PageCache
from generator.site.recipepages import _Placer

AUTH = CacheAuth(b"k" * 40)
KEY = "b" * 64
PAGE = b"<html><body>" + b"the recipe page " * 500 + b"</body></html>"
SHA = hashlib.sha256(PAGE).hexdigest()
SHELL = "5" * 64
"""The digest of the shell the cached page was finished in."""
HEAD = 64 + 1 + 64 + 64 + 16 + 16 + 1
"""An entry's tag, a newline, then its sealed head: the page's sha256, the shell's digest, the
body's offset and length, a newline."""


@pytest.fixture(autouse=True)
def _fresh_failures() -> None:
    reset_failures()


def _setup(tmp_path: Path, previous_page: bytes = PAGE) -> tuple[PageCache, Path, Path]:
    cache = PageCache(tmp_path / "cache", AUTH)
    cache.put_html(KEY, CachedPage(PAGE, SHA, SHELL, (12, len(PAGE) - 26)))
    previous = tmp_path / "previous"
    (previous / "recipes" / "r").mkdir(parents=True)
    (previous / "recipes" / "r" / "index.html").write_bytes(previous_page)
    site = tmp_path / "site"
    site.mkdir()
    return cache, previous, site


def _placer(cache: PageCache, previous: Path, site: Path, **lists: bytes) -> _Placer:
    return _Placer(site, cache, lists, previous, {}, shell=SHELL)


def test_the_replaced_page_is_linked_without_reading_the_cached_copy(tmp_path: Path) -> None:
    cache, previous, site = _setup(tmp_path)
    entry = tmp_path / "cache" / f"{KEY}.html"
    head = entry.read_bytes()[:HEAD]
    # the entry cut down to its head, padded to its size with other bytes: only a reader of
    # the head and the size can still take it for the page
    entry.write_bytes(head + b"\0" * len(PAGE))
    placer = _placer(cache, previous, site)
    assert placer.link_cached("r", KEY)
    placed = site / "recipes" / "r" / "index.html"
    old = previous / "recipes" / "r" / "index.html"
    assert placed.read_bytes() == PAGE and os.path.samefile(placed, old)
    assert placer.written == {"recipes/r/index.html": Written.of(placed, SHA)}
    assert not failures()


@pytest.mark.parametrize(
    "previous_page",
    [PAGE[:-1] + b"X", PAGE + b"\n", PAGE[:-1], b""],
    ids=["same-size-other-bytes", "longer", "shorter", "empty"],
)
def test_a_replaced_page_that_is_not_the_cached_one_is_not_linked(
    tmp_path: Path, previous_page: bytes
) -> None:
    cache, previous, site = _setup(tmp_path, previous_page)
    placer = _placer(cache, previous, site)
    assert not placer.link_cached("r", KEY)
    assert not (site / "recipes" / "r" / "index.html").exists()
    assert placer.written == {}


def test_a_page_with_a_history_list_is_not_linked(tmp_path: Path) -> None:
    cache, previous, site = _setup(tmp_path)
    assert not _placer(cache, previous, site, r=b"<li>x</li>").link_cached("r", KEY)


@pytest.mark.parametrize("where", ["tag", "digest", "shell", "page"])
def test_a_tampered_entry_is_not_linked_unless_the_page_is_still_the_sealed_one(
    tmp_path: Path, where: str
) -> None:
    """A flipped byte in the entry's tag, its digest line or its page: the link is refused,
    and the usual read of the entry then counts the failed tag."""
    cache, previous, site = _setup(tmp_path)
    entry = tmp_path / "cache" / f"{KEY}.html"
    data = bytearray(entry.read_bytes())
    at = {"tag": 3, "digest": 64 + 1 + 3, "shell": 64 + 1 + 64 + 3, "page": len(data) - 3}[where]
    data[at] ^= 1
    entry.write_bytes(bytes(data))
    linked = _placer(cache, previous, site).link_cached("r", KEY)
    if where == "page":
        # the entry's own copy is not read: the replaced page is still exactly what was
        # sealed, so it may be linked; the page in the site is the right one either way
        assert linked and (site / "recipes" / "r" / "index.html").read_bytes() == PAGE
        return
    assert not linked and not (site / "recipes" / "r" / "index.html").exists()
    assert cache.get_html(KEY) is None and len(failures()) == 1


def test_a_page_finished_in_another_shell_is_not_linked(tmp_path: Path) -> None:
    """The replaced page is the cached page, but a new shell (a new commit in the footer)
    finishes its body differently now: it is not linked, nor its entry counted as damaged."""
    cache, previous, site = _setup(tmp_path)
    placer = _Placer(site, cache, {}, previous, {}, shell="6" * 64)
    assert not placer.link_cached("r", KEY)
    assert not (site / "recipes" / "r" / "index.html").exists()
    assert cache.get_html(KEY) == CachedPage(PAGE, SHA, SHELL, (12, len(PAGE) - 26))
    assert not failures()


def test_an_entry_sealed_under_another_key_is_not_linked(tmp_path: Path) -> None:
    cache, previous, site = _setup(tmp_path)
    other = PageCache(tmp_path / "cache", CacheAuth(b"o" * 40))
    assert not _placer(other, previous, site).link_cached("r", KEY)


def test_an_entry_of_another_name_is_not_linked(tmp_path: Path) -> None:
    """The tag binds the entry's name: an authentic entry moved under another key is not the
    page of that key."""
    cache, previous, site = _setup(tmp_path)
    other = "c" * 64
    os.rename(tmp_path / "cache" / f"{KEY}.html", tmp_path / "cache" / f"{other}.html")
    assert not _placer(cache, previous, site).link_cached("r", other)


@pytest.mark.parametrize("kind", ["symlink", "hardlinked", "fifo", "folder"])
def test_a_replaced_page_that_is_not_a_file_of_its_own_is_not_linked(
    tmp_path: Path, kind: str
) -> None:
    cache, previous, site = _setup(tmp_path)
    old = previous / "recipes" / "r" / "index.html"
    if kind == "symlink":
        real = tmp_path / "real.html"
        real.write_bytes(PAGE)
        old.unlink()
        old.symlink_to(real)
    elif kind == "hardlinked":
        os.link(old, tmp_path / "another-name.html")
    elif kind == "fifo":
        old.unlink()
        os.mkfifo(old)
    else:
        old.unlink()
        old.mkdir()
    assert not _placer(cache, previous, site).link_cached("r", KEY)
    assert not (site / "recipes" / "r" / "index.html").exists()


@pytest.mark.parametrize("kind", ["missing", "symlink", "fifo", "short"])
def test_an_entry_that_is_not_a_whole_regular_file_is_not_linked(tmp_path: Path, kind: str) -> None:
    cache, previous, site = _setup(tmp_path)
    entry = tmp_path / "cache" / f"{KEY}.html"
    if kind == "missing":
        entry.unlink()
    elif kind == "symlink":
        real = tmp_path / "entry"
        real.write_bytes(entry.read_bytes())
        entry.unlink()
        entry.symlink_to(real)
    elif kind == "fifo":
        entry.unlink()
        os.mkfifo(entry)
    else:
        entry.write_bytes(entry.read_bytes()[:100])
    assert not _placer(cache, previous, site).link_cached("r", KEY)


def test_an_entry_over_the_page_entry_limit_is_not_linked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The link takes the bound the full read takes: an entry larger than
    `MAX_PAGE_ENTRY_BYTES` is neither linked nor read."""
    import generator.site.pagecache as pagecache

    cache, previous, site = _setup(tmp_path)
    entry = tmp_path / "cache" / f"{KEY}.html"
    monkeypatch.setattr(pagecache, "MAX_PAGE_ENTRY_BYTES", entry.stat().st_size - 1)
    assert not _placer(cache, previous, site).link_cached("r", KEY)
    assert cache.get_html(KEY) is None and not failures()
