"""The evidence bundle factory: aicr-shaped summary bundles, OCI artifacts, signatures, pointers.

`build_bundle(spec, authority)` turns a `BundleSpec` into a `BuiltBundle` holding every artefact
aicr would produce (evidence-format.md 3, 4, 8, 9): the payload files with their exact bytes,
`manifest.json`, the unsigned statement, the deterministic gzip tar layer, the OCI image manifest
and its digest (the bundle digest), the signed statement and its Sigstore bundle (from a
`TestAuthority`), the signature referrer manifest, and the pointer YAML with its tree path.
`write_to_layout` stores it in an OCI image layout. The `tamper_*` helpers return altered copies
for negative tests; each names the check that must catch it.

Same spec and same authority state give the same bytes: the layer and the bundle digest depend
only on the spec (no wall clock, no randomness).
"""

from __future__ import annotations

import gzip
import hashlib
import importlib
import io
import json
import re
import tarfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from generator.bundle.layout_writer import INDEX_MEDIA_TYPE, LayoutWriter
from generator.model import (
    PHASE_ORDER,
    Canonicalizer,
    OciDigest,
    Phase,
    PredicateType,
    Sha256Hex,
    SignerIdentity,
)
from generator.testing import yamlemit
from generator.testing.authority import BUNDLE_MEDIA_TYPE, SigningOptions, TestAuthority

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
    """One CTRF test entry to write. `stdout`/`message` are dropped in minimal bundles."""

    __test__ = False  # not a pytest test class

    name: str
    status: str = "passed"
    stdout: tuple[str, ...] = ()
    message: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    duration_ms: int = 1000


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


# --------------------------------------------------------------------------- serializers


def go_json(data: Any, *, indent: int | None = 2) -> bytes:
    """JSON as Go's encoding/json writes it: `<`, `>`, `&` escaped; indented output ends in `\\n`."""
    if indent is None:
        text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    else:
        text = json.dumps(data, indent=indent, ensure_ascii=False) + "\n"
    for raw, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(raw, esc)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").encode()


def _sha(data: bytes) -> OciDigest:
    return OciDigest("sha256:" + hashlib.sha256(data).hexdigest())


def _rfc3339(moment: datetime) -> str:
    if moment.tzinfo is None:
        raise ValueError("attested_at must be timezone-aware")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def recipe_name_for(recipe: Mapping[str, Any]) -> str:
    """aicr `RecipeNameFor` (evidence-format 3.6)."""
    criteria = recipe.get("criteria")
    if not isinstance(criteria, Mapping):
        return ""
    parts = [
        str(criteria.get(k) or "") for k in ("accelerator", "service", "os", "intent", "platform")
    ]
    name = "-".join(p for p in parts if p and p != "any") or "recipe"
    selection = profile_selection(recipe)
    if selection is None:
        return name
    if not _PROFILE.match(selection):
        return ""
    key, value = selection.split("=", 1)
    return f"{name}-{key.lower()}-{value.lower()}"


def profile_selection(recipe: Mapping[str, Any]) -> str | None:
    """`name=value` of `metadata.selectedProfile`, or None when unprofiled."""
    metadata = recipe.get("metadata")
    selected = metadata.get("selectedProfile") if isinstance(metadata, Mapping) else None
    if not isinstance(selected, Mapping):
        return None
    return f"{selected.get('name', '')}={selected.get('value', '')}"


def _strip_version(recipe: Mapping[str, Any]) -> dict[str, Any]:
    doc = dict(recipe)
    metadata = doc.get("metadata")
    if isinstance(metadata, Mapping) and "version" in metadata:
        rest = {k: v for k, v in metadata.items() if k != "version"}
        if rest:
            doc["metadata"] = rest
        else:
            del doc["metadata"]
    return doc


