"""The consensus state machine (aicr 1.3, 1.8, 1.9): per-row states, rollups and their display.

Published as data (`index.json` `states`) so the pages and the generator share one definition.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from generator.model import ConsensusState, TestResult

ROW_STATES: tuple[ConsensusState, ...] = (
    ConsensusState.CONTESTED,
    ConsensusState.FAILING,
    ConsensusState.UNTESTED,
    ConsensusState.SINGLE,
    ConsensusState.CONFIRMED,
)
"""Row states, worst first (aicr `RollupPhase` rank). PARTIAL is rollup-only."""


@dataclass(frozen=True)
class StateInfo:
    """How a state is shown: rank (0 = worst), colour, icon, word and what it means."""

    rank: int
    colour: str
    icon: str
    label: str
    description: str


STATES: Mapping[ConsensusState, StateInfo] = {
    ConsensusState.CONTESTED: StateInfo(
        0,
        "#e65100",
        "⚠",
        "Contested",
        "allowlisted signers disagree: at least one passed and at least one failed",
    ),
    ConsensusState.FAILING: StateInfo(
        1, "#c62828", "✗", "Failing", "at least one allowlisted signer failed and none passed"
    ),
    ConsensusState.UNTESTED: StateInfo(
        2, "#757575", "○", "Untested", "no allowlisted signer passed or failed"
    ),
    ConsensusState.PARTIAL: StateInfo(
        3,
        "#f9a825",
        "◔",
        "Partial",
        "rollup only: some rows are untested, the others single or confirmed, none failing",
    ),
    ConsensusState.SINGLE: StateInfo(
        4, "#1565c0", "◑", "Single", "exactly one allowlisted signer passed; none failed"
    ),
    ConsensusState.CONFIRMED: StateInfo(
        5,
        "#2e7d32",
        "✓",
        "Confirmed",
        "two or more distinct allowlisted signers passed; none failed",
    ),
}


@dataclass(frozen=True)
class Vote:
    """One signer's result for one row: the input of `compute_consensus`."""

    key: str
    allowlisted: bool
    result: TestResult


@dataclass(frozen=True)
class RowConsensus:
    """The state of one row, with aicr's `reported` counter and the allowlisted counts."""

    state: ConsensusState
    reported: int
    pass_allow: int
    fail_allow: int


def compute_consensus(votes: Iterable[Vote]) -> RowConsensus:
    """aicr `ComputeConsensus`: dedupe on key (first wins), count allowlisted pass/fail only."""
    return consensus_of((vote.key, vote.allowlisted, vote.result) for vote in votes)


def consensus_of(votes: Iterable[tuple[str, bool, TestResult]]) -> RowConsensus:
    """`compute_consensus` over (key, allowlisted, result) triples: a grid asks it per row and
    signer, and a `Vote` object each time cost more than the counting."""
    seen: set[str] = set()
    reported = passes = fails = 0
    for key, allowlisted, result in votes:
        if key in seen:
            continue
        seen.add(key)
        if result is TestResult.NOT_RUN:
            continue
        if not allowlisted:
            reported += 1
        elif result is TestResult.PASS:
            passes += 1
        else:
            fails += 1
    if passes == 0 and fails == 0:
        state = ConsensusState.UNTESTED
    elif passes and fails:
        state = ConsensusState.CONTESTED
    elif fails:
        state = ConsensusState.FAILING
    elif passes >= 2:
        state = ConsensusState.CONFIRMED
    else:
        state = ConsensusState.SINGLE
    return RowConsensus(state, reported, passes, fails)


def _row_rank(state: ConsensusState) -> int:
    """Rank among row states; anything else ranks last so it can never win."""
    return ROW_STATES.index(state) if state in ROW_STATES else len(ROW_STATES)


def rollup(states: Iterable[ConsensusState]) -> ConsensusState:
    """aicr `RollupPhase` / `rollupRecipe`: worst first, PARTIAL for untested-with-some-passing.

    No rows roll up to UNTESTED.
    """
    present = list(states)
    if not present:
        return ConsensusState.UNTESTED
    worst = min(present, key=_row_rank)
    if _row_rank(worst) >= len(ROW_STATES):
        return ConsensusState.UNTESTED
    if worst is ConsensusState.UNTESTED and any(
        s in (ConsensusState.CONFIRMED, ConsensusState.SINGLE) for s in present
    ):
        return ConsensusState.PARTIAL
    return worst


def tally(states: Iterable[ConsensusState]) -> Mapping[ConsensusState, int]:
    """Row counts per row state, every row state present (zero included)."""
    counts = dict.fromkeys(ROW_STATES, 0)
    for state in states:
        if state in counts:
            counts[state] += 1
    return counts
