"""Render the site's pages from the data documents (pure: dicts in, texts out).

`render_pages` returns `{relative path: Markdown text}` for every page but the recipe pages;
`RecipePages` renders a recipe page's finished HTML body. Nothing here touches the file system
except reading templates (through generator.site.environment). The read model is
generator.site.model; the view models of cards, grids and tables are in their own modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup

from generator.site import escape
from generator.site.cards import card_view
from generator.site.environment import Badges, badges_for, environment
from generator.site.grids import (
    counts_text,
    grid_rows,
    k8s_minors,
    newest_build,
    result_counts,
    signer_columns,
)
from generator.site.model import (
    SiteModel,
    Tab,
    page_url,
    recipe_page,
    source_page,
)
from generator.site.resources import locate
from generator.site.rowcache import ROW_CACHE_NAME, RowCache
from generator.site.tables import (
    components_matrix,
    criteria_matrix,
    hardware_matrix,
    validator_images,
)

__all__ = [
    "HtmlPage",
    "RecipePages",
    "SiteModel",
    "Tab",
    "aicr_command",
    "pointer_card",
    "render_pages",
    "render_recipe_pages",
    "route_table",
    "search_summary",
]


def aicr_command(tab: Mapping[str, Any]) -> str:
    """`aicr recipe --service … --accelerator … --os … --intent … [--platform …] [--profile …]`."""
    c = tab.get("coord") or {}
    parts = [
        "aicr recipe",
        f"--service {c.get('service')}",
        f"--accelerator {c.get('accelerator')}",
        f"--os {c.get('os')}",
        f"--intent {c.get('intent')}",
    ]
    if c.get("platform"):
        parts.append(f"--platform {c['platform']}")
    if tab.get("profileSelection"):
        parts.append(f"--profile {tab['profileSelection']}")
    return " ".join(parts)


def route_table(model: SiteModel) -> dict[str, Any]:
    """aicr hash-route segments -> our pages, relative to the site root."""
    tabs: dict[str, str] = {}
    for t in model.tabs:
        path = str(t.doc.get("path") or "")
        if path:
            tabs[path] = page_url(recipe_page(t.recipe))
    sources = {
        src: page_url(source_page(str(info["slug"])))
        for src, info in model.sources.items()
        if info.get("slug")
    }
    return {"tabs": tabs, "sources": sources}


def _common(model: SiteModel, badges: Badges) -> dict[str, Any]:
    """What every page template sees besides its own values."""
    return {
        "m": model,
        "build_time": model.build_time,
        "aicr_command": aicr_command,
        "signer_columns": signer_columns,
        "grid_rows": grid_rows,
        "counts_text": counts_text,
        "k8s_minors": k8s_minors,
        "hardware_matrix": hardware_matrix,
        "components_matrix": components_matrix,
        "criteria_matrix": criteria_matrix,
        "validator_images": validator_images,
        "state_badge": badges.state,
        "result_counts": result_counts,
        "newest_build": newest_build,
    }


def render_pages(model: SiteModel, templates: Path, rows: RowCache | None = None) -> dict[str, str]:
    """Every Markdown page of the site (all but the recipe pages), keyed by its path; the rows
    a page holds per recipe are taken from `rows` where it has them."""
    env = environment(templates)
    bodies = model.for_bodies()  # rows are kept by keys without the commit: none can show it
    common = _common(bodies, badges_for(env, bodies))
    pages: dict[str, str] = {}

    def render(name: str, path: str, **extra: Any) -> None:
        template = env.get_template(name)
        pages[path] = template.render(page=path, **{ROW_CACHE_NAME: rows}, **common, **extra)

    render("index.md.j2", "index.md", routes=route_table(bodies))
    render("rejected.md.j2", "rejected.md")
    render("sources-index.md.j2", "sources/index.md")
    render("about.md.j2", "about.md", commit=model.build_info.get("commit"))
    render("changes.md.j2", "changes.md", history_limit=200)  # filled in by generator.changes
    for src, info in sorted(model.sources.items()):
        render("source.md.j2", source_page(str(info["slug"])), src=src, info=info)
    return pages


@dataclass(frozen=True)
class HtmlPage:
    """A recipe page as finished HTML, placed into the site's page shell (no Markdown pass).

    `search_text` is what the search index holds for the page (a short HTML summary, never
    identities or bulk); `tags` are the page's search tags (service, accelerator).
    """

    title: str
    body: str
    search_text: str
    tags: tuple[str, ...]


class RecipePages:
    """Renders recipe pages one at a time (each is written, or taken from the page cache, on
    its own)."""

    def __init__(self, model: SiteModel, templates: Path) -> None:
        self.model = model
        env = environment(templates)
        self._template = env.get_template("recipe.html.j2")
        self._common = _common(model, badges_for(env, model))

    def render(self, tab: Tab) -> HtmlPage:
        """The page of one catalog entry."""
        path = recipe_page(tab.recipe)
        body = self._template.render(
            page=path,
            tab=tab,
            html_page=True,
            series=self.model.series.get(tab.recipe, {}),
            **self._common,
        )
        meta = self.meta(tab)
        return HtmlPage(meta.title, body, meta.search_text, meta.tags)

    def meta(self, tab: Tab, search: str | None = None) -> HtmlPage:
        """The page without its body: title, search text (`search` when known: kept with the
        page) and tags (cheap, no rendering)."""
        coord = tab.doc.get("coord") or {}
        tags = tuple(str(coord[k]) for k in ("service", "accelerator") if coord.get(k))
        text = search if search is not None else search_summary(self.model, tab)
        return HtmlPage(self.title(tab), "", text, tags)

    @staticmethod
    def title(tab: Tab) -> str:
        """The page's title: its recipe's name."""
        return tab.recipe


def pointer_card(
    model: SiteModel,
    page: str,
    pointer: Mapping[str, Any],
    show_recipe: bool = False,
    templates: Path | None = None,
) -> Markup:
    """One pointer's evidence card as HTML (the `pointer_card` macro of `_cards.j2`)."""
    env = environment(templates if templates is not None else locate().pages)
    macros = env.get_template("_cards.j2").module
    return Markup(macros.pointer_card(card_view(model, page, pointer, show_recipe)))  # type: ignore[attr-defined]


