"""One demo run into a bundle and the verdict its pointer must get: counted, rejected (with the
tamper that must be caught) or pending."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from generator.errors import InputError, Location
from generator.model import (
    Canonicalizer,
    Freshness,
    Phase,
    SignerIdentity,
)
from generator.recipe.canonical import digest_for_predicate_type
from generator.testing._demo_expect import (
    Expectation,
    ExpectPending,
    ExpectRejected,
    ExpectVerified,
)
from generator.testing.authority import TestAuthority
from generator.testing.bundles import (
    BuiltBundle,
    BundleSpec,
    build_bundle,
    ctrf_report,
    tamper_foreign_authority,
    tamper_modify_file,
    tamper_resign,
)
from generator.testing.demo_content import (
    cluster_for,
    criteria_match,
    fingerprint_for,
    policy_identity,
    recipe_document,
    snapshot_for,
    stable_hex,
    stable_int,
    tests_for,
)
from generator.testing.demo_scenario import (
    CountedRun,
    PendingRun,
    RecipeDecl,
    RejectedRun,
    RunDecl,
    Scenario,
    ScenarioRun,
    SignerDecl,
    Tamper,
)


@dataclass(frozen=True)
class _Written:
    """One pointer and its bundle, with its expectation."""

    bundle: BuiltBundle
    expectation: Expectation
    violation: bool


def _overlay_version(recipe: str, runs: Sequence[ScenarioRun]) -> str:
    """metadata.version of the current overlay: the newest counted legacy run's aicr version, so
    v1/v2 evidence (whose digest includes it) stays fresh; else the newest counted run's."""
    counted = [r.run for r in runs if isinstance(r, CountedRun) and r.run.recipe == recipe]
    legacy = [r for r in counted if r.predicate_type.canonicalizer is Canonicalizer.LEGACY]
    pool = legacy or counted or [r.run for r in runs if r.run.recipe == recipe]
    return max(pool, key=lambda r: r.at).aicr


def _rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _spec(
    scenario: Scenario,
    run: RunDecl,
    signer: SignerIdentity | None,
    bandwidth: Mapping[str, Any] | None = None,
) -> BundleSpec:
    decl = scenario.recipes[run.recipe]
    recipe = recipe_document(decl, version=run.aicr)
    cluster = cluster_for(scenario.seed, decl, run)
    fingerprint = fingerprint_for(cluster)
    tests = tests_for(scenario.seed, run, cluster, decl.floors, bandwidth)
    tag_hex = stable_hex(scenario.seed, "tag", run.index, run.recipe, _rfc3339(run.at), length=12)
    return BundleSpec(
        recipe=recipe,
        predicate_type=run.predicate_type,
        signer=signer,
        attested_at=run.at,
        aicr_version=run.aicr,
        aicr_commit=stable_hex(scenario.seed, "aicr-commit", run.aicr),
        fingerprint=fingerprint,
        criteria_match=criteria_match(recipe, fingerprint),
        snapshot=snapshot_for(cluster, decl.components, _rfc3339(run.at), full=run.full),
        tests=tests,
        full=run.full,
        repository=scenario.repository,
        tag=f"{run.recipe}-{tag_hex}",
        validator_images=tuple(
            f"ghcr.io/nvidia/aicr-validators/{p.value}:{run.aicr}" for p in tests
        ),
        policy_descriptor_identity=policy_identity(decl),
    )


def _signer_of(scenario: Scenario, key: str | None) -> SignerDecl:
    assert key is not None, "signed runs name a signer (checked when parsing)"
    return scenario.signers[key]


def _freshness(bundle: BuiltBundle, overlay: bytes | None) -> Freshness:
    if overlay is None:
        return Freshness.UNKNOWN
    current = digest_for_predicate_type(overlay, bundle.spec.predicate_type)
    return Freshness.FRESH if current == bundle.recipe_digest else Freshness.STALE


def _check_freshness(decl: RecipeDecl, run: RunDecl, state: Freshness, file: str) -> None:
    """The scenario's intent: fresh unless the recipe moved on (stale) or has no overlay."""
    want = (
        Freshness.UNKNOWN
        if not decl.overlay
        else Freshness.STALE
        if decl.current_components
        else Freshness.FRESH
    )
    if state is not want:
        raise InputError(
            "the generated overlay does not give the intended freshness",
            location=Location(file, run.index),
            expected=str(want),
            found=str(state),
            hint="runs of one recipe with a v1/v2 predicate must share one aicr version "
            "(the legacy digest includes metadata.version)",
        )


def _counted(
    scenario: Scenario,
    authority: TestAuthority,
    item: CountedRun,
    overlays: Mapping[str, bytes],
    file: str,
) -> _Written:
    signer = _signer_of(scenario, item.run.signer)
    bundle = build_bundle(_spec(scenario, item.run, signer.identity), authority)
    state = _freshness(bundle, overlays.get(item.run.recipe))
    _check_freshness(scenario.recipes[item.run.recipe], item.run, state, file)
    failed = any(t.status == "failed" for tests in bundle.spec.tests.values() for t in tests)
    expectation = ExpectVerified(
        exit=1 if failed else 0, freshness=state, allowlisted=signer.listing is not None
    )
    return _Written(bundle, expectation, violation=signer.listing is None)


def _rejected(scenario: Scenario, authority: TestAuthority, item: RejectedRun) -> _Written:
    run = item.run
    signer = _signer_of(scenario, run.signer)
    honest = build_bundle(_spec(scenario, run, signer.identity, item.signed_bandwidth), authority)
    if item.tamper is Tamper.MODIFIED_CTRF:
        claimed = _spec(scenario, run, signer.identity)
        data = ctrf_report(Phase.PERFORMANCE, claimed.tests[Phase.PERFORMANCE], spec=claimed)
        bundle = tamper_modify_file(honest, "ctrf/performance.json", data, authority)
    elif item.tamper is Tamper.FOREIGN_AUTHORITY:
        foreign = TestAuthority(
            f"{scenario.seed}/look-alike",
            name="evidence-dashboard demo",
            epoch=scenario.authority_valid_from,
            shard_offset=200_000_000 + stable_int(scenario.seed, "look-alike") % 10_000_000,
        )
        bundle = tamper_foreign_authority(honest, foreign)
    else:
        other = _signer_of(scenario, item.certificate)
        bundle = tamper_resign(honest, other.identity, authority)
    return _Written(
        bundle, ExpectRejected(item.tamper.failure_class), violation=signer.listing is None
    )


def _pending(scenario: Scenario, item: PendingRun) -> _Written:
    return _Written(build_bundle(_spec(scenario, item.run, None)), ExpectPending(), violation=False)
