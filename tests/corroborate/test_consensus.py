"""Truth tables of aicr's consensus (1.3), rollups (1.8, 1.9), run order and version order."""

from __future__ import annotations

import pytest

from generator.corroborate import (
    Vote,
    compare_semver,
    compute_consensus,
    latest_per_signer,
    order_versions_newest_first,
    parse_semver,
    rollup,
    round_half_up_pct,
    tally,
)
from generator.corroborate.states import consensus_of
from generator.model import ConsensusState as S
from generator.model import TestResult as R

P, F, N = R.PASS, R.FAIL, R.NOT_RUN


@pytest.mark.parametrize(
    ("votes", "state", "reported"),
    [
        ([], S.UNTESTED, 0),
        ([("a", True, N)], S.UNTESTED, 0),
        ([("a", True, P)], S.SINGLE, 0),
        ([("a", True, P), ("b", True, P)], S.CONFIRMED, 0),
        ([("a", True, P), ("b", True, P), ("c", True, P)], S.CONFIRMED, 0),
        ([("a", True, F)], S.FAILING, 0),
        ([("a", True, F), ("b", True, F)], S.FAILING, 0),
        ([("a", True, P), ("b", True, F)], S.CONTESTED, 0),
        ([("a", True, P), ("b", True, P), ("c", True, F)], S.CONTESTED, 0),
        # unlisted signers never move the state; pass or fail counts as reported
        ([("a", False, P), ("b", False, P)], S.UNTESTED, 2),
        ([("a", False, F)], S.UNTESTED, 1),
        ([("a", False, N)], S.UNTESTED, 0),
        ([("a", True, P), ("b", False, F)], S.SINGLE, 1),
        ([("a", True, P), ("b", False, P)], S.SINGLE, 1),
        # not-run allowlisted signers count for nothing
        ([("a", True, P), ("b", True, N)], S.SINGLE, 0),
        # the same key twice: the first occurrence wins
        ([("a", True, P), ("a", True, P)], S.SINGLE, 0),
        ([("a", True, P), ("a", True, F)], S.SINGLE, 0),
        ([("a", True, F), ("a", True, P)], S.FAILING, 0),
        ([("a", True, N), ("a", True, P)], S.UNTESTED, 0),
    ],
)
def test_compute_consensus(votes: list[tuple[str, bool, R]], state: S, reported: int) -> None:
    got = compute_consensus(Vote(k, a, r) for k, a, r in votes)
    assert (got.state, got.reported) == (state, reported)
    # the triple form the grids use answers the same, counts included
    assert consensus_of(votes) == got


@pytest.mark.parametrize(
    ("states", "expected"),
    [
        ([], S.UNTESTED),
        ([S.CONFIRMED], S.CONFIRMED),
        ([S.CONFIRMED, S.SINGLE], S.SINGLE),
        ([S.CONFIRMED, S.UNTESTED], S.PARTIAL),
        ([S.SINGLE, S.UNTESTED], S.PARTIAL),
        ([S.UNTESTED, S.UNTESTED], S.UNTESTED),
        ([S.CONFIRMED, S.UNTESTED, S.FAILING], S.FAILING),
        ([S.FAILING, S.CONTESTED], S.CONTESTED),
        ([S.CONTESTED, S.UNTESTED, S.CONFIRMED], S.CONTESTED),
        ([S.FAILING, S.CONFIRMED], S.FAILING),
        ([S.PARTIAL], S.UNTESTED),  # not a row state: ranks last, never wins
        ([S.PARTIAL, S.SINGLE], S.SINGLE),
    ],
)
def test_rollup(states: list[S], expected: S) -> None:
    assert rollup(states) is expected


def test_tally_has_every_row_state() -> None:
    counts = tally([S.CONFIRMED, S.CONFIRMED, S.FAILING])
    assert counts[S.CONFIRMED] == 2 and counts[S.FAILING] == 1
    assert counts[S.UNTESTED] == 0 and S.PARTIAL not in counts