def render_recipe_pages(model: SiteModel, templates: Path) -> dict[str, HtmlPage]:
    """Every recipe page, keyed by its page path (`recipes/<recipe>.md`), in catalog order."""
    pages = RecipePages(model, templates)
    return {recipe_page(t.recipe): pages.render(t) for t in model.tabs}


def search_summary(model: SiteModel, tab: Tab) -> str:
    """The search index text of a recipe page: its state, coordinates, checks and signers."""
    doc = tab.doc
    coord = doc.get("coord") or {}
    info = model.states.get(str(doc.get("rollup")), {})
    latest = model.latest_evidence(tab.recipe)
    grids = [doc.get("combined") or {}, *doc.get("versions", [])]
    columns = signer_columns(model, grids, latest)
    checks = list(
        dict.fromkeys(str(t.get("name")) for t in (doc.get("combined") or {}).get("tests", []))
    )
    axes = " ".join(
        str(coord[a])
        for a in ("service", "accelerator", "os", "intent", "platform")
        if coord.get(a)
    )
    hl = model.headline(tab.recipe)
    qualifier = f", with caveats: {hl.text}" if hl.caveats else ", no caveats"
    text = (
        f"Recipe state: {info.get('label', doc.get('rollup'))}{qualifier}. "
        f"Recipe {tab.recipe} ({axes}). Checks: {', '.join(checks)}. "
        f"Counted signers: {', '.join(s.label for s in hl.signers) or 'none'}. "
        f"Signers: {', '.join(model.label(s) for s in columns)}."
    )
    return f"<p>{escape.html(text)}</p>"
