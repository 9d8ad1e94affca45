"""Limits on counts and on output size: what one report, recipe, signer and run may add.

Signed input is small and cheap to make: a compact CTRF report of 10,000 tests is a few
hundred KB, and a throw-away identity costs nothing. Without limits every test becomes a row
in every grid, every run a column in the history and every pointer a card, so a few such
bundles make pages of hundreds of MB and a site past GitHub Pages' 1 GB. These limits bound
what is *shown and written*; they never change what is *counted*: consensus, rollups and
tallies are always computed over every row of every selected run, so a failing check that is
not shown still makes the recipe fail. Whatever is left out is counted (`omitted` in
`index.json` and the series files, `truncated` and `omitted` in `pointers.json`) and said in
words on the page. README "Limits on output" publishes the table.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LIMITS", "OutputLimits"]

MIB = 1 << 20


@dataclass(frozen=True)
class OutputLimits:
    """Every count and size limit in one place (the defaults are `LIMITS`)."""

    tests_per_report: int = 10_000
    """Tests one CTRF report may list; a larger report fails the bundle's CTRF check."""
    unlisted_signers: int = 20
    """Unlisted (not allowlisted) signers per recipe in grids and history, the lowest source
    ids first; the others get no column and no history, and rows only they report no row,
    though those rows still count as UNTESTED in the rollups (as without the limit: an
    unlisted signer never changes a row's state). Allowlisted signers are never left out."""
    versions_per_recipe: int = 10
    """aicr-version grids ("strict view" lenses) per recipe, newest versions first."""
    runs_per_signer: int = 10
    """Runs per signer in a recipe's history (`series`), newest first."""
    rows_per_grid: int = 2_000
    """Rows of one grid in `index.json`: the worst states first (failing, contested, untested,
    single, confirmed), then phase and name order; shown in phase and name order."""
    rows_per_recipe: int = 4_000
    """Rows over all grids of one recipe in `index.json` (the combined grid is filled first,
    then the versions, newest first)."""
    rows_per_series: int = 2_000
    """Rows of one recipe's history file, rows with a failure first."""
    rows_per_page: int = 2_000
    """Grid rows on one recipe page over all its lenses (the combined lens is filled first)."""
    tests_per_pointer: int = 250
    """Tests listed per pointer in `pointers.json` (and on its card), non-passing first."""
    cards_per_page: int = 200
    """Evidence cards on one recipe page: allowlisted signers' pointers first."""
    page_bytes: int = 32 * MIB
    """Size of one page past which the build warns."""
    data_file_bytes: int = 128 * MIB
    """Size of one data file past which the build warns."""
    site_bytes: int = 1024 * MIB
    """The whole site's budget (GitHub Pages' limit is 1 GB)."""
    site_warn_share: float = 0.8
    """Share of `site_bytes` at which the build warns."""

    @property
    def site_warn_bytes(self) -> int:
        return int(self.site_bytes * self.site_warn_share)


LIMITS = OutputLimits()
"""The limits every build uses."""
