"""What a recipe page shows of what its documents hold, within `generator.limits`.

The data documents are bounded already (rows per grid, tests per pointer, runs per signer);
a page holds several grids and every pointer's card, so it has limits of its own: grid rows
over all lenses, and cards. What is left out is said in one line, with counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from generator.limits import LIMITS

__all__ = [
    "OmittedRows",
    "RecipeOmissions",
    "cards_shown",
    "omitted_rows",
    "page_grids",
    "recipe_omissions",
]

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


@dataclass(frozen=True)
class OmittedRows:
    """How many rows a grid does not show, and their states in words (`2 failing, 1 ...`)."""

    total: int
    states: str


def omitted_rows(hidden: Mapping[str, int], labels: Mapping[str, str]) -> OmittedRows | None:
    """The rows a grid does not show, by state (None when none)."""
    total = sum(hidden.values())
    if not total:
        return None
    parts = [f"{hidden[s]} {labels.get(s, s).lower()}" for s in _STATE_WORDS if hidden.get(s)]
    parts += [f"{n} {s.lower()}" for s, n in sorted(hidden.items()) if s not in _STATE_WORDS]
    return OmittedRows(total, ", ".join(parts))


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


@dataclass(frozen=True)
class RecipeOmissions:
    """What a recipe leaves out past the count limits (zeros when nothing)."""

    unlisted_signers: int
    unlisted_runs: int
    versions: int
    history_runs: int
    history_rows: int


def recipe_omissions(doc: Mapping[str, Any]) -> RecipeOmissions:
    """The recipe document's `omitted` counts, for the page's note on what is left out."""
    left = doc.get("omitted") or {}
    return RecipeOmissions(
        int(left.get("unlistedSigners") or 0),
        int(left.get("unlistedRuns") or 0),
        int(left.get("versions") or 0),
        int(left.get("historyRuns") or 0),
        int(left.get("historyRows") or 0),
    )
