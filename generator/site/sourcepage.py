"""A source page's tables as view models: the recipes a signer covers and its builds of each."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from generator.site.grids import newest_build, result_counts
from generator.site.model import SiteModel, Tab, age, recipe_page, rel

__all__ = ["BuildLine", "CoveredRecipe", "CoveredViews", "covered_recipe"]


@dataclass(frozen=True)
class BuildLine:
    """One build of a source for one recipe: pass, fail and not-run counts."""

    id: Any
    when: Any
    aicr: Any
    k8s: Any
    counts: Mapping[str, int]
    newest: bool


@dataclass(frozen=True)
class CoveredRecipe:
    """One recipe a source has builds for: its state, build count, flake rate and builds."""

    recipe: str
    href: str
    rollup: str
    builds: Any
    build_count: Any
    flake_pct: Any
    last_pass: Any
    newest_when: Any
    newest_age: str
    lines: tuple[BuildLine, ...]


def covered_recipe(m: SiteModel, page: str, src: str, t: Tab) -> CoveredRecipe:
    """One recipe `src` covers, as the source page's tables show it (one row each)."""
    s = m.series[t.recipe]
    builds = s["builds"][src]
    health = (s.get("health") or {}).get(src, {})
    newest = newest_build(builds) or {}
    return CoveredRecipe(
        t.recipe,
        rel(page, recipe_page(t.recipe)),
        str(t.doc.get("rollup")),
        health.get("builds", len(builds)),
        health.get("builds", 0),
        health.get("flakePct", 0),
        health.get("lastPassBuild"),
        newest.get("attestedAt", newest.get("when")),
        age(newest.get("attestedAt"), m.build_time),
        tuple(
            BuildLine(
                b.get("id"),
                b.get("attestedAt", b.get("when")),
                b.get("aicrVer"),
                b.get("k8sVer"),
                result_counts(b.get("resultsByRow") or {}),
                bool(b.get("newest")),
            )
            for b in builds
        ),
    )


class CoveredViews:
    """The source page of `src` at `page`: each recipe's `covered_recipe`, made once (both of
    the page's tables read it, and a row the row cache keeps reads nothing)."""

    def __init__(self, m: SiteModel, page: str, src: str) -> None:
        self._m, self._page, self._src = m, page, src
        self._made: dict[str, CoveredRecipe] = {}

    def of(self, t: Tab) -> CoveredRecipe:
        made = self._made.get(t.recipe)
        if made is None:
            made = self._made[t.recipe] = covered_recipe(self._m, self._page, self._src, t)
        return made
