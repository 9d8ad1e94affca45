"""Shared fixtures of the verify tests: no network, the real-bundle fixture folder, trust roots."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures"
SIGSTORE_REAL = FIXTURES / "sigstore-real"


def _loopback(address: Any) -> bool:
    if isinstance(address, tuple) and address:
        host = address[0]
    elif isinstance(address, str | bytes):  # AF_UNIX paths are local
        return True
    else:
        return False
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class NetworkBlocked(OSError):
    """Raised by the socket guard: these tests must never leave the machine."""


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Make every non-loopback `socket.connect` raise, and record the attempts."""
    attempts: list[Any] = []
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def connect(self: socket.socket, address: Any) -> None:
        if not _loopback(address):
            attempts.append(address)
            raise NetworkBlocked(f"network access blocked in tests: {address!r}")
        real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        if not _loopback(address):
            attempts.append(address)
            raise NetworkBlocked(f"network access blocked in tests: {address!r}")
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    yield attempts


@pytest.fixture
def sigstore_real() -> Path:
    if not SIGSTORE_REAL.is_dir():
        pytest.skip("shared fixtures (sigstore-real) are not present")
    return SIGSTORE_REAL


# --------------------------------------------------------------------------- recipe seam
# The evidence built below derives its recipe name and digest from the project's own
# canonicaliser and naming modules (never stand-ins: an import error here must fail loudly).

import hashlib  # noqa: E402
import json  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from datetime import UTC, datetime  # noqa: E402

from generator.model import (  # noqa: E402, I001
    BundleRef,
    ClaimedSigner,
    OciDigest,
    Pointer,
    PointerLocation,
    PredicateType,
    SignerIdentity,
)
from generator.recipe.canonical import digest_for_predicate_type  # noqa: E402
from generator.recipe.names import profile_selection_for, recipe_name_for  # noqa: E402

SIGNER = SignerIdentity(
    issuer="https://token.actions.githubusercontent.com",
    identity="https://github.com/acme/aicr-evidence/.github/workflows/sign.yml@refs/heads/main",
)
OTHER = SignerIdentity(issuer="https://github.com/login/oauth", identity="mallory@example.com")
SIGNED_AT = datetime(2026, 9, 19, 2, 57, 39, tzinfo=UTC)
ATTESTED_AT = "2026-09-19T02:57:39Z"

RECIPE_YAML = b"""\
criteria:
  accelerator: h100
  intent: training
  os: ubuntu
  platform: kubeflow
  service: eks
kind: RecipeResult
metadata:
  version: v0.14.2
"""
PROFILE_RECIPE_YAML = (
    RECIPE_YAML
    + b"""\
  selectedProfile:
    name: gpuStack
    value: operator-managed
"""
)


def _ctrf(tests: list[tuple[str, str]]) -> bytes:
    return (
        json.dumps(
            {
                "results": {
                    "tool": {"name": "aicr"},
                    "summary": {
                        "tests": len(tests),
                        "passed": sum(s == "passed" for _, s in tests),
                        "failed": sum(s == "failed" for _, s in tests),
                    },
                    "tests": [{"name": n, "status": s, "duration": 12} for n, s in tests],
                }
            },
            indent=2,
        )
        + "\n"
    ).encode()


@dataclass
class FakeCandidate:
    referrer_digest: OciDigest
    bundle_json: bytes


@dataclass
class FakeMaterialized:
    """Stands in for generator.bundle.types.Materialized (same fields the verifier reads)."""

    digest: OciDigest
    files: dict[str, bytes]
    signatures: tuple[FakeCandidate, ...] = ()
    manifest: bytes = b"{}"
    layer_digest: OciDigest = OciDigest("sha256:" + "0" * 64)
    origin: str = "layout"
    needed_credentials: bool = False


