"""Time comes from the log, not from the claim: attestedAt is compared with the verified
transparency-log time; runs, "latest", generatedAt and the build time follow the log."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from generator.build import evaluate
from generator.corroborate import latest_per_signer
from generator.model import FailureClass, PointerLocation, Rejected, Verified
from generator.testing.authority import TestAuthority
from generator.verify.pipeline import verify_pointer
from generator.verify.serialize import VerdictFormatError, verdict_from_json, verdict_to_json
from generator.verify.trust import load_trust
from tests.evaluation.conftest import ALICE, EvidenceTree, by_path, failure_class

WEEK = 7 * 86400


def _epoch(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())


def test_a_postdated_pass_is_rejected_and_the_later_failure_is_latest(
    evidence_tree: EvidenceTree,
) -> None:
    """A pass claiming 2099 but logged in September is rejected with class `time`; the
    signer's latest run is the honest failure logged after it; nothing is dated 2099."""
    postdated = evidence_tree.sign(
        attested_at="2099-01-01T00:00:00Z", logged_at="2026-09-01T12:00:00Z", passed=True
    )
    failure = evidence_tree.sign(attested_at="2026-09-05T12:00:00Z", passed=False)
    postdated_path, failure_path = evidence_tree.add(postdated, failure)
    evidence_tree.write()

    evaluation = evaluate(evidence_tree.options().evaluation)

    pointers = by_path(evaluation.documents)
    rejected = pointers[postdated_path]
    assert rejected["verify"]["exit"] == 2
    assert failure_class(rejected) == "time"
    cause = rejected["verify"]["failureCause"]
    assert "2099-01-01T00:00:00Z" in cause["detail"]
    assert "transparency-log time 2026-09-01T12:00:01Z" in cause["detail"]
    assert cause["hint"]
    assert pointers[failure_path]["verify"]["exit"] == 1  # valid, with recorded failures

    latest = latest_per_signer(evaluation.board.runs)[ALICE.consensus_key]
    assert latest.bundle_digest == failure.digest
    assert [str(r) for r in latest.results.values()] == ["fail"]
    assert [r.bundle_digest for r in evaluation.board.runs] == [failure.digest]

    assert evaluation.build_time == "2026-09-05T12:00:01Z"
    assert evaluation.documents["index"]["meta"]["generatedAt"] == "2026-09-05 12:00 UTC"
    assert "2099" not in json.dumps(evaluation.documents["index"])
    assert "2099" not in json.dumps(evaluation.documents["build_info"])


def test_a_backdated_claim_is_accepted_flagged_and_ordered_by_the_log(
    evidence_tree: EvidenceTree,
) -> None:
    """A pass claiming a week before its log time is verified but flagged (attestedAtSkew,
    the card's clock warning); by the log it is newer than a failure claimed after it."""
    backdated = evidence_tree.sign(
        attested_at="2026-08-25T12:00:00Z", logged_at="2026-09-01T12:00:00Z", passed=True
    )
    earlier = evidence_tree.sign(attested_at="2026-08-28T12:00:00Z", passed=False)
    backdated_path, earlier_path = evidence_tree.add(backdated, earlier)
    evidence_tree.write()

    evaluation = evaluate(evidence_tree.options().evaluation)

    pointers = by_path(evaluation.documents)
    flagged = pointers[backdated_path]
    assert flagged["verify"]["exit"] == 0
    assert flagged["attestedAtSkew"] == -(WEEK + 1)  # the log entry is 1 s after signing
    assert flagged["evidence"]["loggedAt"] == "2026-09-01T12:00:01Z"
    assert flagged["evidence"]["attestedAt"] == "2026-08-25T12:00:00Z"
    assert pointers[earlier_path]["attestedAtSkew"] is None

    latest = latest_per_signer(evaluation.board.runs)[ALICE.consensus_key]
    assert latest.bundle_digest == backdated.digest
    assert evaluation.build_time == "2026-09-01T12:00:01Z"  # not the newest claim (08-28)
    assert evaluation.documents["index"]["meta"]["generatedAt"] == "2026-09-01 12:00 UTC"

    from generator.site.cards import pointer_card
    from generator.site.pages import SiteModel

    documents = evaluation.documents
    model = SiteModel(
        documents["index"], documents["series"], documents["pointers"], documents["build_info"]
    )
    card = str(pointer_card(model, "recipes/x.md", flagged))
    assert 'data-attested-skew="-604801"' in card
    assert "7.0 days before the verified transparency-log time" in card
    honest = str(pointer_card(model, "recipes/x.md", pointers[earlier_path]))
    assert "data-attested-skew" not in honest
    # the site's own "latest evidence" of the signer follows the log too
    recipe = backdated.recipe_name
    assert [p["path"] for p in model.latest_evidence(recipe)] == [backdated_path]


def test_a_claim_after_the_fixed_build_time_is_rejected(evidence_tree: EvidenceTree) -> None:
    """With SOURCE_DATE_EPOCH, evidence claiming a time more than the tolerance after the
    build time is rejected, even though it agrees with its own log time."""
    late = evidence_tree.sign(attested_at="2026-09-10T12:00:00Z")
    early = evidence_tree.sign(attested_at="2026-09-01T12:00:00Z")
    late_path, early_path = evidence_tree.add(late, early)
    evidence_tree.write()

    build_epoch = _epoch("2026-09-05T00:00:00Z")
    evaluation = evaluate(evidence_tree.options(epoch=build_epoch).evaluation)

    pointers = by_path(evaluation.documents)
    assert failure_class(pointers[late_path]) == "time"
    assert (
        "after the build time 2026-09-05T00:00:00Z"
        in pointers[late_path]["verify"]["failureCause"]["detail"]
    )
    assert pointers[early_path]["verify"]["exit"] == 0
    assert evaluation.build_time == "2026-09-05T00:00:00Z"


