"""Shared fakes for the corroborate, data and facts tests: hand-made runs, evidence and naming."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from generator.corroborate import Naming
from generator.ctrf import bucket_status
from generator.model import (
    AllowlistEntry,
    BundleRef,
    ClaimedSigner,
    Classification,
    CtrfReport,
    CtrfTest,
    Evidence,
    OciDigest,
    Phase,
    Pointer,
    PredicateType,
    RecipeName,
    Run,
    Sha256Hex,
    SignerClass,
    SignerIdentity,
    Verified,
)

ISSUER = "https://token.actions.githubusercontent.com"
ORDER = {
    "service": ["eks", "gke", "aks", "oke", "kind"],
    "accelerator": ["h100", "h200", "gb200"],
    "os": ["ubuntu", "cos", "any"],
}


@dataclass(frozen=True)
class FakeCoordinate:
    group: str
    dashboard: str
    tab: str


def fake_coordinate_for(
    criteria: Mapping[str, str], profile_segment: str | None = None
) -> FakeCoordinate:
    """Spec 3.1 as a fake: service/accelerator/intent required, os any, bare-intent tabs."""
    for axis in ("service", "accelerator", "intent"):
        if criteria[axis] in ("", "any"):
            raise ValueError(f"invalid request: {axis} must be concrete")
    os_part = criteria["os"] if criteria["os"] not in ("", "any") else "any"
    tab = criteria["intent"]
    if criteria["platform"] not in ("", "any"):
        tab += "-" + criteria["platform"]
    if profile_segment:
        tab += "-" + profile_segment
    return FakeCoordinate(criteria["service"], f"{criteria['accelerator']}-{os_part}", tab)


def fake_sort_key(axis: str, value: str) -> tuple[int, str]:
    known = ORDER.get(axis, [])
    return (known.index(value), "") if value in known else (len(known), value)


FAKE_NAMING = Naming(coordinate_for=fake_coordinate_for, sort_key=fake_sort_key)


def org_of(signer: SignerIdentity, _classification: Classification) -> str:
    """Fake organisation: the first path segment of a GitHub workflow identity, else the host."""
    rest = signer.identity.split("://", 1)[-1]
    parts = rest.split("/")
    return parts[1] if len(parts) > 1 and parts[0] == "github.com" else parts[0]


def identity(org: str, repo: str = "aicr-evidence", ref: str = "main") -> SignerIdentity:
    return SignerIdentity(
        ISSUER, f"https://github.com/{org}/{repo}/.github/workflows/evidence.yaml@refs/heads/{ref}"
    )


def classified(
    allowlisted: bool = True, cls: SignerClass = SignerClass.COMMUNITY, label: str | None = None
) -> Classification:
    entry = AllowlistEntry(cls, ISSUER, label, None, "^x$", 0) if allowlisted else None
    return Classification(cls if allowlisted else SignerClass.COMMUNITY, allowlisted, entry)


def digest(seed: str) -> OciDigest:
    return OciDigest("sha256:" + hashlib.sha256(seed.encode()).hexdigest())


def make_run(
    signer: SignerIdentity,
    results: Mapping[tuple[Phase, str], str],
    *,
    allowlisted: bool = True,
    when: str = "2026-09-19T02:57:39Z",
    version: str = "v0.14.2",
    run_id: str | None = None,
    recipe: str = "h100-eks-ubuntu-training-kubeflow",
    recipe_digest: str = "a" * 64,
    k8s: str = "1.33",
    profile: str | None = None,
) -> Run:
    seed = f"{signer.identity}|{when}|{version}|{run_id}"
    return Run(
        recipe=RecipeName(recipe),
        signer=signer,
        classification=classified(allowlisted),
        run_id=run_id or when.replace("-", "").replace(":", "") + "-" + digest(seed)[7:19],
        aicr_version=version,
        aicr_commit=None,
        k8s_version=k8s,
        attested_at=when,
        evidence_ref=f"ghcr.io/x/aicr-evidence@{digest(seed)}",
        recipe_digest=Sha256Hex(recipe_digest),
        results={k: bucket_status(v) for k, v in results.items()},
        bundle_digest=digest(seed),
        profile=profile,
        logged_at=when,
    )


def ctrf(phase: Phase, *tests: tuple[str, str] | CtrfTest) -> CtrfReport:
    built = tuple(
        t if isinstance(t, CtrfTest) else CtrfTest(t[0], t[1], bucket_status(t[1])) for t in tests
    )
    return CtrfReport(phase=phase, tests=built)


def make_evidence(
    *,
    recipe: Mapping[str, Any] | None = None,
    ctrf_reports: Mapping[Phase, CtrfReport] | None = None,
    predicate: Mapping[str, Any] | None = None,
    snapshot: Mapping[str, Any] | None = None,
    seed: str = "bundle",
    attested_at: str = "2026-09-19T02:57:39Z",
    name: str = "h100-eks-ubuntu-training-kubeflow",
) -> Evidence:
    rec = dict(
        recipe
        or {
            "criteria": {
                "service": "eks",
                "accelerator": "h100",
                "os": "ubuntu",
                "intent": "training",
                "platform": "kubeflow",
            }
        }
    )
    pred: dict[str, Any] = {
        "attestedAt": attested_at,
        "aicrVersion": "v0.14.2",
        "recipe": {"name": name, "digest": "b" * 64},
        "fingerprint": {"k8sVersion": {"value": "1.33.4"}},
        "redaction": {"policy": "minimal", "version": "v3", "applied": []},
    }
    pred.update(predicate or {})
    bundle = digest(seed)
    return Evidence(
        bundle_digest=bundle,
        evidence_ref=f"ghcr.io/acme/aicr-evidence@{bundle}",
        predicate_type=PredicateType.V3,
        predicate=pred,
        recipe=rec,
        recipe_yaml=b"",
        snapshot=snapshot,
        ctrf=dict(ctrf_reports or {}),
        logged_at=attested_at,
    )


def make_verified(evidence: Evidence, signer: SignerIdentity) -> Verified:
    return Verified(
        steps=(), signer=signer, rekor_log_index=7, evidence=evidence, phase_failures=False
    )


def make_pointer(
    evidence: Evidence, signer: SignerIdentity | None, profile: str | None = None
) -> Pointer:
    return Pointer(
        schema_version="1.0.0",
        recipe=RecipeName(evidence.recipe_name),
        profile=profile,
        bundle=BundleRef(
            f"ghcr.io/acme/aicr-evidence:{evidence.recipe_name}",
            evidence.bundle_digest,
            PredicateType.V3,
        ),
        signer=ClaimedSigner(signer) if signer else None,
        attested_at=evidence.attested_at,
    )


class Factory:
    """Everything above, handed to tests as one fixture."""

    identity = staticmethod(identity)
    classified = staticmethod(classified)
    make_run = staticmethod(make_run)
    make_evidence = staticmethod(make_evidence)
    make_verified = staticmethod(make_verified)
    make_pointer = staticmethod(make_pointer)
    ctrf = staticmethod(ctrf)
    digest = staticmethod(digest)
    org_of = staticmethod(org_of)
    naming = FAKE_NAMING


@pytest.fixture
def f() -> type[Factory]:
    return Factory
