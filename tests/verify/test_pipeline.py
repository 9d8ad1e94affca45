"""aicr's five steps through `verify_pointer`: outcomes, failing step and failure class."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from generator.bundle.types import BundleFetchError, policy_error, status_error, transient_error
from generator.model import (
    FailureCause,
    FailureClass,
    NoVerdict,
    Pending,
    Phase,
    PredicateType,
    Rejected,
    SignerIdentity,
    StepStatus,
    Verified,
    VerifyExit,
)
from generator.verify.pipeline import (
    POLICY_EXCLUDED_DETAIL,
    classify,
    merge_cause,
    verify_materialized,
    verify_pointer,
)
from generator.verify.serialize import result_exit
from generator.verify.trust import Trust, load_trust
from tests.verify.conftest import (
    OTHER,
    SIGNED_AT,
    SIGNER,
    EvidenceCase,
    FakeSource,
    first_log_index,
)


def run(
    case: EvidenceCase,
    trust: Trust | None = None,
    *bundles: bytes,
    signer: SignerIdentity | None = None,
    log_index: int | None = None,
    **pointer_overrides: Any,
) -> Any:
    pointer, location = case.pointer(signer=signer, log_index=log_index, **pointer_overrides)
    source = FakeSource(case.materialized(*bundles))
    return verify_pointer(pointer, location, source, trust or load_trust(offline=True))


def assert_failed_at(verdict: Any, step: int, failure_class: FailureClass) -> None:
    assert isinstance(verdict, Rejected | NoVerdict), verdict
    assert [s.step for s in verdict.steps] == [1, 2, 3, 4, 5]
    assert verdict.steps[step - 1].status in (StepStatus.FAILED, StepStatus.SKIPPED)
    assert all(
        s.status is StepStatus.PASSED
        for s in verdict.steps[: step - 1]
        if s.step != 2 or s.status is not StepStatus.SKIPPED
    )
    assert all(s.status is StepStatus.SKIPPED for s in verdict.steps[step:4])
    assert verdict.steps[4].status is StepStatus.INFORMATIONAL
    assert verdict.cause.failure_class is failure_class, verdict.cause


def reseal_statement(case: EvidenceCase) -> None:
    case.files["statement.intoto.json"] = case.statement_bytes()


def rewrite_manifest(case: EvidenceCase, manifest: dict[str, Any]) -> None:
    data = (json.dumps(manifest, indent=2) + "\n").encode()
    case.files["manifest.json"] = data
    case.predicate["manifest"]["digest"] = "sha256:" + hashlib.sha256(data).hexdigest()
    reseal_statement(case)


# --------------------------------------------------------------------------- pending (unsigned)


def test_unsigned_without_claimed_signer_is_pending(case: EvidenceCase) -> None:
    verdict = run(case)
    assert isinstance(verdict, Pending)
    statuses = [s.status for s in verdict.steps]
    assert statuses == [
        StepStatus.PASSED,
        StepStatus.SKIPPED,
        StepStatus.PASSED,
        StepStatus.PASSED,
        StepStatus.INFORMATIONAL,
    ]
    assert "pending signature" in verdict.steps[1].detail
    assert "unsigned statement.intoto.json" in verdict.steps[2].detail
    ev = verdict.evidence
    assert ev.bundle_digest == case.digest
    assert set(ev.ctrf) == {Phase.DEPLOYMENT, Phase.CONFORMANCE}
    assert [t.name for t in ev.ctrf[Phase.DEPLOYMENT].tests] == [
        "gpu-operator-healthy",
        "dra-ready",
    ]
    assert ev.recipe["kind"] == "RecipeResult"
    assert ev.snapshot == {"kind": "Snapshot", "nodes": 4}
    assert ev.bom is not None and len(ev.bom["components"]) == 2
    assert ev.recipe_yaml == case.recipe_yaml
    assert result_exit(verdict) is VerifyExit.VALID
    beyond = [r for r in verdict.steps[3].sub_rows if r.beyond_aicr]
    assert {r.key for r in beyond} >= {
        "bom.digest",
        "bom.imageCount",
        "manifest.fileCount",
        "predicate.schemaVersion",
        "pointer attestedAt",
        "pointer file name",
        "criteriaMatch",
    }


def test_unsigned_with_phase_failures_is_exit_one_not_pending() -> None:
    case = EvidenceCase().seal(failed=2)
    verdict = run(case)
    assert isinstance(verdict, Pending)
    assert result_exit(verdict) is VerifyExit.VALID_WITH_FAILURES


def test_unsigned_but_pointer_claims_signer(case: EvidenceCase) -> None:
    verdict = run(case, None, signer=SIGNER)
    assert_failed_at(verdict, 2, FailureClass.SIGNATURE)
    assert "carries no signature" in verdict.cause.detail


# --------------------------------------------------------------------------- step 1


def test_pulled_digest_must_equal_pointer_digest(case: EvidenceCase) -> None:
    pointer, location = case.pointer()
    mat = case.materialized()
    mat.digest = "sha256:" + "1" * 64  # type: ignore[assignment]
    verdict = verify_pointer(pointer, location, FakeSource(mat), load_trust(offline=True))
    assert_failed_at(verdict, 1, FailureClass.UNKNOWN)
    assert "does not match pulled digest" in verdict.cause.detail


def test_tag_only_and_unpushed_pointers(case: EvidenceCase) -> None:
    from generator.model import BundleRef

    for bundle in (
        BundleRef("ghcr.io/acme/e:tag", None, PredicateType.V3),
        BundleRef("", None, PredicateType.V3),
    ):
        pointer, location = case.pointer(bundle=bundle)
        source = FakeSource(case.materialized())
        verdict = verify_pointer(pointer, location, source, load_trust(offline=True))
        assert_failed_at(verdict, 1, FailureClass.UNKNOWN)
        assert source.asked == []


FETCH_TABLE: list[tuple[str, Callable[[], BundleFetchError], type, FailureClass, int | None]] = [
    (
        "401",
        lambda: status_error(401, "manifest", url="u"),
        Rejected,
        FailureClass.REGISTRY_FORBIDDEN,
        401,
    ),
    (
        "403",
        lambda: status_error(403, "manifest", url="u"),
        Rejected,
        FailureClass.REGISTRY_FORBIDDEN,
        403,
    ),
    ("404", lambda: status_error(404, "manifest", url="u"), Rejected, FailureClass.NOT_FOUND, 404),
    ("400", lambda: status_error(400, "manifest", url="u"), Rejected, FailureClass.REGISTRY, 400),
    ("429", lambda: status_error(429, "manifest", url="u"), NoVerdict, FailureClass.TRANSIENT, 429),
    ("503", lambda: status_error(503, "manifest", url="u"), NoVerdict, FailureClass.TRANSIENT, 503),
    (
        "timeout",
        lambda: transient_error("timed out", url="u"),
        NoVerdict,
        FailureClass.TRANSIENT,
        None,
    ),
    (
        "policy",
        lambda: policy_error("evil.example/x", ("ghcr.io/acme",)),
        NoVerdict,
        FailureClass.REGISTRY,
        None,
    ),
]


@pytest.mark.parametrize(
    ("name", "error", "kind", "failure_class", "status"),
    FETCH_TABLE,
    ids=[r[0] for r in FETCH_TABLE],
)
def test_fetch_failures(
    case: EvidenceCase,
    name: str,
    error: Callable[[], BundleFetchError],
    kind: type,
    failure_class: FailureClass,
    status: int | None,
) -> None:
    pointer, location = case.pointer()
    verdict = verify_pointer(pointer, location, FakeSource(error()), load_trust(offline=True))
    assert isinstance(verdict, kind)
    assert_failed_at(verdict, 1, failure_class)
    assert verdict.cause.http_status == status
    if name == "policy":
        assert verdict.cause.detail == POLICY_EXCLUDED_DETAIL
        assert verdict.steps[0].status is StepStatus.SKIPPED
    else:
        assert verdict.steps[0].status is StepStatus.FAILED


# --------------------------------------------------------------------------- step 3


def test_pointer_recipe_must_equal_predicate(case: EvidenceCase) -> None:
    verdict = run(case, None, recipe="h100-eks-ubuntu-inference-kubeflow")
    assert_failed_at(verdict, 3, FailureClass.SCHEMA)


def test_pointer_predicate_type_must_equal_statement(case: EvidenceCase) -> None:
    from generator.model import BundleRef

    pointer, _ = case.pointer()
    bundle = BundleRef(pointer.bundle.oci, pointer.bundle.digest, PredicateType.V1)
    verdict = run(case, None, bundle=bundle)
    assert_failed_at(verdict, 3, FailureClass.SCHEMA)
    assert any(r.beyond_aicr for r in verdict.steps[2].sub_rows)


@pytest.mark.parametrize(
    ("ptype", "profile", "ok"),
    [
        ("https://aicr.nvidia.com/recipe-evidence/v1", None, False),
        (PredicateType.V1.value, {"selection": "a=b", "policyDescriptorIdentity": "e" * 64}, False),
        (PredicateType.V2.value, None, False),
        (
            PredicateType.V2.value,
            {"selection": "a = b", "policyDescriptorIdentity": "e" * 64},
            False,
        ),
        (PredicateType.V3.value, {"selection": "a=b", "policyDescriptorIdentity": ""}, False),
        (PredicateType.V3.value, None, True),
    ],
    ids=["unknown", "v1-with-profile", "v2-without", "v2-bad-selection", "v3-empty-pdi", "v3-none"],
)
def test_predicate_type_coherence_unsigned(
    case: EvidenceCase, ptype: str, profile: dict[str, Any] | None, ok: bool
) -> None:
    case.statement["predicateType"] = ptype
    if profile is not None:
        case.predicate["profile"] = profile
    reseal_statement(case)
    verdict = run(case)
    if ok:
        assert isinstance(verdict, Pending)
    else:
        assert_failed_at(verdict, 3, FailureClass.SCHEMA)


# --------------------------------------------------------------------------- step 4


def _tamper_file(case: EvidenceCase) -> None:
    case.files["ctrf/deployment.json"] += b" "


def _missing_file(case: EvidenceCase) -> None:
    del case.files["snapshot.yaml"]


def _stray_file(case: EvidenceCase) -> None:
    case.files["extra/notes.txt"] = b"unsigned"


def _manifest_edit(case: EvidenceCase) -> None:
    case.files["manifest.json"] += b"\n"


def _traversal(case: EvidenceCase) -> None:
    manifest = json.loads(case.files["manifest.json"])
    manifest["files"].append({"path": "../escape", "size": 1, "sha256": "sha256:" + "0" * 64})
    rewrite_manifest(case, manifest)


def _absolute(case: EvidenceCase) -> None:
    manifest = json.loads(case.files["manifest.json"])
    manifest["files"][0]["path"] = "/" + manifest["files"][0]["path"]
    rewrite_manifest(case, manifest)


def _size(case: EvidenceCase) -> None:
    manifest = json.loads(case.files["manifest.json"])
    manifest["files"][0]["size"] += 1
    rewrite_manifest(case, manifest)


def _ctrf_digest(case: EvidenceCase) -> None:
    case.predicate["phases"]["deployment"]["ctrfDigest"] = "sha256:" + "a" * 64
    reseal_statement(case)


def _unknown_phase(case: EvidenceCase) -> None:
    case.predicate["phases"]["readiness"] = case.predicate["phases"]["deployment"]
    reseal_statement(case)


def _recipe_digest(case: EvidenceCase) -> None:
    case.predicate["recipe"]["digest"] = "b" * 64
    reseal_statement(case)


def _manifest_version(case: EvidenceCase) -> None:
    manifest = json.loads(case.files["manifest.json"])
    manifest["schemaVersion"] = "2.0.0"
    rewrite_manifest(case, manifest)


def _profile_without_selected(case: EvidenceCase) -> None:
    case.predicate["profile"] = {
        "selection": "gpuStack=operator-managed",
        "policyDescriptorIdentity": "e" * 64,
    }
    reseal_statement(case)


# beyond aicr
def _bom_digest(case: EvidenceCase) -> None:
    case.predicate["bom"]["digest"] = "sha256:" + "c" * 64
    reseal_statement(case)


def _bom_count(case: EvidenceCase) -> None:
    case.predicate["bom"]["imageCount"] = 3
    reseal_statement(case)


def _file_count(case: EvidenceCase) -> None:
    case.predicate["manifest"]["fileCount"] = 99
    reseal_statement(case)


def _schema_version(case: EvidenceCase) -> None:
    case.predicate["schemaVersion"] = "2.0.0"
    reseal_statement(case)


def _attested_at(case: EvidenceCase) -> None:
    case.predicate["attestedAt"] = "2026-09-19T02:57:40Z"
    reseal_statement(case)


def _criteria_inconsistent(case: EvidenceCase) -> None:
    case.predicate["criteriaMatch"]["perDimension"][0]["match"] = "mismatched"
    reseal_statement(case)


INTEGRITY_TABLE: list[tuple[str, Callable[[EvidenceCase], None], bool]] = [
    ("file-modified", _tamper_file, False),
    ("file-missing", _missing_file, False),
    ("stray-file", _stray_file, False),
    ("manifest-edited", _manifest_edit, False),
    ("traversal-path", _traversal, False),
    ("absolute-path", _absolute, False),
    ("size-mismatch", _size, False),
    ("ctrf-digest", _ctrf_digest, False),
    ("unknown-phase", _unknown_phase, False),
    ("recipe-digest", _recipe_digest, False),
    ("manifest-schema-version", _manifest_version, False),
    ("profile-without-selected-profile", _profile_without_selected, False),
    ("bom-digest", _bom_digest, True),
    ("bom-image-count", _bom_count, True),
    ("manifest-file-count", _file_count, True),
    ("predicate-schema-version", _schema_version, True),
    ("pointer-attested-at", _attested_at, True),
    ("criteria-inconsistent", _criteria_inconsistent, True),
]


@pytest.mark.parametrize(
    ("name", "tamper", "beyond"), INTEGRITY_TABLE, ids=[r[0] for r in INTEGRITY_TABLE]
)
def test_integrity_tamper(
    case: EvidenceCase, name: str, tamper: Callable[[EvidenceCase], None], beyond: bool
) -> None:
    assert isinstance(run(case), Pending)  # the untampered case passes
    tamper(case)
    verdict = run(case)
    assert_failed_at(verdict, 4, FailureClass.INTEGRITY)
    failing_beyond = "beyond aicr failed" in verdict.cause.detail
    assert failing_beyond is beyond
    if beyond:
        assert any(r.beyond_aicr for r in verdict.steps[3].sub_rows)


def test_pointer_file_name_must_be_the_digest(case: EvidenceCase) -> None:
    from generator.model import PointerLocation

    pointer, location = case.pointer()
    wrong = PointerLocation(
        location.path.rsplit("/", 1)[0] + "/sha256-" + "f" * 64 + ".yaml",
        location.folder_recipe,
        location.folder_source,
    )
    verdict = verify_pointer(
        pointer, wrong, FakeSource(case.materialized()), load_trust(offline=True)
    )
    assert_failed_at(verdict, 4, FailureClass.INTEGRITY)
    assert "pointer file name" in verdict.cause.detail


def test_criteria_mismatch_is_flagged_not_failed(case: EvidenceCase) -> None:
    case.predicate["criteriaMatch"]["matched"] = False
    case.predicate["criteriaMatch"]["perDimension"][0]["match"] = "mismatched"
    reseal_statement(case)
    verdict = run(case)
    assert isinstance(verdict, Pending)
    row = next(r for r in verdict.steps[3].sub_rows if r.key == "criteriaMatch")
    assert row.beyond_aicr and "mismatched: service" in row.value


def test_profile_binding(tmp_path: Any) -> None:
    from tests.verify.conftest import PROFILE_RECIPE_YAML

    case = EvidenceCase(recipe_yaml=PROFILE_RECIPE_YAML).seal()
    assert case.profile == "gpuStack=operator-managed"
    assert isinstance(run(case), Pending)
    verdict = run(case, None, profile=None)
    assert_failed_at(verdict, 4, FailureClass.INTEGRITY)
    case.predicate["profile"]["selection"] = "gpuStack=bundle-installer"
    reseal_statement(case)
    assert_failed_at(run(case), 4, FailureClass.INTEGRITY)


# --------------------------------------------------------------------------- classification


CLASSIFY_TABLE = [
    (1, 401, False, False, FailureClass.REGISTRY_FORBIDDEN),
    (1, 403, False, False, FailureClass.REGISTRY_FORBIDDEN),
    (1, 404, False, False, FailureClass.NOT_FOUND),
    (1, 429, False, False, FailureClass.TRANSIENT),
    (1, 500, False, False, FailureClass.TRANSIENT),
    (1, 418, False, False, FailureClass.REGISTRY),
    (2, 404, False, False, FailureClass.NOT_FOUND),
    (1, None, False, True, FailureClass.CANCELED),
    (4, None, True, True, FailureClass.CANCELED),
    (4, None, True, False, FailureClass.TRANSIENT),
    (1, None, False, False, FailureClass.UNKNOWN),
    (2, None, False, False, FailureClass.SIGNATURE),
    (3, None, False, False, FailureClass.SCHEMA),
    (4, None, False, False, FailureClass.INTEGRITY),
    (5, None, False, False, FailureClass.UNKNOWN),
]


@pytest.mark.parametrize(("step", "status", "transient", "canceled", "expected"), CLASSIFY_TABLE)
def test_classify(
    step: int, status: int | None, transient: bool, canceled: bool, expected: FailureClass
) -> None:
    assert classify(step, http_status=status, transient=transient, canceled=canceled) is expected


def _cause(cls: FailureClass) -> FailureCause:
    return FailureCause(cls, cls.value, "")


@pytest.mark.parametrize(
    ("first", "second", "winner"),
    [
        (None, FailureClass.SIGNATURE, FailureClass.SIGNATURE),
        (FailureClass.INTEGRITY, FailureClass.SIGNATURE, FailureClass.INTEGRITY),
        (FailureClass.TRANSIENT, FailureClass.INTEGRITY, FailureClass.INTEGRITY),
        (FailureClass.CANCELED, FailureClass.SCHEMA, FailureClass.SCHEMA),
        (FailureClass.TRANSIENT, FailureClass.CANCELED, FailureClass.TRANSIENT),
        (FailureClass.SIGNATURE, FailureClass.TRANSIENT, FailureClass.SIGNATURE),
    ],
)
def test_merge_cause(
    first: FailureClass | None, second: FailureClass, winner: FailureClass
) -> None:
    current = _cause(first) if first else None
    assert merge_cause(current, _cause(second)).failure_class is winner


# --------------------------------------------------------------------------- signed bundles


def sign(
    authority: Any,
    statement: dict[str, Any] | bytes,
    *,
    signer: SignerIdentity = SIGNER,
    rekor_v2: bool = False,
    **kwargs: Any,
) -> bytes:
    payload = statement if isinstance(statement, bytes) else json.dumps(statement).encode()
    return authority.sign_dsse(
        payload, signer=signer, signed_at=SIGNED_AT, rekor_v2=rekor_v2, **kwargs
    )


@pytest.mark.parametrize("rekor_v2", [False, True], ids=["rekor-v1", "rekor-v2"])
def test_signed_bundle_verifies(case: EvidenceCase, authority_trust: Any, rekor_v2: bool) -> None:
    authority, trust = authority_trust
    bundle = sign(authority, case.statement, rekor_v2=rekor_v2)
    index = first_log_index(bundle)
    verdict = run(case, trust, bundle, signer=SIGNER, log_index=index or None)
    assert isinstance(verdict, Verified), verdict
    assert verdict.signer == SIGNER
    assert verdict.rekor_log_index == (index or None)
    assert verdict.log_url is None  # a private test root never links to a public log
    assert [s.status for s in verdict.steps] == [StepStatus.PASSED] * 4 + [StepStatus.INFORMATIONAL]
    assert "verified DSSE payload" in verdict.steps[2].detail
    assert verdict.exit is VerifyExit.VALID
    if not rekor_v2:
        assert index >= 100_000_000  # the global (sharded) index, not the tree index


def test_signed_with_phase_failures_is_exit_one(authority_trust: Any) -> None:
    authority, trust = authority_trust
    case = EvidenceCase().seal(failed=1)
    verdict = run(case, trust, sign(authority, case.statement), signer=SIGNER)
    assert isinstance(verdict, Verified) and verdict.exit is VerifyExit.VALID_WITH_FAILURES


def test_no_claimed_signer_reports_certificate_identity(
    case: EvidenceCase, authority_trust: Any
) -> None:
    authority, trust = authority_trust
    verdict = run(case, trust, sign(authority, case.statement, signer=OTHER))
    assert isinstance(verdict, Verified)
    assert verdict.signer == OTHER
    assert any(r.key == "pointer signer" for r in verdict.steps[1].sub_rows)


def test_candidate_matching_the_claims_is_chosen(case: EvidenceCase, authority_trust: Any) -> None:
    authority, trust = authority_trust
    other = sign(authority, case.statement, signer=OTHER)
    good = sign(authority, case.statement)
    verdict = run(case, trust, other, good, signer=SIGNER, log_index=first_log_index(good))
    assert isinstance(verdict, Verified) and verdict.signer == SIGNER
    # claiming the other signer's log index with our identity matches neither
    verdict = run(case, trust, other, good, signer=SIGNER, log_index=first_log_index(other))
    assert_failed_at(verdict, 2, FailureClass.SIGNATURE)
    assert "none of 2 signature candidates" in verdict.cause.detail


def test_at_most_eight_candidates_are_tried(case: EvidenceCase, authority_trust: Any) -> None:
    authority, trust = authority_trust
    others = [sign(authority, case.statement, signer=OTHER) for _ in range(8)]
    good = sign(authority, case.statement)
    verdict = run(case, trust, *others, good, signer=SIGNER)
    assert_failed_at(verdict, 2, FailureClass.SIGNATURE)
    assert isinstance(verdict, Rejected) and verdict.signer == OTHER
    assert isinstance(run(case, trust, *others[:7], good, signer=SIGNER), Verified)


def test_verify_materialized_matches_verify_pointer(
    case: EvidenceCase, authority_trust: Any
) -> None:
    authority, trust = authority_trust
    bundle = sign(authority, case.statement)
    pointer, location = case.pointer(signer=SIGNER)
    direct = verify_materialized(pointer, location, case.materialized(bundle), trust)
    fetched = verify_pointer(pointer, location, FakeSource(case.materialized(bundle)), trust)
    assert direct == fetched and isinstance(direct, Verified)


# ---- sigstore-offline.md section 6 tamper cases, each through verify_pointer


def _json(bundle: bytes) -> dict[str, Any]:
    return json.loads(bundle)


def _dump(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc).encode()


def _entry(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["verificationMaterial"]["tlogEntries"][0]


def _edit(bundle: bytes, fn: Callable[[dict[str, Any]], None]) -> bytes:
    doc = _json(bundle)
    fn(doc)
    return _dump(doc)


def _flip_b64(value: str) -> str:
    raw = bytearray(base64.b64decode(value))
    raw[0] ^= 1
    return base64.b64encode(bytes(raw)).decode()


def _t_payload(a: Any, c: EvidenceCase) -> tuple[bytes, dict[str, Any]]:
    def fn(d: dict[str, Any]) -> None:
        st = json.loads(base64.b64decode(d["dsseEnvelope"]["payload"]))
        st["predicate"]["aicrVersion"] = "v9.9.9"
        d["dsseEnvelope"]["payload"] = base64.b64encode(json.dumps(st).encode()).decode()

    return _edit(sign(a, c.statement), fn), {}


def _simple(fn: Callable[[dict[str, Any]], None], **sign_kwargs: Any) -> Callable[..., Any]:
    def make(a: Any, c: EvidenceCase) -> tuple[bytes, dict[str, Any]]:
        return _edit(sign(a, c.statement, **sign_kwargs), fn), {}

    return make


def _t_leaf_swap(a: Any, c: EvidenceCase) -> tuple[bytes, dict[str, Any]]:
    other = _json(sign(a, c.statement))
    doc = _json(sign(a, c.statement))
    doc["verificationMaterial"]["certificate"] = other["verificationMaterial"]["certificate"]
    return _dump(doc), {}


def _t_staple(a: Any, c: EvidenceCase) -> tuple[bytes, dict[str, Any]]:
    other = _json(sign(a, c.statement))
    doc = _json(sign(a, c.statement))
    doc["verificationMaterial"]["tlogEntries"] = other["verificationMaterial"]["tlogEntries"]
    return _dump(doc), {}


def _t_two_entries(a: Any, c: EvidenceCase) -> tuple[bytes, dict[str, Any]]:
    doc = _json(sign(a, c.statement))
    entries = doc["verificationMaterial"]["tlogEntries"]
    entries.append(entries[0])
    return _dump(doc), {}


def _t_two_sigs(a: Any, c: EvidenceCase) -> tuple[bytes, dict[str, Any]]:
    doc = _json(sign(a, c.statement))
    sigs = doc["dsseEnvelope"]["signatures"]
    sigs.append(sigs[0])
    return _dump(doc), {}


def _t_other_ts(a: Any, c: EvidenceCase) -> tuple[bytes, dict[str, Any]]:
    other = _json(sign(a, c.statement, rekor_v2=True))
    doc = _json(sign(a, c.statement, rekor_v2=True))
    doc["verificationMaterial"]["timestampVerificationData"] = other["verificationMaterial"][
        "timestampVerificationData"
    ]
    return _dump(doc), {}


def _rogue(**authority_kwargs: Any) -> Callable[..., Any]:
    def make(a: Any, c: EvidenceCase) -> tuple[bytes, dict[str, Any]]:
        from generator.testing.authority import TestAuthority

        seed = authority_kwargs.pop("seed", a.seed)
        rogue = TestAuthority(seed, name=a.name, shard_offset=a.shard_offset, **authority_kwargs)
        authority_kwargs["seed"] = seed
        return sign(rogue, c.statement, rekor_v2="tsa_seed" in authority_kwargs), {}

    return make


def _statement_edit(fn: Callable[[dict[str, Any]], None]) -> Callable[..., Any]:
    def make(a: Any, c: EvidenceCase) -> tuple[bytes, dict[str, Any]]:
        statement = json.loads(json.dumps(c.statement))
        fn(statement)
        return sign(a, statement), {}

    return make


def _wrong_claim(claim: SignerIdentity) -> Callable[..., Any]:
    def make(a: Any, c: EvidenceCase) -> tuple[bytes, dict[str, Any]]:
        return sign(a, c.statement), {"signer": claim}

    return make


def _t_log_index_claim(a: Any, c: EvidenceCase) -> tuple[bytes, dict[str, Any]]:
    bundle = sign(a, c.statement)
    return bundle, {"log_index": first_log_index(bundle) + 1}


def _t_v2_index(a: Any, c: EvidenceCase) -> tuple[bytes, dict[str, Any]]:
    def fn(d: dict[str, Any]) -> None:
        _entry(d)["logIndex"] = str(int(_entry(d)["logIndex"]) + 7)

    return _edit(sign(a, c.statement, rekor_v2=True), fn), {}


def _set_subject(st: dict[str, Any]) -> None:
    st["subject"][0]["digest"]["sha256"] = "d" * 64


def _set_ptype(st: dict[str, Any]) -> None:
    st["predicateType"] = "https://aicr.nvidia.com/recipe-evidence/v1"


def _set(key: str, fn: Callable[[Any], Any]) -> Callable[[dict[str, Any]], None]:
    def edit(d: dict[str, Any]) -> None:
        entry = _entry(d)
        parts = key.split(".")
        target = entry
        for p in parts[:-1]:
            target = target[p]
        target[parts[-1]] = fn(target[parts[-1]])

    return edit


def _del_set(d: dict[str, Any]) -> None:
    del _entry(d)["inclusionPromise"]


def _checkpoint(d: dict[str, Any]) -> None:
    cp = _entry(d)["inclusionProof"]["checkpoint"]
    body, _, signature = cp["envelope"].partition("\n\n")
    cp["envelope"] = f"{body}\nTimestamp: 1\n\n{signature}"  # a valid layout, unsigned text


def _payload_type(d: dict[str, Any]) -> None:
    d["dsseEnvelope"]["payloadType"] = "application/json"


def _flip_proof(d: dict[str, Any]) -> None:
    proof = _entry(d)["inclusionProof"]
    if proof["hashes"]:
        proof["hashes"][0] = _flip_b64(proof["hashes"][0])
    else:
        proof["rootHash"] = _flip_b64(proof["rootHash"])


def _no_sct_opts() -> Any:
    from generator.testing.authority import SigningOptions

    return SigningOptions(embed_sct=False)


def _late_log_opts() -> Any:
    from generator.testing.authority import SigningOptions

    return SigningOptions(log_delay=timedelta(minutes=30))


def _late_ts_opts() -> Any:
    from generator.testing.authority import SigningOptions

    return SigningOptions(timestamp_delay=timedelta(minutes=30))


TAMPER_TABLE: list[tuple[str, Callable[..., Any], str]] = [
    ("wrong-identity", _wrong_claim(SignerIdentity(SIGNER.issuer, OTHER.identity)), "test"),
    ("wrong-issuer", _wrong_claim(SignerIdentity(OTHER.issuer, SIGNER.identity)), "test"),
    ("payload-modified", _t_payload, "test"),
    ("payload-type-modified", _simple(_payload_type), "test"),
    ("entry-log-index", _simple(_set("logIndex", lambda v: str(int(v) + 1))), "test"),
    (
        "shard-local-index",
        _simple(lambda d: _entry(d).update(logIndex=_entry(d)["inclusionProof"]["logIndex"])),
        "test",
    ),
    (
        "proof-log-index",
        _simple(_set("inclusionProof.logIndex", lambda v: str(int(v) - 1))),
        "test",
    ),
    ("integrated-time-plus-1", _simple(_set("integratedTime", lambda v: str(int(v) + 1))), "test"),
    ("integrated-time-minus-1", _simple(_set("integratedTime", lambda v: str(int(v) - 1))), "test"),
    (
        "integrated-time-outside",
        _simple(_set("integratedTime", lambda v: str(int(v) + 7200))),
        "test",
    ),
    ("proof-hash-flipped", _simple(_flip_proof), "test"),
    ("checkpoint-edited", _simple(_checkpoint), "test"),
    ("set-removed-no-tsa", _simple(_del_set), "test"),
    (
        "cert-expired-at-integration",
        lambda a, c: (sign(a, c.statement, options=_late_log_opts()), {}),
        "test",
    ),
    ("untrusted-look-alike-ca", _rogue(seed="look-alike"), "test"),
    ("unknown-ct-key", _rogue(ct_seed="rogue-ct"), "test"),
    ("no-sct", lambda a, c: (sign(a, c.statement, options=_no_sct_opts()), {}), "test"),
    ("unknown-rekor-key", _rogue(rekor_seed="rogue-rekor"), "test"),
    ("leaf-swapped", _t_leaf_swap, "test"),
    ("stapled-tlog-entry", _t_staple, "test"),
    ("two-dsse-signatures", _t_two_sigs, "test"),
    ("two-tlog-entries", _t_two_entries, "test"),
    ("production-root", lambda a, c: (sign(a, c.statement), {}), "production"),
    ("v2-tsa-missing-from-root", lambda a, c: (sign(a, c.statement, rekor_v2=True), {}), "no-tsa"),
    ("v2-rogue-tsa", _rogue(tsa_seed="rogue-tsa"), "test"),
    ("v2-timestamp-over-other-signature", _t_other_ts, "test"),
    (
        "v2-timestamp-after-expiry",
        lambda a, c: (sign(a, c.statement, rekor_v2=True, options=_late_ts_opts()), {}),
        "test",
    ),
    ("v2-entry-log-index-unbound", _t_v2_index, "test"),
    ("pointer-log-index", _t_log_index_claim, "test"),
    ("subject-differs", _statement_edit(_set_subject), "test"),
    ("unexpected-predicate-type", _statement_edit(_set_ptype), "test"),
]


EXPECTED_DETAIL = {
    "wrong-identity": "certificate identity (SAN)",
    "wrong-issuer": "OIDC issuer",
    "payload-modified": "DSSE: invalid signature",
    "payload-type-modified": "DSSE: invalid signature",
    "entry-log-index": "SET: invalid inclusion promise",
    "shard-local-index": "SET: invalid inclusion promise",
    "proof-log-index": "inclusion proof",  # root mismatch or wrong size, by tree shape
    "integrated-time-plus-1": "SET: invalid inclusion promise",
    "integrated-time-minus-1": "SET: invalid inclusion promise",
    "integrated-time-outside": "not valid at validation time",
    "proof-hash-flipped": "invalid root hash",
    "checkpoint-edited": "checkpoint: invalid signature",
    "set-removed-no-tsa": "must contain an inclusion promise or signed timestamp",
    "cert-expired-at-integration": "not valid at validation time",
    "untrusted-look-alike-ca": "signature does not match",
    "unknown-ct-key": "failed to verify SCT",
    "no-sct": "failed to verify SCT",
    "unknown-rekor-key": "checkpoint: invalid signature",
    "leaf-swapped": "DSSE: invalid signature",
    "stapled-tlog-entry": "log entry signatures do not match bundle",
    "two-dsse-signatures": "exactly one signature",
    "two-tlog-entries": "exactly one log entry",
    "production-root": "candidates exhausted",
    "v2-tsa-missing-from-root": "no Timestamp Authorities",
    "v2-rogue-tsa": "not enough sources of verified time",
    "v2-timestamp-over-other-signature": "not enough sources of verified time",
    "v2-timestamp-after-expiry": "not valid at validation time",
    "v2-entry-log-index-unbound": "inclusionProof.logIndex",
    "pointer-log-index": "rekorLogIndex",
    "subject-differs": "does not match pulled artifact digest",
    "unexpected-predicate-type": "unexpected predicateType",
}


@pytest.mark.parametrize(("name", "make", "root"), TAMPER_TABLE, ids=[r[0] for r in TAMPER_TABLE])
def test_signature_tamper(
    case: EvidenceCase,
    authority_trust: Any,
    tmp_path: Any,
    name: str,
    make: Callable[..., Any],
    root: str,
) -> None:
    authority, trust = authority_trust
    authority.add_filler_entries(3)
    if root == "production":
        trust = load_trust(offline=True)
    elif root == "no-tsa":
        path = tmp_path / "root.json"
        path.write_bytes(authority.trusted_root_json(include_tsa=False))
        trust = load_trust(root_file=path)
    bundle, claims = make(authority, case)
    signer = claims.get("signer", SIGNER)
    verdict = run(case, trust, bundle, signer=signer, log_index=claims.get("log_index"))
    assert_failed_at(verdict, 2, FailureClass.SIGNATURE)
    assert verdict.steps[1].status is StepStatus.FAILED
    assert EXPECTED_DETAIL[name] in verdict.cause.detail, verdict.cause.detail


# --------------------------------------------------------------------------- non-finite numbers

NON_FINITE_CTRF = [
    b'{"results": {"tool": {"name": "x"}, "summary": {"tests": NaN}, "tests": []}}',
    b'{"results": {"tool": {"name": "x"}, "summary": {"tests": 1},'
    b' "tests": [{"name": "a", "status": "passed", "duration": Infinity}]}}',
    b'{"results": {"tool": {"name": "x"}, "summary": {"passed": 1e400}, "tests": []}}',
]


@pytest.mark.parametrize("report", NON_FINITE_CTRF, ids=["nan", "infinity", "overflow"])
def test_a_ctrf_report_with_non_finite_numbers_is_rejected_not_a_crash(report: bytes) -> None:
    """Python's json takes NaN, Infinity and 1e400 (as infinity); JSON and Go do not, and
    `int(nan)` used to raise out of the verifier. The run is rejected, naming the file."""
    case = EvidenceCase(ctrf={"deployment": report}).seal()
    verdict = run(case)
    assert_failed_at(verdict, 4, FailureClass.INTEGRITY)
    assert "ctrf/deployment.json" in verdict.cause.detail
    assert "JSON" in verdict.cause.detail


def test_a_statement_with_a_nan_count_is_rejected_not_a_crash(case: EvidenceCase) -> None:
    case.files["statement.intoto.json"] = case.statement_bytes().replace(
        b'"passed": 1', b'"passed": NaN', 1
    )
    verdict = run(case)
    assert_failed_at(verdict, 3, FailureClass.SCHEMA)
    assert "not JSON" in verdict.cause.detail


@pytest.mark.parametrize("depth", [65, 10_000])
def test_a_deep_unsigned_statement_is_rejected_naming_the_limit(
    case: EvidenceCase, depth: int
) -> None:
    """Python's json raised RecursionError on ~1,000 levels, out of the verifier."""
    case.files["statement.intoto.json"] = case.statement_bytes().replace(
        b'"predicate": {',
        b'"predicate": {"deep": ' + b"[" * (depth - 2) + b"]" * (depth - 2) + b", ",
        1,
    )
    verdict = run(case)
    assert_failed_at(verdict, 3, FailureClass.SCHEMA)
    assert "statement.intoto.json exceeds a parse limit" in verdict.cause.detail
    assert "nested more than 64 deep" in verdict.cause.detail


def test_a_lone_surrogate_in_a_ctrf_report_is_replaced_and_the_verdict_caches(
    tmp_path: Any,
) -> None:
    """`"\\ud800"` is valid JSON but no character: kept, it made the verdict cache (and data/)
    unwritable as UTF-8. As in Go, it reads as U+FFFD."""
    from generator.verify.cache import VerdictCache

    report = (
        b'{"results": {"tool": {"name": "x"}, "summary": {"tests": 1},'
        b' "tests": [{"name": "bad\\ud800name", "status": "passed"}]}}'
    )
    case = EvidenceCase(ctrf={"deployment": report}).seal()
    verdict = run(case)
    assert isinstance(verdict, Pending)
    assert [t.name for t in verdict.evidence.ctrf[Phase.DEPLOYMENT].tests] == ["bad\ufffdname"]
    cache = VerdictCache(tmp_path / "verify")
    cache.put("a" * 64, verdict, "2026-01-01T00:00:00Z")
    got = cache.get("a" * 64)
    assert got is not None and got[0] == verdict
