"""Write every recipe page into the built site, reusing pages cached by earlier builds.

Recipe pages are most of a large site. Each is rendered from the data documents alone
(`generator.site.pages.RecipePages`) into the page shell. A page whose body's inputs did not
change since the last build (same recipe documents, pointers, sources, states, the build info
the body sees, `body_build_info`, the same templates and page code) is taken from the page
cache under `--cache` instead of being rendered again: as it was kept when the shell is the
same, else its body finished in the new shell (the footer names the commit: a new commit
renders nothing again). The cache key is a SHA-256 over all those inputs; a missing or
unreadable entry is rendered again, never trusted. Each cached page carries an HMAC tag over
its name and bytes (`generator.cacheauth`): a page that fails the check is rendered again and
counted as an authentication failure.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import pickle
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from generator.changes.output import RECIPE_MARKER, fill_marked
from generator.data.gojson import subtree_layout
from generator.data.laidout import LaidOutEntry, materialized
from generator.limits import LIMITS
from generator.manifest import Written
from generator.quickwrite import write_or_link
from generator.site.mkdocs_adapter import Finished, PageShell
from generator.site.model import CommitFill, body_build_info
from generator.site.pagecache import CachedPage, PageCache
from generator.site.pagehelper import SharedPages, render_shared
from generator.site.pages import HtmlPage, RecipePages, SiteModel, Tab
from generator.site.prestage import Prestage, take_linkable
from generator.site.sparedirs import place

RENDER_VERSION = "3"
"""Bump when page output changes in a way the hashed inputs and sources below cannot see."""
SITE_CODE = Path(__file__).resolve().parent
"""The page code: every module of this package is hashed into the page keys (computed, not
listed: a module added for the cards changes the key by being there)."""


def templates_digest(templates: Path, code: Path = SITE_CODE) -> str:
    """A digest of the page templates and the page code: any change renders every page anew.

    Every file under `templates` and every `*.py` under `code` (this package) counts, by its
    path relative to its folder and its bytes."""
    h = hashlib.sha256(RENDER_VERSION.encode())
    h.update(repr(LIMITS).encode())  # the page limits decide what a page shows
    for root, files in (
        (templates, sorted(p for p in templates.rglob("*") if p.is_file())),
        (code, sorted(code.rglob("*.py"))),
    ):
        for path in files:
            h.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0")
            h.update(path.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


_EXACT_JSON = (
    orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)
"""orjson refuses (instead of writing as something else) dataclasses, datetimes and subclasses
of str, int, dict and list."""


def _digest(value: Any) -> str:
    """SHA-256 of a JSON-like value, serialized by content alone.

    The data documents are JSON (the evaluation memo reads them back from data/): they are
    written by orjson, several times faster than pickle at 10,000 attestations (a recipe's
    inputs are hundreds of KB). Anything orjson would write as something else it is, or
    cannot write (an integer beyond 64 bits, a key that is not a string), is pickled without
    a memo instead, so equal values give equal bytes and different values different bytes. A
    tuple is written as the list it equals: a page renders both alike
    (`tests/site/test_page_keys.py` pins that the documents hold no tuple). The pointer
    entries are hashed as their layouts' digests (`_entry_digests`) by `input_digests`.
    """
    try:
        return (
            "j"
            + hashlib.sha256(
                orjson.dumps(value, option=_EXACT_JSON, default=materialized)
            ).hexdigest()
        )
    except TypeError:
        pass
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=5)
    pickler.fast = True  # no memo: the bytes depend on content only
    pickler.dump(value)
    return "p" + hashlib.sha256(buffer.getvalue()).hexdigest()


@dataclass(frozen=True)
class InputDigests:
    """Digests of what the pages read from the documents (never of templates or code).

    `context` covers what every page reads (sources, states, phases, build info and time),
    `bodies` the same for the recipe pages' bodies and the Markdown pages' rows, which see the
    build info of `body_build_info`, `recipes` each catalog entry's own documents (in catalog
    order), `site` what only the Markdown pages read (pointers naming no catalog recipe, the
    index's own fields). They are the expensive part of the page keys (hundreds of MB hashed
    at 10,000 attestations), so a build answered by the evaluation memo reuses the digests
    stored with it: the same documents, read back from JSON, differ in Python types (lists for
    tuples) but not in content.
    """

    context: str
    bodies: str
    recipes: tuple[str, ...]
    site: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "context": self.context,
            "bodies": self.bodies,
            "recipes": list(self.recipes),
            "site": self.site,
        }

    @classmethod
    def from_dict(cls, doc: Any) -> InputDigests | None:
        """The digests stored by `as_dict`, or None when `doc` is not such a document."""
        try:
            recipes = tuple(str(r) for r in doc["recipes"])
            return cls(str(doc["context"]), str(doc["bodies"]), recipes, str(doc["site"]))
        except (KeyError, TypeError):
            return None


def input_digests(model: SiteModel) -> InputDigests:
    """Hash every document part the pages read."""

    def context(build_info: Mapping[str, Any]) -> str:
        shared = [dict(model.sources), dict(model.states), list(model.phases)]
        return _digest([*shared, dict(build_info), model.build_time])

    recipes = tuple(
        _digest(
            [
                tab.recipe,
                _layout_digest(tab.doc),
                _layout_digest(model.series.get(tab.recipe, {})),
                _entry_digests(model.pointers_for(tab.recipe)),
            ]
        )
        for tab in model.tabs
    )
    orphans = [p for p in model.pointers if not model.has_recipe(p.get("recipe"))]
    index = {k: v for k, v in model.index.items() if k != "groups"}
    return InputDigests(
        context(model.build_info),
        context(body_build_info(model.build_info, model.commit_mark)),
        recipes,
        _digest([_entry_digests(orphans), index]),
    )


def _layout_digest(document: Mapping[str, Any]) -> str:
    """A recipe's tab or series document as the sha256 of its layout text (`subtree_layout`):
    exactly its content, whether it was kept from an earlier build (its stored digest, its text
    never parsed for a key: `generator.evaluate.tabstore`) or made in this one."""
    if type(document) is LaidOutEntry:
        return document.sha256.hex()
    return hashlib.sha256(subtree_layout(document)).hexdigest()


def _entry_digests(pointers: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each pointer entry as the sha256 of its layout text (`subtree_layout`): exactly its
    content, whether it was kept laid out (its stored digest: never read for a key) or made
    this build, so a page's key does not change with how its entries were kept."""
    return [
        (p.sha256 if type(p) is LaidOutEntry else hashlib.sha256(subtree_layout(p)).digest()).hex()
        for p in pointers
    ]


