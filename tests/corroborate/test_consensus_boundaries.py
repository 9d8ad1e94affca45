"""Consensus at its edges: one versus two distinct allowlisted passes, a repeated signer, votes
that must not count (unlisted, not run), and rollups that mix untested with passing rows."""

from __future__ import annotations

import pytest

from generator.corroborate.states import (
    ROW_STATES,
    STATES,
    RowConsensus,
    Vote,
    compute_consensus,
    rollup,
    tally,
)
from generator.model import ConsensusState as S
from generator.model import TestResult as R


def _c(*votes: tuple[str, bool, R]) -> RowConsensus:
    return compute_consensus(Vote(*v) for v in votes)


def test_two_distinct_allowlisted_passes_confirm_one_does_not() -> None:
    assert _c(("a", True, R.PASS)) == RowConsensus(S.SINGLE, 0, 1, 0)
    assert _c(("a", True, R.PASS), ("b", True, R.PASS)) == RowConsensus(S.CONFIRMED, 0, 2, 0)
    assert _c(*[(k, True, R.PASS) for k in "abc"]).state is S.CONFIRMED


def test_one_signer_voting_twice_is_one_vote() -> None:
    assert _c(("a", True, R.PASS), ("a", True, R.PASS)) == RowConsensus(S.SINGLE, 0, 1, 0)


def test_a_repeated_signer_keeps_its_first_vote() -> None:
    assert _c(("a", True, R.PASS), ("a", True, R.FAIL)).state is S.SINGLE
    assert _c(("a", True, R.FAIL), ("a", True, R.PASS)).state is S.FAILING
    assert _c(("a", True, R.NOT_RUN), ("a", True, R.PASS)).state is S.UNTESTED


def test_unlisted_signers_are_reported_never_counted() -> None:
    votes = [("u1", False, R.PASS), ("u2", False, R.PASS), ("u3", False, R.FAIL)]
    assert _c(*votes) == RowConsensus(S.UNTESTED, 3, 0, 0)
    assert _c(("a", True, R.PASS), *votes) == RowConsensus(S.SINGLE, 3, 1, 0)


def test_not_run_is_neither_reported_nor_counted() -> None:
    assert _c(("a", True, R.NOT_RUN), ("u", False, R.NOT_RUN)) == RowConsensus(S.UNTESTED, 0, 0, 0)
    assert _c(("a", True, R.NOT_RUN), ("b", True, R.PASS)).state is S.SINGLE


@pytest.mark.parametrize(
    ("passes", "fails", "state"),
    [
        (0, 0, S.UNTESTED),
        (0, 1, S.FAILING),
        (0, 2, S.FAILING),
        (1, 1, S.CONTESTED),
        (2, 1, S.CONTESTED),
        (1, 0, S.SINGLE),
        (2, 0, S.CONFIRMED),
    ],
)
def test_the_state_table(passes: int, fails: int, state: S) -> None:
    votes = [(f"p{i}", True, R.PASS) for i in range(passes)]
    votes += [(f"f{i}", True, R.FAIL) for i in range(fails)]
    assert _c(*votes) == RowConsensus(state, 0, passes, fails)
    assert _c(*reversed(votes)).state is state


@pytest.mark.parametrize(
    ("states", "expected"),
    [
        ([], S.UNTESTED),
        ([S.UNTESTED], S.UNTESTED),
        ([S.UNTESTED, S.SINGLE], S.PARTIAL),
        ([S.CONFIRMED, S.UNTESTED], S.PARTIAL),
        ([S.UNTESTED, S.FAILING, S.CONFIRMED], S.FAILING),
        ([S.CONFIRMED, S.SINGLE], S.SINGLE),
        ([S.CONFIRMED, S.CONFIRMED], S.CONFIRMED),
        ([S.FAILING, S.CONTESTED], S.CONTESTED),
        ([S.SINGLE, S.CONTESTED, S.CONFIRMED], S.CONTESTED),
        ([S.PARTIAL], S.UNTESTED),
        ([S.PARTIAL, S.CONFIRMED], S.CONFIRMED),
        ([S.PARTIAL, S.PARTIAL], S.UNTESTED),
    ],
)
def test_rollup_is_the_worst_row_and_partial_for_untested_beside_passing(
    states: list[S], expected: S
) -> None:
    assert rollup(states) is expected
    assert rollup(iter(states)) is expected


def test_tally_counts_row_states_only() -> None:
    counts = tally([S.CONFIRMED, S.CONFIRMED, S.FAILING, S.PARTIAL])
    assert list(counts) == list(ROW_STATES)
    assert counts[S.CONFIRMED] == 2 and counts[S.FAILING] == 1
    assert sum(counts.values()) == 3


def test_state_ranks_are_distinct_and_worst_first() -> None:
    """Published in index.json and used to order rows: a tie would mix two states."""
    order = [S.CONTESTED, S.FAILING, S.UNTESTED, S.PARTIAL, S.SINGLE, S.CONFIRMED]
    assert [STATES[s].rank for s in order] == list(range(len(order)))
    assert [s for s in order if s in ROW_STATES] == list(ROW_STATES)
