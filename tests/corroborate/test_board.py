"""The board: run conversion, coordinates, ordering, quarantine, slug claims and sources."""

from __future__ import annotations

import pytest

from generator.corroborate import (
    BoardEntry,
    board_entry,
    build_board,
    profile_segment,
    run_from_verified,
    safe_slug,
    signer_label,
)
from generator.errors import InputError
from generator.facts import Criteria
from generator.model import ConsensusState as S
from generator.model import CtrfTest, Phase, SignerClass
from generator.model import TestResult as R

DEP, CONF = Phase.DEPLOYMENT, Phase.CONFORMANCE


def crit(
    service: str = "eks",
    accelerator: str = "h100",
    os: str = "ubuntu",
    intent: str = "training",
    platform: str = "kubeflow",
) -> Criteria:
    return Criteria(service, accelerator, os, intent, platform)


def test_run_from_verified(f: type) -> None:
    skip = CtrfTest("cluster-autoscaling", "skipped", R.NOT_RUN, extra={"skipReason": "nodes-busy"})
    ev = f.make_evidence(
        seed="one",
        ctrf_reports={
            DEP: f.ctrf(DEP, ("operator-health", "passed"), ("odd", "weird-status")),
            CONF: f.ctrf(CONF, skip),
        },
        attested_at="2026-09-19T04:57:39+02:00",
        predicate={
            "profile": {"selection": "gpuStack=bundle-installer"},
            "fingerprint": {"k8sVersion": {"value": "v1.33.4-eks-1"}},
        },
    )
    signer = f.identity("acme")
    run = run_from_verified(f.make_verified(ev, signer), f.classified(), f.make_pointer(ev, signer))
    assert run.run_id == "20260919T025739Z-" + str(ev.bundle_digest)[7:19]
    assert run.attested_at == "2026-09-19T02:57:39Z"
    assert run.k8s_version == "1.33"
    assert run.results == {
        (DEP, "operator-health"): R.PASS,
        (DEP, "odd"): R.FAIL,
        (CONF, "cluster-autoscaling"): R.NOT_RUN,
    }
    assert run.skip_reasons == {(CONF, "cluster-autoscaling"): "nodes-busy"}
    assert run.profile == "gpuStack=bundle-installer"


def test_run_ids_differ_for_bundles_in_the_same_second(f: type) -> None:
    signer = f.identity("acme")
    ids = set()
    for seed in ("x", "y"):
        ev = f.make_evidence(seed=seed)
        ids.add(
            run_from_verified(
                f.make_verified(ev, signer), f.classified(), f.make_pointer(ev, signer)
            ).run_id
        )
    assert len(ids) == 2


def test_run_from_verified_rejects_bad_time(f: type) -> None:
    ev = f.make_evidence(attested_at="yesterday")
    signer = f.identity("acme")
    with pytest.raises(InputError) as err:
        run_from_verified(f.make_verified(ev, signer), f.classified(), f.make_pointer(ev, signer))
    assert "attestedAt" in err.value.diagnostics()


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("h100-eks-ubuntu-training", True),
        ("a.b_c-1", True),
        ("", False),
        (".", False),
        ("..", False),
        ("a/b", False),
        ("a\\b", False),
        (".hidden", False),
        ("x" * 201, False),
    ],
)
def test_safe_slug(name: str, ok: bool) -> None:
    assert safe_slug(name) is ok


@pytest.mark.parametrize(
    ("selection", "segment"),
    [
        ("gpuStack=bundle-installer", "gpustack-bundle-installer"),
        ("a=B", "a-b"),
        ("noequals", None),
        ("a=b=c", None),
        ("a b=c", None),
    ],
)
def test_profile_segment(selection: str, segment: str | None) -> None:
    assert profile_segment(selection) == segment


def entry(f: type, org: str, criteria: Criteria, results: dict, **kw: object) -> BoardEntry:
    return BoardEntry(
        f.make_run(f.identity(org), results, **kw), criteria, origin=f"evidence/{org}"
    )


ROW = {(DEP, "operator-health"): "passed"}


