"""The one Jinja environment of the site's pages, and the badges it draws.

Built once per templates folder and process (`environment`): templates are compiled once and
never checked for changes during a build (`auto_reload=False`). Every value a template writes
goes through an escaper of generator.site.escape for its context; autoescaping and `finalize`
are the safety net. View models come from generator.site.cards, grids, tables and sourcepage;
the templates under `site_templates/pages/` decide how they look.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from generator.limits import LIMITS
from generator.site import bounded, escape
from generator.site.bytecode import SealedBytecodeCache
from generator.site.cards import card_view
from generator.site.charts import history_figure, latest_figure
from generator.site.grids import Cell, counts_text, grid_view
from generator.site.history import test_history
from generator.site.model import (
    COMMIT_URL,
    EXIT_WORD,
    RESULT_WORD,
    STATE_CLASS,
    STATE_ORDER,
    SiteModel,
    age,
    freshness_text,
    mdrel,
    recipe_page,
    rel,
    source_page,
    verdict_of,
)
from generator.site.rowcache import CachedRows
from generator.site.sourcepage import CoveredViews
from generator.site.tables import hardware_view

__all__ = ["Badges", "badges_for", "environment", "keep_compiled"]

_COMPILED_STEM = "pages-"
"""The name stem of the page templates' entries in the compiled-template cache."""
_CELLS_KEPT = 4096
"""At most this many distinct rows of grid cells are remembered (a few pages' worth)."""


@functools.lru_cache(maxsize=4)
def environment(templates: Path) -> jinja2.Environment:
    """The page environment for a templates folder (one per folder and process)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates)),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        finalize=escape.finalize,  # bidi and control characters shown, whatever the filter
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,  # templates do not change during a build: no stat per include
        cache_size=-1,
        extensions=[CachedRows],
    )
    env.filters.update(
        md=escape.md,
        h=escape.html,
        t=escape.text,  # inside `{% autoescape false %}`: escaped, as a plain str (no Markup)
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
        LIMITS=LIMITS,
        zip=zip,
        cards_shown=bounded.cards_shown,
        recipe_omissions=bounded.recipe_omissions,
        card_view=card_view,
        grid_view=grid_view,
        hardware_view=hardware_view,
        covered_views=CoveredViews,
        test_history=test_history,
        counts_text=counts_text,
    )
    env.globals["state_of"] = lambda m, name, suffix="": badges_for(env, m).state(name, suffix)
    env.globals["headline_of"] = lambda m, recipe: badges_for(env, m).headline(recipe)
    env.globals["result_badge"] = badges_for(env, None).result
    env.globals["row_cells"] = badges_for(env, None).cells
    env.globals["history_cells"] = badges_for(env, None).history_cells
    return env


def keep_compiled(templates: Path, folder: Path, code_digest: str) -> None:
    """Keep the compiled page templates of `templates` in `folder` between builds (sealed,
    `generator.site.bytecode`), under `code_digest` (the templates' and page code's), so code
    compiled with other environment options or extensions is never loaded. Only templates
    not yet loaded in this process are affected."""
    env = environment(templates)
    if env.bytecode_cache is None:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            return  # a cache that cannot be written only costs speed
        cache = SealedBytecodeCache(folder, prefix=f"{_COMPILED_STEM}{code_digest[:16]}-")
        cache.prune(_COMPILED_STEM)
        env.bytecode_cache = cache


def badges_for(env: jinja2.Environment, model: SiteModel | None) -> Badges:
    """The badges of a model's states (one set per model and environment, kept on the model);
    with no model, the environment's own set (results and cells do not depend on a model)."""
    memo: dict[int, Any] = model.memo if model is not None else _SHARED
    badges = memo.get(id(env))
    if badges is None:
        badges = memo[id(env)] = Badges(env, model)
    return badges


_SHARED: dict[int, Any] = {}
"""The model-independent badges of each environment (environments live as long as the process)."""


class Badges:
    """State and result badges (`_badges.j2`), each rendered once per distinct value: a site
    shows the same few hundreds of thousands of times."""

    def __init__(self, env: jinja2.Environment, model: SiteModel | None) -> None:
        self._env = env
        self._module: Any = None
        # Held weakly: the model keeps its badges (`model.memo`), which must not keep it.
        self._model = None if model is None else weakref.ref(model)
        self._states: Mapping[str, Mapping[str, Any]] = model.states if model is not None else {}
        self._state: dict[tuple[str, str], Markup] = {}
        self._result: dict[tuple[str, str | None], Markup] = {}
        self._cells: dict[tuple[tuple[Cell, ...], tuple[bool, ...]], Markup] = {}
        self._history: dict[tuple[Any, ...], Markup] = {}
        self._headline: dict[str, Markup] = {}
        self._ui: Any = None

    def _macros(self) -> Any:
        """The macros of `_badges.j2`, made on first use (after every global is set: a
        template module sees the globals as they were when it was made)."""
        if self._module is None:
            self._module = self._env.get_template("_badges.j2").module
        return self._module

    def state(self, name: str, suffix: str = "") -> Markup:
        """A consensus state as an icon and a word, with its description as a tooltip."""
        key = (name, suffix)
        badge = self._state.get(key)
        if badge is None:
            cls = STATE_CLASS.get(name, "untested")
            badge = self._state[key] = Markup(
                self._macros().state(name, cls, self._states.get(name, {}), suffix)
            )
        return badge

    def headline(self, recipe: str) -> Markup:
        """A recipe's headline state with its short caveats (`_macros.j2` `headline`): the
        overview and every source page covering the recipe show the same one (at 10,000
        attestations, 16 times a recipe), rendered once per model. Only the badges of a
        model have headlines (a shared set would show one model's on another's pages)."""
        model = None if self._model is None else self._model()
        if model is None:
            raise TypeError("headlines are drawn by the badges of a model")
        found = self._headline.get(recipe)
        if found is None:
            if self._ui is None:
                self._ui = self._env.get_template("_macros.j2").module
            found = self._headline[recipe] = Markup(self._ui.headline(model, recipe))
        return found

    def result(self, result: str, reason: str | None = None) -> Markup:
        """A test result as an icon and a word, with the skip reason if any."""
        key = (result, reason)
        badge = self._result.get(key)
        if badge is None:
            icon, word = RESULT_WORD.get(result, ("?", result))
            badge = self._result[key] = Markup(self._macros().result(result, icon, word, reason))
        return badge

    def cells(self, cells: tuple[Cell, ...], not_counted: tuple[bool, ...]) -> Markup:
        """The signer cells of one grid row, one `<td>` line each. Rows of one page repeat
        the same cells (each signer's run is one per column), so most are a lookup; the memo
        is bounded."""
        key = (cells, not_counted)
        found = self._cells.get(key)
        if found is None:
            if len(self._cells) >= _CELLS_KEPT:
                self._cells.clear()
            found = self._cells[key] = Markup(self._macros().cells(cells, not_counted))
        return found

    def history_cells(
        self,
        results: tuple[str, ...],
        flakes: tuple[int | None, ...],
        widths: list[int],
        flaky: list[bool],
    ) -> Markup:
        """The cells of one test history row (one result per run, a flake rate per signer);
        tests of a recipe repeat the same rows, so most are a lookup; the memo is bounded."""
        key = (results, flakes, tuple(widths), tuple(flaky))
        found = self._history.get(key)
        if found is None:
            if len(self._history) >= _CELLS_KEPT:
                self._history.clear()
            found = self._history[key] = Markup(
                self._macros().history_cells(results, flakes, widths, flaky)
            )
        return found