def recipe_yaml_and_digest(
    recipe: Mapping[str, Any], predicate_type: PredicateType
) -> tuple[bytes, Sha256Hex]:
    """`recipe.yaml` bytes (legacy-canonical) and the predicate's recipe digest for the type.

    Uses `generator.recipe.canonical` when it is importable; otherwise the stand-in emitter,
    whose output is already sorted and yaml.v3-shaped for simple documents.
    """
    emitted = yamlemit.emit(recipe)
    try:
        canonical = importlib.import_module("generator.recipe.canonical")
    except ImportError:
        if predicate_type.canonicalizer is Canonicalizer.V3:
            return emitted, Sha256Hex(
                hashlib.sha256(yamlemit.emit(_strip_version(recipe))).hexdigest()
            )
        return emitted, Sha256Hex(hashlib.sha256(emitted).hexdigest())
    data: bytes = canonical.canonicalize(emitted, Canonicalizer.LEGACY)
    digest: str = canonical.digest_for_predicate_type(data, predicate_type)
    return data, Sha256Hex(digest)


# --------------------------------------------------------------------------- content builders


def default_fingerprint(recipe: Mapping[str, Any]) -> dict[str, Any]:
    """A fingerprint matching the recipe's criteria (every key present, as Go emits it)."""
    c = recipe.get("criteria") or {}
    service = str(c.get("service") or "")
    accelerator = str(c.get("accelerator") or "")
    return {
        "service": {"value": service, "source": "k8s.node.provider"},
        "accelerator": {
            "value": accelerator,
            "source": "nodeTopology.label.nvidia.com/gpu.product",
        },
        "gpuModel": {"value": accelerator, "source": "gpu.hardware.model"},
        "os": {"value": str(c.get("os") or ""), "version": "22.04", "source": "os.release"},
        "k8sVersion": {"value": "1.33.4", "source": "k8s.server.version"},
        "region": {"value": "us-east-1"},
        "nodeCount": {"value": 4, "source": "nodeTopology.summary.node-count"},
        "gpuNodeCount": {"value": 2},
    }


def criteria_match_for(recipe: Mapping[str, Any], fingerprint: Mapping[str, Any]) -> dict[str, Any]:
    """`criteriaMatch` in the newer list shape, by aicr's rules (evidence-format 3.7)."""
    c = recipe.get("criteria") or {}
    rows: list[dict[str, Any]] = []
    for dim in ("service", "accelerator", "os", "intent", "platform"):
        want = str(c.get(dim) or "")
        row: dict[str, Any] = {"dimension": dim}
        if want:
            row["recipeRequires"] = want
        have = ""
        if dim in ("service", "accelerator", "os"):
            have = str((fingerprint.get(dim) or {}).get("value") or "")
            if have:
                row["fingerprintProvides"] = have
        if want in ("", "any"):
            row["match"] = "matched"
        elif dim in ("intent", "platform") or not have:
            row["match"] = "unknown"
        else:
            row["match"] = "matched" if want == have else "mismatched"
        rows.append(row)
    nodes = int(c.get("nodes") or 0)
    rows.append({"dimension": "nodes", "match": "matched" if nodes == 0 else "unknown"})
    matched = all(r["match"] != "mismatched" for r in rows)
    return {"matched": matched, "perDimension": rows}


def default_snapshot(
    fingerprint: Mapping[str, Any], attested_at: str, *, full: bool
) -> dict[str, Any]:
    """A snapshot (evidence-format 9.2): the minimal allowlisted subtypes, plus `--full` extras."""

    def value(key: str) -> Any:
        return (fingerprint.get(key) or {}).get("value", "")

    k8s = [
        {
            "subtype": "server",
            "data": {
                "version": f"v{value('k8sVersion')}",
                "platform": "linux/amd64",
                "goVersion": "go1.24.4",
            },
        },
        {
            "subtype": "node",
            "data": {
                "provider": value("service"),
                "kubelet-version": f"v{value('k8sVersion')}",
                "kernel-version": "6.8.0-1021",
                "operating-system": "linux",
                "os-image": "Ubuntu 22.04.5 LTS",
                "container-runtime-name": "containerd",
                "container-runtime-version": "1.7.27",
            },
        },
    ]
    gpu = [
        {
            "subtype": "hardware",
            "data": {
                "gpu-present": True,
                "gpu-count": 8,
                "driver-loaded": True,
                "detection-source": "pci",
                "model": value("accelerator"),
            },
        }
    ]
    topology = [
        {
            "subtype": "summary",
            "data": {"node-count": value("nodeCount"), "taint-count": 2, "label-count": 40},
        }
    ]
    if full:
        k8s.append(
            {"subtype": "image", "data": {"gpu-operator": "nvcr.io/nvidia/gpu-operator:v25.3.0"}}
        )
        gpu.append(
            {
                "subtype": "smi",
                "data": {
                    "driver": "570.148.08",
                    "cuda-version": "12.8",
                    "gpu-count": 8,
                    "gpu.model": "NVIDIA H100 80GB HBM3",
                },
            }
        )
        topology.append(
            {
                "subtype": "label",
                "data": {"node.kubernetes.io/instance-type": "p5.48xlarge|node-1,node-2"},
            }
        )
    header: dict[str, Any] = {"timestamp": attested_at, "version": "v1"}
    if full:
        header["source-node"] = "node-1"
    release = {"ID": value("os"), "VERSION_ID": "22.04", "NAME": "Ubuntu"}
    return snapshot_document(header, k8s=k8s, gpu=gpu, release=release, topology=topology)


