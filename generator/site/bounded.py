"""What a recipe page shows of what its documents hold, within `generator.limits`.

The data documents are bounded already (rows per grid, tests per pointer, runs per signer);
a page holds several grids and every pointer's card, so it has limits of its own: grid rows
over all lenses, and cards. What is left out is said in one line, with counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from generator.limits import LIMITS
from generator.site.escape import text as html

__all__ = ["cards_shown", "omitted_line", "page_grids", "recipe_omissions"]

_STATE_WORDS = ("FAILING", "CONTESTED", "UNTESTED", "SINGLE", "CONFIRMED")


def _priority(test: Mapping[str, Any], ranks: Mapping[str, int]) -> tuple[int, int]:
    counts = test.get("counts") or {}
    counted = bool(counts.get("pass") or counts.get("fail"))
    return (0 if counted else 1, ranks.get(str(test.get("consensus")), 99))


def page_grids(
    grids: Sequence[Mapping[str, Any]], ranks: Mapping[str, int], budget: int = LIMITS.rows_per_page
) -> list[tuple[Mapping[str, Any], dict[str, int]]]:
    """Each grid with at most what is left of `budget` rows (the first grid first), chosen
    like the data files choose (allowlisted results first, worst state first), and the
    states of every row it does not show (those the data file left out included)."""
    out: list[tuple[Mapping[str, Any], dict[str, int]]] = []
    for grid in grids:
        tests = list(grid.get("tests") or [])
        hidden: dict[str, int] = {
            str(k): int(v) for k, v in ((grid.get("omitted") or {}).get("byState") or {}).items()
        }
        if len(tests) > budget:
            order = sorted(range(len(tests)), key=lambda i: (*_priority(tests[i], ranks), i))
            for i in order[budget:]:
                state = str(tests[i].get("consensus"))
                hidden[state] = hidden.get(state, 0) + 1
            tests = [tests[i] for i in sorted(order[:budget])]
            grid = {**grid, "tests": tests}
        budget -= len(tests)
        out.append((grid, hidden))
    return out


def omitted_line(hidden: Mapping[str, int], labels: Mapping[str, str]) -> str:
    """One paragraph saying how many rows a grid does not show, by state ("" when none)."""
    total = sum(hidden.values())
    if not total:
        return ""
    parts = [f"{hidden[s]} {labels.get(s, s).lower()}" for s in _STATE_WORDS if hidden.get(s)]
    parts += [f"{n} {s.lower()}" for s, n in sorted(hidden.items()) if s not in _STATE_WORDS]
    return (
        f'<p class="rows-omitted" data-omitted="{total}">{total} more '
        f"check{'s are' if total != 1 else ' is'} not shown in this view "
        f"({html(', '.join(parts))}): a page shows at most {LIMITS.rows_per_page:,} rows "
        f"over all its views, and <code>data/index.json</code> at most "
        f"{LIMITS.rows_per_grid:,} per grid and {LIMITS.rows_per_recipe:,} per recipe, "
        "failing and contested checks first. The states above count every check; each run's full "
        "results are in its signed bundle.</p>\n"
    )


def cards_shown(
    pointers: Sequence[Mapping[str, Any]], limit: int = LIMITS.cards_per_page
) -> tuple[list[Mapping[str, Any]], int]:
    """At most `limit` pointers in their own order, allowlisted signers' first; and how many
    are left out."""
    if len(pointers) <= limit:
        return list(pointers), 0
    order = sorted(
        range(len(pointers)),
        key=lambda i: (not (pointers[i].get("signer") or {}).get("allowlisted"), i),
    )
    return [pointers[i] for i in sorted(order[:limit])], len(pointers) - limit


def recipe_omissions(doc: Mapping[str, Any]) -> Markup:
    """What a recipe leaves out past the count limits, in words (empty when nothing)."""
    left = doc.get("omitted") or {}
    lines = []
    if left.get("unlistedSigners"):
        lines.append(
            f"{left['unlistedSigners']} more unlisted signers ({left.get('unlistedRuns', 0)}"
            f" runs) are not shown: a recipe shows at most {LIMITS.unlisted_signers} "
            "unlisted signers (lowest source id first). Unlisted signers never change a "
            "state; their pointers are marked <code>omitted</code> in "
            "<code>data/pointers.json</code>."
        )
    if left.get("versions"):
        lines.append(
            f"{left['versions']} older aicr versions have no strict view of their own: "
            f"a recipe shows the {LIMITS.versions_per_recipe} newest."
        )
    if left.get("historyRuns") or left.get("historyRows"):
        lines.append(
            f"The history leaves out {left.get('historyRuns', 0)} older runs and "
            f"{left.get('historyRows', 0)} checks: it keeps each signer's "
            f"{LIMITS.runs_per_signer} newest runs and at most "
            f"{LIMITS.rows_per_series:,} checks, failed ones first."
        )
    return Markup("".join(f'<p class="recipe-omitted">{line}</p>\n' for line in lines))
