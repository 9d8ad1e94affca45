"""Grids: sybil cases, reported signers, not-run exclusion, version grids, lenses, series."""

from __future__ import annotations

import pytest

from generator.corroborate import (
    build_series,
    combined_grid,
    k8s_lens,
    k8s_minors,
    version_grids,
)
from generator.model import ConsensusState as S
from generator.model import Phase
from generator.model import TestResult as R

DEP, PERF, CONF = Phase.DEPLOYMENT, Phase.PERFORMANCE, Phase.CONFORMANCE
ROW = (DEP, "operator-health")


def only_row(grid):  # type: ignore[no-untyped-def]
    assert len(grid.rows) == 1
    return grid.rows[0]


def test_one_identity_under_two_folders_counts_once(f: type) -> None:
    signer = f.identity("acme")
    runs = [
        f.make_run(signer, {ROW: "passed"}, when="2026-09-01T00:00:00Z"),
        f.make_run(signer, {ROW: "passed"}, when="2026-09-02T00:00:00Z"),
    ]
    row = only_row(combined_grid(runs, f.org_of))
    assert row.consensus is S.SINGLE
    assert len(row.signers) == 1 and row.counts.passed == 1


@pytest.mark.parametrize(
    ("orgs", "state", "distinct", "one_org"),
    [
        (["acme", "acme"], S.CONFIRMED, 1, True),
        (["acme", "beta"], S.CONFIRMED, 2, False),
        (["acme"], S.SINGLE, 1, False),
        (["acme", "acme", "beta"], S.CONFIRMED, 2, False),
    ],
)
def test_one_org_flag(f: type, orgs: list[str], state: S, distinct: int, one_org: bool) -> None:
    runs = [
        f.make_run(f.identity(org, repo=f"repo{i}"), {ROW: "passed"}) for i, org in enumerate(orgs)
    ]
    row = only_row(combined_grid(runs, f.org_of))
    assert (row.consensus, row.distinct_orgs, row.one_org) == (state, distinct, one_org)


def test_reported_signer_is_listed_but_not_counted(f: type) -> None:
    runs = [
        f.make_run(f.identity("acme"), {ROW: "passed"}),
        f.make_run(f.identity("stranger"), {ROW: "failed"}, allowlisted=False),
    ]
    row = only_row(combined_grid(runs, f.org_of))
    assert row.consensus is S.SINGLE and row.reported == 1
    assert {c.result for c in row.signers} == {R.PASS, R.FAIL}
    assert (row.counts.passed, row.counts.failed, row.counts.not_run) == (1, 0, 0)


def test_not_run_is_excluded_from_signers_but_counted(f: type) -> None:
    other = (CONF, "dra-support")
    runs = [
        f.make_run(f.identity("acme"), {ROW: "passed", other: "passed"}),
        f.make_run(f.identity("beta"), {ROW: "skipped"}),
        f.make_run(f.identity("gamma"), {other: "passed"}),
    ]  # absent row = not-run
    grid = combined_grid(runs, f.org_of)
    row = next(r for r in grid.rows if r.key == ROW)
    assert row.consensus is S.SINGLE
    assert [c.src for c in row.signers] == [f.identity("acme").source_id]
    assert row.counts.not_run == 2


def test_rows_sorted_by_phase_then_name_and_signers_by_source(f: type) -> None:
    keys = {
        (CONF, "a-check"): "passed",
        (DEP, "z-check"): "passed",
        (PERF, "m"): "passed",
        (DEP, "b-check"): "passed",
    }
    runs = [f.make_run(f.identity(o), keys) for o in ("zeta", "alpha", "mid")]
    grid = combined_grid(runs, f.org_of)
    assert [r.key for r in grid.rows] == [
        (DEP, "b-check"),
        (DEP, "z-check"),
        (PERF, "m"),
        (CONF, "a-check"),
    ]
    srcs = [c.src for c in grid.rows[0].signers]
    assert srcs == sorted(srcs)


