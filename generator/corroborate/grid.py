"""Consensus grids (aicr 1.6-1.8): combined, per aicr version, and the Kubernetes-minor lens.

A grid is computed over one selected run per signer. Rows are the union of (phase, name) over
those runs; a signer whose run lacks a row counts as not-run there. Beyond aicr each row also
says how many allowlisted signers passed, failed or did not run it, whether the counted runs
attest the same recipe digest, and how many organisations stand behind its passes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import chain

from generator.corroborate.runs import latest_per_signer, newest_first, run_order
from generator.corroborate.semver import order_versions_newest_first
from generator.corroborate.states import consensus_of, rollup, tally
from generator.model import (
    PHASE_ORDER,
    Classification,
    ConsensusState,
    Phase,
    RowKey,
    Run,
    SignerIdentity,
    SourceId,
    TestResult,
)

OrganisationOf = Callable[[SignerIdentity, Classification], str]
"""Which organisation stands behind a signer (the tree seam provides the real one)."""


@dataclass(frozen=True)
class SignerCell:
    """One signer's pass or fail in one row (not-run signers are omitted, aicr 1.7)."""

    src: SourceId
    result: TestResult
    run: Run


@dataclass(frozen=True)
class RowCounts:
    """Allowlisted signers only: how many passed, failed, or did not run the row."""

    passed: int
    failed: int
    not_run: int


@dataclass(frozen=True)
class GridRow:
    phase: Phase
    name: str
    consensus: ConsensusState
    reported: int
    signers: tuple[SignerCell, ...]
    counts: RowCounts
    same_digest: bool
    distinct_orgs: int
    one_org: bool

    @property
    def key(self) -> RowKey:
        return (self.phase, self.name)


@dataclass(frozen=True)
class Grid:
    """One consensus grid. `aicr_version` is "" for the combined all-versions grid."""

    aicr_version: str
    rows: tuple[GridRow, ...]
    phase_rollup: Mapping[Phase, ConsensusState]
    rollup: ConsensusState
    tally: Mapping[ConsensusState, int]
    unlisted_only: int = 0
    """Rows only runs left out by the unlisted-signer limit report: UNTESTED, counted in the
    rollups and the tally as the unbounded grid would count them, but without a row (ours)."""


@lru_cache(maxsize=4096)
def signer_source_id(signer: SignerIdentity) -> SourceId:
    """`signer.source_id`, remembered: it is a sha256 asked per run and row, and a board has
    few signers."""
    return signer.source_id


def row_order(key: RowKey) -> tuple[int, str]:
    """Rows sort by aicr's phase order, then CTRF name."""
    return (PHASE_ORDER.index(key[0]), key[1])


@dataclass(frozen=True)
class _Column:
    """What every row of a grid asks of one selected run, worked out once per grid; its cell
    for each result, made once (a cell is a value: the rows with that result share it)."""

    run: Run
    key: str
    allowlisted: bool
    src: SourceId
    digest: str
    cells: dict[TestResult, SignerCell] = field(default_factory=dict)


def _row(key: RowKey, columns: list[_Column], org_of: Callable[[int], str]) -> GridRow:
    votes: list[tuple[str, bool, TestResult]] = []
    cells: list[SignerCell] = []
    passed = failed = not_run = 0
    counted_digests: set[str] = set()
    orgs: set[str] = set()
    not_run_result = TestResult.NOT_RUN
    for at, column in enumerate(columns):
        run = column.run
        result = run.results.get(key, not_run_result)
        votes.append((column.key, column.allowlisted, result))
        if result is not not_run_result:
            cell = column.cells.get(result)
            if cell is None:
                cell = column.cells[result] = SignerCell(column.src, result, run)
            cells.append(cell)
        if not column.allowlisted:
            continue
        if result is not_run_result:
            not_run += 1
            continue
        counted_digests.add(column.digest)
        if result is TestResult.PASS:
            passed += 1
            orgs.add(org_of(at))
        else:
            failed += 1
    state = consensus_of(votes)
    return GridRow(
        phase=key[0],
        name=key[1],
        consensus=state.state,
        reported=state.reported,
        signers=tuple(cells),  # the columns are in source id order
        counts=RowCounts(passed, failed, not_run),
        same_digest=len(counted_digests) <= 1,
        distinct_orgs=len(orgs),
        one_org=state.state is ConsensusState.CONFIRMED and len(orgs) == 1,
    )


def _unlisted_only(left_out: Iterable[Run], own: set[RowKey]) -> dict[Phase, int]:
    """Per phase, how many rows only left-out runs report (each added to `own` once)."""
    extra: dict[Phase, int] = {}
    for run in left_out:
        for key in run.results:
            if key not in own:
                own.add(key)
                extra[key[0]] = extra.get(key[0], 0) + 1
    return extra


def _phase_rollups(
    rows: tuple[GridRow, ...], extra: Mapping[Phase, int]
) -> dict[Phase, ConsensusState]:
    """Each phase's rollup; a phase with rows only left-out runs report counts as UNTESTED."""
    untested = (ConsensusState.UNTESTED,)
    return {
        phase: rollup(
            chain(
                (r.consensus for r in rows if r.phase is phase),
                untested if extra.get(phase) else (),
            )
        )
        for phase in PHASE_ORDER
    }


