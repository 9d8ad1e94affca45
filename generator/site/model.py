"""The site's read model: indexes over the four data documents that every page reads.

`SiteModel` answers the questions templates ask about a recipe (its pointers newest first,
each signer's latest verified evidence, freshness, bandwidth readings), each computed once per
recipe. The helpers it re-exports (links between pages from `_paths`, ages and verdict words
from `_words`) are plain functions of the documents: no HTML and no Jinja.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from generator.data.views import evidence_time, verdict_of
from generator.limits import LIMITS
from generator.site import caveats
from generator.site._paths import anchor, mdrel, page_url, recipe_page, rel, source_page
from generator.site._words import (
    COMMIT_URL,
    EXIT_WORD,
    RESULT_WORD,
    STATE_CLASS,
    STATE_ORDER,
    age,
    freshness_text,
    unknown_reason,
)
from generator.site.charts import Reading, gbps, newest_per_signer

__all__ = [
    "COMMIT_URL",
    "CommitFill",
    "EXIT_WORD",
    "RESULT_WORD",
    "STATE_CLASS",
    "STATE_ORDER",
    "FreshSummary",
    "SiteModel",
    "Tab",
    "age",
    "anchor",
    "evidence_time",
    "freshness_text",
    "mdrel",
    "newest_per_signer",
    "page_url",
    "recipe_page",
    "rel",
    "source_page",
    "tabs_of",
    "verdict_of",
]


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


def _invert(text: str) -> str:
    """A sort key that orders strings descending inside an ascending sort."""
    return "".join(chr(0x10FFFF - ord(ch)) for ch in text)


def _is_hex_slug(text: str) -> bool:
    return len(text) >= 16 and all(c in "0123456789abcdef" for c in text)


def _short_hash(text: str) -> str:
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


def _counted_evidence(p: Mapping[str, Any]) -> bool:
    """Verified evidence its recipe shows (not left out by a count limit)."""
    return (
        verdict_of(p) in ("verified", "failures")
        and p.get("evidence") is not None
        and not p.get("omitted")
    )


def body_build_info(
    build_info: Mapping[str, Any], commit_mark: str | None = None
) -> dict[str, Any]:
    """The build information the pages are rendered with and keyed by (`SiteModel.for_bodies`):
    all of it but the commit. The commit is shown in the shell's footer (and given to the About
    page alone), so a new commit finishes every cached recipe page body in the new shell and
    takes every Markdown row from the cache, instead of rendering them again.

    With a source URL each evidence card links its pointer file at the commit: the bodies then
    see `commit_mark` in its place (`SiteModel.commit_mark`, a secret of the page cache), which
    the page writers replace by the commit (`CommitFill`), so a new commit renders nothing
    again there either. Without a mark (a model the site build did not prepare) they see the
    commit itself."""
    if build_info.get("sourceUrl") and build_info.get("commit"):
        shown = dict(build_info)
        if commit_mark is not None:
            shown["commit"] = commit_mark
        return shown
    return {k: v for k, v in build_info.items() if k != "commit"}


@dataclass(frozen=True)
class CommitFill:
    """The commit mark the page bodies were rendered with and the commit that replaces it in
    every page written (`body_build_info`)."""

    mark: str
    commit: str

    def text(self, value: str) -> str:
        return value.replace(self.mark, self.commit)

    def data(self, value: bytes) -> bytes:
        return value.replace(self.mark.encode("ascii"), self.commit.encode("utf-8"))


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
        self._recipes = {t.recipe for t in self.tabs}
        self._tab_of = {t.recipe: t for t in self.tabs}
        self._headlines: dict[str, caveats.Headline] = {}
        self.memo: dict[int, Any] = {}
        """Per-model memo of the presentation layer (generator.site.environment.badges_for)."""
        self._bodies: SiteModel | None = None
        self._commit = build_info.get("commit")
        self.commit_mark: str | None = None
        """What the page bodies see for the commit when they link it (`body_build_info`),
        set by the site build before any page is rendered or keyed."""

    def for_bodies(self) -> SiteModel:
        """This model as the pages see it: with `body_build_info`, so a recipe page's body or
        a Markdown page's row cannot show what its cache key leaves out. Made once, and shared
        by the Markdown and the recipe pages: its indexes are this model's; its presentation
        memo is its own."""
        if self._bodies is None:
            bodies = copy.copy(self)
            bodies.build_info = body_build_info(self.build_info, self.commit_mark)
            bodies.memo = {}
            bodies._bodies = bodies
            self._bodies = bodies
        return self._bodies

    def commit_fill(self) -> CommitFill | None:
        """What replaces the commit mark in the pages written, when the bodies link the
        commit (a source URL and a commit) under a mark."""
        commit = self._commit  # the model's own, also on `for_bodies` (which sees the mark)
        if self.commit_mark is None or not self.build_info.get("sourceUrl") or not commit:
            return None
        return CommitFill(self.commit_mark, str(commit))

    def has_recipe(self, recipe: object) -> bool:
        """Is `recipe` in the catalog (so it has a page)?"""
        return recipe in self._recipes

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
                    measured=gbps(bw.get("measured")),
                    floor=gbps(bw.get("floor")),
                    pass_line=gbps(bw.get("passLine")),
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
