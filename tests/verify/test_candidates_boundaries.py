"""Step 2's choice among signature candidates, with a fake signature check (the Sigstore check
itself is tested with real bundles elsewhere; here only what step 2 does with its answers):
which candidate wins, what the rows and the failure detail say, which signer is reported, and
the subject binding at its edges (a digest one hex digit away, upper case, empty)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import pytest

from generator.model import FailureClass, SignerIdentity, Verified
from generator.verify.pipeline import verify_materialized
from generator.verify.signature import SignatureFailure, SignatureOk
from generator.verify.trust import Trust, load_trust
from tests.verify.conftest import SIGNER, EvidenceCase
from tests.verify.test_pipeline import assert_failed_at

OTHER_SIGNER = SignerIdentity(SIGNER.issuer, SIGNER.identity.replace("main", "other"))


class FakeCheck:
    """Answers per candidate bundle bytes: a `SignatureOk` to return or a failure to raise."""

    def __init__(self, answers: Mapping[bytes, SignatureOk | SignatureFailure]) -> None:
        self.answers = answers
        self.asked: list[bytes] = []

    def __call__(
        self, bundle_json: bytes, trust: Trust, *, expected: Any, rekor_log_index: Any
    ) -> SignatureOk:
        self.asked.append(bundle_json)
        answer = self.answers[bundle_json]
        if isinstance(answer, SignatureFailure):
            raise answer
        return answer


def _ok(case: EvidenceCase, **changes: Any) -> SignatureOk:
    fields: dict[str, Any] = {
        "signer": SIGNER,
        "log_index": 7,
        "statement": case.statement,
        "rekor_v2": False,
        "logged_at": None,
    }
    fields.update(changes)
    return SignatureOk(**fields)


def _verify(case: EvidenceCase, answers: dict[bytes, SignatureOk | SignatureFailure]) -> Any:
    pointer, location = case.pointer()
    materialized = case.materialized(*answers)
    return verify_materialized(
        pointer,
        location,
        materialized,
        load_trust(offline=True),
        signature_verifier=FakeCheck(answers),
    )


def _ref(bundle: bytes) -> str:
    return "sha256:" + hashlib.sha256(bundle).hexdigest()


def _rows(verdict: Any) -> dict[str, str]:
    return {r.key: r.value for r in verdict.steps[1].sub_rows}


def test_a_single_verifying_candidate_reports_its_signature_facts() -> None:
    case = EvidenceCase().seal()
    verdict = _verify(case, {b"one": _ok(case, logged_at="2026-09-19T03:00:00Z")})
    assert isinstance(verdict, Verified)
    rows = _rows(verdict)
    assert rows["signer.identity"] == SIGNER.identity
    assert rows["signer.issuer"] == SIGNER.issuer
    assert rows["rekorLogIndex"] == "7"
    assert rows["tlog"] == "rekor v1 (inclusion proof + promise)"
    assert rows["pointer signer"] == "none claimed; certificate identity reported"
    assert "signature candidate" not in rows
    assert rows["trust root"].endswith("(not refreshed)")
    assert verdict.evidence.logged_at == "2026-09-19T03:00:00Z"
    assert verdict.rekor_log_index == 7


def test_a_rekor_v2_entry_without_log_index_says_so() -> None:
    case = EvidenceCase().seal()
    verdict = _verify(case, {b"one": _ok(case, log_index=None, rekor_v2=True)})
    rows = _rows(verdict)
    assert rows["rekorLogIndex"] == "(none)"
    assert rows["tlog"] == "rekor v2 (inclusion proof + timestamp)"
    assert verdict.evidence.logged_at is None


def test_the_first_verifying_candidate_wins_and_the_rejected_ones_are_listed() -> None:
    case = EvidenceCase().seal()
    answers: dict[bytes, SignatureOk | SignatureFailure] = {
        b"bad": SignatureFailure("certificate expired", signer=OTHER_SIGNER),
        b"good": _ok(case),
        b"later": _ok(case, signer=OTHER_SIGNER),
    }
    verdict = _verify(case, answers)
    assert isinstance(verdict, Verified) and verdict.signer == SIGNER
    rows = _rows(verdict)
    assert rows["signature candidate"] == f"{_ref(b'good')} (2 of 3)"
    assert rows[f"rejected candidate {_ref(b'bad')}"] == "certificate expired"


def test_one_failing_candidate_is_reported_as_it_failed() -> None:
    case = EvidenceCase().seal()
    verdict = _verify(case, {b"bad": SignatureFailure("bad signature", hint="re-sign")})
    assert_failed_at(verdict, 2, FailureClass.SIGNATURE)
    assert verdict.cause.detail == "bad signature"
    assert verdict.cause.hint == "re-sign"
    assert verdict.steps[1].sub_rows == ()


def test_several_failing_candidates_name_the_count_the_first_and_the_first_hint() -> None:
    case = EvidenceCase().seal()
    answers: dict[bytes, SignatureOk | SignatureFailure] = {
        b"a": SignatureFailure("first problem", signer=OTHER_SIGNER),
        b"b": SignatureFailure("second problem", hint="the hint", signer=SIGNER),
    }
    verdict = _verify(case, answers)
    assert_failed_at(verdict, 2, FailureClass.SIGNATURE)
    assert verdict.cause.detail == "none of 2 signature candidates verified; first: first problem"
    assert verdict.cause.hint == "the hint"
    assert _rows(verdict) == {_ref(b"a"): "first problem", _ref(b"b"): "second problem"}
    assert verdict.signer == OTHER_SIGNER  # the first certificate that could be read


def test_a_failure_without_a_signer_leaves_the_next_ones_signer_to_report() -> None:
    case = EvidenceCase().seal()
    answers: dict[bytes, SignatureOk | SignatureFailure] = {
        b"a": SignatureFailure("unreadable"),
        b"b": SignatureFailure("wrong identity", signer=OTHER_SIGNER),
    }
    verdict = _verify(case, answers)
    assert verdict.signer == OTHER_SIGNER


def _flip_last(hex_text: str) -> str:
    return hex_text[:-1] + ("0" if hex_text[-1] != "0" else "1")


@pytest.mark.parametrize(
    ("subject", "detail"),
    [
        ("", "has no sha256 digest"),
        (None, "has no sha256 digest"),
        ("upper", "is not 64 lowercase hex"),
        ("short", "is not 64 lowercase hex"),
        ("last-digit", "does not match pulled artifact digest"),
    ],
)
def test_the_signed_subject_must_be_the_pulled_digest_exactly(
    subject: str | None, detail: str
) -> None:
    case = EvidenceCase().seal()
    pulled = str(case.digest).removeprefix("sha256:")
    value = {
        "": "",
        None: None,
        "upper": pulled.upper(),
        "short": pulled[:-1],
        "last-digit": _flip_last(pulled),
    }[subject]
    statement = dict(case.statement)
    statement["subject"] = [{"name": "x", "digest": {"sha256": value}}]
    verdict = _verify(case, {b"one": _ok(case, statement=statement)})
    assert_failed_at(verdict, 2, FailureClass.SIGNATURE)
    assert detail in verdict.cause.detail


def test_a_statement_without_subjects_is_refused() -> None:
    case = EvidenceCase().seal()
    statement = dict(case.statement, subject=[])
    verdict = _verify(case, {b"one": _ok(case, statement=statement)})
    assert_failed_at(verdict, 2, FailureClass.SIGNATURE)
    assert "has no sha256 digest" in verdict.cause.detail


def test_a_signed_statement_of_an_unknown_type_is_refused_at_step_two() -> None:
    case = EvidenceCase().seal()
    statement = dict(case.statement, predicateType="https://example.com/other")
    verdict = _verify(case, {b"one": _ok(case, statement=statement)})
    assert_failed_at(verdict, 2, FailureClass.SIGNATURE)
    assert "unexpected predicateType" in verdict.cause.detail


def test_of_two_candidates_the_row_names_which_one_verified() -> None:
    """Two is already "several": the winning candidate is named, with its rank."""
    case = EvidenceCase().seal()
    answers: dict[bytes, SignatureOk | SignatureFailure] = {
        b"bad": SignatureFailure("certificate expired"),
        b"good": _ok(case),
    }
    verdict = _verify(case, answers)
    assert isinstance(verdict, Verified)
    assert _rows(verdict)["signature candidate"] == f"{_ref(b'good')} (2 of 2)"


def test_a_verified_bundle_has_its_five_steps_in_order_with_step_two_passed() -> None:
    from generator.model import StepStatus

    case = EvidenceCase().seal()
    verdict = _verify(case, {b"one": _ok(case)})
    assert isinstance(verdict, Verified)
    assert [s.step for s in verdict.steps] == [1, 2, 3, 4, 5]
    assert verdict.steps[1].status is StepStatus.PASSED
    assert verdict.steps[1].detail.startswith("signature verified; signed by ")


def test_the_subject_rows_of_a_verified_bundle_bind_it_to_the_pointer_beyond_aicr() -> None:
    case = EvidenceCase().seal()
    verdict = _verify(case, {b"one": _ok(case)})
    rows = {r.key: (r.value, r.beyond_aicr) for r in verdict.steps[1].sub_rows}
    assert rows["subject"] == (f"{case.digest} (pulled artifact digest)", False)
    assert rows["subject = pointer bundle.digest"] == ("yes", True)


def test_candidates_that_all_fail_without_a_hint_give_no_invented_hint() -> None:
    case = EvidenceCase().seal()
    answers: dict[bytes, SignatureOk | SignatureFailure] = {
        b"a": SignatureFailure("first problem"),
        b"b": SignatureFailure("second problem"),
    }
    verdict = _verify(case, answers)
    assert_failed_at(verdict, 2, FailureClass.SIGNATURE)
    assert verdict.cause.hint == ""


def _v2_statement(case: EvidenceCase, **predicate_changes: Any) -> dict[str, Any]:
    from generator.model import PredicateType

    predicate = dict(case.statement["predicate"], **predicate_changes)
    return dict(case.statement, predicateType=PredicateType.V2.value, predicate=predicate)


@pytest.mark.parametrize(
    ("statement_of", "detail"),
    [
        (lambda c: dict(c.statement, predicateType=5), "unexpected predicateType 5"),
        (lambda c: dict(c.statement, predicate="text"), "statement has no predicate object"),
        (
            lambda c: _v2_statement(c, profile={"selection": 5}),
            "predicate profile.selection 5 is not name=value",
        ),
        (
            lambda c: _v2_statement(c, profile={"selection": "no-equals-sign"}),
            "predicate profile.selection 'no-equals-sign' is not name=value",
        ),
    ],
    ids=["type-not-a-string", "predicate-not-an-object", "selection-a-number", "selection-no-eq"],
)
def test_a_signed_statement_that_is_not_coherent_is_refused_at_step_two(
    statement_of: Any, detail: str
) -> None:
    """The signed statement's coherence is part of step 2: a verified signature over an
    incoherent statement never reaches the predicate steps."""
    case = EvidenceCase().seal()
    verdict = _verify(case, {b"one": _ok(case, statement=statement_of(case))})
    assert_failed_at(verdict, 2, FailureClass.SIGNATURE)
    assert verdict.cause.detail == detail
