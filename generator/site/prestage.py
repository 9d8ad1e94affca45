"""Recipe pages linked ahead, on the other core, while the build evaluates.

On the maintainer's loop (one pointer changed at 10,000 attestations) all but one recipe page
are the replaced output's own: the build links each into its staging site once it has checked
the page's bytes against the page cache (`PageCache.link_html`), about 0.6 s of its one process
after MkDocs. Which page each recipe had is known before the evaluation starts: the page cache
names each recipe's page key in the last site built (`PageCache.get_placed`). So a forked child
(`generator.forkedcall`) links those pages, each checked exactly as `link_html` checks it, into
a folder of its own while the build evaluates (`start_prestage`). The build takes a page from
there (`Prestage.take`: its folder renamed into the staging site) only when the key and the
shell it works out for that page are the ones the page was checked against and the page would
have been linked anyway; every other page is placed as before. A key named wrongly costs only
speed: a page is taken only when its bytes checked against the page cache under the key the
build itself works out, and only while it is still the file the child linked.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from generator.cacheauth import is_sha256_hex
from generator.forkedcall import ForkedCall, start_forked
from generator.manifest import Written
from generator.site.model import Tab
from generator.site.pagecache import MAX_PAGE_ENTRY_BYTES, PLACED_NAME, PageCache
from generator.site.sparedirs import claim, place

__all__ = ["Ahead", "Prestage", "Prestaged", "start_prestage", "take_linkable"]

_MAX_ANSWER_BYTES = MAX_PAGE_ENTRY_BYTES + (64 << 20)
"""The most the child may answer: the rows (an entry of the page cache) and the pages linked
(a thousand are about 200 KB pickled)."""


@dataclass(frozen=True)
class Prestaged:
    """A page the child linked: the page key and the shell digest it was checked against, and
    the file as linked (its sha256, size, time and inode)."""

    key: str
    shell: str
    file: Written


@dataclass(frozen=True)
class Ahead:
    """The child's answer: the pages it linked, by recipe, and the Markdown pages' rows the
    page cache keeps (`PageCache.get_rows`, read and checked there meanwhile)."""

    pages: dict[str, Prestaged]
    rows: dict[str, str] | None


class Prestage:
    """The recipe pages a forked child links ahead into `folder`'s `recipes/` (see the
    module); `close` stops the child and removes the folder."""

    def __init__(self, call: ForkedCall | None, folder: Path) -> None:
        self._call = call
        self.folder = folder
        self._ahead: Ahead | None = None

    def _answer(self) -> Ahead:
        """The child's answer (waited for, once). Without one (the child failed or died)
        nothing is taken, and whatever it linked is removed: a page the build links itself
        must be of one name (`link_html`)."""
        if self._ahead is None:
            call, self._call = self._call, None
            answer = call.result(_MAX_ANSWER_BYTES) if call is not None else None
            if isinstance(answer, Ahead):
                self._ahead = answer
            else:
                self._ahead = Ahead({}, None)
                shutil.rmtree(self.folder / "recipes", ignore_errors=True)
        return self._ahead

    def pages(self) -> dict[str, Prestaged]:
        """The pages the child linked, by recipe."""
        return self._answer().pages

    def rows(self) -> dict[str, str] | None:
        """The rows the page cache kept, as the child read them (None: none, or no answer)."""
        return self._answer().rows

    def take(
        self,
        site: Path,
        shell: str,
        wanted: Mapping[str, str],
        written: dict[str, Written] | None,
    ) -> set[str]:
        """Move into `site` the folder of each recipe whose page the child linked under the
        key `wanted` names for it, finished in the shell whose digest is `shell`, and still
        the file the child linked (its sha256 then goes into `written`); the recipes taken.
        Every other page linked ahead is unlinked again, its emptied folder left for `spare`.
        """
        taken: set[str] = set()
        (site / "recipes").mkdir(parents=True, exist_ok=True)
        for recipe, page in self.pages().items():
            folder = self.folder / "recipes" / recipe
            if wanted.get(recipe) == page.key and page.shell == shell:
                if _still(folder / "index.html", page.file) and _moved(folder, site, recipe):
                    taken.add(recipe)
                    if written is not None:
                        written[f"recipes/{recipe}/index.html"] = page.file
                    continue
            with contextlib.suppress(OSError):
                os.unlink(folder / "index.html")
        return taken

    def spare(self) -> Path:
        """The emptied recipe folders of the pages not taken, for `generator.site.sparedirs`
        to place."""
        return self.folder / "recipes"

    def close(self) -> None:
        if self._call is not None:
            self._call.close()
            self._call = None
        shutil.rmtree(self.folder, ignore_errors=True)


class Placing(Protocol):
    """What `take_linkable` reads of the recipe pages' placer (`recipepages._Placer`)."""

    @property
    def site(self) -> Path: ...
    @property
    def cache(self) -> PageCache | None: ...
    @property
    def previous(self) -> Path | None: ...
    @property
    def fill(self) -> object | None: ...
    @property
    def lists(self) -> Mapping[str, bytes]: ...
    @property
    def shell(self) -> str: ...
    @property
    def written(self) -> dict[str, Written] | None: ...


