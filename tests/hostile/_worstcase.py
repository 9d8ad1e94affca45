"""The output worst case, signed by the demo authority: allowlisted signers at the CTRF test
cap, throw-away (unlisted) identities with as many tests each, and many runs per signer under
distinct aicr versions, all for one new recipe next to the demo tree.

Used by the bounded-output tests (with sizes just past each limit) and, at full size, to
measure what the limits save.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from generator.model import Phase, SignerIdentity
from generator.testing.authority import TestAuthority
from generator.testing.bundles import TestSpec, build_bundle, make_recipe
from tests.hostile.conftest import ATTESTED, Sandbox, compact_ctrf, hostile_spec, with_ctrf

ACCELERATOR = "b300"
RECIPE = f"{ACCELERATOR}-eks-ubuntu-training"
PARTNER_ISSUER = "https://token.actions.githubusercontent.com"


def partner(branch: str) -> SignerIdentity:
    """An identity the demo allowlist's partner pattern admits (one per branch)."""
    return SignerIdentity(
        PARTNER_ISSUER,
        "https://github.com/gpulab-partner/evidence/.github/"
        f"workflows/publish.yaml@refs/heads/{branch}",
    )


def throwaway(n: int) -> SignerIdentity:
    """An identity no allowlist entry names."""
    return SignerIdentity("https://github.com/login/oauth", f"throwaway-{n:04d}@example.net")


@dataclass(frozen=True)
class WorstCase:
    """How big the worst case is."""

    tests: int = 10_000
    """Tests per CTRF report (the same names for every allowlisted run)."""
    allowlisted: int = 2
    unlisted: int = 3
    unlisted_tests: int = 10_000
    """Tests per unlisted run (names distinct per identity, so the grid grows by each)."""
    versions: int = 1
    """Runs per allowlisted signer, each under its own aicr version."""
    failing_every: int = 0
    """Make every n-th allowlisted test fail in the second signer's run (0: none)."""


def add_worst_case(box: Sandbox, authority: TestAuthority, case: WorstCase) -> list[str]:
    """Sign and store every bundle of `case`; returns the pointer paths."""
    recipe = make_recipe(accelerator=ACCELERATOR, nccl_floors={})
    paths: list[str] = []

    def add(
        signer: SignerIdentity,
        names: list[str],
        version: int,
        statuses: dict[str, str],
        at_offset: int,
    ) -> None:
        spec = hostile_spec(
            ACCELERATOR,
            signer=signer,
            recipe=recipe,
            aicr_version=f"v0.{14 + version}.0",
            attested_at=ATTESTED + timedelta(minutes=at_offset),
            tests={Phase.CONFORMANCE: [TestSpec("seed")]},
        )
        built = build_bundle(spec, authority)
        ctrf = compact_ctrf("conformance", names)
        if statuses:
            ctrf = _with_statuses(ctrf, statuses)
        paths.append(box.add_bundle(with_ctrf(built, "conformance", ctrf, authority)))

    names = [f"check-{i:05d}" for i in range(case.tests)]
    for s in range(case.allowlisted):
        fails = (
            dict.fromkeys(names[case.failing_every - 1 :: case.failing_every], "failed")
            if case.failing_every and s == 1
            else {}
        )
        for v in range(case.versions):
            add(partner(f"branch-{s}"), names, v, fails, v * 10 + s)
    for u in range(case.unlisted):
        own = [f"junk-{u:04d}-{i:05d}" for i in range(case.unlisted_tests)]
        add(throwaway(u), own, 0, {}, 5 + u)
    return paths


def _with_statuses(ctrf: bytes, statuses: dict[str, str]) -> bytes:
    import json

    doc = json.loads(ctrf)
    for test in doc["results"]["tests"]:
        test["status"] = statuses.get(test["name"], test["status"])
    return json.dumps(doc, separators=(",", ":")).encode()
