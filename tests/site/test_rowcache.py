"""The Markdown pages' row cache: a row is rendered once per key and reused only under its own
key (recipe page key, page, parts); without a cache every row is rendered."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest

from generator.cacheauth import CacheAuth
from generator.site.pagecache import ROWS_NAME, PageCache
from generator.site.rowcache import ROW_CACHE_NAME, CachedRows, RowCache

TEMPLATE = '{% for r in recipes %}{% cached r, "kind", extra %}<{{ r }}:{{ v }}>{% endcached %}{% endfor %}'


def render(rows: RowCache | None, *, v: str = "1", page: str = "p.md", extra: str = "e") -> str:
    env = jinja2.Environment(extensions=[CachedRows], autoescape=True)
    return env.from_string(TEMPLATE).render(
        recipes=["a", "b"], v=v, page=page, extra=extra, **{ROW_CACHE_NAME: rows}
    )


KEYS = {"a": "key-a", "b": "key-b"}


def test_without_a_cache_every_row_is_rendered() -> None:
    assert render(None, v="1") == "<a:1><b:1>"
    assert render(None, v="2") == "<a:2><b:2>"


def test_a_kept_row_is_reused_under_its_own_key_only() -> None:
    first = RowCache(KEYS, None)
    assert render(first, v="1") == "<a:1><b:1>"
    assert first.rendered == 2 and first.changed
    kept = first.used()
    # same keys: the kept rows answer (v is not part of the key: the page key stands for it)
    again = RowCache(KEYS, kept)
    assert render(again, v="2") == "<a:1><b:1>"
    assert again.rendered == 0 and not again.changed
    # a recipe whose page key changed is rendered again, the other reused
    moved = RowCache({**KEYS, "b": "key-b2"}, kept)
    assert render(moved, v="2") == "<a:1><b:2>"
    assert moved.rendered == 1 and moved.changed
    assert len(moved.used()) == 2  # only this build's rows are kept


@pytest.mark.parametrize("change", [{"page": "q.md"}, {"extra": "f"}])
def test_another_page_or_part_is_another_row(change: dict[str, str]) -> None:
    first = RowCache(KEYS, None)
    render(first, v="1")
    other = RowCache(KEYS, first.used())
    assert render(other, v="2", **change) == "<a:2><b:2>"


def test_a_recipe_without_a_page_key_is_rendered_and_not_kept() -> None:
    rows = RowCache({"a": "key-a"}, None)
    assert render(rows, v="1") == "<a:1><b:1>"
    again = RowCache({"a": "key-a"}, rows.used())
    assert render(again, v="2") == "<a:1><b:2>"
    assert len(again.used()) == 1


def test_a_row_is_escaped_once_and_kept_as_written() -> None:
    rows = RowCache(KEYS, None)
    assert render(rows, v="<x>") == "<a:&lt;x&gt;><b:&lt;x&gt;>"
    assert render(RowCache(KEYS, rows.used()), v="y") == "<a:&lt;x&gt;><b:&lt;x&gt;>"


def test_stored_rows_are_sealed(tmp_path: Path) -> None:
    """Rows go through the page cache: a tampered file is a miss (counted by the cache)."""
    auth = CacheAuth(b"k" * 32)
    cache = PageCache(tmp_path, auth)
    cache.put_rows({"k": "<tr>row</tr>"})
    assert cache.get_rows() == {"k": "<tr>row</tr>"}
    path = tmp_path / ROWS_NAME
    path.write_bytes(path.read_bytes().replace(b"row", b"<script>", 1))
    assert cache.get_rows() is None
    path.write_bytes(b"")
    assert cache.get_rows() is None


def test_a_row_whose_parts_orjson_refuses_still_gets_its_own_key() -> None:
    """A lone surrogate in a row's parts (orjson refuses it) still makes a key, distinct from
    the same row with the text escaped."""
    from generator.site.rowcache import _key_text

    odd = _key_text(["k", "page", ["\udc80"]])
    assert odd.startswith(b"\0")
    assert odd != _key_text(["k", "page", ["\\udc80"]])
    rows = RowCache({"r": "k"}, {})
    assert rows.row("page", "r", ("\udc80",), lambda: "x") == "x"
    assert rows.row("page", "r", ("\\udc80",), lambda: "y") == "y"