def snapshot_document(
    header: Mapping[str, Any],
    *,
    k8s: Sequence[Mapping[str, Any]],
    gpu: Sequence[Mapping[str, Any]],
    release: Mapping[str, Any],
    topology: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """The `snapshot.yaml` envelope (spec 9.2) around the K8s, GPU, OS and topology subtypes."""
    return {
        "kind": "Snapshot",
        "apiVersion": "aicr.run/v1",
        "metadata": dict(header),
        "measurements": [
            {"type": "K8s", "subtypes": list(k8s)},
            {"type": "GPU", "subtypes": list(gpu)},
            {"type": "OS", "subtypes": [{"subtype": "release", "data": dict(release)}]},
            {"type": "NodeTopology", "subtypes": list(topology)},
        ],
    }


def _redact_extra(extra: Mapping[str, Any]) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for key, val in extra.items():
        text = str(val)
        if (
            (key in ("nodesValidated", "nodesTotal") and _COUNT.match(text))
            or (key == "skipReason" and text in _SKIP_REASONS)
            or (key == "runtimeSource" and text in _RUNTIME_SOURCES)
        ):
            kept[key] = val
    return kept


def ctrf_report(phase: Phase, tests: Sequence[TestSpec], *, spec: BundleSpec) -> bytes:
    """`ctrf/<phase>.json`: CTRF 0.0.1, 2-space JSON plus newline; redacted unless `spec.full`."""
    start = int(spec.attested_at.timestamp() * 1000) - 60_000
    entries: list[dict[str, Any]] = []
    for t in tests:
        entry: dict[str, Any] = {
            "name": t.name,
            "status": t.status,
            "duration": t.duration_ms,
            "suite": [phase.value],
        }
        if spec.full and t.message is not None:
            entry["message"] = t.message
        if spec.full and t.stdout:
            entry["stdout"] = list(t.stdout)
        extra = dict(t.extra) if spec.full else _redact_extra(t.extra)
        if extra:
            entry["extra"] = extra
        entries.append(entry)
    counts = {
        s: sum(1 for t in tests if t.status == s)
        for s in ("passed", "failed", "skipped", "pending", "other")
    }
    report = {
        "reportFormat": "CTRF",
        "specVersion": "0.0.1",
        "timestamp": _rfc3339(spec.attested_at),
        "generatedBy": "aicr",
        "results": {
            "tool": {"name": "aicr", "version": spec.aicr_version},
            "summary": {"tests": len(tests), **counts, "start": start, "stop": start + 60_000},
            "tests": entries,
        },
    }
    return go_json(report)


def bom_document(
    recipe_name: str, recipe: Mapping[str, Any], spec: BundleSpec, snapshot: Mapping[str, Any]
) -> dict[str, Any]:
    """CycloneDX 1.6: recipe components, validator images and observed snapshot images."""
    components: list[dict[str, Any]] = []
    for ref in recipe.get("componentRefs") or []:
        name = str(ref.get("name", ""))
        components.append(
            {
                "bom-ref": f"{recipe_name}/{name}",
                "type": "application",
                "name": name,
                "version": str(ref.get("version", "")),
                "properties": [
                    {"name": "aicr:component:type", "value": str(ref.get("type", "Helm"))},
                    {"name": "aicr:helm:chart", "value": str(ref.get("chart", name))},
                ],
            }
        )
    components.extend(
        {"bom-ref": f"validators/{image}", "type": "container", "name": image}
        for image in spec.validator_images
    )
    for m in snapshot.get("measurements") or []:
        for sub in m.get("subtypes") or []:
            if m.get("type") == "K8s" and sub.get("subtype") == "image":
                for ref_text in sorted(str(v) for v in (sub.get("data") or {}).values()):
                    short = (
                        ref_text.split("/", 1)[-1] if "." in ref_text.split("/", 1)[0] else ref_text
                    )
                    components.append(
                        {"bom-ref": f"observed-images/{short}", "type": "container", "name": short}
                    )
    serial = hashlib.sha256(f"{recipe_name}\n{_rfc3339(spec.attested_at)}".encode()).hexdigest()
    return {
        "$schema": "http://cyclonedx.org/schema/bom-1.6.schema.json",
        "bomFormat": "CycloneDX",
        "specVersion": "1.6",
        "serialNumber": f"urn:uuid:{serial[:8]}-{serial[8:12]}-{serial[12:16]}-{serial[16:20]}-{serial[20:32]}",
        "version": 1,
        "metadata": {
            "timestamp": _rfc3339(spec.attested_at),
            "tools": {
                "components": [
                    {"type": "application", "name": "aicr", "version": spec.aicr_version}
                ]
            },
            "component": {
                "bom-ref": recipe_name,
                "type": "application",
                "name": recipe_name,
                "version": spec.aicr_version,
            },
        },
        "components": components,
        "dependencies": [{"ref": recipe_name, "dependsOn": [c["bom-ref"] for c in components]}],
    }


def manifest_json(files: Mapping[str, bytes]) -> bytes:
    """aicr's `manifest.json` (evidence-format 3.2) over every file except the three excluded."""
    entries: list[dict[str, Any]] = []
    for path in sorted((p for p in files if p not in _NOT_IN_MANIFEST), key=lambda p: p.encode()):
        entry: dict[str, Any] = {
            "path": path,
            "size": len(files[path]),
            "sha256": _sha(files[path]),
        }
        media = _media_type(path)
        if media:
            entry["mediaType"] = media
        entries.append(entry)
    return go_json({"schemaVersion": "1.0.0", "files": entries})


def _media_type(path: str) -> str:
    if path.endswith(".cdx.json"):
        return "application/vnd.cyclonedx+json"
    if path.endswith(".intoto.jsonl"):
        return "application/vnd.in-toto+jsonl"
    if path.endswith(".json"):
        return "application/json"
    if path.endswith((".yaml", ".yml")):
        return "application/yaml"
    if path.endswith(".log"):
        return "text/plain"
    return ""


def statement_bytes(
    subject_name: str, subject_hex: str, predicate_type: str, predicate: Mapping[str, Any]
) -> bytes:
    """An in-toto v1 Statement, compact JSON with sorted keys (protojson order is not stable)."""
    doc = {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": subject_name, "digest": {"sha256": subject_hex}}],
        "predicateType": predicate_type,
        "predicate": predicate,
    }
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def layer_tar(files: Mapping[str, bytes], prefix: str = "") -> bytes:
    """Deterministic tar: sorted entries, `dir/` entries mode 0755, files 0644, zero mtimes."""
    names: set[str] = set()
    for path in files:
        full = prefix + path
        parts = full.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            names.add("/".join(parts[:i]) + "/")
        names.add(full)
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name in sorted(names, key=lambda n: n.encode()):
            info = tarfile.TarInfo(name.rstrip("/") if name.endswith("/") else name)
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if name.endswith("/"):
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                tar.addfile(info)
            else:
                data = files[name[len(prefix) :]]
                info.mode = 0o644
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def gzip_deterministic(data: bytes) -> bytes:
    """gzip at best compression, zero mtime, no file name, OS byte 255."""
    packed = bytearray(gzip.compress(data, compresslevel=9, mtime=0))
    packed[9] = 255
    return bytes(packed)


def _empty_config() -> dict[str, Any]:
    return {
        "mediaType": OCI_EMPTY_MEDIA_TYPE,
        "digest": _sha(EMPTY_CONFIG),
        "size": 2,
        "data": "e30=",
    }


def oci_manifest(
    layer: bytes, tar_digest: OciDigest, *, aicr_version: str, recipe_name: str
) -> bytes:
    """The OCI 1.1 image manifest (evidence-format 3.3), compact JSON in Go field order."""
    doc = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST_MEDIA_TYPE,
        "artifactType": AICR_ARTIFACT_TYPE,
        "config": _empty_config(),
        "layers": [
            {
                "mediaType": LAYER_MEDIA_TYPE,
                "digest": _sha(layer),
                "size": len(layer),
                "annotations": {
                    "io.deis.oras.content.digest": tar_digest,
                    "io.deis.oras.content.unpack": "true",
                    "org.opencontainers.image.title": "summary-bundle",
                },
            }
        ],
        "annotations": {
            "org.opencontainers.image.created": "1970-01-01T00:00:00Z",
            "org.opencontainers.image.description": f"AICR recipe evidence for {recipe_name}",
            "org.opencontainers.image.source": "https://github.com/NVIDIA/aicr",
            "org.opencontainers.image.title": "AICR Recipe Evidence",
            "org.opencontainers.image.vendor": "NVIDIA",
            "org.opencontainers.image.version": aicr_version,
        },
    }
    return go_json(doc, indent=None)


