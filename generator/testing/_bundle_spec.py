"""What a test bundle is made from and what building it gives: `BundleSpec`, `TestSpec`,
`PointerFields`, `BuiltBundle`, and the media types (part of `generator.testing.bundles`)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from generator.model import (
    OciDigest,
    Phase,
    PredicateType,
    Sha256Hex,
    SignerIdentity,
)
from generator.testing import yamlemit
from generator.testing.authority import SigningOptions

AICR_ARTIFACT_TYPE = "application/vnd.nvidia.aicr.artifact"
OCI_MANIFEST_MEDIA_TYPE = "application/vnd.oci.image.manifest.v1+json"
OCI_EMPTY_MEDIA_TYPE = "application/vnd.oci.empty.v1+json"
LAYER_MEDIA_TYPE = "application/vnd.oci.image.layer.v1.tar+gzip"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
EMPTY_CONFIG = b"{}"
EMPTY_POLICY_IDENTITY = hashlib.sha256(b"").hexdigest()

_NOT_IN_MANIFEST = frozenset({"manifest.json", "statement.intoto.json", "attestation.intoto.jsonl"})
_SKIP_REASONS = frozenset({"no-gpu-nodes", "no-schedulable-gpu-nodes", "nodes-busy"})
_RUNTIME_SOURCES = frozenset(
    {"delivered-artifact", "recipe-supplied-runtime", "cluster-capability"}
)
_COUNT = re.compile(r"^[0-9]{1,5}$")
_PROFILE = re.compile(r"^[A-Za-z0-9._-]+=[A-Za-z0-9._-]+$")


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class TestSpec:
    """One CTRF test entry to write. `stdout`/`message`/`trace` are dropped in minimal bundles."""

    __test__ = False  # not a pytest test class

    name: str
    status: str = "passed"
    stdout: tuple[str, ...] = ()
    message: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    duration_ms: int = 1000
    trace: str | None = None


def nccl_test(check: str, gbps: float, floor: str = ">= 300") -> TestSpec:
    """An NCCL bandwidth test with aicr's two stdout lines; passes iff gbps >= 0.9 * threshold."""
    threshold = float(floor.replace(">=", "").strip())
    ok = gbps >= 0.9 * threshold
    lines = (
        f"NCCL All Reduce bandwidth ({check}): {gbps:.2f} GB/s",
        f"Constraint: {floor} \u2192 {'true' if ok else 'false'}",
    )
    message = (
        None if ok else f'NCCL bandwidth {gbps:.2f} GB/s does not satisfy constraint "{floor}"'
    )
    return TestSpec(check, "passed" if ok else "failed", lines, message)


@dataclass(frozen=True)
class BundleSpec:
    """Everything that decides one evidence bundle.

    `recipe` is the RecipeResult document (criteria, metadata.version, optional
    metadata.selectedProfile, componentRefs, validation.performance.constraints). `signer` None
    builds an unsigned (pending) bundle. `fingerprint`/`criteria_match`/`snapshot` default to
    values derived from the recipe criteria. `full` builds a `--full` bundle (no redaction block,
    stdout and message kept, full snapshot by default). `tag` defaults to `<recipe>-<12 hex>`.
    """

    recipe: Mapping[str, Any]
    predicate_type: PredicateType = PredicateType.V1
    signer: SignerIdentity | None = None
    attested_at: datetime = datetime(2026, 9, 1, 12, 0, 0, tzinfo=UTC)
    aicr_version: str = "v0.14.2"
    aicr_commit: str | None = None
    fingerprint: Mapping[str, Any] | None = None
    criteria_match: Mapping[str, Any] | None = None
    snapshot: Mapping[str, Any] | None = None
    tests: Mapping[Phase, Sequence[TestSpec]] = field(default_factory=dict)
    full: bool = False
    repository: str = "ghcr.io/acme/aicr-evidence"
    tag: str | None = None
    rekor_v2: bool = False
    validator_images: tuple[str, ...] = ()
    policy_descriptor_identity: str = EMPTY_POLICY_IDENTITY
    tar_prefix: str = ""
    """`""` puts files at the layer root; `"summary-bundle/"` mimics older packagers."""
    signing: SigningOptions | None = None
    """Authority knobs for hostile signatures (multi-SAN leaves, a shared key); None is honest."""