def test_latest_per_signer_orders_by_time_then_run_id(f: type) -> None:
    a, b = f.identity("acme"), f.identity("beta")
    old = f.make_run(a, {}, when="2026-09-01T00:00:00Z", run_id="r-9")
    new = f.make_run(a, {}, when="2026-09-02T00:00:00Z", run_id="r-1")
    tie_low = f.make_run(b, {}, when="2026-09-02T00:00:00Z", run_id="r-1")
    tie_high = f.make_run(b, {}, when="2026-09-02T00:00:00Z", run_id="r-2")
    latest = latest_per_signer([old, new, tie_high, tie_low])
    assert latest[a.consensus_key] is new
    assert latest[b.consensus_key] is tie_high


def test_latest_per_signer_skips_empty_signers(f: type) -> None:
    from generator.model import SignerIdentity

    run = f.make_run(SignerIdentity("", "x"), {})
    assert latest_per_signer([run]) == {}


@pytest.mark.parametrize(
    ("a", "b", "sign"),
    [
        ("v0.10.0", "v0.9.0", 1),
        ("v1.0.0", "v1.0.0-rc.1", 1),
        ("v1.0.0-rc.2", "v1.0.0-rc.10", -1),
        ("v1.0.0-alpha", "v1.0.0-1", 1),
        ("v1.0.0-alpha.1", "v1.0.0-alpha", 1),
        ("v1.2", "v1.2.0", 0),
        ("v1.0.0+build.5", "v1.0.0", 0),
        ("nightly", "v0.0.1", -1),
        ("1.0.0", "v0.0.1", -1),
        ("nightly", "edge", 0),
        ("v01.0.0", "v0.0.1", -1),
    ],
)
def test_compare_semver(a: str, b: str, sign: int) -> None:
    assert compare_semver(a, b) == sign
    assert compare_semver(b, a) == -sign


@pytest.mark.parametrize("text", ["v1", "v1.2", "v1.2.3", "v1.2.3-rc.1+meta"])
def test_parse_semver_accepts(text: str) -> None:
    assert parse_semver(text) is not None


@pytest.mark.parametrize("text", ["1.2.3", "v1.2.3-01", "v1-rc", "v1.2.3.4", "", "vx"])
def test_parse_semver_rejects(text: str) -> None:
    assert parse_semver(text) is None


@pytest.mark.parametrize(
    ("versions", "newest_at", "expected"),
    [
        (["v0.9.0", "v0.10.0"], {}, ["v0.10.0", "v0.9.0"]),
        (["v1.0.0-rc.1", "v1.0.0"], {}, ["v1.0.0", "v1.0.0-rc.1"]),
        (["nightly", "v0.1.0"], {"nightly": "2030-01-01T00:00:00Z"}, ["v0.1.0", "nightly"]),
        (
            ["nightly", "edge"],
            {"nightly": "2026-09-02T00:00:00Z", "edge": "2026-09-01T00:00:00Z"},
            ["nightly", "edge"],
        ),
        (
            ["nightly", "edge"],
            {"nightly": "2026-09-01T00:00:00Z", "edge": "2026-09-02T00:00:00Z"},
            ["edge", "nightly"],
        ),
        (["alpha", "beta"], {}, ["beta", "alpha"]),
        (
            ["v1.2", "v1.2.0"],
            {"v1.2": "2026-09-01T00:00:00Z", "v1.2.0": "2026-09-02T00:00:00Z"},
            ["v1.2.0", "v1.2"],
        ),
    ],
)
def test_order_versions(
    versions: list[str], newest_at: dict[str, str], expected: list[str]
) -> None:
    assert order_versions_newest_first(versions, newest_at) == expected


@pytest.mark.parametrize(
    ("part", "whole", "pct"),
    [
        (0, 0, 0),
        (0, 5, 0),
        (1, 2, 50),
        (1, 3, 33),
        (2, 3, 67),
        (1, 8, 13),
        (1, 200, 1),
        (1, 201, 0),
        (3, 3, 100),
    ],
)
def test_round_half_up_pct(part: int, whole: int, pct: int) -> None:
    assert round_half_up_pct(part, whole) == pct