def test_board_orders_groups_dashboards_and_tabs(f: type) -> None:
    entries = [
        entry(
            f, "a", crit("gke", "h100", "cos", "training", ""), ROW, recipe="h100-gke-cos-training"
        ),
        entry(
            f, "a", crit("eks", "h200", "ubuntu", "training", "kubeflow"), ROW, recipe="h200-eks"
        ),
        entry(
            f, "a", crit("eks", "h100", "ubuntu", "training", "kubeflow"), ROW, recipe="h100-eks-k"
        ),
        entry(
            f, "a", crit("eks", "h100", "ubuntu", "inference", "dynamo"), ROW, recipe="h100-eks-d"
        ),
        entry(
            f,
            "a",
            crit("eks", "h100", "ubuntu", "training", "kubeflow"),
            ROW,
            recipe="h100-eks-k-p2",
            profile="gpuStack=zeta",
        ),
        entry(
            f,
            "a",
            crit("eks", "h100", "ubuntu", "training", "kubeflow"),
            ROW,
            recipe="h100-eks-k-p1",
            profile="gpuStack=alpha",
        ),
    ]
    board = build_board(entries, organisation_of=f.org_of, naming=f.naming)
    assert [g.service for g in board.groups] == ["eks", "gke"]
    eks = board.groups[0]
    assert [(d.accelerator, d.os) for d in eks.dashboards] == [
        ("h100", "ubuntu"),
        ("h200", "ubuntu"),
    ]
    assert [t.recipe for t in eks.dashboards[0].tabs] == [
        "h100-eks-d",
        "h100-eks-k",
        "h100-eks-k-p1",
        "h100-eks-k-p2",
    ]
    tab = eks.dashboards[0].tabs[2]
    assert tab.coordinate.path == "eks/h100-ubuntu/training-kubeflow-gpustack-alpha"
    assert (tab.profile, tab.profile_selection) == ("gpustack-alpha", "gpuStack=alpha")
    gke_tab = board.groups[1].dashboards[0].tabs[0]
    assert gke_tab.coord.platform == "" and gke_tab.coordinate.tab == "training"
    assert board.criteria["platform"] == ("(none)", "dynamo", "kubeflow")
    assert board.criteria["service"] == ("eks", "gke")
    assert board.skipped == ()


def test_board_is_independent_of_input_order(f: type) -> None:
    entries = [
        entry(f, o, crit(), ROW, when=f"2026-09-0{i + 1}T00:00:00Z")
        for i, o in enumerate(("c", "a", "b"))
    ]
    one = build_board(entries, organisation_of=f.org_of, naming=f.naming)
    two = build_board(list(reversed(entries)), organisation_of=f.org_of, naming=f.naming)
    assert one == two
    assert one.newest_attested_at == "2026-09-03T00:00:00Z"
    assert one.generated_at == "2026-09-03 00:00 UTC"


def test_profile_collision_quarantines_the_coordinate(f: type) -> None:
    # gpu-stack=operator and gpu=stack-operator share the lowercase segment
    entries = [
        entry(f, "a", crit(), ROW, recipe="r-gpu-stack-operator", profile="gpu-stack=operator"),
        entry(f, "b", crit(), ROW, recipe="r-gpu-stack-operator", profile="gpu=stack-operator"),
        entry(f, "c", crit(platform="dynamo"), ROW, recipe="other"),
    ]
    board = build_board(entries, organisation_of=f.org_of, naming=f.naming)
    assert [t.recipe for t in board.tabs] == ["other"]
    assert {s.reason for s in board.skipped} == {"profile-collision"}
    assert len(board.skipped) == 2


def test_slug_claimed_by_two_coordinates(f: type) -> None:
    entries = [
        entry(f, "a", crit(platform="kubeflow"), ROW, recipe="same"),
        entry(f, "b", crit(platform="dynamo"), ROW, recipe="same"),
    ]
    board = build_board(entries, organisation_of=f.org_of, naming=f.naming)
    assert [t.coordinate.path for t in board.tabs] == ["eks/h100-ubuntu/training-dynamo"]
    assert [s.reason for s in board.skipped] == ["slug-claimed"]


def test_disagreeing_slug_at_one_coordinate_is_flagged(f: type) -> None:
    entries = [
        entry(f, "a", crit(), ROW, recipe="name-a"),
        entry(f, "b", crit(), ROW, recipe="name-b"),
    ]
    board = build_board(entries, organisation_of=f.org_of, naming=f.naming)
    # the first run in path order (coordinate, then signer slug) keeps its name
    first = min(("a", "b"), key=lambda o: str(f.identity(o).slug))
    assert [t.recipe for t in board.tabs] == [f"name-{first}"]
    assert len(board.tabs[0].runs) == 2 and len(board.warnings) == 1


