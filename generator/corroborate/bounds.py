"""Count limits of one recipe (`generator.limits`): which runs, versions and rows are shown.

Pure and count-based (a sort or a scan per recipe, nothing per test beyond one comparison).
Nothing here changes a state: grids are computed before rows are chosen for display, and
only unlisted signers' runs are ever left out of a recipe (the grids still count the rows only
they report as UNTESTED, see `grid_over`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from generator.corroborate.grid import GridRow, row_order, signer_source_id
from generator.corroborate.states import STATES
from generator.model import ConsensusState, Run

__all__ = ["Omitted", "drop_unlisted", "shown_rows"]


@dataclass(frozen=True)
class Omitted:
    """What one recipe leaves out of its grids and history (all zero for normal input)."""

    unlisted_signers: int = 0
    """Unlisted signers past `unlisted_signers`, whose runs were left out of the recipe."""
    unlisted_runs: int = 0
    versions: int = 0
    """aicr versions past `versions_per_recipe` (no strict-view grid)."""
    history_runs: int = 0
    """Runs past `runs_per_signer`, summed over signers (not in the series file)."""
    history_rows: int = 0
    """Rows past `rows_per_series` (not in the series file)."""

    @property
    def any(self) -> bool:
        return any((self.unlisted_signers, self.versions, self.history_runs, self.history_rows))


def drop_unlisted(runs: Sequence[Run], limit: int) -> tuple[list[Run], set[str], int]:
    """The runs of every allowlisted signer and of the first `limit` unlisted signers (lowest
    source id first); also the run ids left out and how many signers they belong to."""
    unlisted = sorted({signer_source_id(r.signer) for r in runs if not r.allowlisted})
    if len(unlisted) <= limit:
        return list(runs), set(), 0
    keep = set(unlisted[:limit])
    kept: list[Run] = []
    dropped: set[str] = set()
    for run in runs:
        if run.allowlisted or signer_source_id(run.signer) in keep:
            kept.append(run)
        else:
            dropped.add(run.run_id)
    return kept, dropped, len(unlisted) - limit


def _rank(state: ConsensusState) -> int:
    info = STATES.get(state)
    return info.rank if info is not None else -1


def shown_rows(rows: Sequence[GridRow], limit: int) -> tuple[list[GridRow], dict[str, int]]:
    """At most `limit` rows, in their own order, and the states of those left out.

    Rows an allowlisted signer passed or failed come first, worst state first, so a failing
    or contested check is never the one hidden while confirmed ones are shown; rows only
    unlisted signers report come last.
    """
    if len(rows) <= limit:
        return list(rows), {}
    order = sorted(
        range(len(rows)),
        key=lambda i: (
            0 if rows[i].counts.passed or rows[i].counts.failed else 1,
            _rank(rows[i].consensus),
            row_order(rows[i].key),
        ),
    )
    keep = sorted(order[: max(limit, 0)])
    left: dict[str, int] = {}
    for i in order[max(limit, 0) :]:
        state = str(rows[i].consensus)
        left[state] = left.get(state, 0) + 1
    return [rows[i] for i in keep], dict(sorted(left.items()))
