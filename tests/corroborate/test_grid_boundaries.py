"""Grid rows at their edges: each allowlisted pass or fail counted once, contested rows, and
two signers of one organisation against two organisations."""

from __future__ import annotations

import pytest

from generator.corroborate import combined_grid
from generator.model import ConsensusState as S
from generator.model import Phase

ROW = (Phase.DEPLOYMENT, "operator-health")


@pytest.mark.parametrize(("results", "state", "counts"), [
    (["failed"], S.FAILING, (0, 1, 0)),
    (["failed", "failed"], S.FAILING, (0, 2, 0)),
    (["passed", "failed"], S.CONTESTED, (1, 1, 0)),
    (["passed", "passed", "failed"], S.CONTESTED, (2, 1, 0)),
    (["passed", "skipped"], S.SINGLE, (1, 0, 1)),
    (["skipped", "skipped"], S.UNTESTED, (0, 0, 2)),
])
def test_each_allowlisted_result_is_counted_once(f: type, results: list[str], state: S,
                                                 counts: tuple[int, int, int]) -> None:
    runs = [f.make_run(f.identity(f"org{i}"), {ROW: result})  # type: ignore[attr-defined]
            for i, result in enumerate(results)]
    row = combined_grid(runs, f.org_of).rows[0]  # type: ignore[attr-defined]
    assert row.consensus is state
    assert (row.counts.passed, row.counts.failed, row.counts.not_run) == counts
    assert row.distinct_orgs == results.count("passed")
