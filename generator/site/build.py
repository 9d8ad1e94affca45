"""Build the static site: render pages from the data documents, run MkDocs, swap it in.

`build_site` is a thin shell around pure rendering (generator.site.pages): it writes the
rendered Markdown pages, the recipe page shell and our assets into a build docs folder, writes
an effective mkdocs.yml, runs MkDocs + Material programmatically in strict mode into a staging
folder (inside the build's work folder), fills the shell with every recipe page
(generator.site.mkdocs_adapter, generator.site.recipepages, reusing the page cache), adds the data/
folder, and publishes with `publish_atomically`. A failed build leaves `out` alone.

Speed: the big finished-HTML blocks of a page (grids, evidence cards, the catalog) are cut out
before MkDocs sees the Markdown and spliced back by a small in-process plugin after the search
plugin has indexed the page, so neither Python-Markdown nor the search indexer parse them.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from generator.manifest import Written
from generator.site import pagehelper
from generator.site.environment import keep_compiled
from generator.site.footer import footer_values
from generator.site.mkdocs_adapter import (
    SHELL_NAME,
    SHELL_PAGE,
    PageShell,
    expand,
    run_mkdocs,
    shell_markdown,
    split_fragments,
)
from generator.site.model import CommitFill
from generator.site.pagecache import PageCache, page_names
from generator.site.pagehelper import SharedPages
from generator.site.pages import SiteModel, render_pages
from generator.site.prestage import Prestage
from generator.site.recipepages import (
    InputDigests,
    PageKeys,
    input_digests,
    keys_by_recipe,
    meta_pages,
    page_keys,
    templates_digest,
    write_recipe_pages,
)
from generator.site.resources import SiteResources, locate
from generator.site.rowcache import RowCache
from generator.site.sparedirs import claim
from generator.site.swap import publish_atomically

JS_FILES = ("assets/js/charts.js", "assets/js/app.js")
# Not in every page's <head>: charts.js loads it on a page that draws a chart.
LAZY_JS = ("plotly-basic.min.js",)
CSS_FILES = ("assets/css/evidence.css",)


@dataclass(frozen=True)
class SiteInputs:
    """Everything a site is built from: the four data documents plus how to present them."""

    index: Mapping[str, Any]
    series: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    pointers: Mapping[str, Any] = field(default_factory=dict)
    build_info: Mapping[str, Any] = field(default_factory=dict)
    preview: bool = False
    site_url: str | None = None


def plotly_js() -> bytes:
    """plotly.js's basic bundle (bar and scatter traces), vendored under assets/js/vendor."""
    return (locate().assets / "js" / "vendor" / "plotly-basic.min.js").read_bytes()


@dataclass(frozen=True)
class WrittenDocs:
    """What `write_docs` wrote: the page paths, and per page the HTML blocks cut out of it."""

    pages: list[str]
    fragments: Mapping[str, tuple[str, ...]]


def site_model(inputs: SiteInputs) -> SiteModel:
    """The indexes every page template reads."""
    return SiteModel(inputs.index, inputs.series, inputs.pointers, inputs.build_info)


def write_docs(docs: Path, res: SiteResources, pages: Mapping[str, str]) -> WrittenDocs:
    """Write the Markdown pages (`render_pages` output), the recipe page shell and the assets
    into `docs`.

    Each page's marked raw HTML blocks are cut out (`split_fragments`) and kept in memory, so
    neither Python-Markdown nor the search plugin parse them; `run_mkdocs` puts them back.
    """
    pages = {**pages, SHELL_PAGE: shell_markdown()}
    if docs.exists():
        shutil.rmtree(docs)
    fragments: dict[str, tuple[str, ...]] = {}
    for rel_path, text in pages.items():
        markdown, blocks = split_fragments(text)
        if blocks:
            fragments[rel_path] = blocks
        target = docs / rel_path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(markdown, encoding="utf-8", newline="\n")
    js = docs / "assets" / "js"
    js.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(res.assets / "js" / "vendor" / "plotly-basic.min.js", js / LAZY_JS[0])
    for name in ("charts.js", "app.js", *LAZY_JS[1:]):
        shutil.copyfile(res.assets / "js" / name, js / name)
    css = docs / "assets" / "css"
    css.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(res.assets / "css" / "evidence.css", css / "evidence.css")
    return WrittenDocs(sorted(pages), fragments)