def test_the_judgement_holds_for_cached_verdicts(evidence_tree: EvidenceTree) -> None:
    """A second build answered from the verdict cache judges the same (the cache keeps the raw
    verification and the log time; the time check runs after it)."""
    postdated = evidence_tree.sign(
        attested_at="2099-01-01T00:00:00Z", logged_at="2026-09-01T12:00:00Z"
    )
    honest = evidence_tree.sign(attested_at="2026-09-02T12:00:00Z")
    evidence_tree.add(postdated, honest)
    evidence_tree.write()
    options = evidence_tree.options("cached")

    first = evaluate(options.evaluation)
    second = evaluate(options.evaluation)

    assert second.documents == first.documents
    assert [failure_class(p) for p in second.documents["pointers"]["pointers"]] == [
        failure_class(p) for p in first.documents["pointers"]["pointers"]
    ]
    assert sorted(filter(None, map(failure_class, second.documents["pointers"]["pointers"]))) == [
        "time"
    ]


@pytest.mark.parametrize("rekor_v2", [False, True], ids=["integrated-time", "rfc3161"])
def test_the_verified_time_is_what_sigstore_verified(
    evidence_tree: EvidenceTree, authority: TestAuthority, rekor_v2: bool
) -> None:
    """The evidence carries the log's integrated time (Rekor v1) or the signed timestamp
    (Rekor v2), whatever attestedAt claims; it survives the verdict cache's round trip."""
    built = evidence_tree.sign(
        attested_at="2099-01-01T00:00:00Z", logged_at="2026-09-01T12:00:00Z", rekor_v2=rekor_v2
    )
    evidence_tree.add(built)
    recipes = evidence_tree.write()
    from generator.bundle.layout import OciLayoutSource
    from generator.bundle.types import Limits
    from generator.tree.pointer import parse_pointer

    trust = load_trust(root_file=recipes / "trust" / "trusted_root.json")
    path = next(iter(evidence_tree.pointers))
    pointer = parse_pointer((recipes / path).read_bytes(), file=path)
    parts = path.split("/")
    verdict = verify_pointer(
        pointer,
        PointerLocation(path, parts[1], parts[2]),
        OciLayoutSource(evidence_tree.layout, Limits()),
        trust,
    )
    assert isinstance(verdict, Verified)
    assert verdict.evidence.logged_at == "2026-09-01T12:00:01Z"
    assert verdict.evidence.attested_at == "2099-01-01T00:00:00Z"

    again = verdict_from_json(json.loads(json.dumps(verdict_to_json(verdict))))
    assert again == verdict
    old = verdict_to_json(verdict)
    del old["evidence"]["loggedAt"]  # a verdict cached before the log time was kept
    with pytest.raises(VerdictFormatError):
        verdict_from_json(old)

    from generator.verify.times import judge_time

    judged = judge_time(verdict, None)
    assert isinstance(judged, Rejected) and judged.cause.failure_class is FailureClass.TIME
    assert judged.signer == verdict.signer
    assert [s.status for s in judged.steps][3] == "failed"


def test_the_tolerance_is_a_day_either_way(evidence_tree: EvidenceTree) -> None:
    """Up to 24 hours of clock difference is neither flagged nor rejected; beyond, a claim
    before the log is flagged and a claim after it rejected."""
    from dataclasses import replace

    from tests._evidence_fakes import make_evidence, make_verified

    logged = "2026-09-01T12:00:00Z"
    base = make_verified(make_evidence(attested_at=logged), ALICE)

    def claiming(offset: int) -> Verified:
        moment = datetime.fromtimestamp(_epoch(logged) + offset, UTC)
        text = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
        evidence = replace(
            base.evidence,
            predicate={**base.evidence.predicate, "attestedAt": text},
            logged_at=logged,
        )
        return replace(base, evidence=evidence)

    from generator.verify.times import TOLERANCE_SECONDS, flagged_skew, judge_time

    for offset in (0, TOLERANCE_SECONDS, -TOLERANCE_SECONDS):
        assert judge_time(claiming(offset), None) == claiming(offset)
        assert flagged_skew(claiming(offset)) is None
    assert isinstance(judge_time(claiming(TOLERANCE_SECONDS + 1), None), Rejected)
    assert judge_time(claiming(-TOLERANCE_SECONDS - 1), None) == claiming(-TOLERANCE_SECONDS - 1)
    assert flagged_skew(claiming(-TOLERANCE_SECONDS - 1)) == -TOLERANCE_SECONDS - 1
    no_log = replace(base, evidence=replace(base.evidence, logged_at=None))
    rejected = judge_time(no_log, None)
    assert isinstance(rejected, Rejected) and rejected.cause.failure_class is FailureClass.TIME


def test_data_contract_documents_the_new_class() -> None:
    contract = (Path(__file__).resolve().parents[2] / "docs" / "data-contract.md").read_text(
        encoding="utf-8"
    )
    assert '"time"' in contract and '"internal"' in contract and "attestedAtSkew" in contract


def test_verify_of_one_pointer_judges_the_claim_too(evidence_tree: EvidenceTree) -> None:
    """`evidence-dashboard verify` of a postdated pointer answers invalid, class `time`."""
    from generator.build import verify_one

    built = evidence_tree.sign(attested_at="2099-01-01T00:00:00Z", logged_at="2026-09-01T12:00:00Z")
    (path,) = evidence_tree.add(built)
    recipes = evidence_tree.write()

    options = evidence_tree.options()
    result, text = verify_one(options.engine, options.clock, recipes / path)

    assert result["exit"] == 2
    assert result["failureCause"]["class"] == "time"
    assert "invalid - time: attestedAt 2099-01-01T00:00:00Z" in text
