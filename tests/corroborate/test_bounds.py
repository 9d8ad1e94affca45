"""Count limits of one recipe: unlisted signers, versions, history runs and rows are bounded,
what is left out is counted, and no limit ever changes a state."""

from __future__ import annotations

from generator.corroborate import BoardEntry, build_board
from generator.data import index_document, pointers_document, series_documents
from generator.data.records import PointerRecord
from generator.facts import Criteria
from generator.limits import LIMITS
from generator.model import ConsensusState as S
from generator.model import Phase

CONF = Phase.CONFORMANCE
CRIT = Criteria("eks", "h100", "ubuntu", "training", "kubeflow")


def _entry(
    f: type, org: str, results: dict, *, allowlisted: bool = True, origin: str = "", **kw: object
) -> BoardEntry:
    run = f.make_run(f.identity(org), results, allowlisted=allowlisted, **kw)
    return BoardEntry(run, CRIT, origin=origin or f"evidence/r/{org}/{run.run_id}.yaml")


def _tab_doc(index: dict) -> dict:
    return index["groups"][0]["dashboards"][0]["tabs"][0]


def test_unlisted_signers_past_the_limit_are_left_out_and_counted(f: type) -> None:
    row = {(CONF, "nccl"): "passed"}
    entries = [_entry(f, "alpha", row), _entry(f, "beta", row)]
    entries += [
        _entry(f, f"junk{i:02d}", {(CONF, f"junk-{i}"): "passed"}, allowlisted=False)
        for i in range(LIMITS.unlisted_signers + 5)
    ]
    board = build_board(entries, organisation_of=f.org_of, naming=f.naming)
    tab = board.tabs[0]
    shown = {c.src for row in tab.combined.rows for c in row.signers}
    assert len(shown) == 2 + LIMITS.unlisted_signers
    assert (tab.omitted.unlisted_signers, tab.omitted.unlisted_runs) == (5, 5)
    assert len(board.omitted_origins) == 5
    assert set(board.omitted_origins.values()) == {"unlisted-signer-limit"}
    # the allowlisted consensus is what it is without any unlisted signer
    nccl = next(r for r in tab.combined.rows if r.name == "nccl")
    assert nccl.consensus is S.CONFIRMED
    assert _tab_doc(index_document(board, build_time=""))["omitted"]["unlistedSigners"] == 5


def test_versions_past_the_limit_have_no_grid_and_are_counted(f: type) -> None:
    row = {(CONF, "nccl"): "passed"}
    count = LIMITS.versions_per_recipe + 3
    entries = [
        _entry(f, "alpha", row, version=f"v0.{i}.0", when=f"2026-09-{i + 1:02d}T00:00:00Z")
        for i in range(count)
    ]
    board = build_board(entries, organisation_of=f.org_of, naming=f.naming)
    tab = board.tabs[0]
    assert len(tab.versions) == LIMITS.versions_per_recipe
    assert tab.versions[0].aicr_version == f"v0.{count - 1}.0"  # the newest are kept
    assert tab.omitted.versions == 3
    # the history keeps the signer although its oldest versions have no grid
    assert len(tab.series.builds) == 1


def test_history_keeps_the_newest_runs_per_signer(f: type) -> None:
    row = {(CONF, "nccl"): "passed"}
    count = LIMITS.runs_per_signer + 4
    entries = [_entry(f, "alpha", row, when=f"2026-09-{i + 1:02d}T00:00:00Z") for i in range(count)]
    board = build_board(entries, organisation_of=f.org_of, naming=f.naming)
    series = series_documents(board)[board.tabs[0].recipe]
    (columns,) = series["builds"].values()
    assert len(columns) == LIMITS.runs_per_signer
    assert columns[0]["attestedAt"] == f"2026-09-{count:02d}T00:00:00Z"
    assert series["omitted"] == {"builds": 4, "rows": 0}


def test_hidden_rows_never_hide_a_failure_nor_change_the_rollup(f: type) -> None:
    count = LIMITS.rows_per_grid + 500
    names = [f"check-{i:05d}" for i in range(count)]
    good = {(CONF, n): "passed" for n in names}
    bad = dict(good)
    bad[(CONF, names[-1])] = "failed"  # the last row in display order
    board = build_board(
        [_entry(f, "alpha", good), _entry(f, "beta", bad)],
        organisation_of=f.org_of,
        naming=f.naming,
    )
    combined = _tab_doc(index_document(board, build_time=""))["combined"]
    assert len(combined["tests"]) == LIMITS.rows_per_grid
    assert combined["rollup"] == "CONTESTED"
    assert combined["omitted"] == {"tests": 500, "byState": {"CONFIRMED": 500}}
    shown = {t["name"]: t["consensus"] for t in combined["tests"]}
    assert shown[names[-1]] == "CONTESTED"
    names_shown = [t["name"] for t in combined["tests"]]
    assert names_shown == sorted(names_shown)  # still in phase and name order


def test_rows_only_unlisted_signers_report_come_last(f: type) -> None:
    mine = {(CONF, f"real-{i}"): "passed" for i in range(5)}
    junk = {(CONF, f"aaa-junk-{i:05d}"): "failed" for i in range(LIMITS.rows_per_grid)}
    board = build_board(
        [_entry(f, "alpha", mine), _entry(f, "zz", junk, allowlisted=False)],
        organisation_of=f.org_of,
        naming=f.naming,
    )
    combined = _tab_doc(index_document(board, build_time=""))["combined"]
    shown = {t["name"] for t in combined["tests"]}
    assert {f"real-{i}" for i in range(5)} <= shown
    assert combined["omitted"] == {"tests": 5, "byState": {"UNTESTED": 5}}