def effective_config(
    config: Path, *, docs: Path, site: Path, res: SiteResources, inputs: SiteInputs
) -> dict[str, Any]:
    """The user's (or default) mkdocs.yml with our folders, assets and values filled in.

    It is read by `load_site_config`, which refuses hooks, foreign plugins and Python tags."""
    from generator.site.siteconfig import load_site_config

    cfg: dict[str, Any] = dict(load_site_config(config))
    theme = cfg.get("theme") or {}
    theme = {"name": theme} if isinstance(theme, str) else dict(theme)
    theme["custom_dir"] = str(res.overrides)
    theme["font"] = False
    cfg["theme"] = theme
    cfg["docs_dir"] = str(docs)
    cfg["site_dir"] = str(site)
    if inputs.site_url:
        cfg["site_url"] = inputs.site_url
    extra = dict(cfg.get("extra") or {})
    extra["evidence"] = footer_values(inputs)
    cfg["extra"] = extra
    cfg["extra_javascript"] = [
        *JS_FILES,
        *[j for j in cfg.get("extra_javascript") or [] if j not in JS_FILES],
    ]
    cfg["extra_css"] = [*CSS_FILES, *[c for c in cfg.get("extra_css") or [] if c not in CSS_FILES]]
    cfg.pop("repo_url", None)  # Material would call api.github.com from the browser
    return cfg


def _new_staging(work_dir: Path, out: Path) -> Path:
    """A new folder to stage the site in: inside the build's work folder (so a killed build
    leaves nothing a later build's sweep would not find) when it is on the file system of
    `out`, which the final rename needs; else next to `out`."""
    parent = out.parent
    try:
        if os.stat(work_dir).st_dev == os.stat(parent).st_dev:
            parent = work_dir
    except OSError:
        pass
    return Path(tempfile.mkdtemp(prefix=f".{out.name}.staging-", dir=parent))


def _place_data(data_dir: Path, target: Path, *, move: bool) -> None:
    """Put the data/ folder into the staging site: with `move`, a rename on the same file
    system (the data documents of a large tree are hundreds of MB), else a copy."""
    if move and not target.exists():
        try:
            os.rename(data_dir, target)
            return
        except OSError:
            pass
    shutil.copytree(data_dir, target, dirs_exist_ok=True)


def _page_keys(
    model: SiteModel, res: SiteResources, cache: PageCache | None, digests: InputDigests | None
) -> tuple[PageKeys | None, InputDigests | None]:
    """The pages' cache keys (None without a cache) and the input digests they came from."""
    if cache is None:
        return None, digests
    code = templates_digest(res.pages)
    keep_compiled(res.pages, cache.root.parent / "templates", code)
    if digests is None or len(digests.recipes) != len(model.tabs):
        digests = input_digests(model)
    return page_keys(digests, code), digests


def _markdown_pages(
    model: SiteModel,
    res: SiteResources,
    cache: PageCache | None,
    keys: PageKeys | None,
    prestaged: Prestage | None = None,
) -> dict[str, str]:
    """The Markdown pages (from `cache` when their key is there; their rows, read meanwhile
    by the child of `prestaged` when there is one)."""
    fill = model.commit_fill()
    if cache is None or keys is None:
        return _filled(render_pages(model, res.pages), fill)
    markdown = cache.get_markdown(keys.markdown)
    if markdown is None:
        rows = RowCache(
            dict(zip((t.recipe for t in model.tabs), keys.bodies, strict=True)),
            (prestaged.rows() if prestaged is not None else None) or cache.get_rows(),
        )
        markdown = _filled(render_pages(model, res.pages, rows), fill)  # its key: the commit
        cache.put_markdown(keys.markdown, markdown)
        if rows.changed:
            cache.put_rows(rows.used())
    return markdown