@dataclass(frozen=True)
class PageKeys:
    """The page cache keys of one site, each the document digests it reads with the
    templates' and page code's digest (`templates_digest`)."""

    bodies: list[str]
    """Each recipe's page body and its rows on the Markdown pages (catalog order,
    `generator.site.rowcache`): the same in any shell."""
    markdown: str
    """The Markdown pages."""


def page_keys(digests: InputDigests, code: str) -> PageKeys:
    """The cache keys of the recipe pages (and their rows) and of the Markdown pages."""

    def key(context: str, *parts: str) -> str:
        return hashlib.sha256("\0".join((code, context, *parts)).encode()).hexdigest()

    return PageKeys(
        bodies=[key(digests.bodies, r) for r in digests.recipes],
        markdown=key(digests.context, digests.site, *digests.recipes),
    )


@dataclass(frozen=True)
class PageMeta:
    """What the build needs of a written page (the body stays on disk)."""

    recipe: str
    page: HtmlPage


@dataclass(frozen=True)
class _Placer:
    """Writes newly rendered pages into the site and (with a cache) the page cache (picklable:
    a page helper process writes its pages with a copy). `lists`: each recipe's history list
    (`ChangeSet.recipe_lists`), put into its page as it is written; the page cache keeps the
    page without it."""

    site: Path
    cache: PageCache | None
    lists: Mapping[str, bytes] = field(default_factory=dict, compare=False)
    previous: Path | None = None
    """The output this site replaces: a page it holds byte for byte is linked."""
    written: dict[str, Written] | None = field(default=None, compare=False)
    """Where each page written as it is kept goes with its sha256 (by its path in the site),
    for the manifest; a helper process's copy keeps its own (its pages are hashed there)."""
    shell: str = ""
    """The digest of the shell the pages are finished in (`PageShell.digest`)."""
    fill: CommitFill | None = None
    """The commit put in place of its mark as each page is written (the page cache keeps
    the page with the mark, `body_build_info`)."""
    spare: Path | None = None
    """Emptied recipe folders of a replaced output, moved into place instead of made
    (`generator.site.sparedirs`)."""

    def write(self, recipe: str, data: bytes, sha256: str) -> None:
        """Write a finished page (whose sha256 is `sha256`) into the site, with its history
        list if it has one (and the commit in place of its mark)."""
        page = Path("recipes", recipe, "index.html")
        place((self.site / page).parent, self.spare)
        if self.fill is not None:
            data = self.fill.data(data)
            sha256 = hashlib.sha256(data).hexdigest()
        listing = self.lists.get(recipe)
        if listing is not None:
            data = fill_marked(data, RECIPE_MARKER, listing)
        write_or_link(
            self.site / page, data, None if self.previous is None else self.previous / page
        )
        if self.written is not None and listing is None:
            self.written[page.as_posix()] = Written.of(self.site / page, sha256)

    def link_cached(self, recipe: str, key: str) -> bool:
        """Link the replaced output's page of `recipe` when it is exactly the cached page of
        `key` and gets no history list (`PageCache.link_html`): the cached copy is not read."""
        if self.cache is None or self.previous is None or recipe in self.lists or self.fill:
            return False  # with a fill, the cached page holds the mark: it is written
        page = Path("recipes", recipe, "index.html")
        target = self.site / page
        place(target.parent, self.spare)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(target)
        digest = self.cache.link_html(key, self.previous / page, target, self.shell)
        if digest is None:
            return False
        if self.written is not None:
            self.written[page.as_posix()] = Written.of(target, digest)
        return True

    def place(self, recipe: str, key: str, page: Finished) -> None:
        """Write a newly finished page into the site and the page cache."""
        digest = hashlib.sha256(page.data).hexdigest()
        self.write(recipe, page.data, digest)
        if self.cache is not None:
            self.cache.put_html(key, CachedPage(page.data, digest, self.shell, page.body))


