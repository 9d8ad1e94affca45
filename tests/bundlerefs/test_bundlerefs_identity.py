"""A bundle ref's identityPattern is matched against the certificate's one SAN: a leaf that also
carries the allowlisted workflow as a second SAN is not that workflow's run."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from generator.model import Phase, PredicateType, SignerIdentity
from generator.testing.authority import LeafShape, SigningOptions
from generator.testing.bundles import BundleSpec, TestSpec, build_bundle, make_recipe
from tests.bundlerefs.conftest import GITHUB, REPOSITORY, UAT, Tree
from tests.bundlerefs.test_bundlerefs import build, entry_for, refs_file

OTHER = "https://github.com/evil/fork/.github/workflows/uat-aws.yaml@refs/heads/main"


def test_a_second_san_matching_the_pattern_does_not_make_the_run_first_party(
    tree: Tree, tmp_path: Path
) -> None:
    recipe = make_recipe(accelerator="h100", service="eks", intent="training", version="v0.14.7")
    spec = BundleSpec(
        recipe=recipe,
        predicate_type=PredicateType.V3,
        signer=SignerIdentity(GITHUB, OTHER),
        attested_at=datetime(2026, 9, 2, 8, 0, tzinfo=UTC),
        repository=REPOSITORY,
        tag="uat-multi-san",
        tests={Phase.DEPLOYMENT: [TestSpec("check-nvidia-smi")]},
        signing=SigningOptions(leaf=LeafShape(sans=(OTHER, UAT))),
    )
    bundle = build_bundle(spec, tree.authority)
    refs = refs_file(tmp_path, [entry_for(bundle)])
    record = build(tree, tmp_path, refs, tree.layout(bundle))["pointers"][
        f"bundle-refs/0-{bundle.digest.replace(':', '-')}"
    ]
    assert record["verify"]["exit"] == 2
    assert record["verify"]["failureCause"]["class"] == "signature"
    assert record["signer"].get("verified") in (None, {}), record["signer"]
