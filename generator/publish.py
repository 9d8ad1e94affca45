"""The last step of a staging build, before the atomic swap: badges, the size record, the
manifest, its signature.

`finish_site` runs once the staging folder is otherwise complete. It writes the site marker
first (so the manifest lists it; `publish_atomically` writes the same bytes again), then the
badges and the change feed (`plan_site_changes`, worked out before the site was built), then
measures the staged site against its size budget (`generator.outputsize`; warnings go into
`data/build-info.json`), then `data/manifest.json` over every file. Nothing is written after the
manifest but its signature: a file changed later would make the manifest, and the signature over
it, lie about the published site. With `--sign-with-test-authority SCENARIO` it also signs the
manifest with that demo scenario's test authority, at the build time, so the whole signed path
can be checked offline; the publishing workflow signs with Sigstore instead.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.errors import UsageError
from generator.manifest import ManifestOptions, Written, write_manifest
from generator.outputsize import measure, record

if TYPE_CHECKING:
    from generator.build import BuildOptions
    from generator.changes import ChangeSet

__all__ = [
    "TEST_SIGNER_IDENTITY",
    "TEST_SIGNER_ISSUER",
    "finish_site",
    "manifest_options",
    "demo_authority",
    "plan_site_changes",
]

TEST_SIGNER_IDENTITY = "https://evidence-dashboard.test/publisher"
TEST_SIGNER_ISSUER = "https://evidence-dashboard.test/oidc"


def manifest_options(options: BuildOptions) -> ManifestOptions:
    """The options of this build that shape its output."""
    root = options.engine.trust_root
    return ManifestOptions(
        trust_mode=options.engine.trust_mode,
        trust_root_digest=None
        if root is None
        else hashlib.sha256(Path(root).read_bytes()).hexdigest(),
        trusted_registries=options.engine.trusted_registries,
        source_date_epoch=options.clock.source_date_epoch,
        preview=options.stamp.preview,
        source_url=options.tree.source_url,
        site_url=options.output.site_url,
        data_only=options.output.data_only,
        publisher=None
        if options.stamp.publisher_identity is None
        else (options.stamp.publisher_identity, options.stamp.publisher_issuer),
    )


def demo_authority(scenario: Path) -> Any:
    """The test authority a demo scenario signs with (same seed, epoch and log shard).

    The one place the product reaches the test authority, only for
    `build --sign-with-test-authority`, which needs the `authority` extra."""
    try:
        from generator.testing.authority import TestAuthority
        from generator.testing.demo_content import stable_int
        from generator.testing.demo_scenario import parse_scenario
    except ImportError as exc:  # rfc8785 / asn1crypto: the `authority` extra
        raise UsageError(
            "--sign-with-test-authority needs the test authority's packages",
            expected="evidence-dashboard installed with the `authority` extra",
            found=f"{type(exc).__name__}: {exc}",
            hint="pip install 'evidence-dashboard[authority]'",
        ) from exc

    plan = parse_scenario(scenario.read_bytes(), file=str(scenario))
    return TestAuthority(
        plan.seed,
        name="evidence-dashboard demo",
        epoch=plan.authority_valid_from,
        shard_offset=200_000_000 + stable_int(plan.seed, "shard") % 10_000_000,
    )


def finish_site(
    options: BuildOptions,
    documents: Mapping[str, Any],
    staging: Path,
    written: Mapping[str, Written] | None = None,
    changes: ChangeSet | None = None,
) -> None:
    """Write the marker, badges, change feed, size record and manifest into `staging` (and
    sign it when asked). `written`: files of the site the build hashed as it wrote them (not
    read again); `changes`: the build's `plan_site_changes`, whose recipe lists its pages
    already hold (worked out here when not given)."""
    from generator.badges import write_badges
    from generator.changes import write_changes
    from generator.outdir import write_marker

    build_info = documents.get("build_info") or {}
    previous = options.output.out.absolute()  # what this site replaces: its same files linked
    write_marker(staging)
    if not options.output.data_only:  # --data-only writes data/ alone (and the marker)
        write_badges(
            staging,
            documents.get("index") or {},
            build_info,
            preview=options.stamp.preview,
            previous=previous,
        )
    write_changes(staging, changes or plan_site_changes(options, documents), previous=previous)
    _record_size(staging)
    commit = build_info.get("commit") if isinstance(build_info, Mapping) else None
    write_manifest(
        staging,
        commit=None if commit is None else str(commit),
        options=manifest_options(options),
        known=written,
    )
    if options.output.sign_with_test_authority is not None:
        from generator.manifest import sign_manifest_dsse
        from generator.model import SignerIdentity

        epoch = options.clock.source_date_epoch
        when = datetime.fromtimestamp(epoch, UTC) if epoch is not None else datetime.now(UTC)
        sign_manifest_dsse(
            staging,
            demo_authority(options.output.sign_with_test_authority),
            SignerIdentity(issuer=TEST_SIGNER_ISSUER, identity=TEST_SIGNER_IDENTITY),
            when,
        )


def _record_size(staging: Path) -> None:
    """Measure the staged site and, when it raises warnings, record them in its
    build-info.json (replaced, never edited in place: the data folder may share that file with
    the evaluation memo's copy). The manifest and its signature, written after, are not
    counted."""
    info = staging / "data" / "build-info.json"
    size = measure(staging)
    if size.warnings and info.is_file():
        record(info, size)


def plan_site_changes(options: BuildOptions, documents: Mapping[str, Any]) -> ChangeSet:
    """This build's changes against `--previous` (generator.changes), before the site is
    built: the recipe pages take their history lists from it as they are placed."""
    from generator.changes import load_previous, plan_changes

    output = options.output
    previous = output.previous_site or load_previous(
        output.previous,
        ca_bundle=output.site_ca_bundle,
        allow_private=output.allow_private_sites,
    )
    return plan_changes(documents, previous, site_url=output.site_url, data_only=output.data_only)