def test_same_digest_flag(f: type) -> None:
    same = [f.make_run(f.identity(o), {ROW: "passed"}, recipe_digest="1" * 64) for o in ("a", "b")]
    assert only_row(combined_grid(same, f.org_of)).same_digest
    differ = [
        f.make_run(f.identity("a"), {ROW: "passed"}, recipe_digest="1" * 64),
        f.make_run(f.identity("b"), {ROW: "passed"}, recipe_digest="2" * 64),
    ]
    assert not only_row(combined_grid(differ, f.org_of)).same_digest
    # an unlisted run with another digest is not a counted run
    mixed = [
        *same,
        f.make_run(f.identity("c"), {ROW: "passed"}, allowlisted=False, recipe_digest="3" * 64),
    ]
    assert only_row(combined_grid(mixed, f.org_of)).same_digest


def test_phase_rollup_every_phase_with_partial(f: type) -> None:
    runs = [
        f.make_run(f.identity("a"), {ROW: "passed", (CONF, "x"): "skipped"}),
        f.make_run(f.identity("b"), {ROW: "passed"}),
    ]
    grid = combined_grid(runs, f.org_of)
    assert grid.phase_rollup == {DEP: S.CONFIRMED, PERF: S.UNTESTED, CONF: S.UNTESTED}
    assert grid.rollup is S.PARTIAL
    assert grid.tally[S.CONFIRMED] == 1 and grid.tally[S.UNTESTED] == 1


def test_combined_uses_newest_run_whatever_version(f: type) -> None:
    a, b = f.identity("a"), f.identity("b")
    runs = [
        f.make_run(a, {ROW: "passed"}, version="v0.14.0", when="2026-09-01T00:00:00Z"),
        f.make_run(a, {ROW: "failed"}, version="v0.13.0", when="2026-09-03T00:00:00Z"),
        f.make_run(b, {ROW: "passed"}, version="v0.14.0", when="2026-09-02T00:00:00Z"),
    ]
    assert only_row(combined_grid(runs, f.org_of)).consensus is S.CONTESTED
    grids = version_grids(runs, f.org_of)
    assert [g.aicr_version for g in grids] == ["v0.14.0", "v0.13.0"]
    assert only_row(grids[0]).consensus is S.CONFIRMED
    assert only_row(grids[1]).consensus is S.FAILING


def test_k8s_lens(f: type) -> None:
    runs = [
        f.make_run(f.identity("a"), {ROW: "passed"}, k8s="1.33"),
        f.make_run(f.identity("b"), {ROW: "passed"}, k8s="1.32"),
        f.make_run(f.identity("c"), {ROW: "passed"}, k8s="1.33"),
    ]
    assert k8s_minors(runs) == ("1.33", "1.32")
    assert only_row(k8s_lens(runs, "1.33", f.org_of)).consensus is S.CONFIRMED
    assert only_row(k8s_lens(runs, "1.32", f.org_of)).consensus is S.SINGLE
    assert k8s_lens(runs, "1.30", f.org_of).rows == ()


def test_series_only_grid_signers_newest_first(f: type) -> None:
    a, idle = f.identity("a"), f.identity("idle")
    runs = [
        f.make_run(a, {ROW: "passed"}, when="2026-09-01T00:00:00Z"),
        f.make_run(a, {ROW: "failed", (CONF, "x"): "passed"}, when="2026-09-02T00:00:00Z"),
        f.make_run(idle, {ROW: "skipped"}),
    ]
    series = build_series("r", runs, version_grids(runs, f.org_of))
    assert list(series.builds) == [a.source_id]
    cols = series.builds[a.source_id]
    assert [c.run.attested_at for c in cols] == ["2026-09-02T00:00:00Z", "2026-09-01T00:00:00Z"]
    assert [c.newest for c in cols] == [True, False]
    assert cols[1].results == {"operator-health": R.PASS, "x": R.NOT_RUN}
    assert series.health[a.source_id].builds == 2
    assert series.health[a.source_id].last_pass_build == cols[1].run.run_id