@dataclass
class EvidenceCase:
    """One evidence bundle under construction. `seal()` derives every digest; tamper after it."""

    predicate_type: PredicateType = PredicateType.V3
    recipe_yaml: bytes = RECIPE_YAML
    ctrf: dict[str, bytes] = field(
        default_factory=lambda: {
            "deployment": _ctrf([("gpu-operator-healthy", "passed"), ("dra-ready", "passed")]),
            "conformance": _ctrf([("dns", "passed"), ("gang-scheduling", "skipped")]),
        }
    )
    bom: dict[str, Any] | None = field(
        default_factory=lambda: {
            "bomFormat": "CycloneDX",
            "specVersion": "1.6",
            "components": [{"name": "gpu-operator"}, {"name": "dra-driver"}],
        }
    )
    snapshot_yaml: bytes | None = b"kind: Snapshot\nnodes: 4\n"
    oci_repo: str = "ghcr.io/acme/aicr-evidence"
    # filled by seal()
    files: dict[str, bytes] = field(default_factory=dict)
    predicate: dict[str, Any] = field(default_factory=dict)
    statement: dict[str, Any] = field(default_factory=dict)
    digest: str = ""
    recipe_name: str = ""
    profile: str | None = None

    def seal(self, *, failed: int = 0) -> EvidenceCase:
        files: dict[str, bytes] = {"recipe.yaml": self.recipe_yaml}
        for phase, data in self.ctrf.items():
            files[f"ctrf/{phase}.json"] = data
        if self.bom is not None:
            files["bom.cdx.json"] = (json.dumps(self.bom, indent=2) + "\n").encode()
        if self.snapshot_yaml is not None:
            files["snapshot.yaml"] = self.snapshot_yaml
        manifest = {
            "schemaVersion": "1.0.0",
            "files": [
                {"path": p, "size": len(d), "sha256": "sha256:" + hashlib.sha256(d).hexdigest()}
                for p, d in sorted(files.items())
            ],
        }
        manifest_bytes = (json.dumps(manifest, indent=2) + "\n").encode()
        files["manifest.json"] = manifest_bytes
        from generator.tree.yamlio import load_yaml

        recipe = load_yaml(self.recipe_yaml, file="recipe.yaml")
        self.recipe_name = recipe_name_for(recipe)
        selection = profile_selection_for(recipe)
        self.profile = selection or None
        predicate: dict[str, Any] = {
            "schemaVersion": "1.0.0",
            "attestedAt": ATTESTED_AT,
            "aicrVersion": "v0.14.2",
            "recipe": {
                "name": self.recipe_name,
                "digest": digest_for_predicate_type(self.recipe_yaml, self.predicate_type),
            },
            "criteriaMatch": {
                "matched": True,
                "perDimension": [
                    {
                        "dimension": "service",
                        "recipeRequires": "eks",
                        "fingerprintProvides": "eks",
                        "match": "matched",
                    },
                    {"dimension": "intent", "recipeRequires": "training", "match": "unknown"},
                ],
            },
            "phases": {
                phase: {
                    "passed": 1,
                    "failed": failed if phase == "deployment" else 0,
                    "skipped": 0,
                    "ctrfDigest": "sha256:" + hashlib.sha256(data).hexdigest(),
                }
                for phase, data in self.ctrf.items()
            },
            "manifest": {
                "digest": "sha256:" + hashlib.sha256(manifest_bytes).hexdigest(),
                "fileCount": len(manifest["files"]),
            },
        }
        if self.bom is not None:
            predicate["bom"] = {
                "format": "CycloneDX",
                "version": "1.6",
                "digest": "sha256:" + hashlib.sha256(files["bom.cdx.json"]).hexdigest(),
                "imageCount": len(self.bom.get("components", [])),
            }
        if selection:
            predicate["profile"] = {"selection": selection, "policyDescriptorIdentity": "e" * 64}
        oci_manifest = json.dumps(
            {
                "schemaVersion": 2,
                "layers": [{"digest": "sha256:" + hashlib.sha256(manifest_bytes).hexdigest()}],
            }
        ).encode()
        self.digest = "sha256:" + hashlib.sha256(oci_manifest).hexdigest()
        self.predicate = predicate
        self.statement = {
            "_type": "https://in-toto.io/Statement/v1",
            "subject": [
                {
                    "name": f"{self.oci_repo}:{self.recipe_name}-0123456789ab",
                    "digest": {"sha256": self.digest.removeprefix("sha256:")},
                }
            ],
            "predicateType": self.predicate_type.value,
            "predicate": predicate,
        }
        files["statement.intoto.json"] = json.dumps(self.statement).encode()
        self.files = files
        return self

    def statement_bytes(self) -> bytes:
        return json.dumps(self.statement).encode()

    def pointer(
        self,
        *,
        signer: SignerIdentity | None = None,
        log_index: int | None = None,
        **overrides: Any,
    ) -> tuple[Pointer, PointerLocation]:
        claimed = ClaimedSigner(signer, log_index) if signer is not None else None
        fields: dict[str, Any] = {
            "schema_version": "1.0.0",
            "recipe": self.recipe_name,
            "profile": self.profile,
            "bundle": BundleRef(
                f"{self.oci_repo}:{self.recipe_name}-0123456789ab",
                OciDigest(self.digest),
                self.predicate_type,
            ),
            "signer": claimed,
            "attested_at": ATTESTED_AT,
        }
        fields.update(overrides)
        pointer = Pointer(**fields)
        slug = (signer or SIGNER).slug
        digest = str(pointer.bundle.digest or "none")
        location = PointerLocation(
            path=f"evidence/{pointer.recipe}/{slug}/{digest.replace(':', '-')}.yaml",
            folder_recipe=pointer.recipe,
            folder_source=slug,
        )
        return pointer, location

    def materialized(self, *bundles: bytes) -> FakeMaterialized:
        candidates = tuple(
            FakeCandidate(OciDigest("sha256:" + hashlib.sha256(b).hexdigest()), b) for b in bundles
        )
        return FakeMaterialized(
            digest=OciDigest(self.digest), files=dict(self.files), signatures=candidates
        )


def first_log_index(bundle_json: bytes) -> int:
    return int(json.loads(bundle_json)["verificationMaterial"]["tlogEntries"][0]["logIndex"])


class FakeSource:
    """A BundleSource over fixed results: a Materialized to return, or an exception to raise."""

    def __init__(self, result: Any) -> None:
        self.result = result
        self.asked: list[BundleRef] = []

    def fetch(self, ref: BundleRef) -> Any:
        self.asked.append(ref)
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result


@pytest.fixture
def case() -> EvidenceCase:
    return EvidenceCase().seal()


@pytest.fixture(scope="session")
def authority_trust(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """(authority, Trust) for the test signing authority, via its trusted_root.json."""
    from generator.testing.authority import TestAuthority
    from generator.verify.trust import load_trust

    authority = TestAuthority(shard_offset=100_000_000)
    path = tmp_path_factory.mktemp("trust") / "trusted_root.json"
    path.write_bytes(authority.trusted_root_json())
    return authority, load_trust(root_file=path)


Signer = Callable[..., bytes]
