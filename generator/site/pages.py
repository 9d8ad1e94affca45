"""Render the site's Markdown pages from the data documents (pure: dicts in, texts out).

`render_pages` returns `{relative path: Markdown text}`; nothing here touches the file system
except reading templates. Every contributor-controlled value goes through generator.site.escape
in the templates (the Jinja environment autoescapes as a safety net).
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from generator.limits import LIMITS
from generator.site import bounded, caveats, escape
from generator.site.charts import Reading, history_figure, latest_figure

STATE_ORDER = ("CONFIRMED", "SINGLE", "PARTIAL", "UNTESTED", "FAILING", "CONTESTED")
STATE_CLASS = {
    "CONFIRMED": "confirmed",
    "SINGLE": "single",
    "PARTIAL": "partial",
    "UNTESTED": "untested",
    "FAILING": "failing",
    "CONTESTED": "contested",
}
RESULT_WORD = {"pass": ("✓", "pass"), "fail": ("✗", "fail"), "not-run": ("·", "not run")}
EXIT_WORD = {0: "verified", 1: "verified, phase failures recorded", 2: "rejected", 3: "no verdict"}
COMMIT_URL = "https://github.com/NVIDIA/aicr/commit/"


def page_url(path: str) -> str:
    """The directory URL MkDocs gives a Markdown file (`a/b.md` -> `a/b/`, `index.md` -> ``)."""
    stem = path[:-3]
    if stem == "index":
        return ""
    if stem.endswith("/index"):
        return stem[:-5]
    return stem + "/"


@functools.lru_cache(maxsize=1 << 16)
def rel(from_page: str, to_page: str) -> str:
    """A relative link from one Markdown page's URL to another's (works under any base path).

    Remembered: every recipe page links the same few pages, and `relpath` is slow."""
    base = page_url(from_page) or "."
    target = page_url(to_page) or "."
    out = posixpath.relpath(target, base.rstrip("/") or ".")
    return "./" if out == "." else out + "/"


def mdrel(from_page: str, to_page: str) -> str:
    """A relative link between two Markdown files, for Markdown links MkDocs validates."""
    return posixpath.relpath(to_page, posixpath.dirname(from_page) or ".")


def recipe_page(recipe: str) -> str:
    return f"recipes/{recipe}.md"


def source_page(slug: str) -> str:
    return f"sources/{slug}.md"


def _parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def age(attested: str | None, build_time: str | None) -> str:
    """How long before the build a run was attested, in plain words."""
    a, b = _parse_time(attested), _parse_time(build_time)
    if a is None or b is None:
        return "age unknown"
    days = (b - a).days
    if days < 0:
        return "after this build"
    if days == 0:
        return "same day as this build"
    return f"{days} day{'s' if days != 1 else ''} before this build"


def freshness_text(fresh: Mapping[str, Any]) -> str:
    """`fresh`, `stale (<12 hex>… vs current <12 hex>…)` or `unknown`."""
    state = fresh.get("state")
    if state == "fresh":
        return "fresh"
    if state == "stale":
        signed = str(fresh.get("signed") or "")[:12]
        current = str(fresh.get("current") or "")[:12]
        return f"stale ({signed}… vs current {current}…)"
    return "unknown"


def unknown_reason(fresh: Mapping[str, Any]) -> str:
    """Why an attestation's freshness is unknown, from what the comparison lacked."""
    if not fresh.get("signed"):
        return "the bundle records no recipe digest to compare"
    if not fresh.get("current"):
        return (
            "the digest of this recipe as it stands could not be computed (for example, no overlay "
            "for it in this tree)"
        )
    return "the signed and current digests could not be compared"


@dataclass(frozen=True)
class Tab:
    """One recipe of index.json with where it sits in the catalog."""

    service: str
    accelerator: str
    os: str
    doc: Mapping[str, Any]

    @property
    def recipe(self) -> str:
        return str(self.doc["recipe"])