def referrer_manifest(
    sigstore_bundle: bytes, subject_manifest: bytes, predicate_type: str
) -> bytes:
    """The signature referrer: subject = the bundle manifest, one Sigstore-bundle layer."""
    doc = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST_MEDIA_TYPE,
        "artifactType": BUNDLE_MEDIA_TYPE,
        "config": _empty_config(),
        "layers": [
            {
                "mediaType": BUNDLE_MEDIA_TYPE,
                "digest": _sha(sigstore_bundle),
                "size": len(sigstore_bundle),
            }
        ],
        "subject": {
            "mediaType": OCI_MANIFEST_MEDIA_TYPE,
            "digest": _sha(subject_manifest),
            "size": len(subject_manifest),
        },
        "annotations": {
            "dev.sigstore.bundle.content": "dsse-envelope",
            "dev.sigstore.bundle.predicateType": predicate_type,
            "org.opencontainers.image.created": "1970-01-01T00:00:00Z",
        },
    }
    return go_json(doc, indent=None)


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


# --------------------------------------------------------------------------- assembly


def _payload(spec: BundleSpec) -> tuple[dict[str, bytes], str, Sha256Hex, dict[str, Any]]:
    """The payload files (no manifest/statement yet), recipe name and digest, and the predicate."""
    recipe = spec.recipe
    name = recipe_name_for(recipe)
    recipe_yaml, recipe_digest = recipe_yaml_and_digest(recipe, spec.predicate_type)
    attested = _rfc3339(spec.attested_at)
    fingerprint = (
        dict(spec.fingerprint) if spec.fingerprint is not None else default_fingerprint(recipe)
    )
    snapshot = (
        spec.snapshot
        if spec.snapshot is not None
        else default_snapshot(fingerprint, attested, full=spec.full)
    )
    files: dict[str, bytes] = {"recipe.yaml": recipe_yaml, "snapshot.yaml": yamlemit.emit(snapshot)}
    bom = go_json(bom_document(name, recipe, spec, snapshot))
    files["bom.cdx.json"] = bom
    phases: dict[str, Any] = {}
    for phase in PHASE_ORDER:
        if phase not in spec.tests:
            continue
        tests = list(spec.tests[phase])
        data = ctrf_report(phase, tests, spec=spec)
        files[f"ctrf/{phase.value}.json"] = data
        phases[phase.value] = {
            "passed": sum(1 for t in tests if t.status == "passed"),
            "failed": sum(1 for t in tests if t.status == "failed"),
            "skipped": sum(1 for t in tests if t.status == "skipped"),
            "ctrfDigest": _sha(data),
        }
    manifest = manifest_json(files)
    predicate: dict[str, Any] = {
        "schemaVersion": "1.0.0",
        "attestedAt": attested,
        "aicrVersion": spec.aicr_version,
    }
    if spec.aicr_commit:
        predicate["aicrCommit"] = spec.aicr_commit
    predicate.update(
        {
            "validatorCatalogVersion": "1.0.0",
            "validatorImages": [{"image": i, "digest": ""} for i in sorted(spec.validator_images)]
            or None,
            "recipe": {"name": name, "digest": recipe_digest},
            "fingerprint": fingerprint,
            "criteriaMatch": dict(spec.criteria_match)
            if spec.criteria_match is not None
            else criteria_match_for(recipe, fingerprint),
            "phases": phases,
            "bom": {
                "format": "CycloneDX",
                "version": "1.6",
                "digest": _sha(bom),
                "imageCount": len(json.loads(bom)["components"]),
            },
            "manifest": {"digest": _sha(manifest), "fileCount": len(json.loads(manifest)["files"])},
        }
    )
    if not spec.full:
        applied = ["snapshot.header.allowlist", "snapshot.measurements.allowlist"]
        if spec.tests:
            applied += ["ctrf.tests.omit:message", "ctrf.tests.omit:stdout"]
        predicate["redaction"] = {"policy": "minimal", "version": "v3", "applied": sorted(applied)}
    selection = profile_selection(recipe)
    if selection is not None and spec.predicate_type is not PredicateType.V1:
        profile: dict[str, Any] = {"selection": selection}
        advertiser = ((recipe.get("metadata") or {}).get("selectedProfile") or {}).get("advertiser")
        if advertiser:
            profile["advertiser"] = advertiser
        profile["policyDescriptorIdentity"] = spec.policy_descriptor_identity
        predicate["profile"] = profile
    files["manifest.json"] = manifest
    return files, name, recipe_digest, predicate


