"""Recipe pages linked ahead by a forked child (`generator.site.prestage`): a page is taken
only when the child checked its bytes against the page cache under the very key and shell the
build works out for it, and it is still the file the child linked; every other page is let
go, so the build places it as before. The page cache's list of keys is only a hint: a wrong,
tampered or hostile one costs speed, never a page."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import generator.forkedcall as forkedcall
import generator.site.prestage as prestage_module
from generator.cacheauth import CacheAuth
from generator.forkedcall import can_fork
from generator.manifest import Written
from generator.site.pagecache import PLACED_NAME, CachedPage, PageCache
from generator.site.prestage import Prestage, start_prestage, take_linkable

pytestmark = pytest.mark.skipif(not can_fork(), reason="the child is forked")


@pytest.fixture(autouse=True)
def _fork_anyway(monkeypatch: pytest.MonkeyPatch) -> None:
    """A browser test earlier in the session leaves idle threads behind, and a build forks
    only with none (`fork_is_safe`); nothing here holds a lock a child needs."""
    monkeypatch.setattr(forkedcall, "fork_is_safe", lambda: True)


AUTH = CacheAuth(b"p" * 40)
SHELL = "5" * 64
OTHER_SHELL = "6" * 64


def _page(recipe: str) -> bytes:
    return b"<html><body>" + f"the page of {recipe} ".encode() * 300 + b"</body></html>"


def _key(recipe: str) -> str:
    return hashlib.sha256(recipe.encode()).hexdigest()


class Site:
    """A replaced output with a page per recipe, the page cache it was built with (each page
    kept under its key, and which key each recipe had), and a staging site to take pages."""

    def __init__(self, root: Path, recipes: tuple[str, ...] = ("r1", "r2", "r3")) -> None:
        self.root = root
        self.cache = PageCache(root / "cache", AUTH)
        self.out = root / "out"
        self.recipes = recipes
        for recipe in recipes:
            page = _page(recipe)
            sha = hashlib.sha256(page).hexdigest()
            self.cache.put_html(_key(recipe), CachedPage(page, sha, SHELL, (12, len(page) - 26)))
            (self.out / "recipes" / recipe).mkdir(parents=True)
            self.old(recipe).write_bytes(page)
        self.cache.put_placed({r: _key(r) for r in recipes})
        self.cache.settle()
        self.staging = root / "staging"
        self.staging.mkdir()

    def old(self, recipe: str) -> Path:
        return self.out / "recipes" / recipe / "index.html"

    def new(self, recipe: str) -> Path:
        return self.staging / "recipes" / recipe / "index.html"

    def start(self) -> Prestage:
        folder = self.root / "ahead"
        folder.mkdir()
        started = start_prestage(self.out, self.cache, folder)
        assert started is not None
        return started

    def wanted(self) -> dict[str, str]:
        return {r: _key(r) for r in self.recipes}


def test_pages_linked_ahead_are_taken_as_the_build_would_link_them(tmp_path: Path) -> None:
    site = Site(tmp_path)
    ahead = site.start()
    written: dict[str, Written] = {}
    try:
        taken = ahead.take(site.staging, SHELL, site.wanted(), written)
    finally:
        ahead.close()
    assert taken == {"r1", "r2", "r3"}
    for recipe in site.recipes:
        assert os.path.samefile(site.new(recipe), site.old(recipe))
        sha = hashlib.sha256(_page(recipe)).hexdigest()
        assert written[f"recipes/{recipe}/index.html"] == Written.of(site.new(recipe), sha)
    assert not (tmp_path / "ahead").exists()


def test_a_page_under_another_key_or_in_another_shell_is_let_go(tmp_path: Path) -> None:
    site = Site(tmp_path)
    ahead = site.start()
    wanted = {**site.wanted(), "r2": "f" * 64}
    try:
        assert ahead.take(site.staging, SHELL, wanted, {}) == {"r1", "r3"}
        # let go: the replaced page is of one name again, as the build's own linking needs
        assert os.stat(site.old("r2")).st_nlink == 1
        assert not site.new("r2").exists()
        assert ahead.spare() == tmp_path / "ahead" / "recipes"
        assert list((ahead.spare() / "r2").iterdir()) == []  # an emptied folder, to place
    finally:
        ahead.close()
    other = Site(tmp_path / "other")
    ahead = other.start()
    try:
        assert ahead.take(other.staging, OTHER_SHELL, other.wanted(), {}) == set()
    finally:
        ahead.close()
    assert all(os.stat(other.old(r)).st_nlink == 1 for r in other.recipes)


def test_no_page_is_taken_where_the_build_would_not_link_it(tmp_path: Path) -> None:
    site = Site(tmp_path)
    ahead = site.start()
    try:
        assert ahead.take(site.staging, SHELL, {"r1": _key("r1")}, {}) == {"r1"}
    finally:
        ahead.close()
    assert all(os.stat(site.old(r)).st_nlink == 1 for r in ("r2", "r3"))


def test_a_replaced_page_that_is_not_the_cached_one_is_not_linked_ahead(tmp_path: Path) -> None:
    site = Site(tmp_path)
    site.old("r2").write_bytes(_page("r2")[:-1] + b"X")  # same size, other bytes
    ahead = site.start()
    try:
        assert set(ahead.pages()) == {"r1", "r3"}
        assert ahead.take(site.staging, SHELL, site.wanted(), {}) == {"r1", "r3"}
    finally:
        ahead.close()


def test_a_page_changed_after_it_was_linked_ahead_is_not_taken(tmp_path: Path) -> None:
    site = Site(tmp_path)
    ahead = site.start()
    try:
        ahead.pages()
        linked = tmp_path / "ahead" / "recipes" / "r1" / "index.html"
        os.unlink(linked)
        linked.write_bytes(_page("r1"))  # the same bytes, another file: not what was checked
        assert ahead.take(site.staging, SHELL, site.wanted(), {}) == {"r2", "r3"}
    finally:
        ahead.close()


@pytest.mark.parametrize("name", ["../x", "x/..", "..", ".", "r1/../../x", ""])
def test_a_hostile_recipe_name_in_the_hint_links_nothing_anywhere(
    tmp_path: Path, name: str
) -> None:
    site = Site(tmp_path)
    # the cached page of r1 where a name leaving recipes/ would find it
    for where in (site.out / "x", site.out, site.out / "recipes"):
        where.mkdir(parents=True, exist_ok=True)
        (where / "index.html").write_bytes(_page("r1"))
    site.cache.put_placed({name: _key("r1")})
    site.cache.settle()
    ahead = site.start()
    try:
        assert ahead.pages() == {}
        assert ahead.take(site.staging, SHELL, {name: _key("r1")}, {}) == set()
    finally:
        ahead.close()
    for where in (site.out / "x", site.out, site.out / "recipes"):
        assert os.stat(where / "index.html").st_nlink == 1


def test_a_tampered_hint_links_nothing(tmp_path: Path) -> None:
    site = Site(tmp_path)
    entry = site.cache.root / PLACED_NAME
    data = bytearray(entry.read_bytes())
    data[-3] ^= 1
    entry.write_bytes(bytes(data))
    ahead = site.start()
    try:
        assert ahead.pages() == {}
    finally:
        ahead.close()


def test_a_child_that_fails_leaves_nothing_linked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = Site(tmp_path)
    link_ahead = prestage_module.link_ahead

    def failing(out: Path, cache: PageCache, folder: Path) -> prestage_module.Ahead:
        link_ahead(out, cache, folder)
        raise OSError("the child failed after linking")

    monkeypatch.setattr(prestage_module, "link_ahead", failing)
    ahead = site.start()
    try:
        assert ahead.take(site.staging, SHELL, site.wanted(), {}) == set()
        assert all(os.stat(site.old(r)).st_nlink == 1 for r in site.recipes)
    finally:
        ahead.close()


def test_nothing_starts_without_a_hint_or_an_earlier_output(tmp_path: Path) -> None:
    site = Site(tmp_path)
    (site.cache.root / PLACED_NAME).unlink()
    folder = tmp_path / "ahead"
    folder.mkdir()
    assert start_prestage(site.out, site.cache, folder) is None
    assert not folder.exists()
    folder.mkdir()
    assert start_prestage(tmp_path / "nothing", site.cache, folder) is None


def test_the_child_reads_the_kept_rows_meanwhile(tmp_path: Path) -> None:
    site = Site(tmp_path)
    site.cache.put_rows({"row": "<tr>kept</tr>"})
    site.cache.settle()
    ahead = site.start()
    try:
        assert ahead.rows() == {"row": "<tr>kept</tr>"}
    finally:
        ahead.close()


@pytest.mark.parametrize(
    ("change", "taken"),
    [
        ({}, {"r1", "r2", "r3"}),
        ({"lists": {"r2": b"<li>a change</li>"}}, {"r1", "r3"}),  # its page gets a list
        ({"fill": "a commit to fill in"}, set()),  # every page is written with the commit
        ({"previous": None}, set()),
        ({"cache": None}, set()),
        ({"given": frozenset({"r3"})}, {"r1", "r2"}),  # a helper renders it
    ],
    ids=["linkable", "history-list", "commit-fill", "no-replaced-output", "no-cache", "given"],
)
def test_a_page_is_taken_only_where_the_build_would_link_it(
    tmp_path: Path, change: dict[str, Any], taken: set[str]
) -> None:
    site = Site(tmp_path)
    given = change.pop("given", frozenset())
    placer = SimpleNamespace(
        **{
            "site": site.staging,
            "cache": site.cache,
            "previous": site.out,
            "fill": None,
            "lists": {},
            "shell": SHELL,
            "written": {},
            **change,
        }
    )
    tabs = [SimpleNamespace(recipe=r) for r in site.recipes]
    ahead = site.start()
    try:
        got = take_linkable(ahead, placer, tabs, site.wanted(), given)  # type: ignore[arg-type]
    finally:
        ahead.close()
    assert got == taken
    assert all(os.stat(site.old(r)).st_nlink == (2 if r in taken else 1) for r in site.recipes)
    assert take_linkable(None, placer, tabs, site.wanted(), given) == frozenset()  # type: ignore[arg-type]