@dataclass(frozen=True)
class _Job:
    """What writing one page needs besides the page itself."""

    renderer: RecipePages
    shell: PageShell
    placer: _Placer


def _render_page(job: _Job, tab: Tab, key: str) -> None:
    """Render one page in this process and place it."""
    page = job.renderer.render(tab)
    job.placer.place(tab.recipe, key, job.shell.finish(tab.recipe, page.title, page.body.encode()))


def _copy_cached(job: _Job, tab: Tab, key: str) -> bool:
    """Place a cached page (linked when the replaced output holds it); a page finished in
    another shell (a new commit in its footer) has its body finished in this one, not
    rendered again. False when there is none (or it cannot be read)."""
    if job.placer.link_cached(tab.recipe, key):
        return True
    cache = job.placer.cache
    cached = None if cache is None else cache.get_html(key)
    if cached is None:
        return False
    try:
        if cached.shell == job.placer.shell:
            job.placer.write(tab.recipe, cached.data, cached.sha256)
        else:
            title = job.renderer.title(tab)
            body = cached.body_bytes()
            job.placer.place(tab.recipe, key, job.shell.finish(tab.recipe, title, body))
    except OSError:
        return False
    return True


def keys_by_recipe(model: SiteModel, keys: Sequence[str] | None) -> dict[str, str]:
    """Each recipe's page key from `keys` (catalog order); "" for each without a page cache."""
    found = list(keys) if keys is not None else [""] * len(model.tabs)
    return dict(zip((t.recipe for t in model.tabs), found, strict=True))


