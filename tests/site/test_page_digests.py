"""A recipe page placed by the build goes to the manifest with the sha256 it was kept with (the
page cache keeps each page with its digest), so the manifest does not read it again; and what
the manifest lists is what the files hold, whether a page was rendered, taken from the cache or
given a history list."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

import generator.publish as publish
from generator.build import run_build
from generator.cacheauth import CacheAuth, Purpose
from generator.manifest import Written
from generator.site.pagecache import CachedPage, PageCache
from generator.site.recipepages import _Placer
from tests._support import demo_build

REPO = Path(__file__).resolve().parents[2]


def _listed(site: Path) -> dict[str, str]:
    manifest = json.loads((site / "data" / "manifest.json").read_text(encoding="utf-8"))
    return {f["path"]: f["sha256"] for f in manifest["files"]}


def _pages(site: Path) -> dict[str, str]:
    return {
        p.relative_to(site).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((site / "recipes").glob("*/index.html"))
    }


@pytest.mark.parametrize("pages_from", ["rendered", "page-cache"])
def test_the_manifest_takes_each_placed_page_s_digest_and_it_is_right(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pages_from: str
) -> None:
    cache = tmp_path / "cache"
    if pages_from == "page-cache":  # a first build keeps every page; the measured one copies
        run_build(demo_build(REPO / "recipes", tmp_path / "first", cache))
    known: list[dict[str, Written]] = []
    manifest = publish.write_manifest

    def spy(site: Path, **kwargs: Any) -> Any:
        known.append(dict(kwargs.get("known") or {}))
        return manifest(site, **kwargs)

    monkeypatch.setattr(publish, "write_manifest", spy)
    out = tmp_path / "site"
    run_build(demo_build(REPO / "recipes", out, cache, reevaluate=True))
    pages = _pages(out)
    assert pages, "the demo has recipe pages"
    (given,) = known
    assert {name: given[name].sha256 for name in pages} == pages  # each page, rightly
    listed = _listed(out)
    assert {name: listed[name] for name in pages} == pages


def test_a_page_given_a_history_list_is_hashed_as_written(tmp_path: Path) -> None:
    """A page whose history list is put in as it is written holds other bytes than the page
    kept: it gets no record (the manifest reads it), the others theirs."""
    written: dict[str, Written] = {}
    placer = _Placer(tmp_path, None, {"with-list": b"<li>x</li>"}, None, written)
    page = b"<p><!--evidence-dashboard-changes:recipe--><!--evidence-dashboard-changes:end--></p>"
    for recipe in ("with-list", "plain"):
        placer.write(recipe, page, hashlib.sha256(page).hexdigest())
    assert sorted(written) == ["recipes/plain/index.html"]
    assert written["recipes/plain/index.html"].sha256 == hashlib.sha256(page).hexdigest()


def test_a_cached_page_of_another_layout_is_a_miss(tmp_path: Path) -> None:
    """An authentic entry whose head is not a page's sha256, its shell's digest and its body's
    place inside it (as kept before, or a place beyond the page) is not a page."""
    auth = CacheAuth(b"k" * 40)
    cache = PageCache(tmp_path, auth)
    key = "a" * 64
    page = b"<html>page</html>"
    sha, shell = hashlib.sha256(page).hexdigest(), "c" * 64
    cache.put_html(key, CachedPage(page, sha, shell, (6, 4)))
    kept = cache.get_html(key)
    assert kept == CachedPage(page, sha, shell, (6, 4)) and kept.body_bytes() == b"page"
    span = f"{6:016x}{4:016x}"
    for stored in (
        sha.encode() + b"\n" + page,  # the layout kept before
        b"Z" * 64 + shell.encode() + span.encode() + b"\n" + page,
        sha.encode() + b"C" * 64 + span.encode() + b"\n" + page,
        sha.encode() + shell.encode() + f"{6:016x}{12:016x}".encode() + b"\n" + page,
        sha.encode() + shell.encode() + span.encode() + b"X" + page,
        b"a" * 63 + b"\n<html>",
    ):
        (tmp_path / f"{key}.html").write_bytes(
            auth.seal(Purpose.PAGE, stored, f"{key}.html".encode())
        )
        assert cache.get_html(key) is None
