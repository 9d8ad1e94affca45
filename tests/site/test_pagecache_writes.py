"""The page cache seals and writes its two big entries (the Markdown pages and their rows) on
a thread of their own; nothing ever reads one half-written or misses it: every read and
`keep_only` waits for the writes first, and a write that fails costs only speed."""

from __future__ import annotations

from pathlib import Path

from generator.cacheauth import CacheAuth
from generator.site.pagecache import ROWS_NAME, PageCache

AUTH = CacheAuth(b"w" * 32)
PAGES = {"index.md": "# Overview\n" + "row\n" * 50_000, "about.md": "About"}


def test_a_page_put_is_read_back_at_once(tmp_path: Path) -> None:
    cache = PageCache(tmp_path / "pages", AUTH)
    cache.put_markdown("k" * 64, PAGES)
    cache.put_rows({"r": "<tr>row</tr>"})
    assert cache.get_markdown("k" * 64) == PAGES
    assert cache.get_rows() == {"r": "<tr>row</tr>"}


def test_a_fresh_cache_reads_what_the_writes_left(tmp_path: Path) -> None:
    first = PageCache(tmp_path / "pages", AUTH)
    first.put_markdown("k" * 64, PAGES)
    first.settle()
    assert PageCache(tmp_path / "pages", AUTH).get_markdown("k" * 64) == PAGES


def test_keep_only_waits_for_the_writes_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    cache = PageCache(tmp_path / "pages", AUTH)
    cache.put_markdown("k" * 64, PAGES)
    cache.put_rows({"r": "row"})
    cache.keep_only({f"markdown-{'k' * 64}.json", ROWS_NAME})
    assert sorted(p.name for p in (tmp_path / "pages").iterdir()) == sorted(
        [f"markdown-{'k' * 64}.json", ROWS_NAME]
    )


def test_a_write_that_fails_costs_only_speed(tmp_path: Path) -> None:
    root = tmp_path / "pages"
    root.write_text("a file where the cache's folder should be")
    cache = PageCache(root, AUTH)
    cache.put_markdown("k" * 64, PAGES)
    cache.settle()
    assert cache.get_markdown("k" * 64) is None
    assert root.read_text() == "a file where the cache's folder should be"