def _default_tag(name: str, recipe_digest: str) -> str:
    return f"{name}-{recipe_digest[:12]}"


def _assemble(
    spec: BundleSpec,
    files: Mapping[str, bytes],
    name: str,
    recipe_digest: Sha256Hex,
    predicate: Mapping[str, Any],
    *,
    authority: TestAuthority | None,
    signer: SignerIdentity | None,
    statement_type: str | None = None,
    subject_hex: str | None = None,
    write_statement: bool = True,
) -> BuiltBundle:
    """Pack `files` into the layer and manifest, then sign (if `signer`) and point at it."""
    ptype = statement_type or spec.predicate_type.value
    predicate = dict(predicate)
    layer_files = dict(files)
    if write_statement:
        layer_files["statement.intoto.json"] = statement_bytes(
            f"recipe:{name}", recipe_digest, ptype, predicate
        )
    tar = layer_tar(layer_files, spec.tar_prefix)
    layer = gzip_deterministic(tar)
    manifest = oci_manifest(layer, _sha(tar), aicr_version=spec.aicr_version, recipe_name=name)
    digest = _sha(manifest)
    tag = spec.tag or _default_tag(name, recipe_digest)
    oci = f"{spec.repository}:{tag}"
    statement = sig = referrer = None
    log_index: int | None = None
    if signer is not None:
        if authority is None:
            raise ValueError("a signed bundle needs a TestAuthority")
        statement = statement_bytes(
            oci, subject_hex or digest.removeprefix("sha256:"), ptype, predicate
        )
        sig = authority.sign_dsse(
            statement,
            signer=signer,
            signed_at=spec.attested_at,
            rekor_v2=spec.rekor_v2,
            options=spec.signing,
        )
        referrer = referrer_manifest(sig, manifest, ptype)
        entry = json.loads(sig)["verificationMaterial"]["tlogEntries"][0]
        log_index = int(entry["logIndex"])
    pointer = PointerFields(
        recipe=name,
        profile=profile_selection(spec.recipe),
        oci=oci,
        digest=digest,
        predicate_type=spec.predicate_type.value,
        attested_at=_rfc3339(spec.attested_at),
        signer=signer,
        rekor_log_index=log_index,
    )
    return BuiltBundle(
        spec=spec,
        recipe_name=name,
        recipe_digest=recipe_digest,
        predicate=MappingProxyType(dict(predicate)),
        files=MappingProxyType(layer_files),
        layer=layer,
        layer_tar_digest=_sha(tar),
        manifest=manifest,
        digest=digest,
        statement=statement,
        sigstore_bundle=sig,
        referrer_manifest=referrer,
        pointer=pointer,
    )