def test_series_rows_past_the_limit_keep_failures(f: type) -> None:
    count = LIMITS.rows_per_series + 10
    names = [f"check-{i:05d}" for i in range(count)]
    results = {(CONF, n): "passed" for n in names}
    results[(CONF, names[-1])] = "failed"
    board = build_board([_entry(f, "alpha", results)], organisation_of=f.org_of, naming=f.naming)
    series = series_documents(board)[board.tabs[0].recipe]
    assert len(series["rows"]) == LIMITS.rows_per_series
    assert names[-1] in {r["name"] for r in series["rows"]}
    assert series["omitted"] == {"builds": 0, "rows": 10}


def test_pointers_document_marks_and_counts_left_out_runs(f: type) -> None:
    entries = [_entry(f, "alpha", {(CONF, "x"): "passed"})]
    entries += [
        _entry(
            f,
            f"junk{i:02d}",
            {(CONF, "x"): "passed"},
            allowlisted=False,
            origin=f"evidence/r/junk{i:02d}.yaml",
        )
        for i in range(LIMITS.unlisted_signers + 2)
    ]
    board = build_board(entries, organisation_of=f.org_of, naming=f.naming)
    ev = f.make_evidence()
    made = {e.origin: {"path": e.origin} for e in entries}
    records = [PointerRecord(pointer=_parsed(f, ev, e.origin)) for e in entries]
    doc = pointers_document(records, made, board=board)
    omitted = [p["path"] for p in doc["pointers"] if p.get("omitted")]
    assert len(omitted) == 2 and all(p.startswith("evidence/r/junk") for p in omitted)
    assert doc["omitted"][board.tabs[0].recipe]["unlistedSigners"] == 2
    assert "omitted" not in made[omitted[0]]  # the shared entry is not changed in place


def test_normal_input_adds_no_field(f: type) -> None:
    board = build_board(
        [_entry(f, "alpha", {(CONF, "x"): "passed"})], organisation_of=f.org_of, naming=f.naming
    )
    tab = _tab_doc(index_document(board, build_time=""))
    assert "omitted" not in tab and "omitted" not in tab["combined"]
    assert "omitted" not in series_documents(board)[board.tabs[0].recipe]


def _parsed(f: type, evidence: object, path: str) -> object:
    from generator.model import ParsedPointer, PointerLocation

    return ParsedPointer(
        location=PointerLocation(path, "r", None), pointer=f.make_pointer(evidence, f.identity("x"))
    )


def test_leaving_unlisted_signers_out_changes_no_state(f: type) -> None:
    """Rows only the left-out unlisted signers report still count as untested: the rollups
    and tallies equal those of the same board without any limit."""
    from generator.limits import OutputLimits

    row = {(CONF, "nccl"): "passed"}
    entries = [_entry(f, "alpha", row), _entry(f, "beta", row)]
    # every unlisted signer reports the shared row; each also reports a row of its own
    entries += [
        _entry(
            f, f"junk{i:02d}", {**row, (Phase.DEPLOYMENT, f"own-{i}"): "passed"}, allowlisted=False
        )
        for i in range(LIMITS.unlisted_signers + 3)
    ]
    bounded = build_board(entries, organisation_of=f.org_of, naming=f.naming)
    unbounded = build_board(
        entries,
        organisation_of=f.org_of,
        naming=f.naming,
        limits=OutputLimits(unlisted_signers=10_000),
    )
    one, other = bounded.tabs[0], unbounded.tabs[0]
    assert one.omitted.unlisted_signers == 3 and other.omitted.unlisted_signers == 0
    for mine, full in zip(
        (one.combined, *one.versions), (other.combined, *other.versions), strict=True
    ):
        assert mine.rollup == full.rollup == S.PARTIAL
        assert mine.phase_rollup == full.phase_rollup
        assert mine.tally == full.tally
        assert mine.unlisted_only == 3 and len(mine.rows) == len(full.rows) - 3
    combined = _tab_doc(index_document(bounded, build_time=""))["combined"]
    assert combined["omitted"] == {"tests": 3, "byState": {"UNTESTED": 3}}


def test_rows_shared_with_left_out_signers_keep_their_state(f: type) -> None:
    row = {(CONF, "nccl"): "passed"}
    entries = [_entry(f, "alpha", row), _entry(f, "beta", row)]
    entries += [
        _entry(f, f"junk{i:02d}", row, allowlisted=False)
        for i in range(LIMITS.unlisted_signers + 3)
    ]
    tab = build_board(entries, organisation_of=f.org_of, naming=f.naming).tabs[0]
    assert tab.rollup is S.CONFIRMED and tab.combined.unlisted_only == 0
    assert tab.combined.rows[0].reported == LIMITS.unlisted_signers  # the shown ones


def test_a_left_out_signers_own_row_keeps_the_recipe_partial(f: type) -> None:
    """Without its row counted, the recipe would read CONFIRMED instead of PARTIAL."""
    from generator.corroborate.grid import signer_source_id

    row = {(CONF, "nccl"): "passed"}
    orgs = [f"junk{i:02d}" for i in range(LIMITS.unlisted_signers + 1)]
    last = max(orgs, key=lambda o: str(signer_source_id(f.identity(o))))  # the one left out
    entries = [_entry(f, "alpha", row), _entry(f, "beta", row)]
    entries += [
        _entry(f, o, {**row, (CONF, "extra"): "passed"} if o == last else row, allowlisted=False)
        for o in orgs
    ]
    tab = build_board(entries, organisation_of=f.org_of, naming=f.naming).tabs[0]
    assert tab.omitted.unlisted_signers == 1
    assert [r.name for r in tab.combined.rows] == ["nccl"]
    assert tab.rollup is S.PARTIAL
    assert tab.combined.phase_rollup[CONF] is S.PARTIAL