def _start_shared(
    model: SiteModel, templates: Path, keys: PageKeys | None, cache: PageCache | None, helpers: int
) -> SharedPages | None:
    """Helpers for the recipe pages no cached page answers, started before the shell exists
    (`SharedPages`) to render meanwhile; None with no helpers or too few such pages."""
    if helpers < 1:
        return None
    kept = cache.html_keys() if cache is not None else frozenset()
    key_of = keys_by_recipe(model, keys.bodies if keys is not None else None)
    todo = [tab for tab in model.tabs if key_of[tab.recipe] not in kept]
    if len(todo) < pagehelper.MIN_SHARED_PAGES:  # looked up here: tests lower it
        return None
    return SharedPages(model, templates, todo, helpers, key_of)


def _filled(pages: dict[str, str], fill: CommitFill | None) -> dict[str, str]:
    """The Markdown pages with the commit in place of the mark their rows were rendered with
    (`body_build_info`)."""
    return pages if fill is None else {path: fill.text(text) for path, text in pages.items()}


def commit_mark(cache: PageCache | None) -> str:
    """What the page bodies see for the commit they link: the page cache's own mark
    (`PageCache.commit_mark`); without a cache, a fresh one."""
    return secrets.token_hex(20) if cache is None else cache.commit_mark()


def _marked_model(inputs: SiteInputs, cache: PageCache | None) -> SiteModel:
    """The site's model, with the commit mark its bodies see (`commit_mark`)."""
    model = site_model(inputs)
    model.commit_mark = commit_mark(cache)
    return model


def _run_theme(
    cfg: dict[str, Any],
    work_dir: Path,
    fragments: Mapping[str, tuple[str, ...]],
    page_cache: Path | None,
) -> None:
    """Write the effective configuration into `work_dir` and run MkDocs on it (the theme's
    compiled templates are kept beside `page_cache`)."""
    config_file = work_dir / "mkdocs.yml"
    config_file.write_text(
        yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True), encoding="utf-8"
    )
    run_mkdocs(
        config_file, fragments, None if page_cache is None else page_cache.parent / "templates"
    )


def _recipe_pages(
    model: SiteModel,
    templates: Path,
    staging: Path,
    keys: PageKeys | None,
    cache: PageCache | None,
    helpers: int,
    lists: Mapping[str, bytes] | None,
    previous: Path | None = None,
    written: dict[str, Written] | None = None,
    spare: Path | None = None,
    shared: SharedPages | None = None,
    prestaged: Prestage | None = None,
) -> None:
    """Every recipe page (with its history list from `lists`; its body sees `for_bodies`),
    in the shell MkDocs rendered into `staging`, entered into its search index, sitemap and
    tags; the page cache keeps only what this site uses. `previous`: the output this site
    replaces (its same pages linked); `written` is given the digests of the pages written here
    (`write_recipe_pages`); `spare`: emptied recipe folders to move into place; `shared`: the
    helpers `_start_shared` started; `prestaged`: pages linked ahead (`generator.site.prestage`).
    The page cache keeps each recipe's page key, for the next build to link ahead."""
    shell_file = staging / "recipes" / SHELL_NAME / "index.html"
    shell = PageShell.parse(shell_file.read_text(encoding="utf-8"), str(shell_file))
    metas = write_recipe_pages(
        model.for_bodies(),
        templates,
        shell,
        staging,
        keys=[] if keys is None else keys.bodies,
        cache=cache,
        helpers=helpers,
        lists=lists,
        previous=previous,
        written=written,
        fill=model.commit_fill(),
        spare=spare,
        shared=shared,
        prestaged=prestaged,
    )
    expand(staging, meta_pages(metas), [m.recipe for m in metas])
    if cache is not None and keys is not None:
        placed = keys_by_recipe(model, keys.bodies)
        if cache.get_placed() != placed:  # an unchanged site writes nothing into the cache
            cache.put_placed(placed)
        cache.keep_only(page_names(keys.bodies, keys.markdown))