def take_linkable(
    prestaged: Prestage | None,
    placer: Placing,
    tabs: Sequence[Tab],
    key_of: Mapping[str, str],
    given: frozenset[str],
) -> frozenset[str]:
    """The recipes whose pages `prestaged` linked ahead as the placer's `link_cached` would
    link them now (a page cache, a replaced output, no commit to fill in, no history list,
    not given to a helper), moved into its site; the other pages linked ahead are let go."""
    if prestaged is None:
        return frozenset()
    can_link = placer.cache is not None and placer.previous is not None and not placer.fill
    wanted = {
        t.recipe: key_of[t.recipe]
        for t in tabs
        if can_link and t.recipe not in given and t.recipe not in placer.lists
    }
    return frozenset(prestaged.take(placer.site, placer.shell, wanted, placer.written))


def _still(path: Path, file: Written) -> bool:
    try:
        return file.still(os.lstat(path))
    except OSError:
        return False


def _moved(folder: Path, site: Path, recipe: str) -> bool:
    try:
        os.rename(folder, site / "recipes" / recipe)
    except OSError:
        return False
    return True


def start_prestage(out: Path, cache: PageCache, folder: Path) -> Prestage | None:
    """Link the pages of the output `out` ahead into `folder` (a new, empty folder on `out`'s
    file system) in a forked child; None, with `folder` removed, when there is nothing to link
    (no earlier site, no page keys kept) or no child starts sound (`start_forked`)."""
    call = None
    if (cache.root / PLACED_NAME).is_file() and (out / "recipes").is_dir():
        call = start_forked(link_ahead, (out, cache, folder))
    if call is None:
        shutil.rmtree(folder, ignore_errors=True)
        return None
    return Prestage(call, folder)


def link_ahead(out: Path, cache: PageCache, folder: Path) -> Ahead:
    """The child's work: each page `out` holds of a recipe the page cache names a key for,
    linked into `folder/recipes/<recipe>/index.html` when its bytes are the cached page of
    that key (in any shell), its folder taken from `out`'s spare folders when there are some;
    then the rows the page cache keeps."""
    recipes = folder / "recipes"
    recipes.mkdir(exist_ok=True)
    spare = claim(out, folder)
    linked: dict[str, Prestaged] = {}
    from generator.corroborate import safe_slug  # the build has it loaded; page helpers not

    for recipe, key in (cache.get_placed() or {}).items():
        if not safe_slug(recipe) or not is_sha256_hex(key):
            continue  # only a recipe's own folder, only a cache key
        target = recipes / recipe / "index.html"
        place(target.parent, spare)
        got = cache.link_html_in_any_shell(key, out / "recipes" / recipe / "index.html", target)
        if got is not None:
            linked[recipe] = Prestaged(key, got[1], Written.of(target, got[0]))
    return Ahead(linked, cache.get_rows())