def make_recipe(
    *,
    accelerator: str = "h100",
    service: str = "eks",
    os: str = "ubuntu",
    intent: str = "training",
    platform: str | None = None,
    version: str = "v0.14.2",
    profile: tuple[str, str] | None = None,
    components: Sequence[tuple[str, str]] = (("gpu-operator", "v25.3.0"),),
    nccl_floors: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A small RecipeResult document with the fields evidence readers use."""
    criteria: dict[str, Any] = {
        "accelerator": accelerator,
        "service": service,
        "os": os,
        "intent": intent,
    }
    if platform:
        criteria["platform"] = platform
    metadata: dict[str, Any] = {"version": version}
    if profile:
        metadata["selectedProfile"] = {"name": profile[0], "value": profile[1]}
    recipe: dict[str, Any] = {
        "apiVersion": "aicr.run/v1",
        "kind": "RecipeResult",
        "criteria": criteria,
        "metadata": metadata,
        "componentRefs": [
            {"name": n, "version": v, "chart": n, "namespace": n, "source": "", "type": "Helm"}
            for n, v in components
        ],
        "deploymentOrder": [n for n, _ in components],
    }
    floors = {"nccl-all-reduce-bw-net": ">= 300"} if nccl_floors is None else dict(nccl_floors)
    if floors:
        recipe["validation"] = {
            "performance": {
                "constraints": [
                    {"name": k, "value": v, "unit": "GB/s"} for k, v in sorted(floors.items())
                ]
            }
        }
    return recipe


# --------------------------------------------------------------------------- outputs


@dataclass(frozen=True)
class PointerFields:
    """What the pointer YAML says; tampers replace fields and the YAML is re-rendered."""

    recipe: str
    profile: str | None
    oci: str
    digest: str
    predicate_type: str
    attested_at: str
    signer: SignerIdentity | None
    rekor_log_index: int | None


@dataclass(frozen=True)
class BuiltBundle:
    """Every artefact of one evidence bundle, as exact bytes.

    `files` are the layer's files (payload files plus `manifest.json` and
    `statement.intoto.json`), keyed by bundle-relative path. `digest` is the bundle digest
    (`sha256:` of `manifest`). `statement` is the DSSE payload that was signed (None if unsigned).
    """

    spec: BundleSpec
    recipe_name: str
    recipe_digest: Sha256Hex
    predicate: Mapping[str, Any]
    files: Mapping[str, bytes]
    layer: bytes
    layer_tar_digest: OciDigest
    manifest: bytes
    digest: OciDigest
    statement: bytes | None
    sigstore_bundle: bytes | None
    referrer_manifest: bytes | None
    pointer: PointerFields

    @property
    def tag(self) -> str:
        return self.oci_ref.rsplit(":", 1)[1]

    @property
    def oci_ref(self) -> str:
        """`<registry>/<repo>:<tag>` as the pointer's `bundle.oci` holds it."""
        return self.pointer.oci

    @property
    def pinned_ref(self) -> str:
        return f"{self.spec.repository}@{self.digest}"

    @property
    def signed(self) -> bool:
        return self.sigstore_bundle is not None

    @property
    def rekor_log_index(self) -> int | None:
        """The entry-level `logIndex` of the bundle's tlog entry (None if unsigned)."""
        if self.sigstore_bundle is None:
            return None
        entry = json.loads(self.sigstore_bundle)["verificationMaterial"]["tlogEntries"][0]
        return int(entry["logIndex"])

    @property
    def pointer_yaml(self) -> str:
        return render_pointer(self.pointer)

    @property
    def pointer_path(self) -> str:
        """`evidence/<recipe>/<slug>/sha256-<hex>.yaml`, or `evidence/<recipe>.yaml` if unsigned."""
        p = self.pointer
        if p.signer is None:
            return f"evidence/{p.recipe}.yaml"
        return f"evidence/{p.recipe}/{p.signer.slug}/sha256-{p.digest.removeprefix('sha256:')}.yaml"


def render_pointer(p: PointerFields) -> str:
    """Pointer YAML as aicr's `MarshalYAMLDeterministic` writes it (sorted keys, 2-space indent)."""
    entry: dict[str, Any] = {
        "attestedAt": yamlemit.Plain(p.attested_at),
        "bundle": {"digest": p.digest, "oci": p.oci, "predicateType": p.predicate_type},
    }
    if p.signer is not None:
        signer: dict[str, Any] = {"identity": p.signer.identity, "issuer": p.signer.issuer}
        if p.rekor_log_index:
            signer["rekorLogIndex"] = p.rekor_log_index
        entry["signer"] = signer
    doc: dict[str, Any] = {"attestations": [entry], "recipe": p.recipe, "schemaVersion": "1.0.0"}
    if p.profile:
        doc["profile"] = p.profile
    return yamlemit.emit(doc, indent=2).decode()