def build_bundle(spec: BundleSpec, authority: TestAuthority | None = None) -> BuiltBundle:
    """Build every artefact of the evidence bundle `spec` describes; sign it with `authority`."""
    files, name, digest, predicate = _payload(spec)
    return _assemble(spec, files, name, digest, predicate, authority=authority, signer=spec.signer)


def write_to_layout(built: BuiltBundle, writer: LayoutWriter) -> None:
    """Store the bundle in an OCI layout: config, layer, the manifest (ref = tag), and if signed
    the Sigstore bundle blob, the referrer manifest and the `sha256-<hex>` referrers tag index."""
    writer.put_blob(EMPTY_CONFIG)
    writer.put_blob(built.layer)
    writer.add_manifest(
        built.manifest,
        OCI_MANIFEST_MEDIA_TYPE,
        artifact_type=AICR_ARTIFACT_TYPE,
        ref_name=built.tag,
    )
    if built.sigstore_bundle is None or built.referrer_manifest is None:
        return
    writer.put_blob(built.sigstore_bundle)
    ref_digest = writer.add_manifest(
        built.referrer_manifest, OCI_MANIFEST_MEDIA_TYPE, artifact_type=BUNDLE_MEDIA_TYPE
    )
    index = {
        "schemaVersion": 2,
        "mediaType": INDEX_MEDIA_TYPE,
        "manifests": [
            {
                "mediaType": OCI_MANIFEST_MEDIA_TYPE,
                "digest": ref_digest,
                "size": len(built.referrer_manifest),
                "artifactType": BUNDLE_MEDIA_TYPE,
                "annotations": json.loads(built.referrer_manifest)["annotations"],
            }
        ],
    }
    writer.add_manifest(
        go_json(index, indent=None),
        INDEX_MEDIA_TYPE,
        ref_name="sha256-" + built.digest.removeprefix("sha256:"),
    )


