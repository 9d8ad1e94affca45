"""Grid rows at their edges: each allowlisted pass or fail counted once, contested rows, and
two signers of one organisation against two organisations."""

from __future__ import annotations

import pytest

from generator.corroborate import combined_grid, k8s_lens, k8s_minors, version_grids
from generator.model import ConsensusState as S
from generator.model import Phase

ROW = (Phase.DEPLOYMENT, "operator-health")


@pytest.mark.parametrize(
    ("results", "state", "counts"),
    [
        (["failed"], S.FAILING, (0, 1, 0)),
        (["failed", "failed"], S.FAILING, (0, 2, 0)),
        (["passed", "failed"], S.CONTESTED, (1, 1, 0)),
        (["passed", "passed", "failed"], S.CONTESTED, (2, 1, 0)),
        (["passed", "skipped"], S.SINGLE, (1, 0, 1)),
        (["skipped", "skipped"], S.UNTESTED, (0, 0, 2)),
    ],
)
def test_each_allowlisted_result_is_counted_once(
    f: type, results: list[str], state: S, counts: tuple[int, int, int]
) -> None:
    runs = [
        f.make_run(f.identity(f"org{i}"), {ROW: result})  # type: ignore[attr-defined]
        for i, result in enumerate(results)
    ]
    row = combined_grid(runs, f.org_of).rows[0]  # type: ignore[attr-defined]
    assert row.consensus is state
    assert (row.counts.passed, row.counts.failed, row.counts.not_run) == counts
    assert row.distinct_orgs == results.count("passed")


@pytest.mark.parametrize(
    ("minors", "expected"),
    [
        (["1.9", "1.33", "1.10", "2.0"], ("2.0", "1.33", "1.10", "1.9")),
        (["", "1.32", "1.33"], ("1.33", "1.32", "")),
        (["1.33", "v1.34"], ("1.33", "v1.34")),
        (["1.x", "1.2"], ("1.2", "1.x")),
        (["x.1", "1.2"], ("1.2", "x.1")),
        (["0.0", "0.1"], ("0.1", "0.0")),
    ],
)
def test_kubernetes_minors_are_newest_first_by_number_unparsed_last(
    f: type, minors: list[str], expected: tuple[str, ...]
) -> None:
    runs = [
        f.make_run(f.identity(f"o{i}"), {ROW: "passed"}, k8s=minor)  # type: ignore[attr-defined]
        for i, minor in enumerate(minors)
    ]
    assert k8s_minors(runs) == expected
    assert k8s_minors(reversed(runs)) == expected


def test_a_kubernetes_lens_matches_its_minor_exactly(f: type) -> None:
    runs = [
        f.make_run(f.identity("a"), {ROW: "passed"}, k8s="1.33"),  # type: ignore[attr-defined]
        f.make_run(f.identity("b"), {ROW: "passed"}, k8s="1.3"),
    ]  # type: ignore[attr-defined]
    grid = k8s_lens(runs, "1.3", f.org_of)  # type: ignore[attr-defined]
    assert grid.rows[0].consensus is S.SINGLE


def test_the_combined_grid_names_no_version_and_each_version_grid_its_own(f: type) -> None:
    runs = [
        f.make_run(f.identity("a"), {ROW: "passed"}, version="v0.13.0"),  # type: ignore[attr-defined]
        f.make_run(f.identity("b"), {ROW: "passed"}, version="v0.14.0"),
    ]  # type: ignore[attr-defined]
    assert combined_grid(runs, f.org_of).aicr_version == ""  # type: ignore[attr-defined]
    grids = version_grids(runs, f.org_of)  # type: ignore[attr-defined]
    assert sorted(g.aicr_version for g in grids) == ["v0.13.0", "v0.14.0"]


def _three_versions(f: type) -> list[object]:
    """Three aicr versions, each run once; v0.15.0 is the newest."""
    return [
        f.make_run(f.identity(org), {ROW: "passed"}, version=version)  # type: ignore[attr-defined]
        for org, version in (("a", "v0.13.0"), ("b", "v0.15.0"), ("c", "v0.14.0"))
    ]


