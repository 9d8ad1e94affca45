"""The per-recipe build history (aicr 2.3 `series`), plus results keyed by (phase, name).

Only grid signers appear: those with at least one pass or fail in some per-version grid.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from generator.corroborate.grid import Grid, row_order, signer_source_id
from generator.corroborate.runs import countable, latest_per_signer, newest_first
from generator.model import Phase, RowKey, Run, SourceId, TestResult


@dataclass(frozen=True)
class Build:
    """One build column of one source: a run and its results for every union row."""

    run: Run
    newest: bool
    results: Mapping[str, TestResult]
    """aicr's name-keyed map (a name shared by two phases takes its first phase's result)."""
    results_by_row: Mapping[RowKey, TestResult]


@dataclass(frozen=True)
class Health:
    """aicr's health statistics of one source's columns."""

    flake_pct: int
    last_pass_build: str
    builds: int


@dataclass(frozen=True)
class Series:
    recipe: str
    rows: tuple[tuple[Phase, str], ...]
    """aicr's rows: de-duplicated by name, first phase wins, phase order then name."""
    row_keys: tuple[RowKey, ...]
    """Every (phase, name) pair, never de-duplicated (ours)."""
    builds: Mapping[SourceId, tuple[Build, ...]]
    health: Mapping[SourceId, Health]
    omitted_runs: int = 0
    """Runs left out, past the runs-per-signer limit (ours)."""
    omitted_rows: int = 0
    """Rows left out, past the rows limit (ours)."""


def round_half_up_pct(part: int, whole: int) -> int:
    """`100 * part / whole` rounded half up with integer arithmetic (0 when `whole` is 0)."""
    if whole <= 0:
        return 0
    return (200 * part + whole) // (2 * whole)


def flake_pct(builds: tuple[Build, ...], names: Iterable[str]) -> int:
    """Share of adjacent build pairs, both pass or fail for a test, whose result flips."""
    pairs = flips = 0
    for name in names:
        for newer, older in zip(builds, builds[1:], strict=False):
            a = newer.results.get(name, TestResult.NOT_RUN)
            b = older.results.get(name, TestResult.NOT_RUN)
            if TestResult.NOT_RUN in (a, b):
                continue
            pairs += 1
            flips += a is not b
    return round_half_up_pct(flips, pairs)


def last_pass_build(builds: tuple[Build, ...]) -> str:
    """The newest build that ran at least one test and failed none ("" when there is none)."""
    for build in builds:
        values = set(build.results_by_row.values())
        if TestResult.FAIL not in values and TestResult.PASS in values:
            return build.run.run_id
    return ""


def grid_signers(versions: Iterable[Grid]) -> set[SourceId]:
    """Sources with at least one pass or fail in some per-version grid."""
    return {cell.src for grid in versions for row in grid.rows for cell in row.signers}


def grid_signers_of(runs: Iterable[Run]) -> set[SourceId]:
    """`grid_signers` of every per-version grid of `runs`, without making the grids: each
    signer's newest run per aicr version that passed or failed something."""
    by_version: dict[str, list[Run]] = {}
    for run in runs:
        by_version.setdefault(run.aicr_version, []).append(run)
    found: set[SourceId] = set()
    for version_runs in by_version.values():
        for run in latest_per_signer(version_runs).values():
            if any(r is not TestResult.NOT_RUN for r in run.results.values()):
                found.add(signer_source_id(run.signer))
    return found


def _rows_first(
    by_src: Mapping[SourceId, list[Run]], row_keys: tuple[RowKey, ...], limit: int
) -> tuple[RowKey, ...]:
    """At most `limit` rows, in row order: rows an allowlisted run failed first, then rows
    one passed, then the rest."""
    failed: set[RowKey] = set()
    passed: set[RowKey] = set()
    for runs in by_src.values():
        for run in runs:
            if not run.allowlisted:
                continue
            for key, result in run.results.items():
                if result is TestResult.FAIL:
                    failed.add(key)
                elif result is TestResult.PASS:
                    passed.add(key)
    ranked = sorted(
        row_keys, key=lambda k: (0 if k in failed else 1 if k in passed else 2, row_order(k))
    )
    return tuple(sorted(ranked[: max(limit, 0)], key=row_order))


def _runs_by_signer(
    runs: Iterable[Run], keep: set[SourceId], runs_per_signer: int | None
) -> tuple[dict[SourceId, list[Run]], int]:
    """The countable runs of the kept signers, at most `runs_per_signer` newest each, and how
    many runs that limit left out."""
    by_src: dict[SourceId, list[Run]] = {}
    for run in runs:
        src = signer_source_id(run.signer) if countable(run) else None
        if src is not None and src in keep:
            by_src.setdefault(src, []).append(run)
    omitted_runs = 0
    if runs_per_signer is not None:
        for src, src_runs in by_src.items():
            if len(src_runs) > runs_per_signer:
                omitted_runs += len(src_runs) - runs_per_signer
                by_src[src] = newest_first(src_runs)[:runs_per_signer]
    return by_src, omitted_runs


def build_series(
    recipe: str,
    runs: Iterable[Run],
    versions: Iterable[Grid],
    *,
    keep: set[SourceId] | None = None,
    runs_per_signer: int | None = None,
    max_rows: int | None = None,
) -> Series:
    """The series of one recipe over every run of its grid signers (`keep`, when given, is
    that set already worked out), at most `runs_per_signer` newest runs per signer and at most
    `max_rows` rows (`generator.limits`); what is left out is counted."""
    keep = grid_signers(versions) if keep is None else keep
    by_src, omitted_runs = _runs_by_signer(runs, keep, runs_per_signer)
    row_keys = tuple(
        sorted({k for rs in by_src.values() for r in rs for k in r.results}, key=row_order)
    )
    omitted_rows = 0
    if max_rows is not None and len(row_keys) > max_rows:
        omitted_rows = len(row_keys) - max_rows
        row_keys = _rows_first(by_src, row_keys, max_rows)
    first_phase: dict[str, Phase] = {}
    for phase, name in row_keys:
        first_phase.setdefault(name, phase)
    rows = tuple(sorted(((p, n) for n, p in first_phase.items()), key=row_order))
    builds: dict[SourceId, tuple[Build, ...]] = {}
    health: dict[SourceId, Health] = {}
    for src in sorted(by_src):
        ordered = newest_first(by_src[src])
        columns = tuple(
            Build(
                run=run,
                newest=i == 0,
                results={n: run.results.get((p, n), TestResult.NOT_RUN) for p, n in rows},
                results_by_row={k: run.results.get(k, TestResult.NOT_RUN) for k in row_keys},
            )
            for i, run in enumerate(ordered)
        )
        builds[src] = columns
        health[src] = Health(
            flake_pct=flake_pct(columns, [n for _, n in rows]),
            last_pass_build=last_pass_build(columns),
            builds=len(columns),
        )
    return Series(
        recipe=recipe,
        rows=rows,
        row_keys=row_keys,
        builds=builds,
        health=health,
        omitted_runs=omitted_runs,
        omitted_rows=omitted_rows,
    )