def test_series_keys_rows_by_phase_and_name(f: type) -> None:
    a = f.identity("a")
    runs = [f.make_run(a, {(DEP, "shared"): "passed", (CONF, "shared"): "failed"})]
    series = build_series("r", runs, version_grids(runs, f.org_of))
    assert series.rows == ((DEP, "shared"),)  # aicr: de-duplicated by name, first phase wins
    col = series.builds[a.source_id][0]
    assert col.results == {"shared": R.PASS}
    assert col.results_by_row == {(DEP, "shared"): R.PASS, (CONF, "shared"): R.FAIL}


@pytest.mark.parametrize(
    ("history", "pct"),
    [
        (["passed", "passed", "passed"], 0),
        (["passed", "failed"], 100),
        (["passed", "failed", "passed"], 100),
        (["passed", "failed", "failed"], 50),
        (["passed", "skipped", "failed"], 0),  # pairs with a not-run side are not counted
        (
            [
                "passed",
                "passed",
                "failed",
                "failed",
                "failed",
                "failed",
                "failed",
                "failed",
                "failed",
            ],
            13,
        ),
        (["failed"], 0),
    ],
)
def test_flake_pct(f: type, history: list[str], pct: int) -> None:
    a = f.identity("a")
    runs = [
        f.make_run(a, {ROW: status}, when=f"2026-09-{10 + i:02d}T00:00:00Z")
        for i, status in enumerate(history)
    ]
    series = build_series("r", runs, version_grids(runs, f.org_of))
    if not series.builds:
        assert all(s == "skipped" for s in history)
        return
    assert series.health[a.source_id].flake_pct == pct


OTHER = (DEP, "other-check")


_CASES = {  # case -> (selected runs, left-out runs), each run (signer, result, version, day)
    "one-version": ([("a", "passed", "v0.14.0", 1), ("b", "failed", "v0.14.0", 2)], []),
    "a-signer-newest-on-an-old-version": (
        [
            ("a", "passed", "v0.14.0", 1),
            ("a", "failed", "v0.13.0", 3),
            ("b", "passed", "v0.14.0", 2),
        ],
        [],
    ),
    "every-signer-on-the-newest": (
        [
            ("a", "failed", "v0.13.0", 1),
            ("a", "passed", "v0.14.0", 3),
            ("b", "passed", "v0.14.0", 2),
        ],
        [],
    ),
    # the same selected runs as v0.14.0, not the same left-out ones
    "left-out-runs-differ": (
        [
            ("a", "failed", "v0.13.0", 1),
            ("a", "passed", "v0.14.0", 3),
            ("b", "passed", "v0.14.0", 2),
        ],
        [("u", "passed", "v0.13.0", 4)],
    ),
}


def _runs(f: type, case: str) -> tuple[list, list]:  # type: ignore[type-arg]
    def made(rows: list[tuple[str, str, str, int]], check: tuple[Phase, str]) -> list:  # type: ignore[type-arg]
        return [
            f.make_run(
                f.identity(who), {check: result}, version=v, when=f"2026-09-0{day}T00:00:00Z"
            )
            for who, result, v, day in rows
        ]

    selected, left = _CASES[case]
    return made(selected, ROW), made(left, OTHER)


@pytest.mark.parametrize(
    ("case", "made"),
    [
        ("one-version", 1),
        ("a-signer-newest-on-an-old-version", 3),
        ("every-signer-on-the-newest", 2),
        ("left-out-runs-differ", 3),
    ],
)
def test_grids_made_once_per_selection_are_the_grids_made_each_alone(
    f: type, case: str, made: int
) -> None:
    runs, left = _runs(f, case)
    known: dict = {}  # type: ignore[type-arg]
    shared = (
        version_grids(runs, f.org_of, left_out=left, known=known),
        combined_grid(runs, f.org_of, left_out=left, known=known),
    )
    alone = (
        version_grids(runs, f.org_of, left_out=left),
        combined_grid(runs, f.org_of, left_out=left),
    )
    assert shared == alone
    assert len(known) == made  # the selections that had to be made into a grid