@pytest.mark.parametrize(
    ("limit", "shown"),
    [
        (None, ["v0.15.0", "v0.14.0", "v0.13.0"]),
        (3, ["v0.15.0", "v0.14.0", "v0.13.0"]),
        (2, ["v0.15.0", "v0.14.0"]),
        (1, ["v0.15.0"]),
        (0, []),
        (-1, []),
    ],
)
def test_a_version_limit_keeps_exactly_the_newest_versions(
    f: type, limit: int | None, shown: list[str]
) -> None:
    grids = version_grids(_three_versions(f), f.org_of, limit=limit)  # type: ignore[attr-defined]
    assert [g.aicr_version for g in grids] == shown


def test_a_version_grid_holds_only_its_own_versions_runs(f: type) -> None:
    other = (Phase.CONFORMANCE, "dns")
    runs = [
        f.make_run(f.identity("a"), {ROW: "passed"}, version="v0.14.0"),  # type: ignore[attr-defined]
        f.make_run(f.identity("b"), {ROW: "passed"}, version="v0.14.0"),  # type: ignore[attr-defined]
        f.make_run(f.identity("c"), {other: "failed"}, version="v0.13.0"),  # type: ignore[attr-defined]
    ]
    new, old = version_grids(runs, f.org_of)  # type: ignore[attr-defined]
    assert [r.key for r in new.rows] == [ROW] and new.rows[0].consensus is S.CONFIRMED
    assert [r.key for r in old.rows] == [other] and old.rows[0].consensus is S.FAILING


def test_rows_only_left_out_runs_report_count_untested_in_their_phase_only(f: type) -> None:
    """Two rows only left-out runs report, both in conformance: two UNTESTED in the tally, the
    conformance rollup PARTIAL, deployment untouched; a row a shown run reports is not extra."""
    from generator.corroborate import grid_over

    deploy, conf = ROW, (Phase.CONFORMANCE, "dns")
    shown = [
        f.make_run(f.identity(o), {deploy: "passed", conf: "passed"})  # type: ignore[attr-defined]
        for o in ("a", "b")
    ]
    left = [
        f.make_run(  # type: ignore[attr-defined]
            f.identity("x"),  # type: ignore[attr-defined]
            {
                deploy: "passed",
                (Phase.CONFORMANCE, "n1"): "passed",
                (Phase.CONFORMANCE, "n2"): "failed",
            },
            allowlisted=False,
        )
    ]
    grid = grid_over(shown, f.org_of, left_out=left)  # type: ignore[attr-defined]
    assert [r.key for r in grid.rows] == [deploy, conf]
    assert grid.unlisted_only == 2
    assert grid.tally[S.UNTESTED] == 2 and grid.tally[S.CONFIRMED] == 2
    assert grid.phase_rollup[Phase.CONFORMANCE] is S.PARTIAL
    assert grid.phase_rollup[Phase.DEPLOYMENT] is S.CONFIRMED
    assert grid.rollup is S.PARTIAL
    alone = grid_over(shown, f.org_of)  # type: ignore[attr-defined]
    assert alone.unlisted_only == 0 and alone.rollup is S.CONFIRMED
    assert alone.tally[S.UNTESTED] == 0


def test_a_digest_differing_between_counted_runs_clears_same_digest(f: type) -> None:
    """Only allowlisted runs that ran the row count; an unlisted run's digest never does."""
    from generator.corroborate import grid_over

    runs = [
        f.make_run(f.identity("a"), {ROW: "passed"}, recipe_digest="a" * 64),  # type: ignore[attr-defined]
        f.make_run(f.identity("b"), {ROW: "passed"}, recipe_digest="a" * 63 + "b"),  # type: ignore[attr-defined]
    ]
    assert not grid_over(runs, f.org_of).rows[0].same_digest  # type: ignore[attr-defined]
    runs[1] = f.make_run(  # type: ignore[attr-defined]
        f.identity("b"),
        {ROW: "passed"},
        recipe_digest="a" * 63 + "b",
        allowlisted=False,  # type: ignore[attr-defined]
    )
    assert grid_over(runs, f.org_of).rows[0].same_digest  # type: ignore[attr-defined]