def grid_over(
    selected: Iterable[Run],
    organisation_of: OrganisationOf,
    *,
    aicr_version: str = "",
    left_out: Iterable[Run] = (),
) -> Grid:
    """The grid over already-selected runs (one per signer, in any order).

    `left_out` are selected runs of unlisted signers a count limit leaves out: they get no
    column, and the rows only they report get no row, but those rows still count as UNTESTED
    in the rollups and the tally (an unlisted signer never changes a row's state, so that is
    exactly what they would be)."""
    chosen = sorted(selected, key=lambda r: signer_source_id(r.signer))
    own = {k for run in chosen for k in run.results}
    keys = sorted(own, key=row_order)
    extra = _unlisted_only(left_out, own)
    columns = [
        _Column(
            run,
            run.signer.consensus_key,
            run.allowlisted,
            signer_source_id(run.signer),
            str(run.recipe_digest),
        )
        for run in chosen
    ]
    known: dict[int, str] = {}

    def org_of(at: int) -> str:
        """The organisation of the run in column `at`, asked only when a row needs it."""
        if at not in known:
            run = chosen[at]
            known[at] = organisation_of(run.signer, run.classification)
        return known[at]

    rows = tuple(_row(k, columns, org_of) for k in keys)
    untested = (ConsensusState.UNTESTED,)
    phase_rollup = _phase_rollups(rows, extra)
    counts = dict(tally(r.consensus for r in rows))
    if extra:
        counts[ConsensusState.UNTESTED] += sum(extra.values())
    return Grid(
        aicr_version=aicr_version,
        rows=rows,
        phase_rollup=phase_rollup,
        rollup=rollup(chain((r.consensus for r in rows), untested if extra else ())),
        tally=counts,
        unlisted_only=sum(extra.values()),
    )


GridMemo = dict[tuple[frozenset[int], frozenset[int]], Grid]
"""Grids already made for one tab, by the identities of their selected and left-out runs: a
version whose newest runs are each signer's newest overall (every signer on the newest
version, or one version only) has the combined grid's rows, rollups and tally."""


def _memo_grid(
    selected: Iterable[Run],
    organisation_of: OrganisationOf,
    left_out: Iterable[Run],
    aicr_version: str,
    known: GridMemo | None,
) -> Grid:
    """`grid_over`, answered from `known` when the same runs were already made into a grid."""
    chosen, left = list(selected), list(left_out)
    if known is None:
        return grid_over(chosen, organisation_of, aicr_version=aicr_version, left_out=left)
    key = (frozenset(map(id, chosen)), frozenset(map(id, left)))
    grid = known.get(key)
    if grid is None:
        grid = known[key] = grid_over(
            chosen, organisation_of, aicr_version=aicr_version, left_out=left
        )
    return grid if grid.aicr_version == aicr_version else replace(grid, aicr_version=aicr_version)


def combined_grid(
    runs: Iterable[Run],
    organisation_of: OrganisationOf,
    *,
    left_out: Iterable[Run] = (),
    known: GridMemo | None = None,
) -> Grid:
    """The all-versions grid: each signer's single newest run, whatever its version
    (`left_out`: runs a count limit leaves out, see `grid_over`; `known`: see `GridMemo`)."""
    return _memo_grid(
        latest_per_signer(runs).values(),
        organisation_of,
        latest_per_signer(left_out).values(),
        "",
        known,
    )


def version_grids(
    runs: Iterable[Run],
    organisation_of: OrganisationOf,
    *,
    limit: int | None = None,
    left_out: Iterable[Run] = (),
    known: GridMemo | None = None,
) -> tuple[Grid, ...]:
    """Strict per-version grids, newest version first (aicr `orderVersionsNewestFirst`); only
    the first `limit` versions get a grid when a limit is given (`left_out`: runs a count
    limit leaves out, see `grid_over`; `known`: see `GridMemo`)."""
    by_version: dict[str, list[Run]] = {}
    for run in runs:
        by_version.setdefault(run.aicr_version, []).append(run)
    left_by_version: dict[str, list[Run]] = {}
    for run in left_out:
        left_by_version.setdefault(run.aicr_version, []).append(run)
    # "newest" by the verified log time, then attestedAt (both normalised: string order is
    # time order); the separator sorts below every digit, so a run without a log time ("")
    # stays older than a logged one, as in `run_order`
    newest_at = {v: " ".join(run_order(newest_first(rs)[0])[:2]) for v, rs in by_version.items()}
    ordered = order_versions_newest_first(list(by_version), newest_at)
    return tuple(
        _memo_grid(
            latest_per_signer(by_version[v]).values(),
            organisation_of,
            latest_per_signer(left_by_version.get(v, ())).values(),
            v,
            known,
        )
        for v in (ordered if limit is None else ordered[: max(limit, 0)])
    )


def k8s_minors(runs: Iterable[Run]) -> tuple[str, ...]:
    """The Kubernetes minors present, newest first (numeric), "" (not captured) last."""

    def key(minor: str) -> tuple[int, int, int]:
        major, _, rest = minor.partition(".")
        if not (major.isdigit() and rest.isdigit()):
            return (1, 0, 0)
        return (0, -int(major), -int(rest))

    return tuple(sorted({r.k8s_version for r in runs}, key=key))


def k8s_lens(runs: Iterable[Run], minor: str, organisation_of: OrganisationOf) -> Grid:
    """A strict lens: the combined grid over runs of one Kubernetes minor only."""
    return combined_grid((r for r in runs if r.k8s_version == minor), organisation_of)
