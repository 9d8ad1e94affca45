"""A small evidence tree built from scratch for the evaluation's fail-closed rules.

`EvidenceTree` signs bundles with the project's test authority (real Sigstore bundles the real
verifier accepts), writes them into an OCI layout inside the tree, writes their pointer files
and an allowlist naming the signers, and the authority's trust root. A build of it is offline
and real: the real bundle source, sigstore-python, the real verdict cache.

`sign(..., logged_at=...)` signs at a time other than the claimed attestedAt: the certificate,
the transparency-log entry (integrated time = signing time + 1 s) and, for Rekor v2, the signed
timestamp all say `logged_at`, while the predicate and pointer claim `attested_at`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from generator.build import BuildOptions
from generator.bundle.layout_writer import LayoutWriter
from generator.model import Phase, PredicateType, SignerIdentity
from generator.testing.authority import TestAuthority
from generator.testing.bundles import (
    BuiltBundle,
    BundleSpec,
    TestSpec,
    build_bundle,
    make_recipe,
    referrer_manifest,
    write_to_layout,
)

GITHUB = "https://token.actions.githubusercontent.com"
ALICE = SignerIdentity(
    GITHUB, "https://github.com/acme/evidence/.github/workflows/e.yaml@refs/heads/main"
)
BOB = SignerIdentity(
    GITHUB, "https://github.com/other/evidence/.github/workflows/e.yaml@refs/heads/main"
)
REPOSITORY = "ghcr.io/acme/aicr-evidence"
START = datetime(2026, 1, 1, tzinfo=UTC)


def when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@dataclass
class EvidenceTree:
    """A recipes/ folder under construction: bundles, pointers, allowlist and trust root."""

    root: Path
    authority: TestAuthority
    bundles: list[BuiltBundle] = field(default_factory=list)
    pointers: dict[str, str] = field(default_factory=dict)

    @property
    def recipes(self) -> Path:
        return self.root / "recipes"

    @property
    def layout(self) -> Path:
        return self.recipes / "bundles"

    def sign(
        self,
        accelerator: str = "h100",
        *,
        signer: SignerIdentity | None = ALICE,
        attested_at: str = "2026-09-01T12:00:00Z",
        logged_at: str | None = None,
        passed: bool = True,
        tag: str | None = None,
        rekor_v2: bool = False,
    ) -> BuiltBundle:
        """A signed bundle for `<accelerator>-eks-ubuntu-training` claiming `attested_at`,
        signed (and logged) at `logged_at` (default: the claimed time)."""
        recipe = make_recipe(accelerator=accelerator, nccl_floors={})
        test = TestSpec(
            "check-nvidia-smi",
            "passed" if passed else "failed",
            message=None if passed else "nvidia-smi found no GPU",
        )
        spec = BundleSpec(
            recipe=recipe,
            predicate_type=PredicateType.V1,
            signer=signer,
            attested_at=when(attested_at),
            repository=REPOSITORY,
            tag=tag or f"{accelerator}-{attested_at[:10]}-{len(self.bundles)}",
            tests={Phase.DEPLOYMENT: [test]},
            rekor_v2=rekor_v2,
        )
        built = build_bundle(spec, self.authority if signer is not None else None)
        if logged_at is not None and signer is not None:
            built = self._signed_at(built, when(logged_at))
        self.bundles.append(built)
        return built

    def _signed_at(self, built: BuiltBundle, moment: datetime) -> BuiltBundle:
        """`built` with its statement signed again at `moment` (the claim is unchanged)."""
        assert built.statement is not None and built.pointer.signer is not None
        sig = self.authority.sign_dsse(
            built.statement,
            signer=built.pointer.signer,
            signed_at=moment,
            rekor_v2=built.spec.rekor_v2,
        )
        entry = json.loads(sig)["verificationMaterial"]["tlogEntries"][0]
        return dataclasses.replace(
            built,
            sigstore_bundle=sig,
            referrer_manifest=referrer_manifest(
                sig, built.manifest, built.spec.predicate_type.value
            ),
            pointer=dataclasses.replace(built.pointer, rekor_log_index=int(entry["logIndex"])),
        )

    def point(
        self,
        built: BuiltBundle,
        path: str | None = None,
        *,
        recipe: str | None = None,
        signer: bool = True,
    ) -> str:
        """Write a pointer file for `built` (at its own path unless `path`); `recipe` makes the
        pointer claim another recipe; `signer=False` writes a flat pending copy."""
        fields = built.pointer
        if recipe is not None:
            fields = dataclasses.replace(fields, recipe=recipe)
        if not signer:
            fields = dataclasses.replace(fields, signer=None, rekor_log_index=None)
        where = path or dataclasses.replace(built, pointer=fields).pointer_path
        from generator.testing.bundles import render_pointer

        self.pointers[where] = render_pointer(fields)
        return where

    def add(self, *bundles: BuiltBundle) -> list[str]:
        """Point at each bundle from its own pointer path."""
        return [self.point(b) for b in bundles]

    def write(self, signers: Sequence[SignerIdentity] = (ALICE, BOB)) -> Path:
        """Write everything; returns the recipes folder."""
        evidence = self.recipes / "evidence"
        evidence.mkdir(parents=True, exist_ok=True)
        lines = ["schemaVersion: 1.0.0", "firstParty: []", "community:"]
        for n, signer in enumerate(signers):
            lines += [
                f"  - label: signer-{n}",
                f"    issuer: {signer.issuer}",
                f"    source: {signer.slug}",
            ]
        lines.append("partner: []")
        (evidence / "allowlist.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
        for path, text in self.pointers.items():
            target = self.recipes / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        writer = LayoutWriter(self.layout)
        for built in self.bundles:
            write_to_layout(built, writer)
        writer.close()
        trust = self.recipes / "trust" / "trusted_root.json"
        trust.parent.mkdir(parents=True, exist_ok=True)
        trust.write_bytes(self.authority.trusted_root_json(valid_from=START))
        return self.recipes

    def options(
        self, name: str = "build", *, jobs: int = 1, epoch: int | None = None, **extra: Any
    ) -> BuildOptions:
        return BuildOptions.flat(
            recipes=self.recipes,
            out=self.root / name / "site",
            trust_root=self.recipes / "trust" / "trusted_root.json",
            oci_layouts=(self.layout,),
            offline=True,
            cache=self.root / name / "cache",
            jobs=jobs,
            quiet=True,
            source_date_epoch=epoch,
            reevaluate=True,
            **extra,
        )


@pytest.fixture(scope="session")
def authority() -> TestAuthority:
    return TestAuthority("evaluation-fail-closed", name="evaluation test", epoch=START)


@pytest.fixture
def evidence_tree(tmp_path: Path, authority: TestAuthority) -> Iterator[EvidenceTree]:
    yield EvidenceTree(tmp_path, authority)


def by_path(documents: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """pointers.json entries by path."""
    return {p["path"]: p for p in documents["pointers"]["pointers"]}


def failure_class(pointer: Mapping[str, Any]) -> str | None:
    cause = pointer["verify"]["failureCause"]
    return None if cause is None else str(cause["class"])