def _add_data(
    staging: Path,
    data_dir: Path | None,
    move: bool,
    data_ready: Callable[[], None] | None,
    preview: bool,
) -> None:
    """data/ into `staging` (when `data_ready` says it is complete); a preview's header."""
    if data_ready is not None:
        data_ready()
    if data_dir is not None and data_dir.is_dir():
        _place_data(data_dir, staging / "data", move=move)
    if preview:
        (staging / "_headers").write_text("/*\n  X-Robots-Tag: noindex\n", encoding="utf-8")


def build_site(
    inputs: SiteInputs,
    *,
    out: Path,
    config: Path | None,
    work_dir: Path,
    data_dir: Path | None = None,
    move_data: bool = False,
    page_cache: Path | None = None,
    digests: InputDigests | None = None,
    data_ready: Callable[[], None] | None = None,
    before_publish: Callable[[Path], None] | None = None,
    retire: Callable[[Path], None] | None = None,
    helpers: int = 0,
    recipe_lists: Mapping[str, bytes] | None = None,
    known: dict[str, Written] | None = None,
    prestaged: Prestage | None = None,
) -> InputDigests | None:
    """Build the whole site into `out`, atomically; `out` is untouched when anything fails.
    `data_dir` is copied in as data/ (moved, with `move_data`, when the caller is done with it).
    `page_cache` (a folder) keeps pages, rows and (beside it) compiled templates between builds.
    Its keys come from `digests` when given (those the documents had when first built),
    else from hashing the documents; the digests used are returned (None without a cache).
    `data_ready` is called before `data_dir` is placed (the caller may still be reading it).
    `before_publish` is handed the complete staging folder last (badges, the manifest).
    `retire` takes the replaced output away (`publish_atomically`). `helpers` processes
    render recipe pages beside this one when many are not cached (`write_recipe_pages`).
    `recipe_lists` are the recipe pages' history lists (`generator.changes.ChangeSet`); `known`
    (files hashed as written, for the manifest) is given the recipe pages this process writes;
    `prestaged`: recipe pages linked ahead (`generator.site.prestage`)."""
    res = locate()
    config = config if config is not None else res.default_config
    work_dir.mkdir(parents=True, exist_ok=True)
    docs = work_dir / "docs"
    cache = PageCache(page_cache) if page_cache is not None else None
    model = _marked_model(inputs, cache)
    keys, digests = _page_keys(model, res, cache, digests)
    out = out.absolute()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = _new_staging(work_dir, out)
    shared = None
    try:
        shared = _start_shared(model.for_bodies(), res.pages, keys, cache, helpers)
        written = write_docs(docs, res, _markdown_pages(model, res, cache, keys, prestaged))
        cfg = effective_config(config, docs=docs, site=staging, res=res, inputs=inputs)
        _run_theme(cfg, work_dir, written.fragments, page_cache)
        spare = claim(out, work_dir) or (prestaged.spare() if prestaged is not None else None)
        placing = (helpers, recipe_lists, out, known, spare, shared, prestaged)
        _recipe_pages(model, res.pages, staging, keys, cache, *placing)
        _add_data(staging, data_dir, move_data, data_ready, cfg["extra"]["evidence"]["preview"])
        if before_publish is not None:
            before_publish(staging)
        publish_atomically(staging, out, retire)
    finally:
        if shared is not None:
            shared.stop()
        shutil.rmtree(staging, ignore_errors=True)
        if cache is not None:
            cache.settle()  # its writes end with the build (`PageCache.keep_only` waited)
    return digests if cache is not None else None