@pytest.mark.parametrize(
    ("kwargs", "criteria", "reason"),
    [
        ({"recipe": "../escape"}, crit(), "unsafe-slug"),
        ({"profile": "nonsense"}, crit(), "bad-profile"),
        ({}, crit(service="any"), "no-coordinate"),
        ({"when": "not-a-time"}, crit(), "bad-timestamp"),
    ],
)
def test_malformed_entries_are_skipped(
    f: type, kwargs: dict, criteria: Criteria, reason: str
) -> None:
    board = build_board(
        [entry(f, "a", criteria, ROW, **kwargs)], organisation_of=f.org_of, naming=f.naming
    )
    assert board.tabs == () and [s.reason for s in board.skipped] == [reason]


def test_sources_register_every_identity(f: type) -> None:
    entries = [
        entry(f, "a", crit(), ROW),
        entry(f, "idle", crit(), {(DEP, "x"): "skipped"}, allowlisted=False),
    ]
    board = build_board(entries, organisation_of=f.org_of, naming=f.naming)
    assert set(board.sources) == {f.identity("a").source_id, f.identity("idle").source_id}
    idle = board.sources[f.identity("idle").source_id]
    assert not idle.allowlisted and idle.org == "idle" and idle.label == "idle/aicr-evidence"
    assert list(board.tabs[0].series.builds) == [f.identity("a").source_id]


def test_tab_rollup_and_tally_bake_the_combined_grid(f: type) -> None:
    results = {(DEP, "ok"): "passed", (CONF, "gap"): "skipped"}
    entries = [entry(f, "a", crit(), results), entry(f, "b", crit(), results)]
    tab = build_board(entries, organisation_of=f.org_of, naming=f.naming).tabs[0]
    assert tab.rollup is S.PARTIAL
    assert tab.tally[S.CONFIRMED] == 1 and tab.tally[S.UNTESTED] == 1


@pytest.mark.parametrize(
    ("identity", "cls", "allowlisted", "label", "expected"),
    [
        (
            "https://github.com/acme/repo/.github/workflows/x.yaml@refs/heads/main",
            SignerClass.COMMUNITY,
            True,
            None,
            "acme/repo",
        ),
        (
            "https://gitlab.com/grp/proj//.gitlab-ci.yml@refs/heads/main",
            SignerClass.COMMUNITY,
            False,
            None,
            "grp/proj",
        ),
        ("https://ci.example.org/job/7", SignerClass.PARTNER, True, None, "ci.example.org"),
        ("someone@example.com", SignerClass.COMMUNITY, False, None, None),
        (
            "https://github.com/NVIDIA/aicr/x@refs/heads/main",
            SignerClass.FIRST_PARTY,
            True,
            None,
            "NVIDIA UAT",
        ),
        ("https://github.com/acme/repo/x", SignerClass.PARTNER, True, "Acme Corp", "Acme Corp"),
    ],
)
def test_signer_label(
    f: type,
    identity: str,
    cls: SignerClass,
    allowlisted: bool,
    label: str | None,
    expected: str | None,
) -> None:
    from generator.model import SignerIdentity

    signer = SignerIdentity("https://issuer", identity)
    got = signer_label(signer, f.classified(allowlisted, cls, label))
    assert got == (expected if expected is not None else str(signer.slug))


def test_board_entry_from_verified(f: type) -> None:
    ev = f.make_evidence(ctrf_reports={DEP: f.ctrf(DEP, ("operator-health", "passed"))})
    signer = f.identity("acme")
    made = board_entry(
        f.make_verified(ev, signer),
        f.classified(),
        f.make_pointer(ev, signer),
        origin="evidence/x.yaml",
    )
    assert made.criteria == crit() and made.origin == "evidence/x.yaml"
    board = build_board([made], organisation_of=f.org_of, naming=f.naming)
    assert board.tabs[0].combined.rows[0].consensus is S.SINGLE


def test_default_naming_agrees_with_the_fake_on_golden_vectors(f: type) -> None:
    from generator.corroborate import default_naming

    real = default_naming()
    for c in (
        crit(),
        crit(os="", platform=""),
        crit("kind", "h100", "any", "training", "kubeflow"),
    ):
        got, want = real.coordinate_for(c, None), f.naming.coordinate_for(c, None)
        assert (got.group, got.dashboard, got.tab) == (want.group, want.dashboard, want.tab)