def tabs_of(index: Mapping[str, Any]) -> list[Tab]:
    """Every tab of index.json in catalog order."""
    return [
        Tab(str(g["service"]), str(d["accelerator"]), str(d["os"]), t)
        for g in index.get("groups", [])
        for d in g.get("dashboards", [])
        for t in d.get("tabs", [])
    ]


def verdict_of(pointer: Mapping[str, Any]) -> str:
    """`verified` | `failures` | `rejected` | `pending` | `no-verdict`."""
    verify = pointer.get("verify") or {}
    if verify.get("pending"):
        return "pending"
    code = verify.get("exit")
    words = {0: "verified", 1: "failures", 2: "rejected"}
    return words[code] if isinstance(code, int) and code in words else "no-verdict"


def _invert(text: str) -> str:
    """A sort key that orders strings descending inside an ascending sort."""
    return "".join(chr(0x10FFFF - ord(ch)) for ch in text)


def _is_hex_slug(text: str) -> bool:
    return len(text) >= 16 and all(c in "0123456789abcdef" for c in text)


def _short_hash(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


@dataclass(frozen=True)
class FreshSummary:
    """A recipe's freshness over each signer's latest verified evidence.

    `state` is `stale` if any latest attestation is stale, `unknown` if any could not be
    compared (and none is stale), `fresh` if all match, `none` without verified evidence.
    """

    state: str
    text: str
    fresh: int
    stale: int
    unknown: int
    newest: str | None
    oldest: str | None
    reasons: tuple[str, ...] = ()
    """Why freshness is unknown, distinct, for the attestations where it is."""

    @property
    def total(self) -> int:
        return self.fresh + self.stale + self.unknown


def evidence_time(evidence: Mapping[str, Any]) -> str:
    """When evidence was signed, for ordering: the verified transparency-log time (`loggedAt`);
    the claimed attestedAt only for data written before the log time was kept."""
    return str(evidence.get("loggedAt") or evidence.get("attestedAt") or "")


def _counted_evidence(p: Mapping[str, Any]) -> bool:
    """Verified evidence its recipe shows (not left out by a count limit)."""
    return (
        verdict_of(p) in ("verified", "failures")
        and p.get("evidence") is not None
        and not p.get("omitted")
    )


class SiteModel:
    """Indexes over the four documents the templates need."""

    def __init__(
        self,
        index: Mapping[str, Any],
        series: Mapping[str, Mapping[str, Any]],
        pointers: Mapping[str, Any],
        build_info: Mapping[str, Any],
    ) -> None:
        self.index = index
        self.series = series
        self.pointers: list[Mapping[str, Any]] = list(pointers.get("pointers", []))
        self.build_info = build_info
        self.sources: Mapping[str, Mapping[str, Any]] = index.get("sources", {})
        self.states: Mapping[str, Mapping[str, Any]] = index.get("states", {})
        self.phases: list[str] = list(index.get("phases", []))
        self.tabs = tabs_of(index)
        self.build_time = str(
            build_info.get("buildTime") or index.get("meta", {}).get("buildTime") or ""
        )
        self.labels = self._readable_labels()
        # Per-recipe indexes, built once: every page asks for them, often several times, and
        # scanning all pointers per question is quadratic at 1,000 recipes.
        self._by_recipe: dict[Any, list[Mapping[str, Any]]] = {}
        for p in self.pointers:
            self._by_recipe.setdefault(p.get("recipe"), []).append(p)
        self._sorted: dict[str, list[Mapping[str, Any]]] = {}
        self._latest: dict[str, list[Mapping[str, Any]]] = {}
        self._fresh: dict[str, FreshSummary] = {}
        self._badges: dict[tuple[str, str], Markup] = {}
        self._recipes = {t.recipe for t in self.tabs}
        self._tab_of = {t.recipe: t for t in self.tabs}
        self._headlines: dict[str, caveats.Headline] = {}

    def has_recipe(self, recipe: object) -> bool:
        """Is `recipe` in the catalog (so it has a page)?"""
        return recipe in self._recipes

    def state_badge(self, name: str, suffix: str = "") -> Markup:
        """A consensus state as an icon and a word (never colour alone), memoised per state."""
        key = (name, suffix)
        badge = self._badges.get(key)
        if badge is None:
            info = self.states.get(name, {})
            badge = self._badges[key] = Markup(
                f'<span class="state state-{STATE_CLASS.get(name, "untested")}" '
                f'data-state="{escape.attr(name)}" title="{escape.attr(info.get("description", ""))}">'
                f'<span class="state-icon" aria-hidden="true">{escape.html(info.get("icon", "?"))}'
                f"</span> {escape.html(info.get('label', name))}{escape.html(suffix)}</span>"
            )
        return badge

    # ---------------------------------------------------------------- signers
    def _readable_labels(self) -> dict[str, str]:
        """Unlisted sources labelled only by a hex slug get `unlisted signer N (<8 hex>…)`."""
        out: dict[str, str] = {}
        n = 0
        for src in sorted(self.sources):
            info = self.sources[src]
            raw = str(info.get("label") or "")
            if raw and not _is_hex_slug(raw):
                out[src] = raw
                continue
            if info.get("allowlisted"):
                out[src] = raw or f"signer {src[:8]}…"
                continue
            n += 1
            out[src] = f"unlisted signer {n} ({src[:8]}…)"
        return out

    def label(self, src: str | None, pointer: Mapping[str, Any] | None = None) -> str:
        """A readable, PII-free name: the allowlist label, else a numbered unlisted signer."""
        if src and src in self.labels:
            return self.labels[src]
        if pointer is not None:
            signer = pointer.get("signer") or {}
            if signer.get("label") and not _is_hex_slug(str(signer["label"])):
                return str(signer["label"])
            verified = (signer.get("verified") or {}).get("identity")
            if verified:
                return f"unlisted signer ({_short_hash(str(verified))}…)"
            claimed = (signer.get("claimed") or {}).get("identity")
            if claimed:
                return f"unverified claim ({_short_hash(str(claimed))}…)"
        return "unknown signer"

    def identity(self, src: str) -> str:
        """The full signer identity of a source (shown only behind a disclosure)."""
        return str(self.sources.get(src, {}).get("signerId") or "")

    def counted(self, src: str) -> bool:
        return bool(self.sources.get(src, {}).get("allowlisted"))

    def source_link(self, from_page: str, src: str | None) -> str | None:
        if src and src in self.sources and self.sources[src].get("slug"):
            return rel(from_page, source_page(str(self.sources[src]["slug"])))
        return None

    def covered(self, src: str) -> list[Tab]:
        """The recipes this source has builds for (from the series), in catalog order."""
        return [t for t in self.tabs if src in self.series.get(t.recipe, {}).get("builds", {})]

    # ---------------------------------------------------------------- pointers
    def pointers_for(self, recipe: str) -> list[Mapping[str, Any]]:
        """Every pointer naming a recipe, newest attestation first, unread ones last."""
        cached = self._sorted.get(recipe)
        if cached is None:
            cached = self._sorted[recipe] = self._sort_pointers(self._by_recipe.get(recipe, []))
        return list(cached)

    @staticmethod
    def _sort_pointers(found: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        return sorted(
            found,
            key=lambda p: (
                p.get("evidence") is None,
                "" if p.get("evidence") is None else _invert(evidence_time(p["evidence"])),
                str(p.get("path")),
            ),
        )

    def latest_evidence(self, recipe: str) -> list[Mapping[str, Any]]:
        """Each signer's newest verified pointer for a recipe, counted signers first."""
        cached = self._latest.get(recipe)
        if cached is None:
            cached = self._latest[recipe] = self._latest_of(recipe)
        return list(cached)

    def _latest_of(self, recipe: str) -> list[Mapping[str, Any]]:
        best: dict[str, Mapping[str, Any]] = {}
        for p in self.pointers_for(recipe):
            if not _counted_evidence(p):
                continue
            src = str((p.get("signer") or {}).get("sourceId") or p.get("path"))
            cur = best.get(src)
            if cur is None or evidence_time(p["evidence"]) > evidence_time(cur["evidence"]):
                best[src] = p
        return sorted(
            best.values(),
            key=lambda p: (
                not (p.get("signer") or {}).get("allowlisted"),
                self.label(p["signer"].get("sourceId"), p),
            ),
        )

    def headline(self, recipe: str) -> caveats.Headline:
        """A recipe's headline state with its caveats and counted signers (memoised)."""
        found = self._headlines.get(recipe)
        if found is None:
            tab = self._tab_of.get(recipe)
            latest = self.latest_evidence(recipe)
            found = self._headlines[recipe] = caveats.headline(
                tab.doc if tab is not None else {},
                self.phases,
                latest,
                sum(1 for p in self._by_recipe.get(recipe, []) if verdict_of(p) == "rejected"),
                caveats.counted_signers(latest, self.sources, self.label),
                self.build_time,
            )
        return found

    def problems(self) -> list[Mapping[str, Any]]:
        return [p for p in self.pointers if verdict_of(p) in ("rejected", "pending", "no-verdict")]

    def stale_recipes(self) -> list[str]:
        """Recipes whose latest evidence includes a stale attestation, in catalog order."""
        return [t.recipe for t in self.tabs if self.stale(t.recipe)]

    def stale(self, recipe: str) -> bool:
        return self.freshness(recipe).state == "stale"

    def freshness(self, recipe: str) -> FreshSummary:
        """Freshness of each signer's latest verified evidence, summarised for the recipe."""
        cached = self._fresh.get(recipe)
        if cached is None:
            cached = self._fresh[recipe] = self._freshness_of(recipe)
        return cached

    def _freshness_of(self, recipe: str) -> FreshSummary:
        latest = self.latest_evidence(recipe)
        states = [(p.get("freshness") or {}).get("state") for p in latest]
        fresh = states.count("fresh")
        stale = states.count("stale")
        unknown = len(states) - fresh - stale
        times = sorted(evidence_time(p["evidence"]) for p in latest)
        newest = times[-1] if times else None
        oldest = times[0] if times else None
        if not latest:
            return FreshSummary("none", "no verified evidence", 0, 0, 0, None, None)
        if stale:
            first = next(p for p in latest if (p.get("freshness") or {}).get("state") == "stale")
            text = freshness_text(first.get("freshness") or {})
            return FreshSummary("stale", text, fresh, stale, unknown, newest, oldest)
        if unknown:
            reasons = tuple(
                dict.fromkeys(
                    unknown_reason(p.get("freshness") or {})
                    for p in latest
                    if (p.get("freshness") or {}).get("state") not in ("fresh", "stale")
                )
            )
            return FreshSummary(
                "unknown", "unknown", fresh, stale, unknown, newest, oldest, reasons
            )
        return FreshSummary("fresh", "fresh", fresh, stale, unknown, newest, oldest)

    # ---------------------------------------------------------------- bandwidth
    def readings(self, recipe: str) -> dict[str, tuple[list[Reading], list[Reading]]]:
        """Per check: (latest reading per signer, every reading) from verified evidence."""
        latest_paths = {p["path"] for p in self.latest_evidence(recipe)}
        out: dict[str, tuple[list[Reading], list[Reading]]] = {}
        for p in sorted(self.pointers_for(recipe), key=lambda p: str(p.get("path"))):
            if not _counted_evidence(p):
                continue
            ev = p["evidence"]
            src = (p.get("signer") or {}).get("sourceId")
            for bw in ev.get("bandwidth") or []:
                r = Reading(
                    signer=self.label(src, p),
                    counted=bool((p.get("signer") or {}).get("allowlisted")),
                    when=str(ev.get("attestedAt")),
                    measured=_gbps(bw.get("measured")),
                    floor=_gbps(bw.get("floor")),
                    pass_line=_gbps(bw.get("passLine")),
                    result=bw.get("result"),
                )
                latest, every = out.setdefault(str(bw.get("check")), ([], []))
                every.append(r)
                if p["path"] in latest_paths:
                    latest.append(r)
        for check, (latest, every) in out.items():
            latest.sort(key=lambda r: (not r.counted, r.signer))
            every.sort(key=lambda r: (r.signer, r.when))
            out[check] = (latest, newest_per_signer(every, LIMITS.runs_per_signer))
        return out


def _gbps(value: Any) -> Any:
    """A bandwidth number as a float: data/*.json writes an integral float as Go does (`300`),
    which reads back as an int, and a page must not depend on which of the two it got."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


def newest_per_signer(readings: list[Reading], limit: int) -> list[Reading]:
    """At most `limit` readings per signer (its newest), of a list sorted by signer and time."""
    counts: dict[str, int] = {}
    for r in readings:
        counts[r.signer] = counts.get(r.signer, 0) + 1
    if all(n <= limit for n in counts.values()):
        return readings
    seen: dict[str, int] = {}
    kept = []
    for r in readings:
        seen[r.signer] = seen.get(r.signer, 0) + 1
        if counts[r.signer] - seen[r.signer] < limit:
            kept.append(r)
    return kept


def _environment(templates: Path) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates)),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        finalize=escape.finalize,  # bidi and control characters shown, whatever the filter
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,  # templates do not change during a build: no stat per include
    )
    env.filters.update(
        md=escape.md,
        h=escape.html,
        attr=escape.attr,
        code=escape.code,
        figure=escape.figure_attr,
        data=escape.data_attr,
    )
    env.globals.update(
        link=escape.link,
        safe_url=escape.safe_url,
        rel=rel,
        mdrel=mdrel,
        recipe_page=recipe_page,
        source_page=source_page,
        age=age,
        freshness_text=freshness_text,
        verdict_of=verdict_of,
        latest_figure=latest_figure,
        history_figure=history_figure,
        STATE_ORDER=STATE_ORDER,
        STATE_CLASS=STATE_CLASS,
        RESULT_WORD=RESULT_WORD,
        EXIT_WORD=EXIT_WORD,
        COMMIT_URL=COMMIT_URL,
        result_badge=result_badge,
        cards_shown=bounded.cards_shown,
        recipe_omissions=bounded.recipe_omissions,
    )
    from generator.site import cards  # cards builds on this module's helpers

    env.globals.update(
        pointer_card=cards.pointer_card,
        grid_block=cards.grid_block,
        hardware_block=cards.hardware_block,
        source_recipes_table=cards.source_recipes_table,
        source_builds_block=cards.source_builds_block,
    )
    return env


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


def _common(model: SiteModel) -> dict[str, Any]:
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
        "state_badge": model.state_badge,
        "result_counts": result_counts,
        "newest_build": newest_build,
    }


def render_pages(model: SiteModel, templates: Path) -> dict[str, str]:
    """Every Markdown page of the site (all but the recipe pages), keyed by its path."""
    env = _environment(templates)
    common = _common(model)
    pages: dict[str, str] = {}

    def render(name: str, path: str, **extra: Any) -> None:
        pages[path] = env.get_template(name).render(page=path, **common, **extra)

    render("index.md.j2", "index.md", routes=route_table(model))
    render("rejected.md.j2", "rejected.md")
    render("sources-index.md.j2", "sources/index.md")
    render("about.md.j2", "about.md")
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
        self._template = _environment(templates).get_template("recipe.html.j2")
        self._common = _common(model)

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

    def meta(self, tab: Tab) -> HtmlPage:
        """The page without its body: title, search text and tags (cheap, no rendering)."""
        coord = tab.doc.get("coord") or {}
        tags = tuple(str(coord[k]) for k in ("service", "accelerator") if coord.get(k))
        return HtmlPage(tab.recipe, "", search_summary(self.model, tab), tags)


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


def result_counts(results: Mapping[str, Any]) -> dict[str, int]:
    """How many rows of one build passed, failed and were not run."""
    values = list(results.values())
    return {
        "pass": values.count("pass"),
        "fail": values.count("fail"),
        "notRun": values.count("not-run"),
    }


def newest_build(builds: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The build marked newest, else the first one."""
    return next((b for b in builds if b.get("newest")), builds[0] if builds else None)


@functools.lru_cache(maxsize=4096)
def result_badge(result: str, reason: str | None = None) -> Markup:
    """A test result as a word and an icon (with the skip reason, if any); memoised, as a
    site shows the same few results hundreds of thousands of times."""
    if result == "none":
        return Markup(
            '<span class="result result-none" title="no result from this signer">'
            '<span aria-hidden="true">–</span> no result</span>'
        )
    icon, word = RESULT_WORD.get(result, ("?", result))
    text = (
        f'<span class="result result-{escape.attr(result)}"><span aria-hidden="true">'
        f"{icon}</span> {escape.html(word)}</span>"
    )
    if reason:
        text += f'<span class="skip-reason">({escape.html(reason)})</span>'
    return Markup(text)


def signer_columns(
    model: SiteModel, grids: Sequence[Mapping[str, Any]], latest: Sequence[Mapping[str, Any]]
) -> list[str]:
    """Source ids that appear in any grid or latest evidence, counted first, then by label."""
    seen: set[str] = set()
    for g in grids:
        for t in g.get("tests", []):
            seen.update(str(s["src"]) for s in t.get("signers", []))
    for p in latest:
        sid = (p.get("signer") or {}).get("sourceId")
        if sid:
            seen.add(str(sid))
    return sorted(seen, key=lambda s: (not model.counted(s), model.label(s)))


@dataclass(frozen=True)
class Cell:
    """One signer's result for one test row: pass, fail, not-run (with reason) or none."""

    result: str
    reason: str | None
    k8s: str
    aicr: str
    when: str
    ref: str


@dataclass(frozen=True)
class Row:
    """One test row of a grid, as shown."""

    phase: str
    name: str
    state: str
    rank: int
    counts: Mapping[str, Any]
    reported: int
    notes: tuple[str, ...]
    cells: tuple[Cell, ...]
    flags: tuple[str, ...] = ()

    @property
    def detail(self) -> str:
        """Everything about the consensus in one sentence (the cell's tooltip)."""
        c = self.counts
        parts = [
            f"allowlisted signers: {c.get('pass', 0)} pass, {c.get('fail', 0)} fail, "
            f"{c.get('notRun', 0)} not run"
        ]
        if self.reported:
            parts.append(f"{self.reported} reported by unlisted signers, not counted")
        parts.extend(self.notes)
        return "; ".join(parts)


def grid_rows(
    model: SiteModel,
    grid: Mapping[str, Any],
    columns: Sequence[str],
    latest: Sequence[Mapping[str, Any]],
) -> list[Row]:
    """The rows of one grid with one cell per column (signer)."""
    skipped: dict[tuple[str, str, str], str | None] = {}
    k8s_of: dict[str, str] = {}
    for p in latest:
        sid = str((p.get("signer") or {}).get("sourceId") or "")
        ev = p["evidence"]
        for t in ev.get("tests") or []:
            if t.get("result") == "not-run":
                skipped[(sid, str(t.get("phase")), str(t.get("name")))] = t.get("skipReason")
        for hw in ev.get("hardware") or []:
            if hw.get("key") == "k8sVersion" and hw.get("value"):
                k8s_of[sid] = ".".join(str(hw["value"]).split(".")[:2])
    rows = []
    for t in grid.get("tests", []):
        by_src = {str(s["src"]): s for s in t.get("signers", [])}
        cells = []
        for src in columns:
            s = by_src.get(src)
            key = (src, str(t["phase"]), str(t["name"]))
            if s is not None:
                cells.append(
                    Cell(
                        str(s["result"]),
                        None,
                        str(s.get("k8sVer") or ""),
                        str(s.get("aicrVer") or ""),
                        str(s.get("when") or ""),
                        str(s.get("evidenceRef") or ""),
                    )
                )
            elif key in skipped and grid.get("aicrVer", "") == "":
                cells.append(Cell("not-run", skipped[key], k8s_of.get(src, ""), "", "", ""))
            else:
                cells.append(Cell("none", None, "", "", "", ""))
        state = str(t.get("consensus"))
        notes = []
        flags = []
        if state == "CONFIRMED":
            if t.get("sameDigest"):
                notes.append("same recipe digest")
            else:
                notes.append("signers attested different recipe digests")
                flags.append("digests differ")
            if t.get("oneOrg"):
                notes.append("all passes from one organisation")
                flags.append("one org")
            else:
                notes.append(f"{t.get('distinctOrgs')} organisations")
        rows.append(
            Row(
                str(t["phase"]),
                str(t["name"]),
                state,
                int(model.states.get(state, {}).get("rank", 0)),
                t.get("counts") or {},
                int(t.get("reported") or 0),
                tuple(notes),
                tuple(cells),
                tuple(flags),
            )
        )
    return rows


def counts_text(row: Row) -> str:
    """The consensus cell's one short count line (allowlisted signers only)."""
    c = row.counts
    parts = [f"{c.get('pass', 0)} pass", f"{c.get('fail', 0)} fail"]
    if c.get("notRun"):
        parts.append(f"{c['notRun']} not run")
    return " · ".join(parts)


def k8s_minors(grids: Sequence[Mapping[str, Any]]) -> list[str]:
    """Distinct Kubernetes minors of the signers in these grids, newest first."""
    found = {
        ".".join(str(s.get("k8sVer")).split(".")[:2])
        for g in grids
        for t in g.get("tests", [])
        for s in t.get("signers", [])
        if s.get("k8sVer")
    }

    def key(v: str) -> tuple[int, ...]:
        return tuple(int(x) if x.isdigit() else 0 for x in v.split("."))

    return sorted(found, key=key, reverse=True)


@dataclass(frozen=True)
class MCell:
    """One signer's value in a comparison table; `value` None means not reported."""

    value: str | None
    note: str = ""
    warn: bool = False


@dataclass(frozen=True)
class MatrixRow:
    """One row of a side-by-side comparison over each signer's latest evidence."""

    label: str
    detail: str
    cells: tuple[MCell, ...]

    @property
    def sources(self) -> str:
        """Where the values were read (`fingerprint`, `snapshot`, `recipe`), distinct, in order."""
        return (
            ", ".join(dict.fromkeys(c.note for c in self.cells if c.value is not None and c.note))
            or "–"
        )

    @property
    def differs(self) -> bool:
        """Do the signers that reported a value disagree on it?"""
        return len({c.value for c in self.cells if c.value is not None}) > 1


def _ordered_keys(lists: Sequence[Sequence[Mapping[str, Any]]], key: str) -> list[str]:
    seen: dict[str, None] = {}
    for items in lists:
        for item in items:
            seen.setdefault(str(item.get(key)), None)
    return list(seen)


def hardware_matrix(latest: Sequence[Mapping[str, Any]]) -> list[MatrixRow]:
    """Hardware facts (rows) by signer (columns), with where each value was read."""
    per = [list(p["evidence"].get("hardware") or []) for p in latest]
    rows = []
    for key in _ordered_keys(per, "key"):
        found = [next((h for h in hw if str(h.get("key")) == key), None) for hw in per]
        first = next(h for h in found if h is not None)
        cells = tuple(
            MCell(None)
            if h is None or h.get("value") is None
            else MCell(str(h["value"]), str(h.get("source") or ""))
            for h in found
        )
        rows.append(
            MatrixRow(str(first.get("label") or key), str(first.get("detail") or ""), cells)
        )
    return rows


def components_matrix(latest: Sequence[Mapping[str, Any]]) -> list[MatrixRow]:
    """Component versions (rows) by signer (columns)."""
    per = [list(p["evidence"].get("components") or []) for p in latest]
    rows = []
    for name in sorted(_ordered_keys(per, "name")):
        found = [next((c for c in comps if str(c.get("name")) == name), None) for comps in per]
        rows.append(
            MatrixRow(
                name,
                "",
                tuple(MCell(None) if c is None else MCell(str(c.get("version"))) for c in found),
            )
        )
    return rows


def criteria_matrix(latest: Sequence[Mapping[str, Any]]) -> list[MatrixRow]:
    """Recipe criteria (rows): what the recipe requires and what each signer's cluster provides."""
    per = [list((p["evidence"].get("criteriaMatch") or {}).get("dimensions") or []) for p in latest]
    rows = []
    for dim in _ordered_keys(per, "dimension"):
        found = [next((d for d in ds if str(d.get("dimension")) == dim), None) for ds in per]
        first = next(d for d in found if d is not None)
        cells = tuple(
            MCell(None)
            if d is None or d.get("fingerprintProvides") is None
            else MCell(
                str(d["fingerprintProvides"]), str(d.get("match") or ""), bool(d.get("mismatched"))
            )
            for d in found
        )
        rows.append(MatrixRow(dim, str(first.get("recipeRequires") or "–"), cells))
    return rows


def validator_images(latest: Sequence[Mapping[str, Any]]) -> list[tuple[Mapping[str, Any], int]]:
    """Distinct validator images over the latest evidence, with how many signers used each."""
    seen: dict[str, tuple[Mapping[str, Any], int]] = {}
    for p in latest:
        for img in p["evidence"].get("validatorImages") or []:
            key = f"{img.get('image')}@{img.get('digest')}"
            prev = seen.get(key)
            seen[key] = (img, 1 if prev is None else prev[1] + 1)
    return [seen[k] for k in sorted(seen)]


FRAGMENT_OPEN = "<!--fragment-->"
FRAGMENT_CLOSE = "<!--/fragment-->"


def fragment_slot(n: int) -> str:
    """The comment that stands in for fragment `n` while MkDocs converts the page."""
    return f"<!--evidence-fragment {n}-->"


def split_fragments(text: str) -> tuple[str, tuple[str, ...]]:
    """Cut the finished-HTML blocks out of a page so Markdown and search skip them.

    The templates mark big raw HTML (grids, evidence cards) with `<!--fragment-->` and
    `<!--/fragment-->` lines. Each block is replaced by a `fragment_slot` comment (a raw HTML
    block, which Markdown passes through) and returned so the build can put it back into the
    converted page. Contributor strings are escaped in the templates, so none can contain a
    marker. Unbalanced markers are a template bug and raise ValueError.
    """
    kept: list[str] = []
    blocks: list[str] = []
    current: list[str] | None = None
    for line in text.splitlines(keepends=True):
        marker = line.rstrip("\n")
        if marker == FRAGMENT_OPEN:
            if current is not None:
                raise ValueError("nested <!--fragment--> marker")
            current = []
        elif marker == FRAGMENT_CLOSE:
            if current is None:
                raise ValueError("<!--/fragment--> without an opening marker")
            kept.append(f"\n{fragment_slot(len(blocks))}\n\n")
            blocks.append("".join(current))
            current = None
        elif current is not None:
            current.append(line)
        else:
            kept.append(line)
    if current is not None:
        raise ValueError("<!--fragment--> without a closing marker")
    return "".join(kept), tuple(blocks)


def join_fragments(html_text: str, blocks: Sequence[str]) -> str:
    """Put the blocks `split_fragments` cut out back into the converted page's HTML."""
    if not blocks:
        return html_text
    parts = html_text.split("<!--evidence-fragment ")
    out = [parts[0]]
    for part in parts[1:]:
        number, sep, rest = part.partition("-->")
        if sep and number.isdigit() and int(number) < len(blocks):
            out.append(blocks[int(number)] + rest)
        else:
            out.append("<!--evidence-fragment " + part)
    return "".join(out)