def test_a_claimed_attestation_time_never_ranks_a_version_above_a_logged_one(f: type) -> None:
    """Versions semver cannot order ("main", "dev") go by their newest run, and "newest" is the
    verified log time first (`run_order`): a version whose only run has no log time, however
    late its claimed attestedAt, is older than one with a logged run."""
    from dataclasses import replace

    logged = f.make_run(  # type: ignore[attr-defined]
        f.identity("a"),
        {ROW: "passed"},
        version="main",
        when="2026-09-19T02:57:39Z",  # type: ignore[attr-defined]
    )
    claimed = f.make_run(  # type: ignore[attr-defined]
        f.identity("b"),
        {ROW: "passed"},
        version="dev",
        when="2026-09-20T00:00:00Z",  # type: ignore[attr-defined]
    )
    claimed = replace(claimed, logged_at="")
    grids = version_grids([claimed, logged], f.org_of)  # type: ignore[attr-defined]
    assert [g.aicr_version for g in grids] == ["main", "dev"]
    later = replace(logged, logged_at="2026-09-18T00:00:00Z", aicr_version="dev")
    grids = version_grids([later, logged], f.org_of)  # type: ignore[attr-defined]
    assert [g.aicr_version for g in grids] == ["main", "dev"]


def test_versions_tied_on_log_time_go_by_attestation_time_then_by_name(f: type) -> None:
    """The run id is not part of a version's "newest" time: a full tie falls to the name."""
    from dataclasses import replace

    base = f.make_run(  # type: ignore[attr-defined]
        f.identity("a"),
        {ROW: "passed"},
        version="main",
        when="2026-09-19T02:57:39Z",  # type: ignore[attr-defined]
    )
    later_claim = replace(
        base,
        aicr_version="dev",
        attested_at="2026-09-19T03:00:00Z",
        signer=f.identity("b"),  # type: ignore[attr-defined]
    )
    grids = version_grids([base, later_claim], f.org_of)  # type: ignore[attr-defined]
    assert [g.aicr_version for g in grids] == ["dev", "main"]
    tie = replace(base, aicr_version="dev", run_id="zzzz", signer=f.identity("b"))  # type: ignore[attr-defined]
    base = replace(base, run_id="aaaa")
    grids = version_grids([base, tie], f.org_of)  # type: ignore[attr-defined]
    assert [g.aicr_version for g in grids] == ["main", "dev"]


def test_a_kubernetes_lens_matches_its_minor_by_exact_case(f: type) -> None:
    """`k8s_minors` lists "v1.33" and "V1.33" apart, so each lens holds only its own runs (a
    run counted in two lenses would corroborate itself)."""
    runs = [
        f.make_run(f.identity("a"), {ROW: "passed"}, k8s="v1.33"),  # type: ignore[attr-defined]
        f.make_run(f.identity("b"), {ROW: "passed"}, k8s="V1.33"),  # type: ignore[attr-defined]
    ]
    assert set(k8s_minors(runs)) == {"v1.33", "V1.33"}
    for minor in ("v1.33", "V1.33"):
        grid = k8s_lens(runs, minor, f.org_of)  # type: ignore[attr-defined]
        assert grid.rows[0].consensus is S.SINGLE


def test_a_row_lists_its_signers_in_source_id_order_whatever_the_runs_order(f: type) -> None:
    """The cells of a row follow the grid's columns, sorted by source id: the order the runs
    come in never shows."""
    other = (Phase.CONFORMANCE, "dra-support")
    runs = [
        f.make_run(f.identity(name), {ROW: "passed", other: "failed"})  # type: ignore[attr-defined]
        for name in ("zeta", "alpha", "mike", "bravo")
    ]
    for order in (runs, list(reversed(runs)), runs[1:] + runs[:1]):
        grid = combined_grid(order, f.org_of)  # type: ignore[attr-defined]
        for row in grid.rows:
            sources = [cell.src for cell in row.signers]
            assert sources == sorted(sources) and len(sources) == len(runs)