# --------------------------------------------------------------------------- tampers


def _payload_files(built: BuiltBundle) -> dict[str, bytes]:
    return {k: v for k, v in built.files.items() if k != "statement.intoto.json"}


def _rebuild(
    built: BuiltBundle,
    files: Mapping[str, bytes],
    predicate: Mapping[str, Any],
    authority: TestAuthority | None,
    **kwargs: Any,
) -> BuiltBundle:
    signer = kwargs.pop("signer", built.pointer.signer)
    return _assemble(
        built.spec,
        files,
        built.recipe_name,
        built.recipe_digest,
        predicate,
        authority=authority,
        signer=signer,
        **kwargs,
    )


def tamper_modify_file(
    built: BuiltBundle, path: str, data: bytes, authority: TestAuthority
) -> BuiltBundle:
    """A listed file changed after `manifest.json` was computed, repacked and re-signed.

    Signature and subject are valid; the manifest inventory check (step 4) must fail.
    """
    if path not in built.files or path in _NOT_IN_MANIFEST:
        raise ValueError(f"{path} is not a manifest-listed file of the bundle")
    files = _payload_files(built)
    files[path] = data
    return _rebuild(built, files, built.predicate, authority)


def tamper_add_file(
    built: BuiltBundle, path: str, data: bytes, authority: TestAuthority
) -> BuiltBundle:
    """A file not listed in `manifest.json`, repacked and re-signed: a stray-file failure (step 4)."""
    files = _payload_files(built)
    files[path] = data
    return _rebuild(built, files, built.predicate, authority)


def tamper_ctrf(
    built: BuiltBundle, phase: Phase, data: bytes, authority: TestAuthority
) -> BuiltBundle:
    """`ctrf/<phase>.json` replaced with the manifest and `predicate.manifest` updated to match,
    but `phases.<phase>.ctrfDigest` left stale: the phase-digest check (step 4.2) must fail."""
    path = f"ctrf/{phase.value}.json"
    if path not in built.files:
        raise ValueError(f"the bundle has no {path}")
    files = _payload_files(built)
    files[path] = data
    files["manifest.json"] = manifest_json(files)
    predicate = dict(built.predicate)
    predicate["manifest"] = {
        "digest": _sha(files["manifest.json"]),
        "fileCount": len(json.loads(files["manifest.json"])["files"]),
    }
    return _rebuild(built, files, predicate, authority)