def write_recipe_pages(
    model: SiteModel,
    templates: Path,
    shell: PageShell,
    site: Path,
    *,
    keys: Sequence[str] = (),
    cache: PageCache | None = None,
    helpers: int = 0,
    lists: Mapping[str, bytes] | None = None,
    previous: Path | None = None,
    written: dict[str, Written] | None = None,
    fill: CommitFill | None = None,
    spare: Path | None = None,
    shared: SharedPages | None = None,
    prestaged: Prestage | None = None,
) -> list[PageMeta]:
    """Write `site/recipes/<recipe>/index.html` for every catalog entry; metadata in order.
    `fill`: the commit each page gets in place of the mark its body was rendered with; `spare`:
    emptied recipe folders to move into place (`generator.site.sparedirs`). `previous`: the
    output this site replaces, whose pages written again byte for byte are linked
    (`write_or_link`). `written` is given the sha256 of each page this process writes (by its
    path in the site), so the manifest need not read it again. `keys`: the page keys
    (`page_keys`) in catalog order, needed with a `cache`. Cached pages are copied, the others
    rendered: here, and with `helpers` > 0 and enough of them, in that many helper processes
    (`generator.site.pagehelper`, sending each only what its recipes' pages read). `lists` are the recipes' history lists
    (`generator.changes.ChangeSet.recipe_lists`); `shared`: helpers started earlier, which
    render the pages given them; `prestaged`: pages linked ahead (`generator.site.prestage`).
    The build's documents are never shared with a forked worker: CPython writes a reference
    count on every read, so each would copy the pages it reads (more memory than a build may
    use at 10,000 attestations)."""
    renderer = RecipePages(model, templates)
    placer = _Placer(site, cache, lists or {}, previous, written, shell.digest(), fill, spare)
    job = _Job(renderer, shell, placer)
    key_of = keys_by_recipe(model, keys if cache is not None else None)
    given = shared.recipes if shared is not None else frozenset()
    placed = given | take_linkable(prestaged, placer, model.tabs, key_of, given)
    todo = [
        tab
        for tab in model.tabs
        if tab.recipe not in placed and not _copy_cached(job, tab, key_of[tab.recipe])
    ]

    def render_here(tab: Tab) -> None:
        _render_page(job, tab, key_of[tab.recipe])

    if shared is not None:
        shared.finish(shell, placer, render_here, todo)
    else:
        render_shared(
            model,
            templates,
            shell,
            todo,
            helpers,
            render_here=render_here,
            placer=placer,
            keys=key_of,
        )
    return _metas(renderer, cache, key_of)


def _metas(
    renderer: RecipePages, cache: PageCache | None, key_of: Mapping[str, str]
) -> list[PageMeta]:
    """Every recipe page's metadata, in catalog order; its search text kept in the page cache
    under its page key (`PageCache.get_search`), made only for a recipe whose key changed."""
    stored = (cache.get_search() if cache is not None else None) or {}
    used: dict[str, str] = {}
    metas = []
    for tab in renderer.model.tabs:
        key = key_of[tab.recipe]
        meta = renderer.meta(tab, stored.get(key) if key else None)
        if key:
            used[key] = meta.search_text
        metas.append(PageMeta(tab.recipe, meta))
    if cache is not None and used != stored:
        cache.put_search(used)
    return metas


def meta_pages(metas: Sequence[PageMeta]) -> dict[str, HtmlPage]:
    """Recipe name -> page metadata, for the search index, sitemap and tags file."""
    return {m.recipe: m.page for m in metas}
