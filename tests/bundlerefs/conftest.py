"""Fixtures for `--bundle-refs`: a copy of the demo tree and bundles signed by its authority.

The demo tree's trust root belongs to the demo authority (generator/testing), rebuilt here from
the scenario's seed, so a bundle signed in a test verifies against the copied tree's root.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from generator.bundle.layout_writer import LayoutWriter
from generator.model import Phase, PredicateType, SignerIdentity
from generator.testing.authority import TestAuthority
from generator.testing.bundles import (
    BuiltBundle,
    BundleSpec,
    TestSpec,
    build_bundle,
    make_recipe,
    write_to_layout,
)
from generator.testing.demo_content import stable_int
from generator.testing.demo_scenario import parse_scenario
from tests.bundle.conftest import fake_registry  # noqa: F401 - re-exported fixture

RECIPES = Path(__file__).resolve().parents[2] / "recipes"
GITHUB = "https://token.actions.githubusercontent.com"
UAT = "https://github.com/NVIDIA/aicr/.github/workflows/uat-aws.yaml@refs/heads/main"
UAT_PATTERN = r"^https://github\.com/NVIDIA/aicr/\.github/workflows/uat-aws\.yaml@refs/heads/.+$"
FIRST_PARTY_PATTERN = UAT_PATTERN
REPOSITORY = "ghcr.io/nvidia/aicr-evidence"
FIRST_PARTY_ENTRY = (
    "firstParty:\n"
    "  - label: NVIDIA/aicr CI\n"
    f"    issuer: {GITHUB}\n"
    f"    identityPattern: '{FIRST_PARTY_PATTERN}'\n"
)


def demo_authority() -> TestAuthority:
    """The demo authority, built the way `generate_demo` builds it."""
    plan = parse_scenario((RECIPES / "demo" / "scenario.yaml").read_bytes(), file="scenario.yaml")
    return TestAuthority(
        plan.seed,
        name="evidence-dashboard demo",
        epoch=plan.authority_valid_from,
        shard_offset=200_000_000 + stable_int(plan.seed, "shard") % 10_000_000,
    )


@dataclass(frozen=True)
class Tree:
    """A copied demo tree with a first-party allowlist entry and its own trust root."""

    recipes: Path
    authority: TestAuthority

    def sign(self, identity: str = UAT, *, seed: str = "a") -> BuiltBundle:
        recipe = make_recipe(
            accelerator="h100", service="eks", intent="training", version=f"v0.14.{len(seed)}"
        )
        spec = BundleSpec(
            recipe=recipe,
            predicate_type=PredicateType.V3,
            signer=SignerIdentity(GITHUB, identity),
            attested_at=datetime(2026, 9, 2, 8, 0, tzinfo=UTC),
            repository=REPOSITORY,
            tag=f"uat-{seed}",
            tests={Phase.DEPLOYMENT: [TestSpec("check-nvidia-smi")]},
        )
        return build_bundle(spec, self.authority)

    def layout(self, *bundles: BuiltBundle) -> Path:
        """Write bundles into a new OCI layout inside the copied tree."""
        root = self.recipes / "bundles-first-party"
        writer = LayoutWriter(root)
        for bundle in bundles:
            write_to_layout(bundle, writer)
        writer.close()
        return root


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    if not (RECIPES / "demo" / "scenario.yaml").is_file():
        pytest.fail(
            "the demo tree recipes/ (committed in this repo) is absent or incomplete: "
            "restore it with git checkout, or regenerate it with `make demo`"
        )
    target = tmp_path / "recipes"
    shutil.copytree(RECIPES, target)
    allowlist = target / "evidence" / "allowlist.yaml"
    text = allowlist.read_text(encoding="utf-8")
    assert "firstParty: []\n" in text
    allowlist.write_text(text.replace("firstParty: []\n", FIRST_PARTY_ENTRY), encoding="utf-8")
    authority = demo_authority()
    start = parse_scenario(
        (RECIPES / "demo" / "scenario.yaml").read_bytes(), file="scenario.yaml"
    ).authority_valid_from
    trusted = (target / "trust" / "trusted_root.json").read_bytes()
    assert authority.trusted_root_json(valid_from=start) == trusted
    return Tree(target, authority)


SignFn = Callable[..., BuiltBundle]