def tamper_resign(
    built: BuiltBundle, other: SignerIdentity, authority: TestAuthority
) -> BuiltBundle:
    """The same artifact re-signed by `other` while the pointer still claims the original signer:
    the pointer/certificate cross-check (step 2) must fail."""
    again = _rebuild(built, _payload_files(built), built.predicate, authority, signer=other)
    return replace(again, pointer=replace(again.pointer, signer=built.pointer.signer))


def tamper_subject(
    built: BuiltBundle, authority: TestAuthority, subject_hex: str = "ab" * 32
) -> BuiltBundle:
    """A validly signed statement whose subject is another digest (artifact binding, step 2)."""
    return _rebuild(
        built, _payload_files(built), built.predicate, authority, subject_hex=subject_hex
    )


def tamper_predicate_type(
    built: BuiltBundle, predicate_type: str, authority: TestAuthority
) -> BuiltBundle:
    """The statement (signed and unsigned) carries `predicate_type` while the pointer and the
    recipe digest keep the original type: the type coherence / digest / Q2 checks must fail."""
    return _rebuild(
        built, _payload_files(built), built.predicate, authority, statement_type=predicate_type
    )


def tamper_pointer_log_index(built: BuiltBundle, delta: int = 1) -> BuiltBundle:
    """The pointer's `rekorLogIndex` differs from the bundle's tlog entry (step 2 cross-check)."""
    index = built.rekor_log_index
    if index is None:
        raise ValueError("an unsigned bundle has no log index to falsify")
    return replace(built, pointer=replace(built.pointer, rekor_log_index=index + delta))


def tamper_unsigned_claims_signer(built: BuiltBundle, signer: SignerIdentity) -> BuiltBundle:
    """An unsigned bundle (no referrer) whose pointer claims `signer` (step 2 must fail)."""
    bare = replace(built, statement=None, sigstore_bundle=None, referrer_manifest=None)
    return replace(bare, pointer=replace(built.pointer, signer=signer, rekor_log_index=None))


def tamper_foreign_authority(built: BuiltBundle, foreign: TestAuthority) -> BuiltBundle:
    """The same artifact signed through another TestAuthority (untrusted CA/CT/Rekor keys)."""
    signer = built.pointer.signer or built.spec.signer
    if signer is None:
        raise ValueError("an unsigned bundle has no signer to impersonate")
    return _rebuild(built, _payload_files(built), built.predicate, foreign, signer=signer)


def tamper_recipe_name(
    built: BuiltBundle, name: str, *, authority: TestAuthority | None = None
) -> BuiltBundle:
    """A recipe-name mismatch. Without `authority`: only the pointer names `name` (step 3 fast
    fail). With `authority`: the signed predicate's `recipe.name` is `name` (step 4 identity)."""
    if authority is None:
        return replace(built, pointer=replace(built.pointer, recipe=name))
    predicate = dict(built.predicate)
    predicate["recipe"] = {"name": name, "digest": built.recipe_digest}
    again = _rebuild(built, _payload_files(built), predicate, authority)
    return replace(again, pointer=replace(again.pointer, recipe=built.recipe_name))


def tamper_attested_at(built: BuiltBundle, attested_at: datetime) -> BuiltBundle:
    """The pointer's `attestedAt` differs from `predicate.attestedAt` (a beyond-aicr check)."""
    return replace(built, pointer=replace(built.pointer, attested_at=_rfc3339(attested_at)))


def tamper_statement(
    built: BuiltBundle, edit: Callable[[dict[str, Any]], None], authority: TestAuthority
) -> BuiltBundle:
    """Re-sign after `edit` mutates a copy of the signed statement (for one-off negative cases)."""
    if built.statement is None or built.pointer.signer is None:
        raise ValueError("an unsigned bundle has no statement to edit")
    doc = json.loads(built.statement)
    edit(doc)
    payload = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    sig = authority.sign_dsse(
        payload,
        signer=built.pointer.signer,
        signed_at=built.spec.attested_at,
        rekor_v2=built.spec.rekor_v2,
    )
    index = int(json.loads(sig)["verificationMaterial"]["tlogEntries"][0]["logIndex"])
    return replace(
        built,
        statement=payload,
        sigstore_bundle=sig,
        referrer_manifest=referrer_manifest(sig, built.manifest, str(doc.get("predicateType", ""))),
        pointer=replace(built.pointer, rekor_log_index=index),
    )
