"""Bundles from the shared evidence factory (generator.testing.bundles) through the verifier,
one per factory tamper helper, each with the step and failure class aicr would report."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from generator.bundle.types import Materialized, SignatureCandidate
from generator.model import (
    FailureClass,
    OciDigest,
    Pending,
    Phase,
    Pointer,
    PointerLocation,
    PredicateType,
    Rejected,
    StepStatus,
    Verified,
)
from generator.testing import bundles as factory
from generator.testing.authority import TestAuthority
from generator.tree.pointer import parse_pointer
from generator.verify.pipeline import verify_materialized, verify_pointer
from generator.verify.trust import Trust
from tests.verify.conftest import OTHER, SIGNER, FakeSource


def as_pointer(built: factory.BuiltBundle) -> tuple[Pointer, PointerLocation]:
    pointer = parse_pointer(built.pointer_yaml.encode(), file=built.pointer_path)
    parts = built.pointer_path.split("/")
    location = PointerLocation(
        built.pointer_path, parts[1].removesuffix(".yaml"), parts[2] if len(parts) == 4 else None
    )
    return pointer, location


def as_materialized(built: factory.BuiltBundle) -> Materialized:
    signatures: tuple[SignatureCandidate, ...] = ()
    if built.sigstore_bundle is not None and built.referrer_manifest is not None:
        referrer = OciDigest("sha256:" + hashlib.sha256(built.referrer_manifest).hexdigest())
        signatures = (SignatureCandidate(referrer, built.sigstore_bundle),)
    return Materialized(
        digest=built.digest,
        manifest=built.manifest,
        layer_digest=OciDigest("sha256:" + hashlib.sha256(built.layer).hexdigest()),
        files=built.files,
        signatures=signatures,
        origin="layout",
    )


def check(built: factory.BuiltBundle, trust: Trust) -> Any:
    pointer, location = as_pointer(built)
    return verify_pointer(pointer, location, FakeSource(as_materialized(built)), trust)


def spec(**kwargs: Any) -> factory.BundleSpec:
    tests = {
        Phase.DEPLOYMENT: [factory.TestSpec("gpu-operator-healthy")],
        Phase.PERFORMANCE: [factory.nccl_test("nccl-all-reduce-bw-net", 410.0)],
        Phase.CONFORMANCE: [factory.TestSpec("dns"), factory.TestSpec("gang", "skipped")],
    }
    kwargs.setdefault("recipe", factory.make_recipe())
    kwargs.setdefault("signer", SIGNER)
    kwargs.setdefault("tests", tests)
    return factory.BundleSpec(**kwargs)


@pytest.mark.parametrize(
    "variant", ["v1", "v3", "v3-profile", "v2-profile", "rekor-v2", "prefixed"]
)
def test_factory_bundle_verifies(authority_trust: Any, variant: str) -> None:
    authority, trust = authority_trust
    kwargs: dict[str, Any] = {}
    if variant.startswith("v3"):
        kwargs["predicate_type"] = PredicateType.V3
    if variant.endswith("profile"):
        kwargs["recipe"] = factory.make_recipe(profile=("gpuStack", "bundle-installer"))
    if variant == "v2-profile":
        kwargs["predicate_type"] = PredicateType.V2
    if variant == "rekor-v2":
        kwargs["rekor_v2"] = True
    if variant == "prefixed":
        kwargs["tar_prefix"] = "summary-bundle/"
    built = factory.build_bundle(spec(**kwargs), authority)
    verdict = check(built, trust)
    assert isinstance(verdict, Verified), verdict
    assert verdict.signer == SIGNER
    assert verdict.evidence.recipe_name == built.recipe_name
    assert set(verdict.evidence.ctrf) == {Phase.DEPLOYMENT, Phase.PERFORMANCE, Phase.CONFORMANCE}


def test_factory_unsigned_is_pending(authority_trust: Any) -> None:
    authority, trust = authority_trust
    built = factory.build_bundle(spec(signer=None), authority)
    assert isinstance(check(built, trust), Pending)


def test_factory_phase_failure_is_exit_one(authority_trust: Any) -> None:
    authority, trust = authority_trust
    tests = {Phase.PERFORMANCE: [factory.nccl_test("nccl-all-reduce-bw-net", 100.0)]}
    verdict = check(factory.build_bundle(spec(tests=tests), authority), trust)
    assert isinstance(verdict, Verified) and verdict.phase_failures


FOREIGN = TestAuthority("foreign")

TAMPERS: list[
    tuple[
        str, Callable[[factory.BuiltBundle, TestAuthority], factory.BuiltBundle], int, FailureClass
    ]
] = [
    (
        "modify-file",
        lambda b, a: factory.tamper_modify_file(b, "bom.cdx.json", b"{}", a),
        4,
        FailureClass.INTEGRITY,
    ),
    (
        "add-file",
        lambda b, a: factory.tamper_add_file(b, "notes.txt", b"x", a),
        4,
        FailureClass.INTEGRITY,
    ),
    (
        "ctrf",
        lambda b, a: factory.tamper_ctrf(b, Phase.DEPLOYMENT, b'{"results":{"tests":[]}}', a),
        4,
        FailureClass.INTEGRITY,
    ),
    ("resign", lambda b, a: factory.tamper_resign(b, OTHER, a), 2, FailureClass.SIGNATURE),
    ("subject", lambda b, a: factory.tamper_subject(b, a), 2, FailureClass.SIGNATURE),
    (
        "predicate-type-incoherent",
        lambda b, a: factory.tamper_predicate_type(b, PredicateType.V2.value, a),
        2,
        FailureClass.SIGNATURE,
    ),
    (
        "predicate-type-unknown",
        lambda b, a: factory.tamper_predicate_type(
            b, "https://aicr.nvidia.com/recipe-evidence/v1", a
        ),
        2,
        FailureClass.SIGNATURE,
    ),
    (
        "predicate-type-vs-pointer",
        lambda b, a: factory.tamper_predicate_type(b, PredicateType.V3.value, a),
        3,
        FailureClass.SCHEMA,
    ),
    (
        "pointer-log-index",
        lambda b, a: factory.tamper_pointer_log_index(b),
        2,
        FailureClass.SIGNATURE,
    ),
    (
        "unsigned-claims-signer",
        lambda b, a: factory.tamper_unsigned_claims_signer(b, SIGNER),
        2,
        FailureClass.SIGNATURE,
    ),
    (
        "foreign-authority",
        lambda b, a: factory.tamper_foreign_authority(b, FOREIGN),
        2,
        FailureClass.SIGNATURE,
    ),
    (
        "recipe-name-pointer",
        lambda b, a: factory.tamper_recipe_name(b, "h100-eks-ubuntu-other"),
        3,
        FailureClass.SCHEMA,
    ),
    (
        "recipe-name-signed",
        lambda b, a: factory.tamper_recipe_name(b, "h100-eks-ubuntu-other", authority=a),
        3,
        FailureClass.SCHEMA,
    ),
    (
        "attested-at",
        lambda b, a: factory.tamper_attested_at(b, datetime(2026, 9, 2, tzinfo=UTC)),
        4,
        FailureClass.INTEGRITY,
    ),
    (
        "statement-aicr-version",
        lambda b, a: factory.tamper_statement(
            b,
            lambda d: d["predicate"].update(
                manifest={"digest": "sha256:" + "0" * 64, "fileCount": 1}
            ),
            a,
        ),
        4,
        FailureClass.INTEGRITY,
    ),
]


@pytest.mark.parametrize(
    ("name", "tamper", "step", "failure_class"), TAMPERS, ids=[t[0] for t in TAMPERS]
)
def test_factory_tamper(
    authority_trust: Any,
    name: str,
    tamper: Callable[[factory.BuiltBundle, TestAuthority], factory.BuiltBundle],
    step: int,
    failure_class: FailureClass,
) -> None:
    authority, trust = authority_trust
    built = factory.build_bundle(spec(), authority)
    assert isinstance(check(built, trust), Verified)
    tampered = tamper(built, authority)
    verdict = check(tampered, trust)
    assert isinstance(verdict, Rejected), verdict
    assert verdict.cause.failure_class is failure_class, verdict.cause
    assert verdict.steps[step - 1].status is StepStatus.FAILED
    assert all(s.status is StepStatus.SKIPPED for s in verdict.steps[step:4])


def test_materialized_directly(authority_trust: Any) -> None:
    authority, trust = authority_trust
    built = factory.build_bundle(spec(), authority)
    pointer, location = as_pointer(built)
    assert isinstance(
        verify_materialized(pointer, location, as_materialized(built), trust), Verified
    )
